package vec

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqltypes"
)

// Values returns the values of a fixed-width array as []T (T must have the
// array's physical width: int64 for timestamps, int32 for dates,
// arrow.MonthDayNanoInterval for intervals), honouring the array's offset.
// The slice aliases the array's buffer.
func Values[T arrow.FixedWidthType](a arrow.Array) []T {
	d := a.Data()
	bufs := d.Buffers()
	if a.Len() == 0 || len(bufs) < 2 || bufs[1] == nil {
		return nil
	}
	return arrow.GetData[T](bufs[1].Bytes())[d.Offset() : d.Offset()+a.Len()]
}

// NewFixed allocates an uninitialised buffer for n values of T; FinishFixed
// turns it into an array.
func NewFixed[T arrow.FixedWidthType](mem memory.Allocator, n int) (*memory.Buffer, []T) {
	var z T
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * int(unsafe.Sizeof(z)))
	if n == 0 {
		return buf, nil
	}
	return buf, arrow.GetData[T](buf.Bytes())[:n]
}

// FinishFixed wraps buf (from NewFixed) with the validity valid (nil = all
// valid) into an array of dt, taking over buf's reference. The validity
// bitmap is allocated from mem (nil: memory.DefaultAllocator).
func FinishFixed(mem memory.Allocator, dt arrow.DataType, n int, buf *memory.Buffer, valid []bool) arrow.Array {
	var bm *memory.Buffer
	nulls := 0
	if valid != nil {
		if mem == nil {
			mem = memory.DefaultAllocator
		}
		bm = bitmapFrom(mem, valid)
		for _, v := range valid {
			if !v {
				nulls++
			}
		}
		if nulls == 0 {
			bm.Release()
			bm = nil
		}
	}
	d := array.NewData(dt, n, []*memory.Buffer{bm, buf}, nil, nulls, 0)
	a := array.MakeFromData(d)
	d.Release()
	buf.Release()
	if bm != nil {
		bm.Release()
	}
	return a
}

func bitmapFrom(mem memory.Allocator, valid []bool) *memory.Buffer {
	bm := memory.NewResizableBuffer(mem)
	bm.Resize(int(bitutil.BytesForBits(int64(len(valid)))))
	b := bm.Bytes()
	for i := range b {
		b[i] = 0
	}
	for i, v := range valid {
		if v {
			bitutil.SetBit(b, i)
		}
	}
	return bm
}

// MakeBool builds a boolean array from vals and valid (nil = all valid).
func MakeBool(mem memory.Allocator, vals, valid []bool) arrow.Array {
	bld := array.NewBooleanBuilder(mem)
	defer bld.Release()
	bld.AppendValues(vals, valid)
	return bld.NewArray()
}

// Validity returns the AND of the arrays' validity, nil when every value
// of every array is valid.
func Validity(n int, arrs ...arrow.Array) []bool {
	var out []bool
	for _, a := range arrs {
		if a.NullN() == 0 {
			continue
		}
		if out == nil {
			out = make([]bool, n)
			for i := range out {
				out[i] = a.IsValid(i)
			}
			continue
		}
		for i := range out {
			out[i] = out[i] && a.IsValid(i)
		}
	}
	return out
}

// Valid reports whether row i is valid in a mask from Validity.
func Valid(valid []bool, i int) bool { return valid == nil || valid[i] }

// Release releases every non-nil array.
func Release(arrs []arrow.Array) {
	for _, a := range arrs {
		if a != nil {
			a.Release()
		}
	}
}

// Const builds n copies of the value v (nil = NULL) of t, v in the
// representation of expr.Literal (int64 for every integer type, float64
// for both floats).
func Const(mem memory.Allocator, t sqltypes.Type, v any, n int) arrow.Array {
	if v == nil {
		return array.MakeArrayOfNull(mem, t.Arrow(), n)
	}
	switch t.Kind {
	case sqltypes.Bool, sqltypes.Void: // a void value is stored as true
		vals := make([]bool, n)
		if v.(bool) {
			for i := range vals {
				vals[i] = true
			}
		}
		return MakeBool(mem, vals, nil)
	case sqltypes.Int2:
		return fillFixed(mem, t, int16(v.(int64)), n)
	case sqltypes.Int4:
		return fillFixed(mem, t, int32(v.(int64)), n)
	case sqltypes.Int8, sqltypes.Timestamp, sqltypes.TimestampTZ:
		return fillFixed(mem, t, v.(int64), n)
	case sqltypes.Float4:
		return fillFixed(mem, t, float32(v.(float64)), n)
	case sqltypes.Float8:
		return fillFixed(mem, t, v.(float64), n)
	case sqltypes.Date:
		return fillFixed(mem, t, v.(int32), n)
	case sqltypes.Interval:
		return fillFixed(mem, t, v.(arrow.MonthDayNanoInterval), n)
	case sqltypes.Numeric:
		bld := array.NewDecimal128Builder(mem, t.Arrow().(*arrow.Decimal128Type))
		defer bld.Release()
		bld.Reserve(n)
		for i := 0; i < n; i++ {
			bld.UnsafeAppend(v.(decimal128.Num))
		}
		return bld.NewArray()
	case sqltypes.Array:
		bld := array.NewListBuilder(mem, t.ElemType().Arrow())
		defer bld.Release()
		for i := 0; i < n; i++ {
			AppendValue(bld, v)
		}
		return bld.NewArray()
	case sqltypes.Bytea:
		bld := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
		defer bld.Release()
		bv := v.([]byte)
		bld.ReserveData(n * len(bv))
		for i := 0; i < n; i++ {
			bld.Append(bv)
		}
		return bld.NewArray()
	default: // text kinds
		bld := array.NewStringBuilder(mem)
		defer bld.Release()
		s := v.(string)
		bld.ReserveData(n * len(s))
		for i := 0; i < n; i++ {
			bld.Append(s)
		}
		return bld.NewArray()
	}
}

func fillFixed[T arrow.FixedWidthType](mem memory.Allocator, t sqltypes.Type, v T, n int) arrow.Array {
	buf, vals := NewFixed[T](mem, n)
	for i := range vals {
		vals[i] = v
	}
	return FinishFixed(nil, t.Arrow(), n, buf, nil)
}

// MakeFixed builds an array of dt from vals and valid (nil = all valid),
// allocating from mem.
func MakeFixed[T arrow.FixedWidthType](mem memory.Allocator, dt arrow.DataType, vals []T, valid []bool) arrow.Array {
	buf, out := NewFixed[T](mem, len(vals))
	copy(out, vals)
	return FinishFixed(mem, dt, len(vals), buf, valid)
}

// valueAt returns a[i] in the expr.Literal representation of its type.
// Value returns a[i] in the representation of expr.Literal (Const's
// inverse: int64 for every integer type, float64 for both floats, a copy
// for bytea), nil for NULL.
func Value(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.Decimal128:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.Binary:
		return append([]byte(nil), a.Value(i)...)
	case *array.Date32:
		return int32(a.Value(i))
	case *array.Timestamp:
		return int64(a.Value(i))
	case *array.MonthDayNanoInterval:
		return a.Value(i)
	case *array.List:
		// An array: its elements in this representation, nil for NULL.
		start, end := a.ValueOffsets(i)
		vals := a.ListValues()
		out := make([]any, 0, end-start)
		for j := start; j < end; j++ {
			out = append(out, Value(vals, int(j)))
		}
		return out
	}
	return nil
}

// AppendValue appends v, in Value's representation (nil = NULL), to b.
func AppendValue(b array.Builder, v any) {
	if !TryAppendValue(b, v) {
		panic(fmt.Sprintf("vec: AppendValue to %T", b))
	}
}

// TryAppendValue is AppendValue reporting false, and appending nothing,
// for a builder of a type Value does not represent.
func TryAppendValue(b array.Builder, v any) bool {
	if v == nil {
		b.AppendNull()
		return true
	}
	switch bb := b.(type) {
	case *array.BooleanBuilder:
		bb.Append(v.(bool))
	case *array.Int16Builder:
		bb.Append(int16(v.(int64)))
	case *array.Int32Builder:
		bb.Append(int32(v.(int64)))
	case *array.Int64Builder:
		bb.Append(v.(int64))
	case *array.Float32Builder:
		bb.Append(float32(v.(float64)))
	case *array.Float64Builder:
		bb.Append(v.(float64))
	case *array.Decimal128Builder:
		bb.Append(v.(decimal128.Num))
	case *array.StringBuilder:
		bb.Append(v.(string))
	case *array.BinaryBuilder:
		bb.Append(v.([]byte))
	case *array.Date32Builder:
		bb.Append(arrow.Date32(v.(int32)))
	case *array.TimestampBuilder:
		bb.Append(arrow.Timestamp(v.(int64)))
	case *array.MonthDayNanoIntervalBuilder:
		bb.Append(v.(arrow.MonthDayNanoInterval))
	case *array.ListBuilder:
		bb.Append(true)
		for _, e := range v.([]any) {
			AppendValue(bb.ValueBuilder(), e)
		}
	default:
		return false
	}
	return true
}

// MakeList builds an array of the array type t (an Arrow list) from the
// offsets of its rows into values (len(offsets) = rows+1) and their
// validity (nil = all valid). It takes its own reference to values.
func MakeList(mem memory.Allocator, t sqltypes.Type, offsets []int32, valid []bool, values arrow.Array) arrow.Array {
	rows := len(offsets) - 1
	ob := memory.NewResizableBuffer(mem)
	ob.Resize(len(offsets) * 4)
	copy(arrow.Int32Traits.CastFromBytes(ob.Bytes()), offsets)
	var bm *memory.Buffer
	nulls := 0
	if valid != nil {
		for _, v := range valid {
			if !v {
				nulls++
			}
		}
		if nulls > 0 {
			bm = bitmapFrom(mem, valid)
		}
	}
	d := array.NewData(t.Arrow(), rows, []*memory.Buffer{bm, ob}, []arrow.ArrayData{values.Data()}, nulls, 0)
	out := array.MakeFromData(d)
	d.Release()
	ob.Release()
	if bm != nil {
		bm.Release()
	}
	return out
}
