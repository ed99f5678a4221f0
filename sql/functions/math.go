package functions

import (
	"math"
	"math/big"
	"math/rand/v2"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// Math functions with Postgres' overloads: a double and a numeric version
// (ln, exp, sqrt, log, power, trunc, sign; round, floor, ceil and abs
// through roundRule). The numeric version is chosen when an argument is
// NUMERIC and none is a float; integers and unknown literals take the
// double one, as Postgres' preferred type float8 decides.
//
// Result display scales (sqltypes.NumericDisplay): Postgres computes them
// per value. When every argument is a constant the rule computes exactly
// that scale (sqltypes.NumericMath); otherwise the scale is unknown and
// values print without trailing zeros, their digits rounded at the scale
// Postgres would use.

var (
	f8      = sqltypes.Float8Type
	numeric = sqltypes.NumericType(sqltypes.NoLimit, sqltypes.NoLimit)
)

// Abs is abs(x) for every numeric type (integers keep their type; the
// smallest integer is 22003).
var Abs = register(&Def{
	Name: "abs", MinArgs: 1, MaxArgs: 1,
	Rule: roundRule("abs"),
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		switch {
		case len(args) != 1 || args[0].Type().Kind != t.Kind:
		case t.IsInteger():
			return intAbs(t), nil
		case isFloat(t):
			return floatApply(t, func(xs []float64) {
				for i, x := range xs {
					xs[i] = math.Abs(x)
				}
			}), nil
		case t.Kind == sqltypes.Numeric:
			return decMap(args, t, func(v *big.Int, _ int32, _ int32) (*big.Int, error) { return v.Abs(v), nil }), nil
		}
		return nil, errTypes
	},
	Examples: []Example{{"abs(-2)", "2"}, {"abs(-2.50)", "2.50"}, {"abs(-1.5::float8)", "1.5"}},
})

func intAbs(t sqltypes.Type) Kernel {
	return func(in Input) (arrow.Array, error) {
		x, err := in.Arg(0)
		if err != nil {
			return nil, err
		}
		defer x.Release()
		valid := vec.Validity(x.Len(), x)
		vals, err := vec.ReadInts(x, t)
		if err != nil {
			return nil, err
		}
		lo, _ := vec.IntRange(t.Kind)
		for i, v := range vals {
			if vec.Valid(valid, i) && v == lo {
				return nil, vec.ErrIntRange(t.Kind)
			}
			if v < 0 {
				vals[i] = -v
			}
		}
		return vec.WriteInts(in.Mem(), t, vals, valid)
	}
}

// Round is round(x) (float8: to even, as rint; numeric: half away from
// zero) and round(x, n) (numeric only; n < 0 rounds left of the point).
var Round = register(&Def{
	Name: "round", MinArgs: 1, MaxArgs: 2,
	Rule: roundRule("round"),
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		switch {
		case kindsAre(args, sqltypes.Float8) && t.Kind == sqltypes.Float8:
			return floatApply(t, func(xs []float64) {
				for i, x := range xs {
					xs[i] = math.RoundToEven(x) // float8 round is rint(), as in Postgres
				}
			}), nil
		case (kindsAre(args, sqltypes.Numeric) || kindsAre(args, sqltypes.Numeric, sqltypes.Int4)) && t.Kind == sqltypes.Numeric:
			return decMap(args, t, func(v *big.Int, xs, p int32) (*big.Int, error) {
				if p < xs {
					p = max(p, -38)
					v = vec.Rescale(v, xs, p) // round to p places, then back to the input scale
					v.Mul(v, vec.Pow10(xs-p))
				}
				return v, nil
			}), nil
		}
		return nil, errTypes
	},
	Examples: []Example{{"round(2.5)", "3"}, {"round(2.5::float8)", "2"}, {"round(1.23456, 3)", "1.235"}, {"round(1250, -2)", "1300"}},
})

// Floor is floor(x): the largest integer not above x.
var Floor = register(&Def{
	Name: "floor", MinArgs: 1, MaxArgs: 1,
	Rule: roundRule("floor"),
	Prepare: prepareFloorCeil(-1, func(xs []float64) {
		for i, x := range xs {
			xs[i] = math.Floor(x)
		}
	}),
	Examples: []Example{{"floor(-1.5)", "-2"}, {"floor(1.5::float8)", "1"}},
})

// Ceil is ceil(x) (ceiling): the smallest integer not below x.
var Ceil = register(&Def{
	Name: "ceil", Aliases: []string{"ceiling"}, MinArgs: 1, MaxArgs: 1,
	Rule: roundRule("ceil"),
	Prepare: prepareFloorCeil(1, func(xs []float64) {
		for i, x := range xs {
			xs[i] = math.Ceil(x)
		}
	}),
	Examples: []Example{{"ceil(-1.5)", "-1"}, {"ceiling(1.2::float8)", "2"}},
})

// prepareFloorCeil is floor (dir -1) or ceil (dir +1); f is its double
// precision loop.
func prepareFloorCeil(dir int, f func(xs []float64)) func([]expr.Expr, sqltypes.Type) (Kernel, error) {
	return func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		switch {
		case kindsAre(args, sqltypes.Float8) && t.Kind == sqltypes.Float8:
			return floatApply(t, f), nil
		case kindsAre(args, sqltypes.Numeric) && t.Kind == sqltypes.Numeric:
			return decMap(args, t, func(v *big.Int, xs, _ int32) (*big.Int, error) {
				q, r := new(big.Int).QuoRem(v, vec.Pow10(xs), new(big.Int))
				if r.Sign() != 0 && v.Sign() == dir {
					q.Add(q, big.NewInt(int64(dir)))
				}
				return q.Mul(q, vec.Pow10(xs)), nil
			}), nil
		}
		return nil, errTypes
	}
}

// Trunc is trunc(x) (toward zero) and trunc(x, n) (numeric only).
var Trunc = register(&Def{
	Name: "trunc", MinArgs: 1, MaxArgs: 2,
	Rule: roundRule("trunc"),
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		switch {
		case kindsAre(args, sqltypes.Float8) && t.Kind == sqltypes.Float8:
			return floatApply(t, func(xs []float64) {
				for i, x := range xs {
					xs[i] = math.Trunc(x)
				}
			}), nil
		case (kindsAre(args, sqltypes.Numeric) || kindsAre(args, sqltypes.Numeric, sqltypes.Int4)) && t.Kind == sqltypes.Numeric:
			return numMap(args, t, func(x sqltypes.Decimal, places int32, ts int32) (decimal128.Num, error) {
				if places < x.Scale {
					p := max(places, -38)
					v := x.Coef.BigInt()
					v.Quo(v, vec.Pow10(x.Scale-p)) // truncates toward zero
					return vec.FitDecimal(vec.Rescale(v, p, ts), t)
				}
				return vec.FitDecimal(vec.Rescale(x.Coef.BigInt(), x.Scale, ts), t)
			}), nil
		}
		return nil, errTypes
	},
	Examples: []Example{{"trunc(-1.7)", "-1"}, {"trunc(1.2345, 2)", "1.23"}, {"trunc(2.9::float8)", "2"}},
})

// Sign is sign(x): -1, 0 or 1.
var Sign = register(&Def{
	Name: "sign", MinArgs: 1, MaxArgs: 1,
	Rule: roundRule("sign"),
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		switch {
		case kindsAre(args, sqltypes.Float8) && t.Kind == sqltypes.Float8:
			return floatApply(t, func(xs []float64) {
				for i, x := range xs {
					switch {
					case x > 0:
						xs[i] = 1
					case x < 0:
						xs[i] = -1
					default:
						xs[i] = 0
					}
				}
			}), nil
		case kindsAre(args, sqltypes.Numeric) && t.Kind == sqltypes.Numeric:
			return numMap(args, t, func(x sqltypes.Decimal, _, ts int32) (decimal128.Num, error) {
				return decimal128.FromI64(int64(x.Coef.Sign())).IncreaseScaleBy(ts), nil
			}), nil
		}
		return nil, errTypes
	},
	Examples: []Example{{"sign(-3.5)", "-1"}, {"sign(0::float8)", "0"}},
})

// Sqrt is sqrt(x); a negative x is 2201F.
var Sqrt = register(&Def{
	Name: "sqrt", MinArgs: 1, MaxArgs: 1,
	Rule: mathRule("sqrt"),
	Prepare: prepareMath("sqrt", func(x float64) (float64, error) {
		if x < 0 {
			return 0, sqlerr.New("2201F", "cannot take square root of a negative number")
		}
		return math.Sqrt(x), nil
	}),
	Examples: []Example{{"sqrt(2.0)", "1.414213562373095"}, {"sqrt(16)", "4"}},
})

// Ln is ln(x); zero or a negative x is 2201E.
var Ln = register(&Def{
	Name: "ln", MinArgs: 1, MaxArgs: 1,
	Rule: mathRule("ln"),
	Prepare: prepareMath("ln", func(x float64) (float64, error) {
		if err := logDomain(x); err != nil {
			return 0, err
		}
		return math.Log(x), nil
	}),
	Examples: []Example{{"ln(1.0)", "0.0000000000000000"}, {"ln(1)", "0"}},
})

// Exp is exp(x); a result beyond double precision is 22003.
var Exp = register(&Def{
	Name: "exp", MinArgs: 1, MaxArgs: 1,
	Rule: mathRule("exp"),
	Prepare: prepareMath("exp", func(x float64) (float64, error) {
		v := math.Exp(x)
		if math.IsInf(v, 0) && !math.IsInf(x, 0) {
			return 0, sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
		}
		if v == 0 && !math.IsInf(x, 0) {
			return 0, sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: underflow")
		}
		return v, nil
	}),
	Examples: []Example{{"exp(0)", "1"}, {"exp(1.0)", "2.7182818284590452"}},
})

// Log is log(x) (base 10, as log10) and log(b, x) (numeric only).
var Log = register(&Def{
	Name: "log", MinArgs: 1, MaxArgs: 2,
	Rule:     mathRule("log"),
	Prepare:  prepareLog10,
	Examples: []Example{{"log(100)", "2"}, {"log(2.0, 8.0)", "3.0000000000000000"}},
})

// Log10 is log10(x).
var Log10 = register(&Def{
	Name: "log10", MinArgs: 1, MaxArgs: 1,
	Rule:     mathRule("log"),
	Prepare:  prepareLog10,
	Examples: []Example{{"log10(1000)", "3"}},
})

var prepareLog10 = prepareMath("log10", func(x float64) (float64, error) {
	if err := logDomain(x); err != nil {
		return 0, err
	}
	return math.Log10(x), nil
})

func logDomain(x float64) error {
	if x == 0 {
		return sqlerr.New("2201E", "cannot take logarithm of zero")
	}
	if x < 0 {
		return sqlerr.New("2201E", "cannot take logarithm of a negative number")
	}
	return nil
}

// Power is power(x, y) (pow, and the ^ operator).
var Power = register(&Def{
	Name: "power", Aliases: []string{"pow"}, MinArgs: 2, MaxArgs: 2,
	Rule: mathRule("power"),
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if kindsAre(args, sqltypes.Float8, sqltypes.Float8) && t.Kind == sqltypes.Float8 {
			return floatMap2(t, power), nil
		}
		return prepareNumMath("power", args, t)
	},
	Examples: []Example{{"power(2, 10)", "1024"}, {"2 ^ 0.5", "1.4142135623730950"}, {"pow(2.0, -1)", "0.5000000000000000"}},
})

func power(x, y float64) (float64, error) {
	if x == 0 && y < 0 {
		return 0, sqlerr.New("2201F", "zero raised to a negative power is undefined")
	}
	if x < 0 && math.Floor(y) != y && !math.IsInf(y, 0) {
		return 0, sqlerr.New("2201F", "a negative number raised to a non-integer power yields a complex result")
	}
	v := math.Pow(x, y)
	if math.IsInf(v, 0) && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
		return 0, sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
	}
	if v == 0 && x != 0 && !math.IsInf(y, 0) {
		return 0, sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: underflow")
	}
	return v, nil
}

// Random is random(): a double in [0, 1), drawn anew for every row.
var Random = register(&Def{
	Name: "random", MinArgs: 0, MaxArgs: 0, Volatile: true,
	Rule: fixed(f8),
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if len(args) != 0 || t.Kind != sqltypes.Float8 {
			return nil, errTypes
		}
		return func(in Input) (arrow.Array, error) {
			buf, out := vec.NewFixed[float64](in.Mem(), in.Rows())
			for i := range out {
				out[i] = rand.Float64()
			}
			return vec.FinishFixed(in.Mem(), t.Arrow(), in.Rows(), buf, nil), nil
		}, nil
	},
	Examples: []Example{{"random() >= 0 AND random() < 1", "t"}},
})

// prepareMath is the Prepare of sqrt, ln, exp and log: f on doubles, or
// Postgres' numeric function fn (sqltypes.NumericMath) on numerics.
func prepareMath(fn string, f func(float64) (float64, error)) func([]expr.Expr, sqltypes.Type) (Kernel, error) {
	return func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if kindsAre(args, sqltypes.Float8) && t.Kind == sqltypes.Float8 {
			return floatMap(t, f), nil
		}
		if fn == "log10" && len(args) == 2 {
			return prepareNumMath("log", args, t) // log(b, x)
		}
		return prepareNumMath(fn, args, t)
	}
}

// prepareNumMath computes each value with sqltypes.NumericMath at
// Postgres' result scale, rounded to the result type's.
func prepareNumMath(fn string, args []expr.Expr, t sqltypes.Type) (Kernel, error) {
	for _, a := range args {
		if a.Type().Kind != sqltypes.Numeric {
			return nil, errTypes
		}
	}
	if t.Kind != sqltypes.Numeric {
		return nil, errTypes
	}
	ts := vec.DecScale(t)
	types := argTypes(args)
	return func(in Input) (arrow.Array, error) {
		arrs, err := argsAll(in, len(types))
		if err != nil {
			return nil, err
		}
		defer vec.Release(arrs)
		rows := in.Rows()
		xs := make([]sqltypes.Decimal, len(arrs))
		return vec.BuildDecimal(in.Mem(), t, rows, vec.Validity(rows, arrs...), func(i int) (decimal128.Num, error) {
			for k, a := range arrs {
				xs[k] = sqltypes.DisplayDecimal(a.(*array.Decimal128).Value(i), types[k])
			}
			v, rscale, err := sqltypes.NumericMath(fn, xs, int(ts))
			if err != nil {
				return decimal128.Num{}, err
			}
			return vec.FitDecimal(vec.Rescale(v.BigInt(), int32(min(rscale, int(ts))), ts), t)
		})
	}, nil
}

func argTypes(args []expr.Expr) []sqltypes.Type {
	ts := make([]sqltypes.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	return ts
}

// floatApply is the kernel of a double precision function that cannot
// fail: f maps a copy of the argument's values in place, NULL rows
// included (their values are then zeroed), in one loop without a call per
// row.
func floatApply(t sqltypes.Type, f func(xs []float64)) Kernel {
	return func(in Input) (arrow.Array, error) {
		xa, err := in.Arg(0)
		if err != nil {
			return nil, err
		}
		defer xa.Release()
		valid := vec.Validity(xa.Len(), xa)
		xs := vec.ReadFloats(xa, floatType(xa))
		f(xs)
		for i := range valid {
			if !valid[i] {
				xs[i] = 0
			}
		}
		return vec.WriteFloats(in.Mem(), t, xs, valid)
	}
}

// floatMap applies f to a float4 or float8 argument row by row, into a
// result of float type t; f sees the valid rows only, so that a value
// under a NULL cannot raise an error.
func floatMap(t sqltypes.Type, f func(x float64) (float64, error)) Kernel {
	return func(in Input) (arrow.Array, error) {
		xa, err := in.Arg(0)
		if err != nil {
			return nil, err
		}
		defer xa.Release()
		valid := vec.Validity(xa.Len(), xa)
		xs := vec.ReadFloats(xa, floatType(xa))
		for i, x := range xs {
			if !vec.Valid(valid, i) {
				xs[i] = 0
				continue
			}
			if xs[i], err = f(x); err != nil {
				return nil, err
			}
		}
		return vec.WriteFloats(in.Mem(), t, xs, valid)
	}
}

// floatMap2 is floatMap for two double arguments.
func floatMap2(t sqltypes.Type, f func(x, y float64) (float64, error)) Kernel {
	return func(in Input) (arrow.Array, error) {
		arrs, err := argsAll(in, 2)
		if err != nil {
			return nil, err
		}
		defer vec.Release(arrs)
		valid := vec.Validity(arrs[0].Len(), arrs...)
		xs := vec.ReadFloats(arrs[0], floatType(arrs[0]))
		ys := vec.Values[float64](arrs[1])
		for i, x := range xs {
			if !vec.Valid(valid, i) {
				xs[i] = 0
				continue
			}
			if xs[i], err = f(x, ys[i]); err != nil {
				return nil, err
			}
		}
		return vec.WriteFloats(in.Mem(), t, xs, valid)
	}
}

func floatType(a arrow.Array) sqltypes.Type {
	if a.DataType().ID() == arrow.FLOAT32 {
		return sqltypes.Float4Type
	}
	return f8
}

// decMap applies f to the unscaled value of a numeric argument (at the
// argument type's scale xs) row by row; p is the second argument (0
// without one). The result, at scale xs, is stored at t's scale.
func decMap(args []expr.Expr, t sqltypes.Type, f func(v *big.Int, xs, p int32) (*big.Int, error)) Kernel {
	xs, ts := vec.DecScale(args[0].Type()), vec.DecScale(t)
	return decRows(len(args), t, func(x decimal128.Num, p int32) (decimal128.Num, error) {
		v, err := f(x.BigInt(), xs, p)
		if err != nil {
			return decimal128.Num{}, err
		}
		return vec.FitDecimal(vec.Rescale(v, xs, ts), t)
	})
}

// numMap is decMap on the argument at its display scale
// (sqltypes.DisplayDecimal), for functions whose result depends on it;
// f returns the result at t's scale ts.
func numMap(args []expr.Expr, t sqltypes.Type, f func(x sqltypes.Decimal, p, ts int32) (decimal128.Num, error)) Kernel {
	xt, ts := args[0].Type(), vec.DecScale(t)
	return decRows(len(args), t, func(x decimal128.Num, p int32) (decimal128.Num, error) {
		return f(sqltypes.DisplayDecimal(x, xt), p, ts)
	})
}

// decRows is the kernel of a function of a numeric and an optional int4
// (p, 0 without one), computed by f row by row into a numeric of type t.
func decRows(n int, t sqltypes.Type, f func(x decimal128.Num, p int32) (decimal128.Num, error)) Kernel {
	return func(in Input) (arrow.Array, error) {
		arrs, err := argsAll(in, n)
		if err != nil {
			return nil, err
		}
		defer vec.Release(arrs)
		xa := arrs[0].(*array.Decimal128)
		var places []int32
		if n > 1 {
			places = vec.Values[int32](arrs[1])
		}
		return vec.BuildDecimal(in.Mem(), t, xa.Len(), vec.Validity(xa.Len(), arrs...), func(i int) (decimal128.Num, error) {
			p := int32(0)
			if places != nil {
				p = places[i]
			}
			return f(xa.Value(i), p)
		})
	}
}

// mathRule types sqrt, ln, exp and log(x) (one argument), power and
// log(b, x) (two); name is the function (log10 is "log").
func mathRule(name string) Rule {
	return func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		fn := name
		if fn == "log" && len(args) == 1 {
			fn = "log10"
		}
		useNumeric := fn == "log" // log(b, x) exists for numeric only
	scan:
		for _, a := range args {
			switch t := a.Type(); {
			case t.Kind == sqltypes.Numeric:
				useNumeric = true
			case t.Kind == sqltypes.Unknown, t.IsInteger():
			case isFloat(t):
				if fn != "log" {
					useNumeric = false
					break scan
				}
			default:
				return nil, sqltypes.UnknownType, b.NoMatch(args)
			}
		}
		to := f8
		if useNumeric {
			to = numeric
		}
		for i := range args {
			if isPlainNumeric(args[i].Type()) && useNumeric {
				continue // keeps its display scale
			}
			var err error
			if args[i], err = b.Coerce(args[i], i, to); err != nil {
				return nil, to, err
			}
		}
		if !useNumeric {
			return args, to, nil
		}
		return args, constMathScale(fn, args), nil
	}
}

// constMathScale is the result type of a numeric math function: with
// Postgres' display scale when every argument is a constant.
func constMathScale(fn string, args []expr.Expr) sqltypes.Type {
	ds := make([]sqltypes.Decimal, len(args))
	for i, a := range args {
		l, ok := a.(*expr.Literal)
		if !ok || l.Value == nil || l.T.Kind != sqltypes.Numeric {
			return sqltypes.NumericDisplay(-1)
		}
		v, ok := l.Value.(decimal128.Num)
		if !ok {
			return sqltypes.NumericDisplay(-1)
		}
		ds[i] = sqltypes.DisplayDecimal(v, l.T)
	}
	_, rscale, err := sqltypes.NumericMath(fn, ds, sqltypes.DefaultNumericScale)
	if err != nil {
		return sqltypes.NumericDisplay(-1) // the run-time call reports it
	}
	return sqltypes.NumericDisplay(rscale)
}

// roundRule types round, trunc, floor, ceil, sign and abs: the numeric
// version keeps NUMERIC (display scale: abs the argument's, round/trunc
// with a constant n max(n, 0), else 0), integers take double except in
// abs (which has integer versions) and round/trunc(x, n) (numeric only).
func roundRule(name string) Rule {
	return func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		t := args[0].Type()
		argDisplay, known := t.DisplayScale()
		var err error
		switch {
		case t.Kind == sqltypes.Unknown:
			t = f8
			if len(args) > 1 {
				t = numeric
			}
		case name == "abs" && t.IsInteger():
		case t.IsInteger() && len(args) > 1, t.Kind == sqltypes.Numeric && !isPlainNumeric(t):
			t = numeric
		case t.IsInteger():
			t = f8
		case t.Kind == sqltypes.Float4:
			if name != "abs" {
				t = f8
			}
		case t.Kind == sqltypes.Float8, isPlainNumeric(t):
		default:
			return nil, t, b.NoMatch(args)
		}
		if len(args) > 1 && t.Kind != sqltypes.Numeric {
			return nil, t, b.NoMatch(args)
		}
		if t != args[0].Type() && !(isPlainNumeric(t) && isPlainNumeric(args[0].Type())) {
			if args[0], err = b.Coerce(args[0], 0, t); err != nil {
				return nil, t, err
			}
		}
		if len(args) > 1 {
			if !args[1].Type().IsInteger() && args[1].Type().Kind != sqltypes.Unknown {
				return nil, t, b.NoMatch(args)
			}
			if args[1], err = b.Coerce(args[1], 1, i4); err != nil {
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
	}
}
