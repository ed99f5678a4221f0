package catalog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The log stores rows column by column in a plain encoding: per column a
// validity byte per row (only when the column has NULLs; a flag says so)
// and the values, fixed width little-endian or length-prefixed bytes. It is
// far cheaper than an Arrow IPC stream for the single-row commits the log
// exists for (no schema message, no flatbuffers), and the schema is the
// table's, known at replay.

var errShortRecord = errors.New("log record is truncated")

// appendBatch encodes rows [0, n) of rec.
func appendBatch(dst []byte, rec arrow.RecordBatch) []byte {
	n := int(rec.NumRows())
	dst = binary.AppendUvarint(dst, uint64(n))
	for _, a := range rec.Columns() {
		nulls := a.NullN() > 0
		if nulls {
			dst = append(dst, 1)
			for i := 0; i < n; i++ {
				if a.IsNull(i) {
					dst = append(dst, 0)
				} else {
					dst = append(dst, 1)
				}
			}
		} else {
			dst = append(dst, 0)
		}
		switch a := a.(type) {
		case *array.Boolean:
			for i := 0; i < n; i++ {
				if a.Value(i) {
					dst = append(dst, 1)
				} else {
					dst = append(dst, 0)
				}
			}
		case *array.Int16:
			for _, v := range a.Int16Values()[:n] {
				dst = binary.LittleEndian.AppendUint16(dst, uint16(v))
			}
		case *array.Int32:
			for _, v := range a.Int32Values()[:n] {
				dst = binary.LittleEndian.AppendUint32(dst, uint32(v))
			}
		case *array.Int64:
			for _, v := range a.Int64Values()[:n] {
				dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
			}
		case *array.Float32:
			for _, v := range a.Float32Values()[:n] {
				dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
			}
		case *array.Float64:
			for _, v := range a.Float64Values()[:n] {
				dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
			}
		case *array.Decimal128:
			for _, v := range a.Values()[:n] {
				dst = binary.LittleEndian.AppendUint64(dst, uint64(v.HighBits()))
				dst = binary.LittleEndian.AppendUint64(dst, v.LowBits())
			}
		case *array.Date32:
			for _, v := range a.Date32Values()[:n] {
				dst = binary.LittleEndian.AppendUint32(dst, uint32(v))
			}
		case *array.Timestamp:
			for _, v := range a.TimestampValues()[:n] {
				dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
			}
		case *array.MonthDayNanoInterval:
			for _, v := range a.MonthDayNanoIntervalValues()[:n] {
				dst = binary.LittleEndian.AppendUint32(dst, uint32(v.Months))
				dst = binary.LittleEndian.AppendUint32(dst, uint32(v.Days))
				dst = binary.LittleEndian.AppendUint64(dst, uint64(v.Nanoseconds))
			}
		case *array.String:
			for i := 0; i < n; i++ {
				s := a.Value(i)
				dst = binary.AppendUvarint(dst, uint64(len(s)))
				dst = append(dst, s...)
			}
		case *array.Binary:
			for i := 0; i < n; i++ {
				s := a.Value(i)
				dst = binary.AppendUvarint(dst, uint64(len(s)))
				dst = append(dst, s...)
			}
		default:
			panic(fmt.Sprintf("catalog: appendBatch: unsupported type %s", a.DataType()))
		}
	}
	return dst
}

// byteReader decodes the log's primitives; the first error sticks.
type byteReader struct {
	b   []byte
	err error
}

func (r *byteReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = errShortRecord
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *byteReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.err = errShortRecord
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *byteReader) u8() byte {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *byteReader) u16() uint16 {
	if b := r.take(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *byteReader) u32() uint32 {
	if b := r.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *byteReader) u64() uint64 {
	if b := r.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (r *byteReader) bytes() []byte { return r.take(int(r.uvarint())) }

// readBatch decodes a batch encoded by appendBatch with the given schema.
func readBatch(r *byteReader, mem memory.Allocator, schema *arrow.Schema) (arrow.RecordBatch, error) {
	n := int(r.uvarint())
	if r.err != nil || n > len(r.b) {
		return nil, errShortRecord
	}
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	valid := make([]bool, n)
	for c := range schema.NumFields() {
		var vb []bool
		if r.u8() == 1 {
			raw := r.take(n)
			if raw == nil {
				return nil, errShortRecord
			}
			for i := range valid {
				valid[i] = raw[i] == 1
			}
			vb = valid
		}
		fb := b.Field(c)
		fb.Reserve(n)
		ok := func(i int) bool { return vb == nil || vb[i] }
		switch fb := fb.(type) {
		case *array.BooleanBuilder:
			for i := 0; i < n; i++ {
				v := r.u8() == 1
				if ok(i) {
					fb.Append(v)
				} else {
					fb.AppendNull()
				}
			}
		case *array.Int16Builder:
			for i := 0; i < n; i++ {
				v := int16(r.u16())
				if ok(i) {
					fb.Append(v)
				} else {
					fb.AppendNull()
				}
			}
		case *array.Int32Builder:
			for i := 0; i < n; i++ {
				v := int32(r.u32())
				if ok(i) {
					fb.Append(v)
				} else {
					fb.AppendNull()
				}
			}
		case *array.Int64Builder:
			for i := 0; i < n; i++ {
				v := int64(r.u64())
				if ok(i) {
					fb.Append(v)
				} else {
					fb.AppendNull()
				}
			}
		case *array.Float32Builder:
			for i := 0; i < n; i++ {
				v := math.Float32frombits(r.u32())
				if ok(i) {
					fb.Append(v)
				} else {
					fb.AppendNull()
				}
			}
		case *array.Float64Builder:
			for i := 0; i < n; i++ {
				v := math.Float64frombits(r.u64())
				if ok(i) {
					fb.Append(v)
				} else {
					fb.AppendNull()
				}
			}
		case *array.Decimal128Builder:
			for i := 0; i < n; i++ {
				hi := int64(r.u64())
				v := decimal128.New(hi, r.u64())
				if ok(i) {
					fb.Append(v)
				} else {
					fb.AppendNull()
				}
			}
		case *array.Date32Builder:
			for i := 0; i < n; i++ {
				v := arrow.Date32(r.u32())
				if ok(i) {
					fb.Append(v)
				} else {
					fb.AppendNull()
				}
			}
		case *array.TimestampBuilder:
			for i := 0; i < n; i++ {
				v := arrow.Timestamp(r.u64())
				if ok(i) {
					fb.Append(v)
				} else {
					fb.AppendNull()
				}
			}
		case *array.MonthDayNanoIntervalBuilder:
			for i := 0; i < n; i++ {
				m := int32(r.u32())
				d := int32(r.u32())
				v := arrow.MonthDayNanoInterval{Months: m, Days: d, Nanoseconds: int64(r.u64())}
				if ok(i) {
					fb.Append(v)
				} else {
					fb.AppendNull()
				}
			}
		case *array.StringBuilder:
			for i := 0; i < n; i++ {
				v := r.bytes()
				if ok(i) {
					fb.Append(string(v))
				} else {
					fb.AppendNull()
				}
			}
		case *array.BinaryBuilder:
			for i := 0; i < n; i++ {
				v := r.bytes()
				if ok(i) {
					fb.Append(v)
				} else {
					fb.AppendNull()
				}
			}
		default:
			return nil, fmt.Errorf("unsupported column type %s", schema.Field(c).Type)
		}
		if r.err != nil {
			return nil, r.err
		}
	}
	return b.NewRecordBatch(), nil
}
