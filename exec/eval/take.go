package eval

import (
	"context"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// Take returns a new array whose row i is a[idx[i]], NULL where idx[i] < 0.
// It has typed loops for every Arrow type sqltypes uses (arrow-go's take
// kernel rejects some of them, e.g. month_day_nano intervals) and falls
// back to compute.TakeArray for the rest. Sort, joins and filters share it.
func Take(mem memory.Allocator, a arrow.Array, idx []int) (arrow.Array, error) {
	n := len(idx)
	var valid []bool
	if a.NullN() > 0 || hasNeg(idx) {
		valid = make([]bool, n)
		for i, j := range idx {
			valid[i] = j >= 0 && a.IsValid(j)
		}
	}
	switch a.DataType().ID() {
	case arrow.BOOL:
		ba := a.(*array.Boolean)
		vals := make([]bool, n)
		for i, j := range idx {
			if j >= 0 {
				vals[i] = ba.Value(j)
			}
		}
		return vec.MakeBool(mem, vals, valid), nil
	case arrow.INT16:
		return takeFixed[int16](mem, a, idx, valid), nil
	case arrow.INT32, arrow.DATE32:
		return takeFixed[int32](mem, a, idx, valid), nil
	case arrow.INT64, arrow.TIMESTAMP:
		return takeFixed[int64](mem, a, idx, valid), nil
	case arrow.FLOAT32:
		return takeFixed[float32](mem, a, idx, valid), nil
	case arrow.FLOAT64:
		return takeFixed[float64](mem, a, idx, valid), nil
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return takeFixed[arrow.MonthDayNanoInterval](mem, a, idx, valid), nil
	case arrow.DECIMAL128:
		da := a.(*array.Decimal128)
		bld := array.NewDecimal128Builder(mem, da.DataType().(*arrow.Decimal128Type))
		defer bld.Release()
		bld.Reserve(n)
		for i, j := range idx {
			if vec.Valid(valid, i) {
				bld.UnsafeAppend(da.Value(j))
			} else {
				bld.UnsafeAppendBoolToBitmap(false)
			}
		}
		return bld.NewArray(), nil
	case arrow.STRING:
		sa := a.(*array.String)
		bld := array.NewStringBuilder(mem)
		defer bld.Release()
		bld.Reserve(n)
		size := 0
		for i, j := range idx {
			if vec.Valid(valid, i) {
				size += sa.ValueLen(j)
			}
		}
		bld.ReserveData(size)
		for i, j := range idx {
			if vec.Valid(valid, i) {
				bld.Append(sa.Value(j))
			} else {
				bld.AppendNull()
			}
		}
		return bld.NewArray(), nil
	case arrow.BINARY:
		ba := a.(*array.Binary)
		bld := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
		defer bld.Release()
		for i, j := range idx {
			if vec.Valid(valid, i) {
				bld.Append(ba.Value(j))
			} else {
				bld.AppendNull()
			}
		}
		return bld.NewArray(), nil
	}
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	for _, j := range idx {
		if j < 0 {
			ib.AppendNull()
		} else {
			ib.Append(int64(j))
		}
	}
	ia := ib.NewArray()
	defer ia.Release()
	return compute.TakeArray(compute.WithAllocator(context.Background(), mem), a, ia)
}

func hasNeg(idx []int) bool {
	for _, j := range idx {
		if j < 0 {
			return true
		}
	}
	return false
}

func takeFixed[T arrow.FixedWidthType](mem memory.Allocator, a arrow.Array, idx []int, valid []bool) arrow.Array {
	in := vec.Values[T](a)
	buf, out := vec.NewFixed[T](mem, len(idx))
	var z T
	for i, j := range idx {
		if j >= 0 {
			out[i] = in[j]
		} else {
			out[i] = z
		}
	}
	return vec.FinishFixed(mem, a.DataType(), len(idx), buf, valid)
}

// TakeBatch applies Take to every column of b.
func TakeBatch(mem memory.Allocator, b arrow.RecordBatch, idx []int) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, b.NumCols())
	for i := range cols {
		c, err := Take(mem, b.Column(i), idx)
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
