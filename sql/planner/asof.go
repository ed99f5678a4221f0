package planner

import (
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
	var nullSafe []bool
	extra := a.Extra
	var offSwapped bool
	var second *parser.TimeCond
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
			lkeys, rkeys, nullSafe = append(lkeys, lk), append(rkeys, rk), append(nullSafe, false)
		}
	case parser.FormInequality, parser.FormRangeOnExpr:
		if lkeys, rkeys, nullSafe, extra, second, err = b.asofOnConds(a, l, r, cs, lw); err != nil {
			return nil, err
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
		if a.Form == parser.FormInequality && a.Off == nil {
			// The strict forms step in the type t is compared in.
			ct := lt
			ct.typ, _ = asofOnType(lt.typ, rt.typ)
			if err := b.inequalityBounds(ar, op, ct, a); err != nil {
				return nil, err
			}
		}
		offSwapped = swapped
	}
	ar.LeftOn, ar.On = lt.idx, rt.idx
	if err := b.asofOnTypes(a, l, r, ar, lt, rt); err != nil {
		return nil, err
	}
	if a.Form == parser.FormRange || a.Form == parser.FormRangeOnExpr {
		ct := lt
		ct.typ = ar.OnType
		if err := b.asofBounds(a, ar, ct); err != nil {
			return nil, err
		}
	} else if a.Form == parser.FormInequality && a.Off != nil {
		// left.t op right.t + c: the bound is -c; written right first,
		// right.t op left.t + c is left.t flip(op) right.t - c.
		v := a.Off
		if !offSwapped {
			v = negateNode(v)
		}
		op := a.Op
		if offSwapped {
			op = flip(op)
		}
		ct := lt
		ct.typ = ar.OnType
		if err := b.offsetBounds(ar, op, a, v, ct); err != nil {
			return nil, err
		}
	} else if a.Form == parser.FormUsing {
		// USING (k..., t): the last column is l.t >= r.t.
		ar.Lo, ar.Hi = Bound{Unbounded: true}, Bound{}
	}
	if second != nil {
		ct := lt
		ct.typ = ar.OnType
		if err := b.combineRange(a, ar, *second, cs, lw, ct); err != nil {
			return nil, err
		}
	}
	for i := range lkeys {
		lk, rk := lkeys[i], rkeys[i]
		if err := usingEquality(lk.typ, rk.typ); err != nil {
			return nil, err.(*sqlerr.Error).WithPosition(a.Pos)
		}
		if lk.typ.Kind == sqltypes.JSONB || rk.typ.Kind == sqltypes.JSONB {
			// The operator matches keys by their bytes; equal jsonb values
			// may differ in text (1.0 and 1).
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "ASOF JOIN by a key of type jsonb is not supported").WithPosition(a.Pos).
				WithHint("Join by the key's text in a subquery, e.g. (SELECT ..., %s::text AS %s FROM ...).", rk.name, rk.name)
		}
		if !keysComparable(lk.typ, rk.typ) && !keysByValue(lk.typ, rk.typ) {
			return nil, sqlerr.New(sqlerr.DatatypeMismatch, "ASOF JOIN keys cannot be compared: %s is %s but %s is %s", lk.display(), lk.typ, rk.display(), rk.typ).WithPosition(a.Pos).
				WithHint("Cast one side in a subquery so both have the same type, e.g. (SELECT ..., %s::%s AS %s FROM ...).", rk.name, lk.typ, rk.name)
		}
		ar.LeftKeys = append(ar.LeftKeys, lk.idx)
		ar.Keys = append(ar.Keys, rk.idx)
		if nullSafe[i] {
			if ar.NullSafe == nil {
				ar.NullSafe = make([]bool, len(lkeys))
			}
			ar.NullSafe[i] = true
		}
	}

	// Extra conditions decide eligibility (spec §2.5): right-only ones
	// filter the right input (RIGHT and FULL evaluate them in the join,
	// which outputs the failing rows unmatched), left-only ones make a
	// failing left row match nothing.
	right := r.node
	filters, leftConds, pairConds, err := b.asofExtras(extra, ar, l, r, cs, lw)
	if err != nil {
		return nil, err
	}
	if len(pairConds) > 0 {
		asofPairCond(ar, expr.AndAll(pairConds...), lw, len(r.node.Schema()))
	}
	switch {
	case len(filters) > 0 && ar.Kind.outer():
		ar.Cond = expr.AndAll(filters...)
	case len(filters) > 0:
		right = &Filter{Input: right, Cond: expr.AndAll(filters...)}
	}
	if len(leftConds) > 0 {
		ar.LeftCond = expr.AndAll(leftConds...)
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
	} else if a.Match && len(a.Using) > 0 {
		// MATCH_CONDITION ... USING (k...): each key once, as any USING.
		mergeUsing(sc, l.sc, lkeys, rkeys, lw)
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
	if r.Kind.outer() || j.outer() || r.PairCond != nil || j.Rights[0].PairCond != nil {
		// RIGHT and FULL, and conditions on both inputs, run with their
		// one right input.
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
	if r.LeftCond != nil && !colsWithin(r.LeftCond, 0, w) {
		return false
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
	ct, ok := asofOnType(lt.typ, rt.typ)
	if !ok {
		return sqlerr.New(sqlerr.DatatypeMismatch, "ASOF JOIN on columns cannot be compared: %s is %s but %s is %s", lt.display(), lt.typ, rt.display(), rt.typ).WithPosition(a.Pos).
			WithHint("Cast one side in an ordered subquery so both have the same type, e.g. (SELECT CAST(%s AS %s) AS %s, ... FROM ... ORDER BY 1).", rt.name, lt.typ, rt.name)
	}
	ar.OnType = ct
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
