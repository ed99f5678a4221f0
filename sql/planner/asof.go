package planner

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// bindAsof turns one ASOF join of any spec §1 form into an AsofJoin node
// (or adds a right input to the left input's AsofJoin, spec §2.7).
func (b *binder) bindAsof(a *parser.AsofJoin, l, r *rel) (*rel, error) {
	lw := len(l.node.Schema())
	cs := concatScopes(l.sc, r.sc, lw)
	ar := &AsofRight{Name: r.desc.name, Tie: PreferEarlier, Pos: a.Pos, Kind: AsofInner}
	if a.Prefer == parser.PreferLater {
		ar.Tie = PreferLater
	}
	switch a.Kind {
	case parser.AsofLeft:
		ar.Kind = AsofLeft
	case parser.AsofSemi:
		ar.Kind = AsofSemi
	case parser.AsofAnti:
		ar.Kind = AsofAnti
	case parser.AsofRight:
		ar.Kind = AsofRightOuter
	case parser.AsofFull:
		ar.Kind = AsofFull
	}
	if r.desc.kind == "join" {
		ar.Name = r.desc.label()
	}
	var lt, rt scopeCol // the on column of each side
	var lkeys, rkeys []scopeCol
	var err error
	switch a.Form {
	case parser.FormRange, parser.FormUsing:
		if lt, rt, err = b.asofUsingCol(a, l, r, a.On.Name.O, "ASOF JOIN on"); err != nil {
			return nil, err
		}
		for _, u := range a.Using {
			lk, rk, err := b.asofUsingCol(a, l, r, u.Name.O, "USING")
			if err != nil {
				return nil, err
			}
			lkeys, rkeys = append(lkeys, lk), append(rkeys, rk)
		}
	case parser.FormInequality, parser.FormRangeOnExpr:
		for _, k := range a.Keys {
			lk, rk, err := b.asofSides(a, cs, lw, k.A, k.B, "equality")
			if err != nil {
				return nil, err
			}
			lkeys, rkeys = append(lkeys, lk), append(rkeys, rk)
		}
		what := "inequality"
		if a.Form == parser.FormRangeOnExpr {
			what = "BETWEEN"
		}
		var swapped bool
		if lt, rt, swapped, err = b.asofSidesSwap(a, cs, lw, a.Left, a.Right, what); err != nil {
			return nil, err
		}
		if swapped && a.Form == parser.FormRangeOnExpr {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "ASOF JOIN BETWEEN must test a column of the right input %q against the left input's column", ar.Name).
				WithPosition(b.pos(a.Right)).WithHint("Write it as: ON ... AND right.t BETWEEN left.t + lo AND left.t + hi.")
		}
		rt.idx -= lw
		op := a.Op
		if swapped {
			op = flip(op)
		}
		ar.Lo, ar.Hi = Bound{Unbounded: true}, Bound{Unbounded: true}
		if a.Form == parser.FormInequality {
			if err := b.inequalityBounds(ar, op, lt, a); err != nil {
				return nil, err
			}
		}
	}
	ar.LeftOn, ar.On = lt.idx, rt.idx
	if err := b.asofOnTypes(a, l, r, ar, lt, rt); err != nil {
		return nil, err
	}
	if a.Form == parser.FormRange || a.Form == parser.FormRangeOnExpr {
		if err := b.asofBounds(a, ar, lt); err != nil {
			return nil, err
		}
	} else if a.Form == parser.FormUsing {
		// USING (k..., t): the last column is l.t >= r.t.
		ar.Lo, ar.Hi = Bound{Unbounded: true}, Bound{}
	}
	for i := range lkeys {
		lk, rk := lkeys[i], rkeys[i]
		if !keysComparable(lk.typ, rk.typ) {
			return nil, sqlerr.New(sqlerr.DatatypeMismatch, "ASOF JOIN keys cannot be compared: %s is %s but %s is %s", lk.display(), lk.typ, rk.display(), rk.typ).WithPosition(a.Pos)
		}
		ar.LeftKeys = append(ar.LeftKeys, lk.idx)
		ar.Keys = append(ar.Keys, rk.idx)
	}

	// Right-only extra conditions filter the right input (spec §2.5).
	right := r.node
	var filters []expr.Expr
	for _, x := range a.Extra {
		e, err := b.bindExpr(x, &exprCtx{sc: cs, clause: "JOIN conditions"})
		if err != nil {
			return nil, err
		}
		if ar.Kind.outer() {
			// A filter under the right input would drop the rows failing
			// it, which RIGHT and FULL must output as unmatched.
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "ASOF %s JOIN with conditions besides the on column and keys is not supported", ar.Kind).
				WithPosition(b.pos(x)).WithHint("Filter the right input in a subquery ordered by its t, or use ASOF INNER or LEFT JOIN.")
		}
		for _, c := range expr.Columns(e) {
			if c < lw {
				return nil, sqlerr.New(sqlerr.FeatureNotSupported, "ASOF JOIN condition %s references the left input; only conditions on the right input %q (or constants) are allowed besides the on column and keys", e, ar.Name).
					WithPosition(b.pos(x)).WithHint("Move the condition to WHERE to filter the result instead.")
			}
		}
		e, err = b.bindExpr(x, &exprCtx{sc: r.sc, clause: "JOIN conditions"})
		if err != nil {
			return nil, err
		}
		if e, err = b.coerce(e, sqltypes.BoolType, x, "argument of JOIN/ON"); err != nil {
			return nil, err
		}
		filters = append(filters, e)
	}
	if len(filters) > 0 {
		right = &Filter{Input: right, Cond: expr.AndAll(filters...)}
	}
	ar.Input = right
	rcols := r.node.Schema()
	if ar.Kind.leftOnly() {
		// SEMI and ANTI output the left columns alone (spec §2.3).
		rcols = nil
	}
	for i := range rcols {
		ar.Payload = append(ar.Payload, i)
	}

	// Output names (spec §2.6).
	sc := cs
	if ar.Kind.leftOnly() {
		sc = l.sc
	} else if a.Form == parser.FormRange || a.Form == parser.FormUsing {
		lc := append(append([]scopeCol(nil), lkeys...), lt)
		rc := append(append([]scopeCol(nil), rkeys...), rt)
		mergeUsing(sc, l.sc, lc, rc, lw)
	}
	desc := inputDesc{kind: "join", name: "of " + l.desc.label() + " and " + r.desc.label()}
	ar.desc = r.desc

	// A join keyed off the same left input as the ASOF join it extends
	// becomes another right input of that node (spec §2.7).
	if prev, ok := l.node.(*AsofJoin); ok && prev.canExtend(ar) {
		prev.Rights = append(prev.Rights, ar)
		prev.cols = joinCols(prev.cols, rcols, ar.Kind == AsofLeft)
		return &rel{node: prev, sc: sc, desc: desc}, nil
	}
	lcols := l.node.Schema()
	if ar.Kind.outer() {
		// Unmatched right rows have every left column NULL.
		lcols = append([]Column(nil), lcols...)
		for i := range lcols {
			lcols[i].Nullable = true
		}
	}
	j := &AsofJoin{Left: l.node, LeftName: l.desc.label(), Rights: []*AsofRight{ar}, cols: joinCols(lcols, rcols, ar.Kind == AsofLeft || ar.Kind == AsofFull)}
	j.leftDesc = l.desc
	return &rel{node: j, sc: sc, desc: desc}, nil
}

// canExtend reports whether r reads only columns of j's own left input.
func (j *AsofJoin) canExtend(r *AsofRight) bool {
	if r.Kind.outer() || j.outer() {
		// RIGHT and FULL run with their one right input.
		return false
	}
	w := len(j.Left.Schema())
	if r.LeftOn >= w {
		return false
	}
	for _, k := range r.LeftKeys {
		if k >= w {
			return false
		}
	}
	return true
}

// outer reports a RIGHT or FULL join (its one right input's kind).
func (j *AsofJoin) outer() bool { return j.Rights[0].Kind.outer() }

// asofUsingCol resolves an unqualified column of a range/USING form in
// both inputs.
func (b *binder) asofUsingCol(a *parser.AsofJoin, l, r *rel, name, what string) (scopeCol, scopeCol, error) {
	lc, err := l.sc.lookup("", name, a.Pos)
	if err != nil {
		return lc, lc, asofColError(err, name, what, "left input "+l.desc.label(), a.Pos)
	}
	rc, err := r.sc.lookup("", name, a.Pos)
	if err != nil {
		return lc, rc, asofColError(err, name, what, "right input "+r.desc.label(), a.Pos)
	}
	return lc, rc, nil
}

func asofColError(err error, name, what, side string, pos int) error {
	e, ok := sqlerr.As(err)
	if !ok {
		return err
	}
	switch e.Code {
	case sqlerr.UndefinedColumn:
		return sqlerr.New(sqlerr.UndefinedColumn, "column %q named in %s does not exist in the %s", name, what, side).WithPosition(pos)
	case sqlerr.AmbiguousColumn:
		return sqlerr.New(sqlerr.AmbiguousColumn, "column reference %q in %s is ambiguous in the %s", name, what, side).WithPosition(pos)
	}
	return err
}

// asofSides resolves the two operands of an ON-form comparison and
// returns them as (left input column, right input column).
func (b *binder) asofSides(a *parser.AsofJoin, cs *scope, lw int, x, y *ast.ColumnNameExpr, what string) (scopeCol, scopeCol, error) {
	l, r, _, err := b.asofSidesSwap(a, cs, lw, x, y, what)
	if err == nil {
		r.idx -= lw
	}
	return l, r, err
}

func (b *binder) asofSidesSwap(a *parser.AsofJoin, cs *scope, lw int, x, y *ast.ColumnNameExpr, what string) (scopeCol, scopeCol, bool, error) {
	cx, err := cs.resolve(b, x)
	if err != nil {
		return cx, cx, false, err
	}
	cy, err := cs.resolve(b, y)
	if err != nil {
		return cx, cy, false, err
	}
	switch {
	case cx.idx < lw && cy.idx >= lw:
		return cx, cy, false, nil
	case cy.idx < lw && cx.idx >= lw:
		return cy, cx, true, nil
	}
	side := "left"
	if cx.idx >= lw {
		side = "right"
	}
	return cx, cy, false, sqlerr.New(sqlerr.FeatureNotSupported, "ASOF JOIN %s %s, %s compares two columns of the %s input; it must compare a column of each input", what, cx.display(), cy.display(), side).
		WithPosition(b.pos(x))
}

func flip(op opcode.Op) opcode.Op {
	switch op {
	case opcode.GE:
		return opcode.LE
	case opcode.LE:
		return opcode.GE
	case opcode.GT:
		return opcode.LT
	case opcode.LT:
		return opcode.GT
	}
	return op
}

// inequalityBounds turns left.t op right.t into a half-open range on Δ =
// right.t − left.t; a strict inequality excludes Δ = 0: by one unit for
// exact types, and for floats by an exclusive bound at 0 (the operator
// steps to the next float, which no addition in float64 can round away).
// Types without a distance (text, bytea, boolean) take an exclusive 0 too.
func (b *binder) inequalityBounds(ar *AsofRight, op opcode.Op, lt scopeCol, a *parser.AsofJoin) error {
	excl := isFloat(lt.typ) || noDistance(lt.typ)
	unit := Bound{Int: 1, Exclusive: excl}
	neg := Bound{Int: -1, Exclusive: excl}
	switch op {
	case opcode.GE: // l.t >= r.t: Δ <= 0
		ar.Hi = Bound{}
	case opcode.GT:
		ar.Hi = neg
	case opcode.LE: // l.t <= r.t: Δ >= 0
		ar.Lo = Bound{}
	case opcode.LT:
		ar.Lo = unit
	default:
		return sqlerr.New(sqlerr.SyntaxError, "ASOF JOIN inequality must be one of >= > <= <").WithPosition(a.Pos)
	}
	if excl {
		// The exclusive bound is at 0 itself.
		ar.Lo.Int, ar.Hi.Int = 0, 0
	}
	if !isFloat(lt.typ) {
		ar.Lo.Float, ar.Hi.Float = 0, 0
		if ar.Lo.Unbounded {
			ar.Lo = Bound{Unbounded: true}
		}
		if ar.Hi.Unbounded {
			ar.Hi = Bound{Unbounded: true}
		}
	}
	return nil
}

func isFloat(t sqltypes.Type) bool { return t.Kind == sqltypes.Float4 || t.Kind == sqltypes.Float8 }

// noDistance reports on column types that are ordered but have no
// distance: only the compatibility inequality forms (and USING's last
// column) can join on them, compared bytewise (C collation).
func noDistance(t sqltypes.Type) bool {
	switch categoryOf(t) {
	case catString, catBinary, catBool:
		return true
	}
	return false
}

// asofOnTypes checks the on columns: a type the operator orders by, the
// same class on both sides, and for types without a distance (text,
// bytea, boolean) a form without a range.
func (b *binder) asofOnTypes(a *parser.AsofJoin, l, r *rel, ar *AsofRight, lt, rt scopeCol) error {
	for _, c := range []scopeCol{lt, rt} {
		switch categoryOf(c.typ) {
		case catNumeric, catDateTime, catString, catBinary, catBool:
		default:
			return sqlerr.New(sqlerr.FeatureNotSupported, "ASOF JOIN on column %s of type %s is not supported", c.display(), c.typ).WithPosition(a.Pos).
				WithHint("The on column must be an integer, floating-point, numeric, date, timestamp, text, bytea or boolean column.")
		}
	}
	ok := false
	switch {
	case lt.typ.IsInteger() && rt.typ.IsInteger():
		ok = true
	case lt.typ.IsString() && rt.typ.IsString():
		ok = true
	case isFloat(lt.typ) && isFloat(rt.typ):
		ok = true
	case lt.typ.Kind == sqltypes.Numeric && rt.typ.Kind == sqltypes.Numeric:
		ok = numericScale(lt.typ) == numericScale(rt.typ)
	default:
		ok = lt.typ.Kind == rt.typ.Kind
	}
	if !ok {
		return sqlerr.New(sqlerr.DatatypeMismatch, "ASOF JOIN on columns cannot be compared: %s is %s but %s is %s", lt.display(), lt.typ, rt.display(), rt.typ).WithPosition(a.Pos).
			WithHint("Cast one side in a subquery so both have the same type.")
	}
	if noDistance(lt.typ) && (a.Form == parser.FormRange || a.Form == parser.FormRangeOnExpr) {
		pos := a.LoPos
		if pos == 0 {
			pos = a.Pos
		}
		return errDatatype(pos, "ASOF JOIN on column %s of type %s has no distance, so it takes no BETWEEN range", lt.display(), lt.typ).
			WithHint("Use the inequality form, e.g. ON %s >= %s (or >, <=, <), or USING (..., %s): it takes the closest row in order.",
				lt.display(), rt.display(), rt.name)
	}
	return nil
}

// keysComparable: the by-keys must compare exactly without conversion
// (integer widths and text/varchar may differ).
func keysComparable(a, b sqltypes.Type) bool {
	switch {
	case a.IsInteger() && b.IsInteger(), a.IsString() && b.IsString(), isFloat(a) && isFloat(b):
		return true
	case a.Kind == sqltypes.Numeric && b.Kind == sqltypes.Numeric:
		return numericScale(a) == numericScale(b)
	}
	return a.Kind == b.Kind && a.Kind != sqltypes.Interval
}

// asofBounds type-checks and folds the range bounds against t (spec §3).
func (b *binder) asofBounds(a *parser.AsofJoin, ar *AsofRight, lt scopeCol) error {
	var err error
	if ar.Lo, err = b.asofBound(a.Lo, a.LoPos, lt, true); err != nil {
		return err
	}
	if ar.Hi, err = b.asofBound(a.Hi, a.HiPos, lt, false); err != nil {
		return err
	}
	if ar.Lo.Param != nil || ar.Hi.Param != nil {
		return nil
	}
	gt := ar.Lo.Int > ar.Hi.Int
	switch {
	case isFloat(lt.typ):
		gt = ar.Lo.Float > ar.Hi.Float
	case ar.Lo.HasDec && ar.Hi.HasDec:
		gt = ar.Lo.Dec.Greater(ar.Hi.Dec)
	}
	if gt {
		return sqlerr.New(sqlerr.InvalidParameterValue, "ASOF JOIN lower bound %s is greater than upper bound %s", formatBound(ar.Lo, lt.typ), formatBound(ar.Hi, lt.typ)).
			WithPosition(a.LoPos)
	}
	return nil
}

// asofBound evaluates one bound: nil is zero (range-on-expression form's
// bare l.t); constants fold to the on column's unit. lower says it is the
// lower bound (a NUMERIC lower bound rounds up to the column's scale, an
// upper one down: Δ is a multiple of the scale's unit, so that is exact).
func (b *binder) asofBound(n ast.ExprNode, pos int, lt scopeCol, lower bool) (Bound, error) {
	t := lt.typ
	if n == nil {
		return Bound{}, nil
	}
	if t.Kind == sqltypes.Numeric {
		// Read a numeric constant from its own digits: as a literal it
		// would be an unconstrained NUMERIC (at most 22 integer digits).
		if s, ok := numericBoundText(n); ok {
			return numericBound(s, pos, lt, lower)
		}
	}
	e, err := b.bindExpr(n, &exprCtx{sc: &scope{}, clause: "ASOF JOIN bounds"})
	if err != nil {
		return Bound{}, withPos(err, pos)
	}
	if p, ok := e.(*expr.Param); ok {
		return Bound{Param: b.param(p.N, boundParamType(t))}, nil
	}
	lit, ok := e.(*expr.Literal)
	if !ok || lit.Value == nil {
		return Bound{}, sqlerr.New(sqlerr.SyntaxError, "ASOF JOIN bound must be a constant").WithPosition(pos)
	}
	wrong := func(hint string) (Bound, error) {
		return Bound{}, errDatatype(pos, "ASOF JOIN bound %s of type %s does not match on column %s of type %s", showLiteral(lit), lit.T, lt.display(), t).WithHint("%s", hint)
	}
	if lit.T.Kind == sqltypes.Unknown {
		// An untyped literal is read as the bound type of the column.
		if lit, err = decodeLiteral(boundParamType(t), lit.Value.(string), b.opts.Types); err != nil {
			return Bound{}, withPos(err, pos)
		}
	}
	switch {
	case t.IsInteger():
		if v, ok := lit.Value.(int64); ok && lit.T.IsInteger() {
			return Bound{Int: v, Float: float64(v)}, nil
		}
		return wrong("Integer on columns take integer bounds, e.g. BETWEEN -10 AND 0.")
	case isFloat(t):
		switch v := lit.Value.(type) {
		case int64:
			return Bound{Float: float64(v)}, nil
		case float64:
			if v != v {
				return Bound{}, sqlerr.New(sqlerr.InvalidParameterValue, "ASOF JOIN bound must not be NaN").WithPosition(pos)
			}
			return Bound{Float: v}, nil
		case decimal128.Num:
			return Bound{Float: sqltypes.Decimal{Coef: v, Scale: int32(numericScale(lit.T))}.Float64()}, nil
		}
		return wrong("Floating-point on columns take numeric bounds, e.g. BETWEEN -0.5 AND 0.5.")
	case t.Kind == sqltypes.Numeric:
		if categoryOf(lit.T) != catNumeric || isFloat(lit.T) {
			return wrong("Numeric on columns take exact numeric bounds, e.g. BETWEEN -0.25 AND 0.")
		}
		s, _ := literalText(lit)
		return numericBound(s, pos, lt, lower)
	case t.Kind == sqltypes.Date:
		if v, ok := lit.Value.(int64); ok && lit.T.IsInteger() {
			return Bound{Int: v}, nil
		}
		if iv, ok := intervalValue(lit); ok {
			if iv.Months == 0 && iv.Nanoseconds == 0 {
				return Bound{Int: int64(iv.Days)}, nil
			}
			return Bound{}, errDatatype(pos, "ASOF JOIN bound %s for date on column %s is not a whole number of days", showLiteral(lit), lt.display()).
				WithHint("Write the bound in days, e.g. INTERVAL '7 days' or 7.")
		}
		return wrong("Date on columns take integer days or INTERVAL constants in whole days, e.g. INTERVAL '-7 days'.")
	case t.Kind == sqltypes.Timestamp || t.Kind == sqltypes.TimestampTZ:
		if iv, ok := intervalValue(lit); ok {
			if iv.Months != 0 {
				return Bound{}, errDatatype(pos, "ASOF JOIN bound %s for timestamp on column %s has months, which have no fixed length", showLiteral(lit), lt.display()).
					WithHint("Write the bound in days or smaller units, e.g. INTERVAL '30 days'.")
			}
			us := new(big.Int).Mul(big.NewInt(int64(iv.Days)), big.NewInt(86_400_000_000))
			us.Add(us, big.NewInt(iv.Nanoseconds/1000))
			if !us.IsInt64() {
				return Bound{}, sqlerr.New(sqlerr.NumericValueOutOfRange, "ASOF JOIN bound %s is out of range", showLiteral(lit)).WithPosition(pos)
			}
			return Bound{Int: us.Int64()}, nil
		}
		hint := "Timestamp on columns take INTERVAL bounds, e.g. INTERVAL '-5 seconds'."
		if v, ok := lit.Value.(int64); ok {
			hint = fmt.Sprintf("Timestamp on columns take INTERVAL bounds: write INTERVAL '%d seconds' for %d seconds.", v, v)
		}
		return wrong(hint)
	}
	return wrong("")
}

// numericBoundText returns the digits of a numeric constant beyond int64
// (optionally signed or parenthesized), or false.
func numericBoundText(n ast.ExprNode) (string, bool) {
	switch x := n.(type) {
	case *ast.ParenthesesExpr:
		return numericBoundText(x.Expr)
	case *ast.UnaryOperationExpr:
		s, ok := numericBoundText(x.V)
		switch {
		case !ok || x.Op != opcode.Minus && x.Op != opcode.Plus:
			return "", false
		case x.Op == opcode.Plus:
			return s, true
		case strings.HasPrefix(s, "-"):
			return s[1:], true
		}
		return "-" + s, true
	case *test_driver.ValueExpr:
		switch x.Datum.Kind() {
		case test_driver.KindUint64:
			return strconv.FormatUint(x.Datum.GetUint64(), 10), true
		case test_driver.KindMysqlDecimal:
			return x.Datum.GetMysqlDecimal().String(), true
		}
	}
	return "", false
}

// numericBound reads the decimal text s in unscaled units of the NUMERIC
// on column lt, exactly in 128 bits: a lower bound rounds up to the
// column's scale, an upper bound down (the distance between two values is
// a whole number of units, so eligibility does not change).
func numericBound(s string, pos int, lt scopeCol, lower bool) (Bound, error) {
	v, ok := new(big.Rat).SetString(s)
	if !ok {
		return Bound{}, errDatatype(pos, "ASOF JOIN bound %s is not a number", s)
	}
	v.Mul(v, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(numericScale(lt.typ))), nil)))
	q, m := new(big.Int).QuoRem(v.Num(), v.Denom(), new(big.Int))
	// QuoRem truncates toward zero.
	if m.Sign() != 0 && lower == (v.Sign() > 0) {
		if lower {
			q.Add(q, big.NewInt(1))
		} else {
			q.Sub(q, big.NewInt(1))
		}
	}
	if q.BitLen() > 127 {
		return Bound{}, sqlerr.New(sqlerr.NumericValueOutOfRange, "ASOF JOIN bound %s is out of range for on column %s of type %s", s, lt.display(), lt.typ).
			WithPosition(pos).WithHint("Values of the column are never that far apart; use the inequality form (ON ... AND l.t >= r.t) for a side without bound.")
	}
	bd := Bound{Dec: decimal128.FromBigInt(q), HasDec: true}
	if q.IsInt64() {
		bd.Int, bd.Float = q.Int64(), float64(q.Int64())
	}
	return bd, nil
}

// boundParamType is the type a bound of on column type t is read as.
func boundParamType(t sqltypes.Type) sqltypes.Type {
	switch {
	case t.IsInteger():
		return sqltypes.Int8Type
	case isFloat(t):
		return sqltypes.Float8Type
	case t.Kind == sqltypes.Numeric:
		return sqltypes.NumericType(sqltypes.NoLimit, sqltypes.NoLimit)
	case t.Kind == sqltypes.Date:
		return sqltypes.Int4Type
	}
	return sqltypes.IntervalType
}

// showLiteral renders a constant as SQL for messages.
func showLiteral(l *expr.Literal) string {
	if _, ok := l.Value.(decimal128.Num); ok {
		s := literalSQL(l.Value, l.T)
		if strings.Contains(s, ".") {
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		}
		return s
	}
	return literalSQL(l.Value, l.T)
}
