package sqltypes

import (
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/sqlerr"
)

// Numeric math: ln, exp, sqrt, log and power on NUMERIC values, with the
// result scales and errors of Postgres 15's numeric.c. Postgres picks each
// result's scale from the argument values (at least 16 significant digits,
// at least the arguments' display scales); NumericMath does the same and
// returns the value rounded half away from zero to that scale. The work is
// done in binary floating point with 320 bits (~96 decimal digits), far
// more than any result that fits a decimal128 needs.

const (
	mathPrec       = 320
	minSigDigits   = 16   // NUMERIC_MIN_SIG_DIGITS
	maxDisplayScal = 1000 // NUMERIC_MAX_DISPLAY_SCALE
)

// NumericMath computes fn ("ln", "exp", "sqrt", "log10", "log" (base,
// x) or "power" (x, y)) on args, each a value together with its display
// scale (Decimal.Scale; the coefficient is at that scale). It returns the
// result's coefficient rounded at min(rscale, maxScale) and Postgres'
// result scale rscale. Errors: 2201E for the logarithm of zero or a
// negative number, 2201F for invalid power arguments and the square root
// of a negative number, 22012 for log base 1, 22003 when the result
// exceeds 38 digits at that scale.
func NumericMath(fn string, args []Decimal, maxScale int) (decimal128.Num, int, error) {
	x := args[0]
	var res *big.Float
	rscale := 0
	switch fn {
	case "sqrt":
		if x.Coef.Sign() < 0 {
			return decimal128.Num{}, 0, sqlerr.New("2201F", "cannot take square root of a negative number")
		}
		sweight := (nbaseWeight(x)+1)*4/2 - 1
		rscale = clampScale(max(minSigDigits-sweight, int(x.Scale)))
		res = new(big.Float).SetPrec(mathPrec).Sqrt(toBig(x))
	case "exp":
		v := x.Float64() * 0.434294481903252
		v = math.Max(math.Min(v, 2000), -2000)
		rscale = clampScale(max(minSigDigits-int(v), int(x.Scale)))
		if x.Float64() > 200 { // e^200 > 10^86: beyond any decimal128
			return decimal128.Num{}, 0, errMathOverflow()
		}
		res = bigExp(toBig(x))
	case "ln":
		if err := lnDomain(x); err != nil {
			return decimal128.Num{}, 0, err
		}
		rscale = clampScale(max(minSigDigits-lnDWeight(x), int(x.Scale)))
		res = bigLn(toBig(x))
	case "log10", "log":
		base, num := Decimal{Coef: decimal128.FromU64(10)}, x
		if fn == "log" {
			base, num = args[0], args[1]
		}
		if err := lnDomain(base); err != nil {
			return decimal128.Num{}, 0, err
		}
		if err := lnDomain(num); err != nil {
			return decimal128.Num{}, 0, err
		}
		rscale = clampScale(max(minSigDigits-(lnDWeight(num)-lnDWeight(base)), int(base.Scale), int(num.Scale)))
		lb := bigLn(toBig(base))
		if lb.Sign() == 0 {
			return decimal128.Num{}, 0, sqlerr.New(sqlerr.DivisionByZero, "division by zero")
		}
		res = new(big.Float).SetPrec(mathPrec).Quo(bigLn(toBig(num)), lb)
	case "power":
		var err error
		if res, rscale, err = numericPower(args[0], args[1]); err != nil {
			return decimal128.Num{}, 0, err
		}
	default:
		return decimal128.Num{}, 0, sqlerr.New(sqlerr.InternalError, "numeric function %s", fn)
	}
	n, err := roundBig(res, min(rscale, maxScale))
	return n, rscale, err
}

func errMathOverflow() error {
	return sqlerr.New(sqlerr.NumericValueOutOfRange, "value overflows numeric format")
}

func clampScale(s int) int { return min(max(s, 0), maxDisplayScal) }

func lnDomain(x Decimal) error {
	switch x.Coef.Sign() {
	case 0:
		return sqlerr.New("2201E", "cannot take logarithm of zero")
	case -1:
		return sqlerr.New("2201E", "cannot take logarithm of a negative number")
	}
	return nil
}

// numericPower is Postgres' power_var: an integral exponent multiplies
// (scale max(16, base scale)), any other goes through exp(y ln x) with a
// scale from the result's magnitude.
func numericPower(x, y Decimal) (*big.Float, int, error) {
	if x.Coef.Sign() == 0 && y.Coef.Sign() < 0 {
		return nil, 0, sqlerr.New("2201F", "zero raised to a negative power is undefined")
	}
	yi, integral := decimalInt(y)
	if x.Coef.Sign() < 0 && !integral {
		return nil, 0, sqlerr.New("2201F", "a negative number raised to a non-integer power yields a complex result")
	}
	if integral && yi.IsInt64() && yi.Int64() >= math.MinInt32 && yi.Int64() <= math.MaxInt32 {
		rscale := clampScale(max(minSigDigits, int(x.Scale)))
		e := yi.Int64()
		if x.Coef.Sign() == 0 {
			if e == 0 {
				return big.NewFloat(1), rscale, nil
			}
			return new(big.Float), rscale, nil
		}
		// |x|^e beyond 10^40 cannot be stored: say so before multiplying.
		if lg := math.Log10(math.Abs(x.Float64())) * float64(e); lg > 40 {
			return nil, 0, errMathOverflow()
		}
		r := new(big.Float).SetPrec(mathPrec).SetInt64(1)
		b := toBig(x)
		for n := abs64(e); n > 0; n >>= 1 {
			if n&1 == 1 {
				r.Mul(r, b)
			}
			b.Mul(b, b)
		}
		if e < 0 {
			r.Quo(new(big.Float).SetPrec(mathPrec).SetInt64(1), r)
		}
		return r, rscale, nil
	}
	if x.Coef.Sign() == 0 {
		return new(big.Float), minSigDigits, nil
	}
	ln := bigLn(toBig(x))
	ln.Mul(ln, toBig(y))
	v, _ := ln.Float64()
	if v > 100 { // e^100 > 10^43
		return nil, 0, errMathOverflow()
	}
	w := math.Max(v*0.434294481903252, -2000)
	rscale := clampScale(max(minSigDigits-int(w), int(x.Scale), int(y.Scale)))
	return bigExp(ln), rscale, nil
}

// decimalInt returns d as an integer when it has no fractional part.
func decimalInt(d Decimal) (*big.Int, bool) {
	q, r := new(big.Int).QuoRem(d.Coef.BigInt(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil), new(big.Int))
	return q, r.Sign() == 0
}

// nbaseWeight is the weight of d's first base-10000 digit (Postgres'
// NumericVar.weight); zero has weight 0.
func nbaseWeight(d Decimal) int {
	if d.Coef.Sign() == 0 {
		return 0
	}
	dw := decWeight(d)
	if dw >= 0 {
		return dw / 4
	}
	return -((-dw - 1) / 4) - 1
}

// decWeight is the decimal exponent of d's first significant digit.
func decWeight(d Decimal) int {
	s := d.Coef.Abs().BigInt().String()
	return len(s) - 1 - int(d.Scale)
}

// lnDWeight is Postgres' estimate_ln_dweight: the decimal weight of ln(d).
func lnDWeight(d Decimal) int {
	if d.Coef.Sign() <= 0 {
		return 0
	}
	f := d.Float64()
	if f >= 0.9 && f <= 1.1 {
		one := Decimal{Coef: decimal128.GetScaleMultiplier(int(d.Scale)), Scale: d.Scale}
		x := Decimal{Coef: d.Coef.Sub(one.Coef), Scale: d.Scale}
		if x.Coef.Sign() == 0 {
			return 0
		}
		return decWeight(x)
	}
	// Postgres estimates from the first two base-10000 digits; the float
	// value is as good for the integer part of log10(|ln d|).
	return int(math.Log10(math.Abs(math.Log(f))))
}

func toBig(d Decimal) *big.Float {
	f := new(big.Float).SetPrec(mathPrec).SetInt(d.Coef.BigInt())
	if d.Scale > 0 {
		f.Quo(f, new(big.Float).SetPrec(mathPrec).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil)))
	}
	return f
}

// roundBig rounds f half away from zero to scale digits as a decimal128
// coefficient.
func roundBig(f *big.Float, scale int) (decimal128.Num, error) {
	if f.IsInf() {
		return decimal128.Num{}, errMathOverflow()
	}
	g := new(big.Float).SetPrec(mathPrec).Mul(f, new(big.Float).SetPrec(mathPrec).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	half := big.NewFloat(0.5)
	if g.Sign() < 0 {
		g.Sub(g, half)
	} else {
		g.Add(g, half)
	}
	i, _ := g.Int(nil) // truncates toward zero
	if i.BitLen() > 127 {
		return decimal128.Num{}, errMathOverflow()
	}
	n := decimal128.FromBigInt(i)
	if !n.FitsInPrecision(MaxNumericPrecision) {
		return decimal128.Num{}, errMathOverflow()
	}
	return n, nil
}

var bigLn2 = func() *big.Float {
	// ln 2 = 2 atanh(1/3)
	t := new(big.Float).SetPrec(mathPrec).Quo(big.NewFloat(1).SetPrec(mathPrec), big.NewFloat(3).SetPrec(mathPrec))
	return atanh2(t)
}()

// atanh2 returns 2 atanh(z) = ln((1+z)/(1-z)) for |z| < 1 by its series.
func atanh2(z *big.Float) *big.Float {
	sum := new(big.Float).SetPrec(mathPrec).Set(z)
	z2 := new(big.Float).SetPrec(mathPrec).Mul(z, z)
	term := new(big.Float).SetPrec(mathPrec).Set(z)
	eps := new(big.Float).SetPrec(mathPrec).SetMantExp(big.NewFloat(1), -mathPrec-8)
	for k := int64(3); ; k += 2 {
		term.Mul(term, z2)
		t := new(big.Float).SetPrec(mathPrec).Quo(term, new(big.Float).SetPrec(mathPrec).SetInt64(k))
		sum.Add(sum, t)
		if t.Sign() == 0 || new(big.Float).Abs(t).Cmp(eps) < 0 {
			break
		}
	}
	return sum.Mul(sum, big.NewFloat(2))
}

// bigLn is ln(x) for x > 0: x = m 2^e with m in [0.5, 1), ln m by atanh.
func bigLn(x *big.Float) *big.Float {
	m := new(big.Float).SetPrec(mathPrec)
	e := x.MantExp(m)
	one := new(big.Float).SetPrec(mathPrec).SetInt64(1)
	z := new(big.Float).SetPrec(mathPrec).Quo(new(big.Float).SetPrec(mathPrec).Sub(m, one), new(big.Float).SetPrec(mathPrec).Add(m, one))
	r := atanh2(z)
	return r.Add(r, new(big.Float).SetPrec(mathPrec).Mul(bigLn2, new(big.Float).SetPrec(mathPrec).SetInt64(int64(e))))
}

// bigExp is e^x: x = k ln2 + r, e^r by Taylor on r/2^16, squared back.
func bigExp(x *big.Float) *big.Float {
	kf := new(big.Float).SetPrec(mathPrec).Quo(x, bigLn2)
	k, _ := kf.Int64()
	r := new(big.Float).SetPrec(mathPrec).Sub(x, new(big.Float).SetPrec(mathPrec).Mul(bigLn2, new(big.Float).SetPrec(mathPrec).SetInt64(k)))
	const halvings = 16
	r.SetMantExp(r, -halvings)
	sum := new(big.Float).SetPrec(mathPrec).SetInt64(1)
	term := new(big.Float).SetPrec(mathPrec).SetInt64(1)
	eps := new(big.Float).SetPrec(mathPrec).SetMantExp(big.NewFloat(1), -mathPrec-8)
	for n := int64(1); n < 200; n++ {
		term.Mul(term, r)
		term.Quo(term, new(big.Float).SetPrec(mathPrec).SetInt64(n))
		sum.Add(sum, term)
		if term.Sign() == 0 || new(big.Float).Abs(term).Cmp(eps) < 0 {
			break
		}
	}
	for i := 0; i < halvings; i++ {
		sum.Mul(sum, sum)
	}
	return sum.SetMantExp(sum, int(k))
}
