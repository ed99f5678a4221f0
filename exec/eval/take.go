package eval

import (
	"context"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// Take returns a new array whose row i is a[idx[i]], NULL where idx[i] < 0:
// operator.Take, whose typed loops cover every Arrow type sqltypes uses
// (arrow-go's take kernel rejects some, e.g. month_day_nano intervals).
// Sort, joins and filters share it.
func Take(mem memory.Allocator, a arrow.Array, idx []int) (arrow.Array, error) {
	return operator.Take(context.Background(), mem, a, idx)
}

// TakeBatch applies Take to every column of b.
func TakeBatch(mem memory.Allocator, b arrow.RecordBatch, idx []int) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, b.NumCols())
	refs := operator.Refs(idx)
	for i := range cols {
		c, err := operator.Gather(context.Background(), mem, b.Column(i).DataType(), b.Columns()[i:i+1], refs)
		if err != nil {
			vec.Release(cols[:i])
			return nil, err
		}
		cols[i] = c
	}
	out := array.NewRecordBatch(b.Schema(), cols, int64(len(idx)))
	vec.Release(cols)
	return out, nil
}

// FilterBatch returns the rows of b where mask is true. When every row is
// kept it returns b itself, retained, without copying.
func FilterBatch(mem memory.Allocator, b arrow.RecordBatch, mask []bool) (arrow.RecordBatch, error) {
	idx := make([]int, 0, len(mask))
	for i, m := range mask {
		if m {
			idx = append(idx, i)
		}
	}
	if len(idx) == int(b.NumRows()) {
		b.Retain()
		return b, nil
	}
	if b.NumCols() == 0 {
		return array.NewRecordBatch(b.Schema(), nil, int64(len(idx))), nil
	}
	return TakeBatch(mem, b, idx)
}

// The vector helpers below moved to package vec, which sql/functions'
// kernels share with this package; exec's operators still call them here.

// FixedValues is vec.Values: the values of a fixed-width array as []T.
func FixedValues[T arrow.FixedWidthType](a arrow.Array) []T { return vec.Values[T](a) }

// MakeFixed is vec.MakeFixed: an array of dt from vals and valid.
func MakeFixed[T arrow.FixedWidthType](mem memory.Allocator, dt arrow.DataType, vals []T, valid []bool) arrow.Array {
	return vec.MakeFixed(mem, dt, vals, valid)
}

// IntervalKey is vec.IntervalKey: the value Postgres compares intervals by.
func IntervalKey(v arrow.MonthDayNanoInterval) *big.Int { return vec.IntervalKey(v) }

// Gather is vec.Gather: row i is srcs[which[i]][idx[i]], NULL where
// which[i] < 0.
func Gather(mem memory.Allocator, t sqltypes.Type, srcs []arrow.Array, which, idx []int) arrow.Array {
	return vec.Gather(mem, t, srcs, which, idx)
}

// Comparator is vec.Comparator: compares l[i] with r[j] in Postgres'
// order for values of type t.
func Comparator(t sqltypes.Type, l, r arrow.Array) (func(i, j int) int, error) {
	return vec.Comparator(t, l, r)
}
