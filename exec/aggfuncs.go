package exec

import (
	"bytes"
	"math"
	"math/big"
	"math/bits"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// AggSpec is one aggregate call: Func is the lower-case Postgres name
// (count, sum, avg, min, max, stddev, stddev_samp, stddev_pop, variance,
// var_samp, var_pop, first, last, bool_and, bool_or, string_agg, corr,
// covar_pop, covar_samp, regr_*, json_agg, jsonb_agg, json_object_agg);
// Args are its arguments over the aggregate's input (none for count(*);
// string_agg takes the value and the delimiter, json_object_agg the key
// and the value, corr and the covar/regr family Y then X, both double
// precision); Distinct aggregates each group's
// distinct non-NULL values (with their further arguments) only; Type is the result
// type, which must be what AggResultType says (the zero Type means "fill it
// in"); Name names the output column.
//
// first and last return the argument of the group's first and last input
// row (NULLs included), in input order.
type AggSpec struct {
	Func     string
	Args     []expr.Expr
	Distinct bool
	// Desc is the direction of an ordered-set aggregate's WITHIN GROUP
	// (ORDER BY x DESC): percentile_cont, percentile_disc and mode.
	Desc bool
	Type sqltypes.Type
	Name string
}

var unconstrainedNumeric = sqltypes.NumericType(sqltypes.NoLimit, sqltypes.NoLimit)

// AggResultType returns the result type of aggregate fn over an argument
// of type arg (ignored for count), following Postgres: sum(int2/int4) is
// bigint, sum(int8) and sum(numeric) numeric, avg of integers and numerics
// numeric, avg of floats double precision, stddev/variance numeric for
// exact inputs and double precision for floats.
func AggResultType(fn string, arg sqltypes.Type) (sqltypes.Type, error) {
	bad := func() (sqltypes.Type, error) {
		return sqltypes.Type{}, sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s) does not exist", fn, arg).
			WithHint("No function matches the given name and argument types.")
	}
	k := arg.Kind
	isFloat := k == sqltypes.Float4 || k == sqltypes.Float8
	switch fn {
	case "count":
		return sqltypes.Int8Type, nil
	case "sum":
		switch {
		case k == sqltypes.Int2 || k == sqltypes.Int4:
			return sqltypes.Int8Type, nil
		case k == sqltypes.Int8 || k == sqltypes.Numeric:
			return unconstrainedNumeric, nil
		case isFloat:
			return arg, nil
		case k == sqltypes.Interval:
			return sqltypes.IntervalType, nil
		}
	case "avg":
		switch {
		case arg.IsInteger() || k == sqltypes.Numeric:
			return unconstrainedNumeric, nil
		case isFloat:
			return sqltypes.Float8Type, nil
		}
	case "stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop":
		switch {
		case arg.IsInteger() || k == sqltypes.Numeric:
			return unconstrainedNumeric, nil
		case isFloat:
			return sqltypes.Float8Type, nil
		}
	case "min", "max", "first", "last":
		if k != sqltypes.Unknown {
			return arg, nil
		}
	case "array_agg":
		if k >= sqltypes.Bool && k <= sqltypes.Interval {
			return sqltypes.ArrayOf(arg), nil
		}
	case "bool_and", "bool_or", "every":
		if k == sqltypes.Bool {
			return sqltypes.BoolType, nil
		}
	case "percentile_cont":
		if k == sqltypes.Float8 {
			return sqltypes.Float8Type, nil
		}
	case "percentile_disc", "mode":
		if k != sqltypes.Unknown {
			return arg, nil
		}
	case "regr_count":
		if k == sqltypes.Float8 {
			return sqltypes.Int8Type, nil
		}
	case "corr", "covar_pop", "covar_samp", "regr_avgx", "regr_avgy", "regr_intercept", "regr_r2", "regr_slope",
		"regr_sxx", "regr_syy", "regr_sxy":
		if k == sqltypes.Float8 {
			return sqltypes.Float8Type, nil
		}
	case "json_agg", "json_object_agg":
		return sqltypes.JSONType, nil
	case "jsonb_agg":
		return sqltypes.JSONBType, nil
	case "string_agg":
		switch {
		case isTextKind(k):
			return sqltypes.TextType, nil
		case k == sqltypes.Bytea:
			return sqltypes.ByteaType, nil
		}
	}
	return bad()
}

// accumulator is the per-group state of one aggregate.
type accumulator interface {
	// resize makes room for n groups; new groups start empty.
	resize(n int)
	// add folds row i of arg into group gids[i]; rows with gids[i] < 0 are
	// skipped; arg is nil for count(*).
	add(gids []int32, arg arrow.Array) error
	// finish returns the results of groups [0, n).
	finish(mem memory.Allocator, n int) (arrow.Array, error)
	// keep retains only group g's state, as group 0.
	keep(g int)
	// groupBytes is the state size per group, for the memory limit.
	groupBytes() int64
}

func grow[T any](s []T, n int) []T {
	if n <= len(s) {
		return s[:n]
	}
	if n > cap(s) {
		// Double: groups arrive a batch at a time, and append's 1.25x
		// growth of large slices copied the state many times over.
		ns := make([]T, n, max(n, 2*cap(s)))
		copy(ns, s)
		return ns
	}
	old := len(s)
	s = s[:n]
	clear(s[old:])
	return s
}

func keep1[T any](s []T, g int) []T {
	s[0] = s[g]
	var z T
	for i := 1; i < len(s); i++ {
		s[i] = z
	}
	return s[:1]
}

func newAccumulator(spec AggSpec, argType sqltypes.Type) (accumulator, error) {
	var acc accumulator
	k := argType.Kind
	switch spec.Func {
	case "count":
		acc = &countAcc{star: len(spec.Args) == 0}
	case "sum", "avg":
		avg := spec.Func == "avg"
		switch {
		case k == sqltypes.Float4 || k == sqltypes.Float8:
			acc = &floatSumAcc{in: argType, out: spec.Type, avg: avg}
		case k == sqltypes.Interval:
			acc = &intervalSumAcc{}
		default:
			acc = &decSumAcc{in: argType, out: spec.Type, avg: avg}
		}
	case "stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop":
		acc = &varAcc{in: argType, out: spec.Type, pop: strings.HasSuffix(spec.Func, "_pop"),
			sqrt: strings.HasPrefix(spec.Func, "stddev")}
	case "min", "max":
		acc = newMinMax(argType, spec.Func == "max")
	case "first", "last":
		acc = newFirstLast(argType, spec.Func == "last")
	case "bool_and", "every", "bool_or":
		acc = &boolAcc{or: spec.Func == "bool_or"}
	case "string_agg":
		acc = &stringAggAcc{bin: k == sqltypes.Bytea}
	case "json_agg", "jsonb_agg", "json_object_agg":
		acc = &jsonAggAcc{fn: spec.Func, t: argType}
	case "array_agg":
		acc = &arrayAggAcc{t: argType}
	case "percentile_cont", "percentile_disc", "mode":
		acc = newOrderedSet(spec, argType)
	default:
		if !regrFuncs[spec.Func] {
			return nil, sqlerr.New(sqlerr.UndefinedFunction, "aggregate function %s does not exist", spec.Func)
		}
		acc = &regrAcc{fn: spec.Func}
	}
	if spec.Distinct {
		acc = &distinctAcc{inner: acc, t: argType}
	}
	return acc, nil
}

// ---- count ----

type countAcc struct {
	star bool
	n    []int64
}

func (a *countAcc) resize(n int)      { a.n = grow(a.n, n) }
func (a *countAcc) keep(g int)        { a.n = keep1(a.n, g) }
func (a *countAcc) groupBytes() int64 { return 8 }
func (a *countAcc) add(gids []int32, arg arrow.Array) error {
	for i, g := range gids {
		if g >= 0 && (a.star || arg.IsValid(i)) {
			a.n[g]++
		}
	}
	return nil
}
func (a *countAcc) finish(mem memory.Allocator, n int) (arrow.Array, error) {
	return eval.MakeFixed(mem, arrow.PrimitiveTypes.Int64, a.n[:n], nil), nil
}

// ---- sum/avg over exact types (integers, numeric) ----

type decSumAcc struct {
	in, out sqltypes.Type
	avg     bool
	sum     []decimal128.Num
	// part holds, for integer arguments, the part of each group's sum
	// not yet folded into sum: int64 additions until one would overflow.
	part []int64
	cnt  []int64
}

func (a *decSumAcc) resize(n int) {
	a.sum, a.cnt = grow(a.sum, n), grow(a.cnt, n)
	if a.in.Kind != sqltypes.Numeric {
		a.part = grow(a.part, n)
	}
}

func (a *decSumAcc) keep(g int) {
	a.sum, a.cnt = keep1(a.sum, g), keep1(a.cnt, g)
	if a.part != nil {
		a.part = keep1(a.part, g)
	}
}

func (a *decSumAcc) groupBytes() int64 { return 32 }

// settle folds the int64 parts into the 128-bit sums.
func (a *decSumAcc) settle() error {
	for g, p := range a.part {
		if p != 0 {
			if err := a.fold(g, p); err != nil {
				return err
			}
			a.part[g] = 0
		}
	}
	return nil
}

func (a *decSumAcc) fold(g int, p int64) error {
	v := decimal128.FromI64(p)
	s := a.sum[g].Add(v)
	if (v.Sign() > 0 && s.Less(a.sum[g])) || (v.Sign() < 0 && s.Greater(a.sum[g])) {
		return sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric field overflow").
			WithDetail("The sum does not fit in 128 bits.")
	}
	a.sum[g] = s
	return nil
}

// addInts adds integer arguments through the int64 parts.
func addInts[T int16 | int32 | int64](a *decSumAcc, gids []int32, vals []T, arg arrow.Array) error {
	nulls := arg.NullN() > 0
	part, cnt := a.part, a.cnt
	for i, g := range gids {
		if g < 0 || (nulls && arg.IsNull(i)) {
			continue
		}
		v, p := int64(vals[i]), part[g]
		s := p + v
		if (v > 0 && s < p) || (v < 0 && s > p) {
			if err := a.fold(int(g), p); err != nil {
				return err
			}
			s = v
		}
		part[g] = s
		cnt[g]++
	}
	return nil
}

func inScale(t sqltypes.Type) int32 {
	if t.Kind == sqltypes.Numeric {
		return t.Arrow().(*arrow.Decimal128Type).Scale
	}
	return 0
}

func (a *decSumAcc) add(gids []int32, arg arrow.Array) error {
	overflow := func() error {
		return sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric field overflow").
			WithDetail("The sum does not fit in 128 bits.")
	}
	addOne := func(g int32, v decimal128.Num) error {
		s := a.sum[g].Add(v)
		if (v.Sign() > 0 && s.Less(a.sum[g])) || (v.Sign() < 0 && s.Greater(a.sum[g])) {
			return overflow()
		}
		a.sum[g] = s
		a.cnt[g]++
		return nil
	}
	switch a.in.Kind {
	case sqltypes.Numeric:
		d := arg.(*array.Decimal128)
		for i, g := range gids {
			if g >= 0 && d.IsValid(i) {
				if err := addOne(g, d.Value(i)); err != nil {
					return err
				}
			}
		}
	case sqltypes.Int2:
		return addInts(a, gids, eval.FixedValues[int16](arg), arg)
	case sqltypes.Int4:
		return addInts(a, gids, eval.FixedValues[int32](arg), arg)
	case sqltypes.Int8:
		return addInts(a, gids, eval.FixedValues[int64](arg), arg)
	default:
		return sqlerr.New(sqlerr.InternalError, "aggregate: integer argument expected, got %s", a.in)
	}
	return nil
}

func readIntCol(a arrow.Array, t sqltypes.Type) ([]int64, error) {
	out := make([]int64, a.Len())
	switch t.Kind {
	case sqltypes.Int2:
		for i, v := range eval.FixedValues[int16](a) {
			out[i] = int64(v)
		}
	case sqltypes.Int4:
		for i, v := range eval.FixedValues[int32](a) {
			out[i] = int64(v)
		}
	case sqltypes.Int8:
		copy(out, eval.FixedValues[int64](a))
	default:
		return nil, sqlerr.New(sqlerr.InternalError, "aggregate: integer argument expected, got %s", t)
	}
	return out, nil
}

// pow10s caches the powers of ten the decimal results need.
var pow10s = func() []*big.Int {
	p := make([]*big.Int, 80)
	for i := range p {
		p[i] = new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(i)), nil)
	}
	return p
}()

// pow10 is 10^n; the result may be shared: callers must not modify it.
func pow10(n int32) *big.Int {
	if n >= 0 && int(n) < len(pow10s) {
		return pow10s[n]
	}
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// roundDiv is num/den rounded half away from zero.
func roundDiv(num, den *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	r.Abs(r).Lsh(r, 1)
	if r.Cmp(new(big.Int).Abs(den)) >= 0 {
		if (num.Sign() < 0) != (den.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// decResult appends the unscaled value v (at scale from) to a decimal
// builder of type out, rounding and checking its precision.
func decResult(b *array.Decimal128Builder, v *big.Int, from int32, out sqltypes.Type) error {
	dt := out.Arrow().(*arrow.Decimal128Type)
	if dt.Scale >= from {
		v = new(big.Int).Mul(v, pow10(dt.Scale-from))
	} else {
		v = roundDiv(v, pow10(from-dt.Scale))
	}
	if v.BitLen() > 127 {
		return sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric field overflow")
	}
	d := decimal128.FromBigInt(v)
	if !d.FitsInPrecision(dt.Precision) {
		return sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric field overflow").
			WithDetail("A field with precision %d, scale %d must round to an absolute value less than 10^%d.", dt.Precision, dt.Scale, dt.Precision-dt.Scale)
	}
	b.Append(d)
	return nil
}

func (a *decSumAcc) finish(mem memory.Allocator, n int) (arrow.Array, error) {
	if err := a.settle(); err != nil {
		return nil, err
	}
	s := inScale(a.in)
	if a.out.Kind == sqltypes.Int8 {
		vals := make([]int64, n)
		valid := make([]bool, n)
		for g := 0; g < n; g++ {
			if a.cnt[g] == 0 {
				continue
			}
			v := a.sum[g]
			if !((v.HighBits() == 0 && v.LowBits() < 1<<63) || (v.HighBits() == -1 && v.LowBits() >= 1<<63)) {
				return nil, sqlerr.New(sqlerr.NumericValueOutOfRange, "bigint out of range")
			}
			vals[g], valid[g] = int64(v.LowBits()), true
		}
		return eval.MakeFixed(mem, arrow.PrimitiveTypes.Int64, vals, valid), nil
	}
	b := array.NewDecimal128Builder(mem, a.out.Arrow().(*arrow.Decimal128Type))
	defer b.Release()
	outScale := a.out.Arrow().(*arrow.Decimal128Type).Scale
	b.Reserve(n)
	for g := 0; g < n; g++ {
		if a.cnt[g] == 0 {
			b.AppendNull()
			continue
		}
		if r, ok := a.fastResult(g, s, outScale); ok {
			b.UnsafeAppend(r)
			continue
		}
		v := a.sum[g].BigInt()
		from := s
		if a.avg {
			// avg = sum / count, exact to one guard digit past the
			// result scale (truncated), which decResult then rounds half
			// away from zero: truncating first cannot change that rounding.
			outScale := a.out.Arrow().(*arrow.Decimal128Type).Scale
			from = outScale + 1
			v = new(big.Int).Mul(v, pow10(from-s))
			v.Quo(v, big.NewInt(a.cnt[g]))
		}
		if err := decResult(b, v, from, a.out); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}

// fastResult computes group g's result without big.Int, exactly as the
// big.Int path of finish does, when the sum fits in int64 and the
// scales are small (every sum of integer columns short of int64
// overflow); ok is false otherwise and the caller takes that path.
func (a *decSumAcc) fastResult(g int, inScale, outScale int32) (decimal128.Num, bool) {
	v := a.sum[g]
	if !((v.HighBits() == 0 && v.LowBits() < 1<<63) || (v.HighBits() == -1 && v.LowBits() >= 1<<63)) {
		return decimal128.Num{}, false
	}
	dt := a.out.Arrow().(*arrow.Decimal128Type)
	if !a.avg {
		if outScale < inScale || outScale-inScale > 18 {
			return decimal128.Num{}, false
		}
		r := v.Mul(decimal128.GetScaleMultiplier(int(outScale - inScale)))
		return r, r.FitsInPrecision(dt.Precision)
	}
	// avg: |sum|·10^(outScale+1-inScale) / cnt truncated, then the guard
	// digit rounded half away from zero (decResult's rule), on magnitudes.
	k := outScale + 1 - inScale
	if k < 0 || k > 19 {
		return decimal128.Num{}, false
	}
	x := int64(v.LowBits())
	m := uint64(x)
	if x < 0 {
		m = uint64(-x)
	}
	hi, lo := bits.Mul64(m, decimal128.GetScaleMultiplier(int(k)).LowBits())
	hi, lo, _ = divU128(hi, lo, uint64(a.cnt[g]))
	hi, lo, rem := divU128(hi, lo, 10)
	if rem >= 5 {
		var c uint64
		lo, c = bits.Add64(lo, 1, 0)
		hi += c
	}
	if hi >= 1<<63 {
		return decimal128.Num{}, false
	}
	r := decimal128.New(int64(hi), lo)
	if x < 0 {
		r = r.Negate()
	}
	return r, r.FitsInPrecision(dt.Precision)
}

// divU128 divides the 128-bit hi:lo by d.
func divU128(hi, lo, d uint64) (qhi, qlo, rem uint64) {
	qhi = hi / d
	qlo, rem = bits.Div64(hi%d, lo, d)
	return qhi, qlo, rem
}

// ---- sum/avg over floats ----

type floatSumAcc struct {
	in, out sqltypes.Type
	avg     bool
	sum     []float64
	cnt     []int64
}

func (a *floatSumAcc) resize(n int)      { a.sum, a.cnt = grow(a.sum, n), grow(a.cnt, n) }
func (a *floatSumAcc) keep(g int)        { a.sum, a.cnt = keep1(a.sum, g), keep1(a.cnt, g) }
func (a *floatSumAcc) groupBytes() int64 { return 16 }

func readFloatCol(a arrow.Array, t sqltypes.Type) []float64 {
	if t.Kind == sqltypes.Float4 {
		in := eval.FixedValues[float32](a)
		out := make([]float64, len(in))
		for i, v := range in {
			out[i] = float64(v)
		}
		return out
	}
	return eval.FixedValues[float64](a)
}

func (a *floatSumAcc) add(gids []int32, arg arrow.Array) error {
	vals := readFloatCol(arg, a.in)
	for i, g := range gids {
		if g < 0 || arg.IsNull(i) {
			continue
		}
		s := a.sum[g] + vals[i]
		if math.IsInf(s, 0) && !math.IsInf(a.sum[g], 0) && !math.IsInf(vals[i], 0) {
			return sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
		}
		a.sum[g] = s
		a.cnt[g]++
	}
	return nil
}

func (a *floatSumAcc) finish(mem memory.Allocator, n int) (arrow.Array, error) {
	vals := make([]float64, n)
	valid := make([]bool, n)
	for g := 0; g < n; g++ {
		if a.cnt[g] == 0 {
			continue
		}
		valid[g] = true
		vals[g] = a.sum[g]
		if a.avg {
			vals[g] /= float64(a.cnt[g])
		}
	}
	if a.out.Kind == sqltypes.Float4 {
		f4 := make([]float32, n)
		for i, v := range vals {
			f4[i] = float32(v)
		}
		return eval.MakeFixed(mem, arrow.PrimitiveTypes.Float32, f4, valid), nil
	}
	return eval.MakeFixed(mem, arrow.PrimitiveTypes.Float64, vals, valid), nil
}

// ---- sum(interval) ----

type intervalSumAcc struct {
	sum []arrow.MonthDayNanoInterval
	cnt []int64
}

func (a *intervalSumAcc) resize(n int)      { a.sum, a.cnt = grow(a.sum, n), grow(a.cnt, n) }
func (a *intervalSumAcc) keep(g int)        { a.sum, a.cnt = keep1(a.sum, g), keep1(a.cnt, g) }
func (a *intervalSumAcc) groupBytes() int64 { return 24 }

func (a *intervalSumAcc) add(gids []int32, arg arrow.Array) error {
	vals := eval.FixedValues[arrow.MonthDayNanoInterval](arg)
	for i, g := range gids {
		if g < 0 || arg.IsNull(i) {
			continue
		}
		s, v := a.sum[g], vals[i]
		m, d, ns := int64(s.Months)+int64(v.Months), int64(s.Days)+int64(v.Days), s.Nanoseconds+v.Nanoseconds
		if m != int64(int32(m)) || d != int64(int32(d)) || (v.Nanoseconds > 0 && ns < s.Nanoseconds) || (v.Nanoseconds < 0 && ns > s.Nanoseconds) {
			return sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
		}
		a.sum[g] = arrow.MonthDayNanoInterval{Months: int32(m), Days: int32(d), Nanoseconds: ns}
		a.cnt[g]++
	}
	return nil
}

func (a *intervalSumAcc) finish(mem memory.Allocator, n int) (arrow.Array, error) {
	valid := make([]bool, n)
	for g := range valid {
		valid[g] = a.cnt[g] > 0
	}
	return eval.MakeFixed(mem, arrow.FixedWidthTypes.MonthDayNanoInterval, a.sum[:n], valid), nil
}

// ---- variance / stddev ----

// varAcc computes exact sums for integer and numeric inputs (the result is
// then exact up to the output scale, as Postgres' numeric is) and, for
// floats, Postgres' own Youngs-Cramer recurrence (float8_accum), so that
// float results agree with Postgres to the last digit.
type varAcc struct {
	in, out   sqltypes.Type
	pop, sqrt bool
	n         []int64
	sum, sq   []*big.Int // exact inputs: unscaled sum and sum of squares
	sx, sxx   []float64  // floats: Σx and the Youngs-Cramer Sxx
}

func (a *varAcc) isFloat() bool { return a.in.Kind == sqltypes.Float4 || a.in.Kind == sqltypes.Float8 }

func (a *varAcc) resize(n int) {
	a.n = grow(a.n, n)
	if a.isFloat() {
		a.sx, a.sxx = grow(a.sx, n), grow(a.sxx, n)
		return
	}
	a.sum, a.sq = grow(a.sum, n), grow(a.sq, n)
}

func (a *varAcc) keep(g int) {
	a.n = keep1(a.n, g)
	if a.isFloat() {
		a.sx, a.sxx = keep1(a.sx, g), keep1(a.sxx, g)
		return
	}
	a.sum, a.sq = keep1(a.sum, g), keep1(a.sq, g)
}

func (a *varAcc) groupBytes() int64 { return 80 }

func (a *varAcc) add(gids []int32, arg arrow.Array) error {
	if a.isFloat() {
		vals := readFloatCol(arg, a.in)
		for i, g := range gids {
			if g < 0 || arg.IsNull(i) {
				continue
			}
			a.n[g]++
			a.sx[g] += vals[i]
			if n := float64(a.n[g]); n > 1 {
				tmp := vals[i]*n - a.sx[g]
				a.sxx[g] += tmp * tmp / (n * (n - 1))
			}
		}
		return nil
	}
	var get func(i int) *big.Int
	if a.in.Kind == sqltypes.Numeric {
		d := arg.(*array.Decimal128)
		get = func(i int) *big.Int { return d.Value(i).BigInt() }
	} else {
		vals, err := readIntCol(arg, a.in)
		if err != nil {
			return err
		}
		get = func(i int) *big.Int { return big.NewInt(vals[i]) }
	}
	for i, g := range gids {
		if g < 0 || arg.IsNull(i) {
			continue
		}
		if a.sum[g] == nil {
			a.sum[g], a.sq[g] = new(big.Int), new(big.Int)
		}
		v := get(i)
		a.n[g]++
		a.sum[g].Add(a.sum[g], v)
		a.sq[g].Add(a.sq[g], new(big.Int).Mul(v, v))
	}
	return nil
}

func (a *varAcc) finish(mem memory.Allocator, n int) (arrow.Array, error) {
	minN := int64(2)
	if a.pop {
		minN = 1
	}
	if a.isFloat() {
		vals := make([]float64, n)
		valid := make([]bool, n)
		for g := 0; g < n; g++ {
			if a.n[g] < minN {
				continue
			}
			den := float64(a.n[g] - 1)
			if a.pop {
				den = float64(a.n[g])
			}
			v := a.sxx[g] / den
			if v < 0 {
				v = 0
			}
			if a.sqrt {
				v = math.Sqrt(v)
			}
			vals[g], valid[g] = v, true
		}
		return eval.MakeFixed(mem, arrow.PrimitiveTypes.Float64, vals, valid), nil
	}
	b := array.NewDecimal128Builder(mem, a.out.Arrow().(*arrow.Decimal128Type))
	defer b.Release()
	s := inScale(a.in)
	outScale := a.out.Arrow().(*arrow.Decimal128Type).Scale
	for g := 0; g < n; g++ {
		if a.n[g] < minN {
			b.AppendNull()
			continue
		}
		// variance = (n·Σx² − (Σx)²) / (n·(n−1)) (or n² for _pop), with x
		// unscaled at scale s, so the quotient is at scale 2s.
		cnt := big.NewInt(a.n[g])
		num := new(big.Int).Mul(cnt, a.sq[g])
		num.Sub(num, new(big.Int).Mul(a.sum[g], a.sum[g]))
		den := new(big.Int).Mul(cnt, big.NewInt(a.n[g]-1))
		if a.pop {
			den.Mul(cnt, cnt)
		}
		var v *big.Int
		if !a.sqrt {
			// Result at outScale+1 guard digit, from scale 2s.
			v = roundDiv(new(big.Int).Mul(num, pow10(outScale+1)), new(big.Int).Mul(den, pow10(2*s)))
			if err := decResult(b, v, outScale+1, a.out); err != nil {
				return nil, err
			}
			continue
		}
		// stddev: sqrt(num/den) / 10^s, at outScale+1 digits: isqrt of
		// num·10^(2(outScale+1)) / den, which is at scale s+outScale+1.
		q := new(big.Int).Mul(num, pow10(2*(outScale+1)))
		q.Quo(q, den)
		v = new(big.Int).Sqrt(q)
		if err := decResult(b, v, s+outScale+1, a.out); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}

// ---- min/max and first/last, generic over the stored Go type ----

type valueOps[T any] struct {
	reader func(a arrow.Array) func(i int) T
	cmp    func(x, y T) int
	build  func(mem memory.Allocator, vals []T, valid []bool) arrow.Array
}

func fixedOps[T int16 | int32 | int64](dt arrow.DataType) valueOps[T] {
	return valueOps[T]{
		reader: func(a arrow.Array) func(i int) T {
			v := eval.FixedValues[T](a)
			return func(i int) T { return v[i] }
		},
		cmp: func(x, y T) int {
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		},
		build: func(mem memory.Allocator, vals []T, valid []bool) arrow.Array {
			return eval.MakeFixed(mem, dt, vals, valid)
		},
	}
}

func floatOps[T float32 | float64](dt arrow.DataType) valueOps[T] {
	return valueOps[T]{
		reader: func(a arrow.Array) func(i int) T {
			v := eval.FixedValues[T](a)
			return func(i int) T { return v[i] }
		},
		cmp: operator.CmpFloat[T],
		build: func(mem memory.Allocator, vals []T, valid []bool) arrow.Array {
			return eval.MakeFixed(mem, dt, vals, valid)
		},
	}
}

func builderOps[T any](t sqltypes.Type, get func(a arrow.Array, i int) T, cmp func(x, y T) int, app func(b array.Builder, v T)) valueOps[T] {
	return valueOps[T]{
		reader: func(a arrow.Array) func(i int) T { return func(i int) T { return get(a, i) } },
		cmp:    cmp,
		build: func(mem memory.Allocator, vals []T, valid []bool) arrow.Array {
			b := array.NewBuilder(mem, t.Arrow())
			defer b.Release()
			for i, v := range vals {
				if valid[i] {
					app(b, v)
				} else {
					b.AppendNull()
				}
			}
			return b.NewArray()
		},
	}
}

// withOps instantiates mk with the valueOps of type t.
func withOps(t sqltypes.Type, mk func(any) accumulator) accumulator {
	dt := t.Arrow()
	switch t.Kind {
	case sqltypes.Int2:
		return mk(fixedOps[int16](dt))
	case sqltypes.Int4, sqltypes.Date:
		return mk(fixedOps[int32](dt))
	case sqltypes.Int8, sqltypes.Timestamp, sqltypes.TimestampTZ:
		return mk(fixedOps[int64](dt))
	case sqltypes.Float4:
		return mk(floatOps[float32](dt))
	case sqltypes.Float8:
		return mk(floatOps[float64](dt))
	case sqltypes.Bool:
		return mk(builderOps(t, func(a arrow.Array, i int) bool { return a.(*array.Boolean).Value(i) },
			func(x, y bool) int {
				switch {
				case x == y:
					return 0
				case !x:
					return -1
				}
				return 1
			},
			func(b array.Builder, v bool) { b.(*array.BooleanBuilder).Append(v) }))
	case sqltypes.Numeric:
		return mk(builderOps(t, func(a arrow.Array, i int) decimal128.Num { return a.(*array.Decimal128).Value(i) },
			func(x, y decimal128.Num) int { return x.Cmp(y) },
			func(b array.Builder, v decimal128.Num) { b.(*array.Decimal128Builder).Append(v) }))
	case sqltypes.Bytea:
		return mk(builderOps(t, func(a arrow.Array, i int) []byte { return bytes.Clone(a.(*array.Binary).Value(i)) },
			bytes.Compare,
			func(b array.Builder, v []byte) { b.(*array.BinaryBuilder).Append(v) }))
	case sqltypes.Interval:
		return mk(builderOps(t, func(a arrow.Array, i int) arrow.MonthDayNanoInterval {
			return a.(*array.MonthDayNanoInterval).Value(i)
		},
			func(x, y arrow.MonthDayNanoInterval) int { return eval.IntervalKey(x).Cmp(eval.IntervalKey(y)) },
			func(b array.Builder, v arrow.MonthDayNanoInterval) { b.(*array.MonthDayNanoIntervalBuilder).Append(v) }))
	default: // text kinds
		return mk(builderOps(t, func(a arrow.Array, i int) string { return strings.Clone(a.(*array.String).Value(i)) },
			strings.Compare,
			func(b array.Builder, v string) { b.(*array.StringBuilder).Append(v) }))
	}
}

type minMaxAcc[T any] struct {
	ops  valueOps[T]
	max  bool
	val  []T
	seen []bool
}

func newMinMax(t sqltypes.Type, isMax bool) accumulator {
	return withOps(t, func(o any) accumulator { return makeMinMax(o, isMax) })
}

func makeMinMax(o any, isMax bool) accumulator {
	switch ops := o.(type) {
	case valueOps[int16]:
		return &minMaxAcc[int16]{ops: ops, max: isMax}
	case valueOps[int32]:
		return &minMaxAcc[int32]{ops: ops, max: isMax}
	case valueOps[int64]:
		return &minMaxAcc[int64]{ops: ops, max: isMax}
	case valueOps[float32]:
		return &minMaxAcc[float32]{ops: ops, max: isMax}
	case valueOps[float64]:
		return &minMaxAcc[float64]{ops: ops, max: isMax}
	case valueOps[bool]:
		return &minMaxAcc[bool]{ops: ops, max: isMax}
	case valueOps[decimal128.Num]:
		return &minMaxAcc[decimal128.Num]{ops: ops, max: isMax}
	case valueOps[[]byte]:
		return &minMaxAcc[[]byte]{ops: ops, max: isMax}
	case valueOps[arrow.MonthDayNanoInterval]:
		return &minMaxAcc[arrow.MonthDayNanoInterval]{ops: ops, max: isMax}
	case valueOps[string]:
		return &minMaxAcc[string]{ops: ops, max: isMax}
	}
	panic("unreachable: withOps covers every kind")
}

func (a *minMaxAcc[T]) resize(n int)      { a.val, a.seen = grow(a.val, n), grow(a.seen, n) }
func (a *minMaxAcc[T]) keep(g int)        { a.val, a.seen = keep1(a.val, g), keep1(a.seen, g) }
func (a *minMaxAcc[T]) groupBytes() int64 { return 24 }

// minMaxFixed is minMaxAcc.add for the plain integer types, without a
// closure call per row.
func minMaxFixed[T int16 | int32 | int64](val []T, seen []bool, isMax bool, gids []int32, vals []T, arg arrow.Array) {
	nulls := arg.NullN() > 0
	for i, g := range gids {
		if g < 0 || (nulls && arg.IsNull(i)) {
			continue
		}
		v := vals[i]
		if !seen[g] {
			val[g], seen[g] = v, true
		} else if (isMax && v > val[g]) || (!isMax && v < val[g]) {
			val[g] = v
		}
	}
}

func (a *minMaxAcc[T]) add(gids []int32, arg arrow.Array) error {
	switch m := any(a).(type) {
	case *minMaxAcc[int64]:
		minMaxFixed(m.val, m.seen, m.max, gids, eval.FixedValues[int64](arg), arg)
		return nil
	case *minMaxAcc[int32]:
		minMaxFixed(m.val, m.seen, m.max, gids, eval.FixedValues[int32](arg), arg)
		return nil
	case *minMaxAcc[int16]:
		minMaxFixed(m.val, m.seen, m.max, gids, eval.FixedValues[int16](arg), arg)
		return nil
	}
	get := a.ops.reader(arg)
	for i, g := range gids {
		if g < 0 || arg.IsNull(i) {
			continue
		}
		v := get(i)
		if !a.seen[g] {
			a.val[g], a.seen[g] = v, true
			continue
		}
		c := a.ops.cmp(v, a.val[g])
		if (a.max && c > 0) || (!a.max && c < 0) {
			a.val[g] = v
		}
	}
	return nil
}

func (a *minMaxAcc[T]) finish(mem memory.Allocator, n int) (arrow.Array, error) {
	return a.ops.build(mem, a.val[:n], a.seen[:n]), nil
}

type firstLastAcc[T any] struct {
	ops   valueOps[T]
	last  bool
	val   []T
	valid []bool
	set   []bool
}

func newFirstLast(t sqltypes.Type, last bool) accumulator {
	return withOps(t, func(o any) accumulator { return makeFirstLast(o, last) })
}

func makeFirstLast(o any, last bool) accumulator {
	switch ops := o.(type) {
	case valueOps[int16]:
		return &firstLastAcc[int16]{ops: ops, last: last}
	case valueOps[int32]:
		return &firstLastAcc[int32]{ops: ops, last: last}
	case valueOps[int64]:
		return &firstLastAcc[int64]{ops: ops, last: last}
	case valueOps[float32]:
		return &firstLastAcc[float32]{ops: ops, last: last}
	case valueOps[float64]:
		return &firstLastAcc[float64]{ops: ops, last: last}
	case valueOps[bool]:
		return &firstLastAcc[bool]{ops: ops, last: last}
	case valueOps[decimal128.Num]:
		return &firstLastAcc[decimal128.Num]{ops: ops, last: last}
	case valueOps[[]byte]:
		return &firstLastAcc[[]byte]{ops: ops, last: last}
	case valueOps[arrow.MonthDayNanoInterval]:
		return &firstLastAcc[arrow.MonthDayNanoInterval]{ops: ops, last: last}
	case valueOps[string]:
		return &firstLastAcc[string]{ops: ops, last: last}
	}
	panic("unreachable: withOps covers every kind")
}

func (a *firstLastAcc[T]) resize(n int) {
	a.val, a.valid, a.set = grow(a.val, n), grow(a.valid, n), grow(a.set, n)
}
func (a *firstLastAcc[T]) keep(g int) {
	a.val, a.valid, a.set = keep1(a.val, g), keep1(a.valid, g), keep1(a.set, g)
}
func (a *firstLastAcc[T]) groupBytes() int64 { return 26 }

func (a *firstLastAcc[T]) add(gids []int32, arg arrow.Array) error {
	get := a.ops.reader(arg)
	var z T
	for i, g := range gids {
		if g < 0 || (a.set[g] && !a.last) {
			continue
		}
		a.set[g] = true
		a.valid[g] = arg.IsValid(i)
		if a.valid[g] {
			a.val[g] = get(i)
		} else {
			a.val[g] = z
		}
	}
	return nil
}

func (a *firstLastAcc[T]) finish(mem memory.Allocator, n int) (arrow.Array, error) {
	return a.ops.build(mem, a.val[:n], a.valid[:n]), nil
}

// ---- bool_and / bool_or ----

type boolAcc struct {
	or   bool
	val  []bool
	seen []bool
}

func (a *boolAcc) resize(n int)      { a.val, a.seen = grow(a.val, n), grow(a.seen, n) }
func (a *boolAcc) keep(g int)        { a.val, a.seen = keep1(a.val, g), keep1(a.seen, g) }
func (a *boolAcc) groupBytes() int64 { return 2 }

func (a *boolAcc) add(gids []int32, arg arrow.Array) error {
	b := arg.(*array.Boolean)
	for i, g := range gids {
		if g < 0 || b.IsNull(i) {
			continue
		}
		v := b.Value(i)
		if !a.seen[g] {
			a.val[g], a.seen[g] = v, true
		} else if a.or {
			a.val[g] = a.val[g] || v
		} else {
			a.val[g] = a.val[g] && v
		}
	}
	return nil
}

func (a *boolAcc) finish(mem memory.Allocator, n int) (arrow.Array, error) {
	b := array.NewBooleanBuilder(mem)
	defer b.Release()
	b.AppendValues(a.val[:n], a.seen[:n])
	return b.NewArray(), nil
}

// ---- DISTINCT ----

// distinctAcc feeds its inner aggregate only the first occurrence of each
// non-NULL value per group.
type distinctAcc struct {
	inner accumulator
	t     sqltypes.Type
	seen  []map[string]struct{}
	bytes int64
	extra []arrow.Array // further arguments, part of what must be distinct
}

func (a *distinctAcc) setExtra(args []arrow.Array) {
	a.extra = args
	if m, ok := a.inner.(multiArg); ok {
		m.setExtra(args)
	}
}

func (a *distinctAcc) resize(n int) { a.inner.resize(n); a.seen = grow(a.seen, n) }

func (a *distinctAcc) keep(g int) {
	a.inner.keep(g)
	a.seen = keep1(a.seen, g)
}

func (a *distinctAcc) groupBytes() int64 { return a.inner.groupBytes() + 8 }

func (a *distinctAcc) add(gids []int32, arg arrow.Array) error {
	enc := keyEncoder{cols: []arrow.Array{arg}, types: []sqltypes.Type{a.t}}
	for _, x := range a.extra {
		enc.cols = append(enc.cols, x)
		enc.types = append(enc.types, a.t)
	}
	sub := make([]int32, len(gids))
	var buf []byte
	for i, g := range gids {
		sub[i] = -1
		if g < 0 || arg.IsNull(i) {
			continue
		}
		buf = enc.encode(buf[:0], i)
		m := a.seen[g]
		if m == nil {
			m = map[string]struct{}{}
			a.seen[g] = m
		}
		if _, dup := m[string(buf)]; dup {
			continue
		}
		m[string(buf)] = struct{}{}
		a.bytes += int64(len(buf)) + 48
		sub[i] = g
	}
	return a.inner.add(sub, arg)
}

func (a *distinctAcc) finish(mem memory.Allocator, n int) (arrow.Array, error) {
	return a.inner.finish(mem, n)
}
