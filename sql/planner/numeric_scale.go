package planner

import (
	"math/big"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
)

// constDivScale is Postgres' select_div_scale for a quotient of two
// numeric constants: at least 16 significant digits counted from the
// quotient's estimated first base-10000 digit, at least either operand's
// scale (7.0/2 has 16 digits, 100000.0/3 12; past asofsql's 16 stored
// digits the scale is capped by NumericDisplay). ok is false when an
// operand is not a constant (divScale applies) or the divisor is zero.
func constDivScale(op expr.BinaryOp, l, r expr.Expr) (int, bool) {
	if op != expr.Div {
		return 0, false
	}
	ll, ok1 := l.(*expr.Literal)
	rl, ok2 := r.(*expr.Literal)
	if !ok1 || !ok2 || ll.Value == nil || rl.Value == nil {
		return 0, false
	}
	a, ok1 := literalDecimal(ll)
	b, ok2 := literalDecimal(rl)
	if !ok1 || !ok2 || b.Coef.Sign() == 0 {
		return 0, false
	}
	w1, f1 := nbaseLead(a)
	w2, f2 := nbaseLead(b)
	qweight := w1 - w2
	if f1 <= f2 {
		qweight--
	}
	return max(16-qweight*4, int(a.Scale), int(b.Scale), 0), true
}

// nbaseLead is the weight and value of d's first nonzero base-10000 digit
// (Postgres' NumericVar digits); zero is (0, 0).
func nbaseLead(d sqltypes.Decimal) (weight int, first int64) {
	c := d.Coef.BigInt()
	c.Abs(c)
	if c.Sign() == 0 {
		return 0, 0
	}
	dw := len(c.String()) - 1 - int(d.Scale) // decimal exponent of the first digit
	w := dw / 4
	if dw < 0 && dw%4 != 0 {
		w--
	}
	e := int(d.Scale) + 4*w // first = c / 10^e
	if e >= 0 {
		c.Quo(c, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e)), nil))
	} else {
		c.Mul(c, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-e)), nil))
	}
	return w, c.Int64()
}

// literalDecimal is a numeric literal at its display scale.
func literalDecimal(l *expr.Literal) (sqltypes.Decimal, bool) {
	v, ok := l.Value.(decimal128.Num)
	if !ok || l.T.Kind != sqltypes.Numeric {
		return sqltypes.Decimal{}, false
	}
	return sqltypes.DisplayDecimal(v, l.T), true
}
