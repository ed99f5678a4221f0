package vec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqltypes"
)

// Pick builds an array of type t whose row i is srcs[which[i]][i] (NULL
// when which[i] < 0). All srcs have the batch length.
func Pick(mem memory.Allocator, t sqltypes.Type, srcs []arrow.Array, which []int, rows int) arrow.Array {
	idx := make([]int, rows)
	for i := range idx {
		idx[i] = i
	}
	return Gather(mem, t, srcs, which, idx)
}

// Gather builds an array of type t whose row i is srcs[which[i]][idx[i]]
// (NULL when which[i] < 0).
func Gather(mem memory.Allocator, t sqltypes.Type, srcs []arrow.Array, which, idx []int) arrow.Array {
	rows := len(which)
	valid := make([]bool, rows)
	for i, w := range which {
		valid[i] = w >= 0 && srcs[w].IsValid(idx[i])
	}
	switch t.Kind {
	case sqltypes.Bool:
		vals := make([]bool, rows)
		for i, w := range which {
			if valid[i] {
				vals[i] = srcs[w].(*array.Boolean).Value(idx[i])
			}
		}
		return MakeBool(mem, vals, valid)
	case sqltypes.Int2:
		return gatherFixed[int16](mem, t, srcs, which, idx, valid)
	case sqltypes.Int4, sqltypes.Date:
		return gatherFixed[int32](mem, t, srcs, which, idx, valid)
	case sqltypes.Int8, sqltypes.Timestamp, sqltypes.TimestampTZ:
		return gatherFixed[int64](mem, t, srcs, which, idx, valid)
	case sqltypes.Float4:
		return gatherFixed[float32](mem, t, srcs, which, idx, valid)
	case sqltypes.Float8:
		return gatherFixed[float64](mem, t, srcs, which, idx, valid)
	case sqltypes.Interval:
		return gatherFixed[arrow.MonthDayNanoInterval](mem, t, srcs, which, idx, valid)
	case sqltypes.Numeric:
		bld := array.NewDecimal128Builder(mem, t.Arrow().(*arrow.Decimal128Type))
		defer bld.Release()
		for i, w := range which {
			if valid[i] {
				bld.Append(srcs[w].(*array.Decimal128).Value(idx[i]))
			} else {
				bld.AppendNull()
			}
		}
		return bld.NewArray()
	case sqltypes.Bytea:
		bld := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
		defer bld.Release()
		for i, w := range which {
			if valid[i] {
				bld.Append(srcs[w].(*array.Binary).Value(idx[i]))
			} else {
				bld.AppendNull()
			}
		}
		return bld.NewArray()
	default:
		bld := array.NewStringBuilder(mem)
		defer bld.Release()
		for i, w := range which {
			if valid[i] {
				bld.Append(srcs[w].(*array.String).Value(idx[i]))
			} else {
				bld.AppendNull()
			}
		}
		return bld.NewArray()
	}
}

func gatherFixed[T arrow.FixedWidthType](mem memory.Allocator, t sqltypes.Type, srcs []arrow.Array, which, idx []int, valid []bool) arrow.Array {
	vs := make([][]T, len(srcs))
	for k, s := range srcs {
		vs[k] = Values[T](s)
	}
	buf, out := NewFixed[T](mem, len(which))
	var z T
	for i, w := range which {
		if valid[i] {
			out[i] = vs[w][idx[i]]
		} else {
			out[i] = z
		}
	}
	return FinishFixed(mem, t.Arrow(), len(which), buf, valid)
}
