package exec

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/internal/pgjson"
	"github.com/asofsql/asofsql/sqltypes"
)

// keyEncoder appends a byte encoding of a row's key values such that two
// rows encode equally exactly when their values are equal under SQL
// grouping (GROUP BY, DISTINCT, join keys): NULL equals NULL here (callers
// that need SQL '=' check nulls themselves), floats treat -0 as 0 and all
// NaNs as one value, intervals compare by their 30-day-month span, as
// Postgres does.
type keyEncoder struct {
	cols  []arrow.Array
	types []sqltypes.Type
}

// anyNull reports whether any key column is NULL at row i.
func (k *keyEncoder) anyNull(i int) bool {
	for _, c := range k.cols {
		if c.IsNull(i) {
			return true
		}
	}
	return false
}

func (k *keyEncoder) encode(dst []byte, i int) []byte {
	for n, c := range k.cols {
		if c.IsNull(i) {
			dst = append(dst, 0)
			continue
		}
		dst = append(dst, 1)
		switch k.types[n].Kind {
		case sqltypes.Bool:
			if c.(*array.Boolean).Value(i) {
				dst = append(dst, 1)
			} else {
				dst = append(dst, 0)
			}
		case sqltypes.Int2:
			dst = binary.LittleEndian.AppendUint16(dst, uint16(eval.FixedValues[int16](c)[i]))
		case sqltypes.Int4, sqltypes.Date:
			dst = binary.LittleEndian.AppendUint32(dst, uint32(eval.FixedValues[int32](c)[i]))
		case sqltypes.Int8, sqltypes.Timestamp, sqltypes.TimestampTZ:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(eval.FixedValues[int64](c)[i]))
		case sqltypes.Float4:
			dst = appendFloatKey(dst, float64(eval.FixedValues[float32](c)[i]))
		case sqltypes.Float8:
			dst = appendFloatKey(dst, eval.FixedValues[float64](c)[i])
		case sqltypes.Numeric:
			v := c.(*array.Decimal128).Value(i)
			dst = binary.LittleEndian.AppendUint64(dst, v.LowBits())
			dst = binary.LittleEndian.AppendUint64(dst, uint64(v.HighBits()))
		case sqltypes.Interval:
			b := eval.IntervalKey(eval.FixedValues[arrow.MonthDayNanoInterval](c)[i])
			dst = append(dst, byte(b.Sign()+1))
			bs := b.Bytes()
			dst = binary.AppendUvarint(dst, uint64(len(bs)))
			dst = append(dst, bs...)
		case sqltypes.Array:
			// Equal arrays have equal lengths and equal elements.
			l := c.(*array.List)
			start, end := l.ValueOffsets(i)
			dst = binary.AppendUvarint(dst, uint64(end-start))
			sub := keyEncoder{cols: []arrow.Array{l.ListValues()}, types: []sqltypes.Type{k.types[n].ElemType()}}
			for j := start; j < end; j++ {
				dst = sub.encode(dst, int(j))
			}
		case sqltypes.JSONB:
			// Equal jsonb values may differ in text (1.0 and 1).
			v := c.(*array.String).Value(i)
			if p, err := pgjson.ParseJSONB(v); err == nil {
				dst = append(dst, 'j')
				dst = pgjson.AppendKey(dst, p)
			} else {
				dst = append(dst, 's')
				dst = binary.AppendUvarint(dst, uint64(len(v)))
				dst = append(dst, v...)
			}
		case sqltypes.Void:
			// Every void value is the same one: the validity byte says it all.
		case sqltypes.Bytea:
			v := c.(*array.Binary).Value(i)
			dst = binary.AppendUvarint(dst, uint64(len(v)))
			dst = append(dst, v...)
		default: // text kinds
			v := c.(*array.String).Value(i)
			dst = binary.AppendUvarint(dst, uint64(len(v)))
			dst = append(dst, v...)
		}
	}
	return dst
}

func appendFloatKey(dst []byte, f float64) []byte {
	switch {
	case f != f:
		f = math.NaN()
	case f == 0:
		f = 0
	}
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
}
