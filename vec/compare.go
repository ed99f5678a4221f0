package vec

import (
	"bytes"
	"math/big"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/internal/pgjson"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Comparator returns a function that compares l[i] with r[j] in Postgres'
// order for values of type t (both arrays hold t.Arrow() values, the
// positions must be non-NULL): -1, 0 or +1. Floats order NaN above every
// number and equal to itself, -0 equals 0; text compares bytewise (the C
// collation); intervals compare as Postgres does, with a month counted as
// 30 days. Sort, aggregates and joins use it so that every operator agrees
// with the = and < of expressions.
func Comparator(t sqltypes.Type, l, r arrow.Array) (func(i, j int) int, error) {
	switch t.Kind {
	case sqltypes.Bool:
		la, ra := l.(*array.Boolean), r.(*array.Boolean)
		return func(i, j int) int { return cmpBool(la.Value(i), ra.Value(j)) }, nil
	case sqltypes.Int2:
		return ordCmp(Values[int16](l), Values[int16](r)), nil
	case sqltypes.Int4, sqltypes.Date:
		return ordCmp(Values[int32](l), Values[int32](r)), nil
	case sqltypes.Int8, sqltypes.Timestamp, sqltypes.TimestampTZ:
		return ordCmp(Values[int64](l), Values[int64](r)), nil
	case sqltypes.Float4:
		lv, rv := Values[float32](l), Values[float32](r)
		return func(i, j int) int { return operator.CmpFloat(lv[i], rv[j]) }, nil
	case sqltypes.Float8:
		lv, rv := Values[float64](l), Values[float64](r)
		return func(i, j int) int { return operator.CmpFloat(lv[i], rv[j]) }, nil
	case sqltypes.Numeric:
		la, ra := l.(*array.Decimal128), r.(*array.Decimal128)
		ls := la.DataType().(*arrow.Decimal128Type).Scale
		rs := ra.DataType().(*arrow.Decimal128Type).Scale
		if ls == rs {
			return func(i, j int) int { return la.Value(i).Cmp(ra.Value(j)) }, nil
		}
		return func(i, j int) int {
			s := max(ls, rs)
			return Rescale(la.Value(i).BigInt(), ls, s).Cmp(Rescale(ra.Value(j).BigInt(), rs, s))
		}, nil
	case sqltypes.Text, sqltypes.Varchar, sqltypes.Unknown:
		la, ra := l.(*array.String), r.(*array.String)
		return func(i, j int) int { return strings.Compare(la.Value(i), ra.Value(j)) }, nil
	case sqltypes.Bytea:
		la, ra := l.(*array.Binary), r.(*array.Binary)
		return func(i, j int) int { return bytes.Compare(la.Value(i), ra.Value(j)) }, nil
	case sqltypes.Interval:
		lv, rv := Values[arrow.MonthDayNanoInterval](l), Values[arrow.MonthDayNanoInterval](r)
		return func(i, j int) int { return IntervalKey(lv[i]).Cmp(IntervalKey(rv[j])) }, nil
	case sqltypes.JSONB:
		lj, rj := newJSONBValues(l.(*array.String)), newJSONBValues(r.(*array.String))
		if l == r {
			rj = lj
		}
		return func(i, j int) int { return pgjson.Compare(lj.at(i), rj.at(j)) }, nil
	}
	return nil, sqlerr.New(sqlerr.UndefinedFunction, "could not identify an ordering operator for type %s", t)
}

// jsonbValues are a jsonb column's values parsed, all at once: a
// comparator may be shared by goroutines (the parallel sort's merge), so it
// keeps no lazily filled state.
type jsonbValues struct{ parsed []pgjson.Value }

func newJSONBValues(a *array.String) *jsonbValues {
	v := &jsonbValues{parsed: make([]pgjson.Value, a.Len())}
	for i := range v.parsed {
		if a.IsNull(i) {
			continue
		}
		p, err := pgjson.ParseJSONB(a.Value(i))
		if err != nil { // a stored jsonb is valid; order bad text as a string
			p = pgjson.Value{Kind: pgjson.String, Str: a.Value(i)}
		}
		v.parsed[i] = p
	}
	return v
}

func (v *jsonbValues) at(i int) pgjson.Value { return v.parsed[i] }

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

func ordCmp[T int16 | int32 | int64](l, r []T) func(i, j int) int {
	return func(i, j int) int {
		switch a, b := l[i], r[j]; {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	}
}

// IntervalKey is Postgres' interval_cmp_value: the span in microseconds
// with 30-day months and 24-hour days, exact (it can exceed int64).
func IntervalKey(v arrow.MonthDayNanoInterval) *big.Int {
	days := int64(v.Months)*30 + int64(v.Days)
	k := big.NewInt(days)
	k.Mul(k, big.NewInt(86_400_000_000))
	return k.Add(k, big.NewInt(v.Nanoseconds/1000))
}
