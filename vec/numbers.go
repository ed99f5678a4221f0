package vec

import (
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// ErrIntRange is Postgres' 22003 for a value outside integer kind k.
func ErrIntRange(k sqltypes.Kind) error {
	switch k {
	case sqltypes.Int2:
		return sqlerr.New(sqlerr.NumericValueOutOfRange, "smallint out of range")
	case sqltypes.Int4:
		return sqlerr.New(sqlerr.NumericValueOutOfRange, "integer out of range")
	}
	return sqlerr.New(sqlerr.NumericValueOutOfRange, "bigint out of range")
}

// IntRange is the value range of an integer kind.
func IntRange(k sqltypes.Kind) (int64, int64) {
	switch k {
	case sqltypes.Int2:
		return math.MinInt16, math.MaxInt16
	case sqltypes.Int4:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// ErrNumericOverflow is 22003 "numeric field overflow" for a value that
// does not fit asofsql's 128-bit NUMERIC.
func ErrNumericOverflow() error {
	return sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric field overflow").
		WithDetail("The result does not fit in NUMERIC(38): asofsql stores numerics as 128-bit decimals.")
}

// DecScale and DecPrecision are the scale and precision of numeric type
// t's Arrow decimal128 storage.
func DecScale(t sqltypes.Type) int32 { return t.Arrow().(*arrow.Decimal128Type).Scale }

func DecPrecision(t sqltypes.Type) int32 { return t.Arrow().(*arrow.Decimal128Type).Precision }

var bigTen = big.NewInt(10)

// Pow10 is 10^n.
func Pow10(n int32) *big.Int { return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil) }

// RoundDiv returns num/den rounded half away from zero.
func RoundDiv(num, den *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	r2 := new(big.Int).Abs(r)
	r2.Lsh(r2, 1)
	if r2.Cmp(new(big.Int).Abs(den)) >= 0 {
		if (num.Sign() < 0) != (den.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// Rescale moves v from scale from to scale to, rounding half away from
// zero.
func Rescale(v *big.Int, from, to int32) *big.Int {
	if to >= from {
		return new(big.Int).Mul(v, Pow10(to-from))
	}
	return RoundDiv(v, Pow10(from-to))
}

// FitDecimal converts v (at t's scale) to a decimal128 checked against t's
// precision.
func FitDecimal(v *big.Int, t sqltypes.Type) (decimal128.Num, error) {
	if v.BitLen() > 127 {
		return decimal128.Num{}, ErrNumericOverflow()
	}
	d := decimal128.FromBigInt(v)
	if !d.FitsInPrecision(DecPrecision(t)) {
		return decimal128.Num{}, ErrNumericOverflow()
	}
	return d, nil
}

// ReadInts widens an integer (or boolean) array to int64.
func ReadInts(x arrow.Array, t sqltypes.Type) ([]int64, error) {
	out := make([]int64, x.Len())
	switch t.Kind {
	case sqltypes.Int2:
		for i, v := range Values[int16](x) {
			out[i] = int64(v)
		}
	case sqltypes.Int4:
		for i, v := range Values[int32](x) {
			out[i] = int64(v)
		}
	case sqltypes.Int8:
		copy(out, Values[int64](x))
	case sqltypes.Bool:
		ba := x.(*array.Boolean)
		for i := range out {
			if ba.IsValid(i) && ba.Value(i) {
				out[i] = 1
			}
		}
	default:
		return nil, sqlerr.New(sqlerr.InternalError, "vec: ReadInts on %s", t)
	}
	return out, nil
}

// WriteInts narrows int64 values to t, checking the range of valid rows.
func WriteInts(mem memory.Allocator, t sqltypes.Type, in []int64, valid []bool) (arrow.Array, error) {
	lo, hi := IntRange(t.Kind)
	for i, v := range in {
		if Valid(valid, i) && (v < lo || v > hi) {
			return nil, ErrIntRange(t.Kind)
		}
	}
	switch t.Kind {
	case sqltypes.Int2:
		return narrow[int16](mem, t, in, valid), nil
	case sqltypes.Int4:
		return narrow[int32](mem, t, in, valid), nil
	}
	return narrow[int64](mem, t, in, valid), nil
}

func narrow[T int16 | int32 | int64](mem memory.Allocator, t sqltypes.Type, in []int64, valid []bool) arrow.Array {
	buf, out := NewFixed[T](mem, len(in))
	for i, v := range in {
		out[i] = T(v)
	}
	return FinishFixed(mem, t.Arrow(), len(in), buf, valid)
}

// ReadFloats widens a float4 or float8 array to a new []float64.
func ReadFloats(x arrow.Array, t sqltypes.Type) []float64 {
	if t.Kind == sqltypes.Float4 {
		in := Values[float32](x)
		out := make([]float64, len(in))
		for i, v := range in {
			out[i] = float64(v)
		}
		return out
	}
	return append([]float64(nil), Values[float64](x)...)
}

// WriteFloats builds an array of float type t from in and valid.
func WriteFloats(mem memory.Allocator, t sqltypes.Type, in []float64, valid []bool) (arrow.Array, error) {
	if t.Kind == sqltypes.Float4 {
		buf, out := NewFixed[float32](mem, len(in))
		for i, v := range in {
			out[i] = float32(v)
		}
		return FinishFixed(mem, t.Arrow(), len(in), buf, valid), nil
	}
	buf, out := NewFixed[float64](mem, len(in))
	copy(out, in)
	return FinishFixed(mem, t.Arrow(), len(in), buf, valid), nil
}

// BuildDecimal builds a numeric array of t with f(i) for the valid rows
// (valid nil: all), stopping at f's first error.
func BuildDecimal(mem memory.Allocator, t sqltypes.Type, rows int, valid []bool, f func(i int) (decimal128.Num, error)) (arrow.Array, error) {
	bld := array.NewDecimal128Builder(mem, t.Arrow().(*arrow.Decimal128Type))
	defer bld.Release()
	bld.Reserve(rows)
	for i := 0; i < rows; i++ {
		if !Valid(valid, i) {
			bld.UnsafeAppendBoolToBitmap(false)
			continue
		}
		v, err := f(i)
		if err != nil {
			return nil, err
		}
		bld.UnsafeAppend(v)
	}
	return bld.NewArray(), nil
}
