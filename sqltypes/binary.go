package sqltypes

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/sqlerr"
)

const codeInvalidBinaryRepresentation = "22P03"

// Numeric sign words of Postgres' external numeric format.
const (
	numericPos  = 0x0000
	numericNeg  = 0x4000
	numericNaN  = 0xC000
	numericPInf = 0xD000
	numericNInf = 0xF000
)

// EncodeBinary appends the Postgres binary send format of a[i] (not NULL)
// to dst. Sub-microsecond interval nanoseconds, which only non-SQL Arrow
// producers create, are truncated toward zero.
func EncodeBinary(dst []byte, a arrow.Array, i int, t Type) ([]byte, error) {
	switch t.Kind {
	case Bool:
		if a.(*array.Boolean).Value(i) {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case Int2:
		return binary.BigEndian.AppendUint16(dst, uint16(a.(*array.Int16).Value(i))), nil
	case Int4:
		return binary.BigEndian.AppendUint32(dst, uint32(a.(*array.Int32).Value(i))), nil
	case Int8:
		return binary.BigEndian.AppendUint64(dst, uint64(a.(*array.Int64).Value(i))), nil
	case Float4:
		return binary.BigEndian.AppendUint32(dst, math.Float32bits(a.(*array.Float32).Value(i))), nil
	case Float8:
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(a.(*array.Float64).Value(i))), nil
	case Numeric:
		d := a.(*array.Decimal128)
		scale := d.DataType().(*arrow.Decimal128Type).Scale
		return appendNumericBinary(dst, d.Value(i), scale, t.displayArg()), nil
	case Text, Varchar, Unknown, JSON:
		return append(dst, a.(*array.String).Value(i)...), nil
	case Void:
		return dst, nil // void_send: no bytes
	case JSONB:
		dst = append(dst, jsonbVersion)
		return append(dst, a.(*array.String).Value(i)...), nil
	case Bytea:
		return append(dst, a.(*array.Binary).Value(i)...), nil
	case Date:
		days := int64(a.(*array.Date32).Value(i))
		if days != DateInfinity && days != DateNegInfinity {
			days -= pgEpochDays
		}
		return binary.BigEndian.AppendUint32(dst, uint32(int32(days))), nil
	case Timestamp, TimestampTZ:
		us := int64(a.(*array.Timestamp).Value(i))
		if us != TimestampInfinity && us != TimestampNegInfinity {
			us -= pgEpochMicros
		}
		return binary.BigEndian.AppendUint64(dst, uint64(us)), nil
	case Interval:
		v := a.(*array.MonthDayNanoInterval).Value(i)
		dst = binary.BigEndian.AppendUint64(dst, uint64(v.Nanoseconds/1000))
		dst = binary.BigEndian.AppendUint32(dst, uint32(v.Days))
		return binary.BigEndian.AppendUint32(dst, uint32(v.Months)), nil
	case Array:
		return encodeArrayBinary(dst, a, i, t)
	}
	return dst, sqlerr.New(sqlerr.FeatureNotSupported, "binary output for type %s is not supported", t)
}

// numericDigits returns the decimal digits of |n| and the display scale;
// the unconstrained NUMERIC drops trailing fractional zeros (see
// appendNumeric).
func numericDigits(n decimal128.Num, scale int32, disp int) (neg bool, digits []byte, dscale int) {
	neg = n.Sign() < 0
	if neg {
		n = n.Negate()
	}
	if disp >= 0 && int32(disp) < scale {
		n, scale = roundScale(n, scale, int32(disp)), int32(disp)
	}
	trim := disp < 0
	if n.HighBits() == 0 {
		digits = strconv.AppendUint(make([]byte, 0, 40), n.LowBits(), 10)
	} else {
		digits = n.BigInt().Append(make([]byte, 0, 40), 10)
	}
	dscale = int(scale)
	if trim {
		for dscale > 0 && len(digits) > 1 && digits[len(digits)-1] == '0' {
			digits = digits[:len(digits)-1]
			dscale--
		}
		if len(digits) == 1 && digits[0] == '0' {
			dscale = 0
		}
	}
	for dscale < disp {
		digits = append(digits, '0')
		dscale++
	}
	if n == (decimal128.Num{}) {
		neg = false
	}
	return neg, digits, dscale
}

// roundScale rounds n (at scale from) half away from zero to scale to <
// from.
func roundScale(n decimal128.Num, from, to int32) decimal128.Num {
	neg := n.Sign() < 0
	if neg {
		n = n.Negate()
	}
	q, r := n.Div(decimal128.GetScaleMultiplier(int(from - to)))
	if r.GreaterEqual(decimal128.GetHalfScaleMultiplier(int(from - to))) {
		q = q.Add(decimal128.FromU64(1))
	}
	if neg {
		q = q.Negate()
	}
	return q
}

// appendNumericBinary writes Postgres' numeric_send format: ndigits,
// weight, sign, dscale, then base-10000 digits with leading and trailing
// zero groups stripped (zero has no digits and weight 0).
func appendNumericBinary(dst []byte, n decimal128.Num, scale int32, disp int) []byte {
	neg, digits, dscale := numericDigits(n, scale, disp)
	// Pad so the decimal point falls on a group boundary.
	intLen := len(digits) - dscale
	lead := 0
	if intLen > 0 {
		lead = (4 - intLen%4) % 4
	} else {
		lead = -intLen // zeros between the point and the first digit
	}
	buf := make([]byte, 0, lead+len(digits)+4)
	for j := 0; j < lead; j++ {
		buf = append(buf, '0')
	}
	buf = append(buf, digits...)
	for len(buf)%4 != 0 {
		buf = append(buf, '0')
	}
	weight := 0
	if intLen > 0 {
		weight = (intLen+lead)/4 - 1
	} else {
		weight = -1
	}
	groups := make([]uint16, 0, len(buf)/4)
	for j := 0; j < len(buf); j += 4 {
		g := uint16(buf[j]-'0')*1000 + uint16(buf[j+1]-'0')*100 + uint16(buf[j+2]-'0')*10 + uint16(buf[j+3]-'0')
		groups = append(groups, g)
	}
	for len(groups) > 0 && groups[0] == 0 {
		groups = groups[1:]
		weight--
	}
	for len(groups) > 0 && groups[len(groups)-1] == 0 {
		groups = groups[:len(groups)-1]
	}
	sign := uint16(numericPos)
	if len(groups) == 0 {
		weight = 0
	} else if neg {
		sign = numericNeg
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(groups)))
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(weight)))
	dst = binary.BigEndian.AppendUint16(dst, sign)
	dst = binary.BigEndian.AppendUint16(dst, uint16(dscale))
	for _, g := range groups {
		dst = binary.BigEndian.AppendUint16(dst, g)
	}
	return dst
}

// binaryLen checks a fixed-size binary value: too short is Postgres'
// "insufficient data left in message" (08P01), too long its 22P03.
func binaryLen(t Type, data []byte, n int) error {
	if len(data) < n {
		return sqlerr.New(sqlerr.ProtocolViolation, "insufficient data left in message")
	}
	if len(data) > n {
		return sqlerr.New(codeInvalidBinaryRepresentation, "incorrect binary data format for type %s", t)
	}
	return nil
}

// DecodeBinary parses a value in Postgres binary format (as sent in Bind or
// COPY BINARY) and appends it to b, whose Arrow type must be t.Arrow().
// Values are checked as Postgres' *_recv functions do: text must be UTF-8,
// varchar(n), numeric(p,s) and timestamp(p) modifiers are applied, and
// dates and timestamps must be in range.
func DecodeBinary(b array.Builder, t Type, data []byte) error {
	be := binary.BigEndian
	switch t.Kind {
	case Bool:
		if err := binaryLen(t, data, 1); err != nil {
			return err
		}
		b.(*array.BooleanBuilder).Append(data[0] != 0)
	case Int2:
		if err := binaryLen(t, data, 2); err != nil {
			return err
		}
		b.(*array.Int16Builder).Append(int16(be.Uint16(data)))
	case Int4:
		if err := binaryLen(t, data, 4); err != nil {
			return err
		}
		b.(*array.Int32Builder).Append(int32(be.Uint32(data)))
	case Int8:
		if err := binaryLen(t, data, 8); err != nil {
			return err
		}
		b.(*array.Int64Builder).Append(int64(be.Uint64(data)))
	case Float4:
		if err := binaryLen(t, data, 4); err != nil {
			return err
		}
		b.(*array.Float32Builder).Append(math.Float32frombits(be.Uint32(data)))
	case Float8:
		if err := binaryLen(t, data, 8); err != nil {
			return err
		}
		b.(*array.Float64Builder).Append(math.Float64frombits(be.Uint64(data)))
	case Numeric:
		db := b.(*array.Decimal128Builder)
		dt := db.Type().(*arrow.Decimal128Type)
		n, err := decodeNumericBinary(data, dt.Precision, dt.Scale)
		if err != nil {
			return err
		}
		db.Append(n)
	case Text, Unknown:
		if err := checkText(string(data)); err != nil {
			return err
		}
		b.(*array.StringBuilder).BinaryBuilder.Append(data)
	case Varchar:
		v, err := checkVarchar(string(data), t)
		if err != nil {
			return err
		}
		b.(*array.StringBuilder).Append(v)
	case JSON, JSONB:
		if t.Kind == JSONB {
			if len(data) == 0 || data[0] != jsonbVersion {
				return sqlerr.New(codeInvalidBinaryRepresentation, "unsupported jsonb version number %d", append(data, 0)[0])
			}
			data = data[1:]
		}
		v, err := ParseJSON(string(data), t.Kind == JSONB)
		if err != nil {
			return err
		}
		b.(*array.StringBuilder).Append(v)
	case Bytea:
		b.(*array.BinaryBuilder).Append(data)
	case Date:
		if err := binaryLen(t, data, 4); err != nil {
			return err
		}
		days := int64(int32(be.Uint32(data)))
		if days != DateInfinity && days != DateNegInfinity {
			days += pgEpochDays
			if !validDate32(days) {
				return sqlerr.New(sqlerr.DatetimeFieldOverflow, "date out of range")
			}
		}
		b.(*array.Date32Builder).Append(arrow.Date32(days))
	case Timestamp, TimestampTZ:
		if err := binaryLen(t, data, 8); err != nil {
			return err
		}
		us := int64(be.Uint64(data))
		if us != TimestampInfinity && us != TimestampNegInfinity {
			if us > math.MaxInt64-pgEpochMicros {
				return sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
			}
			us = roundTimestamp(us+pgEpochMicros, t)
			if !validTimestamp(us) {
				return sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
			}
		}
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(us))
	case Interval:
		if err := binaryLen(t, data, 16); err != nil {
			return err
		}
		m := itm{us: int64(be.Uint64(data)), days: int64(int32(be.Uint32(data[8:]))), months: int64(int32(be.Uint32(data[12:])))}
		v, ok := m.toArrow()
		if !ok {
			return sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
		}
		b.(*array.MonthDayNanoIntervalBuilder).Append(v)
	case Array:
		return decodeArrayBinary(b, t, data)
	case Void:
		b.(*array.BooleanBuilder).Append(true) // void_recv ignores its input
	default:
		return sqlerr.New(sqlerr.FeatureNotSupported, "binary input for type %s is not supported", t)
	}
	return nil
}

// decodeNumericBinary reads numeric_send's format, validating it like
// numeric_recv, and rounds to scale sc / checks precision p.
func decodeNumericBinary(data []byte, p, sc int32) (decimal128.Num, error) {
	bad := func(what string) error {
		return sqlerr.New(codeInvalidBinaryRepresentation, "invalid %s in external \"numeric\" value", what)
	}
	if len(data) < 8 {
		return decimal128.Num{}, sqlerr.New(sqlerr.ProtocolViolation, "insufficient data left in message")
	}
	be := binary.BigEndian
	ndigits := int(int16(be.Uint16(data)))
	weight := int(int16(be.Uint16(data[2:])))
	sign := be.Uint16(data[4:])
	dscale := int(be.Uint16(data[6:]))
	if ndigits < 0 || ndigits > 1000+1000 {
		return decimal128.Num{}, bad("length")
	}
	switch sign {
	case numericPos, numericNeg:
	case numericNaN:
		return decimal128.Num{}, sqlerr.New(sqlerr.FeatureNotSupported, "numeric NaN cannot be stored").
			WithDetail("NUMERIC values are stored as Arrow decimal128, which has no NaN.")
	case numericPInf, numericNInf:
		return decimal128.Num{}, numericOverflow(p, sc).
			WithDetail("A field with precision %d, scale %d cannot hold an infinite value.", p, sc)
	default:
		return decimal128.Num{}, bad("sign")
	}
	if dscale > 1000 {
		return decimal128.Num{}, bad("scale")
	}
	if len(data) < 8+2*ndigits {
		return decimal128.Num{}, sqlerr.New(sqlerr.ProtocolViolation, "insufficient data left in message")
	}
	if len(data) > 8+2*ndigits {
		return decimal128.Num{}, sqlerr.New(codeInvalidBinaryRepresentation, "incorrect binary data format for type numeric")
	}
	mant := make([]byte, 0, 4*ndigits)
	for k := 0; k < ndigits; k++ {
		g := be.Uint16(data[8+2*k:])
		if g >= 10000 {
			return decimal128.Num{}, bad("digit")
		}
		mant = append(mant, byte('0'+g/1000), byte('0'+g/100%10), byte('0'+g/10%10), byte('0'+g%10))
	}
	e10 := 4 * (weight + 1 - ndigits)
	for len(mant) > 0 && mant[0] == '0' {
		mant = mant[1:]
	}
	n, err := scaleDigits(mant, e10, p, sc)
	if err != nil {
		return n, err
	}
	if sign == numericNeg {
		n = n.Negate()
	}
	return n, nil
}
