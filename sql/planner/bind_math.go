package planner

import (
	"math/big"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Math functions with Postgres' overloads: a double and a numeric version
// (ln, exp, sqrt, log, power, trunc, sign; round, floor, ceil and abs
// through numericSame). The numeric version is chosen when an argument is
// NUMERIC and none is a float; integers and unknown literals take the
// double one, as Postgres' preferred type float8 decides.
//
// Result display scales (sqltypes.NumericDisplay): Postgres computes them
// per value. When every argument is a constant the binder computes
// exactly that scale (sqltypes.NumericMath); otherwise the scale is
// unknown and values print without trailing zeros, their digits rounded
// at the scale Postgres would use.

// mathFunc is ln, exp, sqrt and log(x) (nargs 1), or power and log(b, x)
// (nargs 2).
func mathFunc(name string, lo, hi int) funcSig {
	return funcSig{min: lo, max: hi, typ: func(b *binder, args []expr.Expr, at []ast.ExprNode, n ast.ExprNode) ([]expr.Expr, sqltypes.Type, error) {
		fn := name
		if fn == "log" && len(args) == 1 {
			fn = "log10"
		}
		useNumeric := fn == "log" // log(b, x) exists for numeric only
		for _, a := range args {
			switch t := a.Type(); {
			case t.Kind == sqltypes.Numeric:
				useNumeric = true
			case t.Kind == sqltypes.Unknown, t.IsInteger():
			case categoryOf(t) == catNumeric: // a float
				if fn != "log" {
					useNumeric = false
					goto coerce
				}
			default:
				return nil, sqltypes.UnknownType, funcError(b, n, args)
			}
		}
	coerce:
		to := sqltypes.Float8Type
		if useNumeric {
			to = sqltypes.NumericType(sqltypes.NoLimit, sqltypes.NoLimit)
		}
		for i := range args {
			if isPlainNumeric(args[i].Type()) && useNumeric {
				continue // keeps its display scale
			}
			var err error
			if args[i], err = b.coerce(args[i], to, at[i], "argument"); err != nil {
				return nil, to, err
			}
		}
		if !useNumeric {
			return args, to, nil
		}
		return args, constMathScale(fn, args), nil
	}}
}

// constMathScale is the result type of a numeric math function: with
// Postgres' display scale when every argument is a constant.
func constMathScale(fn string, args []expr.Expr) sqltypes.Type {
	ds := make([]sqltypes.Decimal, len(args))
	for i, a := range args {
		l, ok := a.(*expr.Literal)
		if !ok || l.Value == nil {
			return sqltypes.NumericDisplay(-1)
		}
		d, ok := literalDecimal(l)
		if !ok {
			return sqltypes.NumericDisplay(-1)
		}
		ds[i] = d
	}
	_, rscale, err := sqltypes.NumericMath(fn, ds, sqltypes.DefaultNumericScale)
	if err != nil {
		return sqltypes.NumericDisplay(-1) // the run-time call reports it
	}
	return sqltypes.NumericDisplay(rscale)
}

// literalDecimal is a numeric literal at its display scale.
func literalDecimal(l *expr.Literal) (sqltypes.Decimal, bool) {
	v, ok := l.Value.(decimal128.Num)
	if !ok || l.T.Kind != sqltypes.Numeric {
		return sqltypes.Decimal{}, false
	}
	s := int32(numericScale(l.T))
	d, known := l.T.DisplayScale()
	if !known {
		d = int(s)
		// trailing zeros are not part of the value's scale
		for d > 0 {
			q, r := v.Div(decimal128.FromU64(10))
			if r != (decimal128.Num{}) {
				break
			}
			v, d, s = q, d-1, s-1
		}
		return sqltypes.Decimal{Coef: v, Scale: int32(d)}, true
	}
	if int32(d) < s {
		v = decimal128.FromBigInt(roundDivPow10(v, s-int32(d)))
	}
	return sqltypes.Decimal{Coef: v, Scale: int32(d)}, true
}

// roundDivPow10 is v / 10^k rounded half away from zero.
func roundDivPow10(v decimal128.Num, k int32) *big.Int {
	num := v.BigInt()
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil)
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	r.Abs(r).Lsh(r, 1)
	if r.Cmp(den) >= 0 {
		if num.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// roundFunc is round, trunc, floor, ceil, sign and abs: the numeric
// version keeps NUMERIC (display scale: abs the argument's, round/trunc
// with a constant n max(n, 0), else 0), integers take double except in
// abs (which has integer versions) and round/trunc(x, n) (numeric only).
func roundFunc(name string, lo, hi int) funcSig {
	return funcSig{min: lo, max: hi, typ: func(b *binder, args []expr.Expr, at []ast.ExprNode, n ast.ExprNode) ([]expr.Expr, sqltypes.Type, error) {
		t := args[0].Type()
		argDisplay, known := t.DisplayScale()
		var err error
		switch {
		case t.Kind == sqltypes.Unknown:
			t = sqltypes.Float8Type
			if len(args) > 1 {
				t = sqltypes.NumericType(sqltypes.NoLimit, sqltypes.NoLimit)
			}
		case name == "abs" && t.IsInteger():
		case t.IsInteger() && len(args) > 1, t.Kind == sqltypes.Numeric && !isPlainNumeric(t):
			t = sqltypes.NumericType(sqltypes.NoLimit, sqltypes.NoLimit)
		case t.IsInteger():
			t = sqltypes.Float8Type
		case t.Kind == sqltypes.Float4:
			if name != "abs" {
				t = sqltypes.Float8Type
			}
		case t.Kind == sqltypes.Float8, isPlainNumeric(t):
		default:
			return nil, t, funcError(b, n, args)
		}
		if len(args) > 1 && t.Kind != sqltypes.Numeric {
			return nil, t, funcError(b, n, args)
		}
		if t != args[0].Type() && !(isPlainNumeric(t) && isPlainNumeric(args[0].Type())) {
			if args[0], err = b.coerce(args[0], t, at[0], "argument"); err != nil {
				return nil, t, err
			}
		}
		if len(args) > 1 {
			if !args[1].Type().IsInteger() && args[1].Type().Kind != sqltypes.Unknown {
				return nil, t, funcError(b, n, args)
			}
			if args[1], err = b.coerce(args[1], sqltypes.Int4Type, at[1], "argument"); err != nil {
				return nil, t, err
			}
		}
		if t.Kind != sqltypes.Numeric {
			return args, t, nil
		}
		switch name {
		case "abs":
			if !known {
				argDisplay = -1
			}
			return args, sqltypes.NumericDisplay(argDisplay), nil
		case "round", "trunc":
			if len(args) > 1 {
				if l, ok := args[1].(*expr.Literal); ok && l.Value != nil {
					return args, sqltypes.NumericDisplay(max(int(l.Value.(int64)), 0)), nil
				}
				return args, sqltypes.NumericDisplay(-1), nil
			}
		}
		return args, sqltypes.NumericDisplay(0), nil
	}}
}

// mathFuncs are the entries of funcs this file defines.
var mathFuncs = map[string]funcSig{
	"sqrt": mathFunc("sqrt", 1, 1), "ln": mathFunc("ln", 1, 1), "exp": mathFunc("exp", 1, 1),
	"log": mathFunc("log", 1, 2), "log10": mathFunc("log", 1, 1), "power": mathFunc("power", 2, 2),
	"abs": roundFunc("abs", 1, 1), "floor": roundFunc("floor", 1, 1), "ceil": roundFunc("ceil", 1, 1),
	"round": roundFunc("round", 1, 2), "trunc": roundFunc("trunc", 1, 2), "sign": roundFunc("sign", 1, 1),
}

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
