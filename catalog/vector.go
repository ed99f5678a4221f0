package catalog

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/operator"
)

// This file holds the typed column kernels the storage engine needs: copying
// ranges between arrays and builders (gathered rows: operator.Gather), comparing rows with
// PostgreSQL's ascending NULLS LAST order, and boxing key values for segment
// statistics. Each kernel switches on the Arrow type once per call and then
// runs a tight loop, so per-row cost stays free of interface dispatch.

// fixedBuilder is the part of a fixed-width Arrow builder the kernels use.
type fixedBuilder[T any] interface {
	Append(T)
	AppendNull()
	AppendValues([]T, []bool)
	Reserve(int)
}

func appendFixed[T any](b fixedBuilder[T], vals []T, a arrow.Array, i, j int) {
	if a.NullN() == 0 {
		b.AppendValues(vals[i:j], nil)
		return
	}
	b.Reserve(j - i)
	for k := i; k < j; k++ {
		if a.IsNull(k) {
			b.AppendNull()
		} else {
			b.Append(vals[k])
		}
	}
}

// appendRange appends rows [i, j) of a to b; a and b have the same type.
func appendRange(b array.Builder, a arrow.Array, i, j int) {
	switch a := a.(type) {
	case *array.Boolean:
		bb := b.(*array.BooleanBuilder)
		bb.Reserve(j - i)
		for k := i; k < j; k++ {
			if a.IsNull(k) {
				bb.AppendNull()
			} else {
				bb.Append(a.Value(k))
			}
		}
	case *array.Int16:
		appendFixed[int16](b.(*array.Int16Builder), a.Values(), a, i, j)
	case *array.Int32:
		appendFixed[int32](b.(*array.Int32Builder), a.Values(), a, i, j)
	case *array.Int64:
		appendFixed[int64](b.(*array.Int64Builder), a.Values(), a, i, j)
	case *array.Float32:
		appendFixed[float32](b.(*array.Float32Builder), a.Values(), a, i, j)
	case *array.Float64:
		appendFixed[float64](b.(*array.Float64Builder), a.Values(), a, i, j)
	case *array.Decimal128:
		appendFixed[decimal128.Num](b.(*array.Decimal128Builder), a.Values(), a, i, j)
	case *array.Date32:
		appendFixed[arrow.Date32](b.(*array.Date32Builder), a.Values(), a, i, j)
	case *array.Timestamp:
		appendFixed[arrow.Timestamp](b.(*array.TimestampBuilder), a.Values(), a, i, j)
	case *array.MonthDayNanoInterval:
		appendFixed[arrow.MonthDayNanoInterval](b.(*array.MonthDayNanoIntervalBuilder), a.MonthDayNanoIntervalValues(), a, i, j)
	case *array.String:
		sb := b.(*array.StringBuilder)
		sb.Reserve(j - i)
		if j > i {
			// Grow geometrically: ReserveData sizes the buffer exactly,
			// which made appending rows one commit at a time quadratic.
			need := int(a.ValueOffset64(j-1)+int64(a.ValueLen(j-1))) - int(a.ValueOffset64(i))
			if sb.DataCap() < sb.DataLen()+need {
				sb.ReserveData(max(need, sb.DataLen()))
			}
		}
		for k := i; k < j; k++ {
			if a.IsNull(k) {
				sb.AppendNull()
			} else {
				sb.Append(a.Value(k))
			}
		}
	case *array.Binary:
		bb := b.(*array.BinaryBuilder)
		bb.Reserve(j - i)
		for k := i; k < j; k++ {
			if a.IsNull(k) {
				bb.AppendNull()
			} else {
				bb.Append(a.Value(k))
			}
		}
	default:
		panic(fmt.Sprintf("catalog: appendRange: unsupported type %s", a.DataType()))
	}
}

// colCmp compares row i of a with row j of b (same type), ascending with
// NULLs last. Floats order NaN above every other non-NULL value, as
// PostgreSQL does.
type colCmp func(a, b arrow.Array, i, j int) int

func nullsLast(a, b arrow.Array, i, j int) (int, bool) {
	if a.NullN() == 0 && b.NullN() == 0 {
		return 0, false
	}
	an, bn := a.IsNull(i), b.IsNull(j)
	switch {
	case an && bn:
		return 0, true
	case an:
		return 1, true
	case bn:
		return -1, true
	}
	return 0, false
}

func cmpBool(x, y bool) int {
	switch {
	case x == y:
		return 0
	case !x:
		return -1
	}
	return 1
}

// comparatorFor returns the colCmp for an Arrow type, or nil if values of
// the type cannot be ordering keys. The closures are written out per type on
// purpose: a generic version (one closure over a type parameter for the
// array) measured 2.5x slower per comparison, because the assertion and
// Value call go through the generic dictionary instead of being inlined, and
// comparisons are the inner loop of sorting runs and merging segments.
func comparatorFor(dt arrow.DataType) colCmp {
	switch dt.ID() {
	case arrow.BOOL:
		return compareWith[*array.Boolean](cmpBool)
	case arrow.INT16:
		return compareWith[*array.Int16](cmp.Compare[int16])
	case arrow.INT32:
		return compareWith[*array.Int32](cmp.Compare[int32])
	case arrow.INT64:
		return compareWith[*array.Int64](cmp.Compare[int64])
	case arrow.FLOAT32:
		return compareWith[*array.Float32](operator.CmpFloat[float32])
	case arrow.FLOAT64:
		return compareWith[*array.Float64](operator.CmpFloat[float64])
	case arrow.DECIMAL128:
		return compareWith[*array.Decimal128](decimal128.Num.Cmp)
	case arrow.DATE32:
		return compareWith[*array.Date32](cmp.Compare[arrow.Date32])
	case arrow.TIMESTAMP:
		return compareWith[*array.Timestamp](cmp.Compare[arrow.Timestamp])
	case arrow.STRING:
		// Byte-wise order: the engine's only collation is "C".
		return compareWith[*array.String](strings.Compare)
	case arrow.BINARY:
		return compareWith[*array.Binary](bytes.Compare)
	}
	return nil
}

// compareWith builds the colCmp of one array type from its value
// comparison: NULLs last, then cmpf on the values.
func compareWith[A interface{ Value(int) T }, T any](cmpf func(T, T) int) colCmp {
	return func(a, b arrow.Array, i, j int) int {
		if c, ok := nullsLast(a, b, i, j); ok {
			return c
		}
		return cmpf(a.(A).Value(i), b.(A).Value(j))
	}
}

// valueAt boxes row i of a into the canonical Go value used for segment
// statistics and range bounds (see keyValue); ok is false for NULL.
func valueAt(a arrow.Array, i int) (v any, ok bool) {
	if a.IsNull(i) {
		return nil, false
	}
	switch a := a.(type) {
	case *array.Boolean:
		return a.Value(i), true
	case *array.Int16:
		return int64(a.Value(i)), true
	case *array.Int32:
		return int64(a.Value(i)), true
	case *array.Int64:
		return a.Value(i), true
	case *array.Float32:
		return float64(a.Value(i)), true
	case *array.Float64:
		return a.Value(i), true
	case *array.Decimal128:
		return a.Value(i), true
	case *array.Date32:
		return int64(a.Value(i)), true
	case *array.Timestamp:
		return int64(a.Value(i)), true
	case *array.String:
		return a.Value(i), true
	case *array.Binary:
		return bytes.Clone(a.Value(i)), true
	}
	panic(fmt.Sprintf("catalog: valueAt: unsupported type %s", a.DataType()))
}

// compareValues compares two canonical values of the same key column.
func compareValues(x, y any) int {
	switch x := x.(type) {
	case bool:
		return cmpBool(x, y.(bool))
	case int64:
		return cmp.Compare(x, y.(int64))
	case float64:
		return operator.CmpFloat(x, y.(float64))
	case decimal128.Num:
		return x.Cmp(y.(decimal128.Num))
	case string:
		return strings.Compare(x, y.(string))
	case []byte:
		return bytes.Compare(x, y.([]byte))
	}
	panic(fmt.Sprintf("catalog: compareValues: unsupported %T", x))
}

// compareAt compares row i of a (non-NULL) with canonical value v.
func compareAt(a arrow.Array, i int, v any) int {
	x, _ := valueAt(a, i)
	return compareValues(x, v)
}

// gather copies rows idx of a, in idx order, into a new array. Stored
// columns all have types operator.Gather copies with its own loops, which
// cannot fail; an error would mean a column type storage does not support.
func gather(mem memory.Allocator, a arrow.Array, idx []int32) arrow.Array {
	refs := make([]operator.Ref, len(idx))
	for i, k := range idx {
		refs[i] = operator.Ref{Row: k}
	}
	out, err := operator.Gather(context.Background(), mem, a.DataType(), []arrow.Array{a}, refs)
	if err != nil {
		panic(fmt.Sprintf("catalog: gather %s: %v", a.DataType(), err))
	}
	return out
}
