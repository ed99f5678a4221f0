package planner

import (
	"fmt"
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// ASOF range bounds (spec §3): a literal is folded here, in the on
// column's unit; a parameter or a constant expression over several
// literals (-10 + 1, INTERVAL '5 seconds' * 2) is type-checked here and
// kept as Bound.Expr, which lowering evaluates once per execution with the
// executor's own arithmetic and converts with AsofBoundValue: the planner
// does not import the executor, and one evaluator means one answer.

// asofOnType is the type the on columns lt and rt are compared in, as
// PostgreSQL compares them (spec §3): integers of any width as the left
// type; an integer or NUMERIC against a float as double precision; an
// integer against a NUMERIC, or two NUMERICs, as the NUMERIC of the larger
// scale; text with varchar; otherwise only the same type.
func asofOnType(lt, rt sqltypes.Type) (sqltypes.Type, bool) {
	ln, rn := lt.Kind == sqltypes.Numeric, rt.Kind == sqltypes.Numeric
	switch {
	case lt.IsInteger() && rt.IsInteger(), lt.IsString() && rt.IsString(), isFloat(lt) && isFloat(rt):
		return lt, true
	case isFloat(lt) && (rt.IsInteger() || rn), isFloat(rt) && (lt.IsInteger() || ln):
		return sqltypes.Float8Type, true
	case ln && rn:
		if numericScale(rt) > numericScale(lt) {
			return rt, true
		}
		return lt, true
	case ln && rt.IsInteger():
		return lt, true
	case rn && lt.IsInteger():
		return rt, true
	}
	return lt, lt.Kind == rt.Kind
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
	ar.Lo.Pos, ar.Hi.Pos = a.LoPos, a.HiPos
	if ar.Lo.deferred() || ar.Hi.deferred() {
		return nil
	}
	return CheckAsofRange(ar.Lo, ar.Hi, lt.typ, a.LoPos)
}

// deferred reports a bound whose value is known only when the statement
// runs.
func (b Bound) deferred() bool { return b.Param != nil || b.Expr != nil }

// asofBound evaluates one bound: nil is zero (range-on-expression form's
// bare l.t); literals fold to the on column's unit. lower says it is the
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
			return numericBound(s, pos, t, lt.display(), lower)
		}
	}
	e, err := b.bindBoundNode(n, t)
	if err != nil {
		return Bound{}, withPos(err, pos)
	}
	if p, ok := e.(*expr.Param); ok {
		return Bound{Param: b.param(p.N, boundParamType(t)), Pos: pos}, nil
	}
	if lit, ok := e.(*expr.Literal); ok {
		return boundOfLiteral(lit, pos, t, lt.display(), lower, b.opts.Types)
	}
	if !isConstant(e) || volatile(e) {
		return Bound{}, sqlerr.New(sqlerr.SyntaxError, "ASOF JOIN bound %s must be a constant", exprSQL(e)).WithPosition(pos)
	}
	if !boundTypeOK(e.Type(), t) {
		return Bound{}, errDatatype(pos, "ASOF JOIN bound %s of type %s does not match on column %s of type %s", exprSQL(e), e.Type(), lt.display(), t).
			WithHint("%s", boundHint(t, nil))
	}
	return Bound{Expr: e, Pos: pos}, nil
}

// bindBoundNode binds a bound expression. An untyped string literal,
// alone or negated (`l.t - '5 seconds'` is the bound -'5 seconds'), is
// read as the column's bound type, as Postgres reads `ts - '5 seconds'`.
func (b *binder) bindBoundNode(n ast.ExprNode, t sqltypes.Type) (expr.Expr, error) {
	neg := false
	inner := n
	for {
		if p, ok := inner.(*ast.ParenthesesExpr); ok {
			inner = p.Expr
			continue
		}
		if u, ok := inner.(*ast.UnaryOperationExpr); ok && u.Op == opcode.Minus && !neg {
			if v, ok := unparen(u.V).(*test_driver.ValueExpr); ok && v.Datum.Kind() == test_driver.KindString {
				neg, inner = true, v
				continue
			}
		}
		break
	}
	if v, ok := inner.(*test_driver.ValueExpr); ok && v.Datum.Kind() == test_driver.KindString {
		lit, err := decodeLiteral(boundParamType(t), v.Datum.GetString(), b.opts.Types)
		if err != nil || !neg {
			return lit, err
		}
		return negateLiteral(lit)
	}
	if u, ok := inner.(*ast.UnaryOperationExpr); ok && (u.Op == opcode.Minus || u.Op == opcode.Plus) {
		if m, ok := unparen(u.V).(*test_driver.ParamMarkerExpr); ok {
			// -$1 (and l.t - $1): the parameter takes the bound type.
			b.param(m.Order+1, boundParamType(t))
		}
	}
	return b.bindExpr(n, &exprCtx{sc: &scope{}, clause: "ASOF JOIN bounds"})
}

// negateLiteral returns -lit for the bound types.
func negateLiteral(lit *expr.Literal) (*expr.Literal, error) {
	out := *lit
	switch v := lit.Value.(type) {
	case int64:
		if v == math.MinInt64 || lit.T.Kind == sqltypes.Int4 && v == math.MinInt32 {
			return nil, sqlerr.New(sqlerr.NumericValueOutOfRange, "%s out of range", lit.T)
		}
		out.Value = -v
	case float64:
		out.Value = -v
	case decimal128.Num:
		out.Value = v.Negate()
	case arrow.MonthDayNanoInterval:
		if v.Months == math.MinInt32 || v.Days == math.MinInt32 || v.Nanoseconds == math.MinInt64 {
			return nil, sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
		}
		out.Value = arrow.MonthDayNanoInterval{Months: -v.Months, Days: -v.Days, Nanoseconds: -v.Nanoseconds}
	}
	return &out, nil
}

// boundTypeOK reports whether a bound of type bt suits on column type t.
func boundTypeOK(bt, t sqltypes.Type) bool {
	switch {
	case t.IsInteger():
		return bt.IsInteger()
	case isFloat(t):
		return categoryOf(bt) == catNumeric
	case t.Kind == sqltypes.Numeric:
		return bt.IsInteger() || bt.Kind == sqltypes.Numeric
	case t.Kind == sqltypes.Date:
		return bt.IsInteger() || bt.Kind == sqltypes.Interval
	case t.Kind == sqltypes.Timestamp || t.Kind == sqltypes.TimestampTZ:
		return bt.Kind == sqltypes.Interval
	}
	return false
}

// boundHint shows the right spelling of a bound for on column type t; lit
// is the wrong bound when it is a literal.
func boundHint(t sqltypes.Type, lit *expr.Literal) string {
	switch {
	case t.IsInteger():
		return "Integer on columns take integer bounds, e.g. BETWEEN -10 AND 0."
	case isFloat(t):
		return "Floating-point on columns take numeric bounds, e.g. BETWEEN -0.5 AND 0.5."
	case t.Kind == sqltypes.Numeric:
		return "Numeric on columns take exact numeric bounds, e.g. BETWEEN -0.25 AND 0."
	case t.Kind == sqltypes.Date:
		return "Date on columns take integer days or INTERVAL constants in whole days, e.g. INTERVAL '-7 days'."
	case t.Kind == sqltypes.Timestamp || t.Kind == sqltypes.TimestampTZ:
		if lit != nil {
			if v, ok := lit.Value.(int64); ok && lit.T.IsInteger() {
				return fmt.Sprintf("Timestamp on columns take INTERVAL bounds: write INTERVAL '%d seconds' for %d seconds.", v, v)
			}
		}
		return "Timestamp on columns take INTERVAL bounds, e.g. INTERVAL '-5 seconds'."
	}
	return ""
}

// AsofBoundValue converts the value of a bound known only when the
// statement runs (Bound.Param or Bound.Expr, evaluated by lowering) to
// the on column's unit, as a literal bound is converted when the plan is
// built. t is the left on column's type, col its name for messages; lower
// says it is the lower bound; o carries the session's settings.
func AsofBoundValue(lit *expr.Literal, t sqltypes.Type, col string, lower bool, pos int, o *sqltypes.Options) (Bound, error) {
	if lit.Value == nil {
		return Bound{}, sqlerr.New(sqlerr.InvalidParameterValue, "ASOF JOIN bound must not be NULL").WithPosition(pos)
	}
	if !boundTypeOK(lit.T, t) && lit.T.Kind != sqltypes.Unknown {
		return Bound{}, errDatatype(pos, "ASOF JOIN bound of type %s does not match on column %s of type %s", lit.T, col, t).
			WithHint("%s", boundHint(t, nil))
	}
	return boundOfLiteral(lit, pos, t, col, lower, o)
}

// boundOfLiteral converts one constant bound to the on column's unit.
func boundOfLiteral(lit *expr.Literal, pos int, t sqltypes.Type, col string, lower bool, o *sqltypes.Options) (Bound, error) {
	if lit.Value == nil {
		return Bound{}, sqlerr.New(sqlerr.SyntaxError, "ASOF JOIN bound must be a constant, not NULL").WithPosition(pos)
	}
	wrong := func() (Bound, error) {
		return Bound{}, errDatatype(pos, "ASOF JOIN bound %s of type %s does not match on column %s of type %s", showLiteral(lit), lit.T, col, t).
			WithHint("%s", boundHint(t, lit))
	}
	if lit.T.Kind == sqltypes.Unknown {
		// An untyped literal is read as the bound type of the column.
		var err error
		if lit, err = decodeLiteral(boundParamType(t), lit.Value.(string), o); err != nil {
			return Bound{}, withPos(err, pos)
		}
	}
	switch {
	case t.IsInteger():
		if v, ok := lit.Value.(int64); ok && lit.T.IsInteger() {
			return Bound{Int: v, Float: float64(v)}, nil
		}
		return wrong()
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
		return wrong()
	case t.Kind == sqltypes.Numeric:
		if categoryOf(lit.T) != catNumeric || isFloat(lit.T) {
			return wrong()
		}
		s, _ := literalText(lit)
		return numericBound(s, pos, t, col, lower)
	case t.Kind == sqltypes.Date:
		if v, ok := lit.Value.(int64); ok && lit.T.IsInteger() {
			return Bound{Int: v}, nil
		}
		if iv, ok := intervalValue(lit); ok {
			if iv.Months == 0 && iv.Nanoseconds == 0 {
				return Bound{Int: int64(iv.Days)}, nil
			}
			if iv.Months != 0 && iv.Nanoseconds == 0 {
				return calendarBound(iv, lower), nil
			}
			return Bound{}, errDatatype(pos, "ASOF JOIN bound %s for date on column %s is not a whole number of days", showLiteral(lit), col).
				WithHint("Write the bound in days, e.g. INTERVAL '7 days' or 7.")
		}
		return wrong()
	case t.Kind == sqltypes.Timestamp || t.Kind == sqltypes.TimestampTZ:
		if iv, ok := intervalValue(lit); ok {
			if iv.Months != 0 {
				return calendarBound(iv, lower), nil
			}
			us := new(big.Int).Mul(big.NewInt(int64(iv.Days)), big.NewInt(86_400_000_000))
			us.Add(us, big.NewInt(iv.Nanoseconds/1000))
			// Beyond int64 microseconds the bound lies past every
			// timestamp: saturating gives the exact answer (spec §3).
			switch {
			case us.Cmp(big.NewInt(math.MaxInt64)) > 0:
				return Bound{Int: math.MaxInt64}, nil
			case us.Cmp(big.NewInt(math.MinInt64)) < 0:
				return Bound{Int: math.MinInt64}, nil
			}
			return Bound{Int: us.Int64()}, nil
		}
		return wrong()
	}
	return wrong()
}

// calendarBound is an INTERVAL bound with months. Int is the sign hint
// the operator reads: a lower bound is positive only when no part is
// negative and one is positive (its edge then always lies strictly after
// left.t), an upper bound when any part is (its edge may).
func calendarBound(iv arrow.MonthDayNanoInterval, lower bool) Bound {
	cal := &sqltypes.IntervalValue{Months: iv.Months, Days: iv.Days, Microseconds: iv.Nanoseconds / 1000}
	hint := int64(-1)
	anyPositive := cal.Months > 0 || cal.Days > 0 || cal.Microseconds > 0
	if lower && cal.Months >= 0 && cal.Days >= 0 && cal.Microseconds >= 0 && anyPositive ||
		!lower && anyPositive {
		hint = 1
	}
	return Bound{Cal: cal, Int: hint}
}

// intervalMicros orders a date or timestamp bound as PostgreSQL orders
// intervals (a month is 30 days): in microseconds, exactly.
func intervalMicros(b Bound, t sqltypes.Type) *big.Int {
	day := big.NewInt(86_400_000_000)
	if b.Cal != nil {
		v := new(big.Int).Mul(big.NewInt(int64(b.Cal.Months)*30+int64(b.Cal.Days)), day)
		return v.Add(v, big.NewInt(b.Cal.Microseconds))
	}
	if t.Kind == sqltypes.Date {
		return new(big.Int).Mul(big.NewInt(b.Int), day)
	}
	return big.NewInt(b.Int)
}

// CheckAsofRange rejects a range whose lower bound is greater than its
// upper bound as written (SQLSTATE 22023 at pos, the lower bound): NUMERIC
// bounds compare exactly, before rounding to the column's scale.
func CheckAsofRange(lo, hi Bound, t sqltypes.Type, pos int) error {
	if lo.Unbounded || hi.Unbounded {
		return nil
	}
	gt := lo.Int > hi.Int
	switch {
	case isFloat(t):
		gt = lo.Float > hi.Float
	case lo.Cal != nil || hi.Cal != nil:
		gt = intervalMicros(lo, t).Cmp(intervalMicros(hi, t)) > 0
	case lo.exact != nil && hi.exact != nil:
		gt = lo.exact.Cmp(hi.exact) > 0
	case lo.HasDec && hi.HasDec:
		gt = lo.Dec.Greater(hi.Dec)
	}
	if gt {
		return sqlerr.New(sqlerr.InvalidParameterValue, "ASOF JOIN lower bound %s is greater than upper bound %s", showBound(lo, t), showBound(hi, t)).
			WithPosition(pos)
	}
	return nil
}

// showBound is a bound as the user wrote it (NUMERIC before rounding).
func showBound(b Bound, t sqltypes.Type) string {
	if b.exact != nil {
		return b.exact.FloatString(decimalPlaces(b.exact))
	}
	return formatBound(b, t)
}

// decimalPlaces is the number of digits after the point that print r
// exactly (r is a decimal: its denominator is a product of 2s and 5s).
func decimalPlaces(r *big.Rat) int {
	d := new(big.Int).Set(r.Denom())
	one, ten := big.NewInt(1), big.NewInt(10)
	n := 0
	for d.Cmp(one) > 0 {
		g := new(big.Int).GCD(nil, nil, d, ten)
		if g.Cmp(one) == 0 {
			break
		}
		d.Quo(d, g)
		n++
	}
	return n
}

// AsofRangeEmpty reports a range with no eligible Δ although it is not
// reversed as written: NUMERIC bounds that rounding to the column's scale
// crossed (BETWEEN 0.001 AND 0.002 on numeric(10,2)).
func AsofRangeEmpty(lo, hi Bound) bool {
	if lo.Unbounded || hi.Unbounded || !lo.HasDec || !hi.HasDec {
		return false
	}
	return lo.Dec.Greater(hi.Dec)
}

// numericBound reads the decimal text s in unscaled units of the NUMERIC
// on column of type t, exactly in 128 bits: a lower bound rounds up to
// the column's scale, an upper bound down (the distance between two values
// is a whole number of units, so eligibility does not change). The value
// as written stays in exact, for CheckAsofRange.
func numericBound(s string, pos int, t sqltypes.Type, col string, lower bool) (Bound, error) {
	v, ok := new(big.Rat).SetString(s)
	if !ok {
		return Bound{}, errDatatype(pos, "ASOF JOIN bound %s is not a number", s)
	}
	exact := new(big.Rat).Set(v)
	v.Mul(v, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(numericScale(t))), nil)))
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
		return Bound{}, sqlerr.New(sqlerr.NumericValueOutOfRange, "ASOF JOIN bound %s is out of range for on column %s of type %s", s, col, t).
			WithPosition(pos).WithHint("Values of the column are never that far apart; use the inequality form (ON ... AND l.t >= r.t) for a side without bound.")
	}
	bd := Bound{Dec: decimal128.FromBigInt(q), HasDec: true, exact: exact}
	if q.IsInt64() {
		bd.Int, bd.Float = q.Int64(), float64(q.Int64())
	}
	return bd, nil
}
