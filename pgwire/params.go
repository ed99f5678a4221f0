package pgwire

import (
	"context"
	"encoding/binary"
	"math"
	"unicode/utf8"

	"github.com/asofsql/asofsql/sqltypes"
)

// ValuesStatement is implemented by a Statement that can take its Bind
// parameters as decoded values instead of a one-row Arrow batch. A
// driver's prepared single-row INSERT binds a few scalars per round trip,
// and building an Arrow array per parameter (a builder's buffers, its
// data, the array, the batch) only for the engine to read row 0 back was
// a good part of such a statement's cost. The server calls ExecuteValues
// when it decoded every parameter of the Bind this way (ParamValue), and
// Execute with a batch otherwise.
type ValuesStatement interface {
	Statement
	// ExecuteValues is Execute with the parameters as values, one per
	// parameter, typed as ParamTypes says (TEXT for unknown ones). The
	// slice is valid only during the call.
	ExecuteValues(ctx context.Context, params []ParamValue) (Result, error)
}

// ParamValue is a decoded Bind parameter (sqltypes.Param): Str holds the
// value's own string, not the message's bytes.
type ParamValue = sqltypes.Param

// Timestamps the fast path decodes: well inside the range Postgres and
// sqltypes accept (2^56 µs is about 2,283 years either side of 2000), so
// that no range check or infinity applies.
const fastTimestampMax = 1 << 56

// pgEpochMicros is 2000-01-01 (Postgres' epoch) in Unix microseconds.
const pgEpochMicros = 946_684_800_000_000

// fastParam decodes one well-formed parameter of a common type as
// sqltypes.DecodeText or DecodeBinary would, without a builder; ok is
// false for anything else (other types, modifiers, malformed or unusual
// input: infinities, text integers with signs or spaces), which then take
// the builders' path, so every error and edge case is theirs.
// data is nil for NULL.
func fastParam(t sqltypes.Type, format int16, data []byte) (ParamValue, bool) {
	p := ParamValue{T: t}
	if data == nil {
		switch t {
		case sqltypes.Int8Type, sqltypes.Int4Type, sqltypes.Int2Type, sqltypes.Float8Type,
			sqltypes.BoolType, sqltypes.TextType, sqltypes.TimestampType, sqltypes.TimestampTZType:
			p.Null = true
			return p, true
		}
		return p, false
	}
	be := binary.BigEndian
	ok := false
	switch format {
	case 1:
		switch t {
		case sqltypes.Int8Type:
			if ok = len(data) == 8; ok {
				p.Int = int64(be.Uint64(data))
			}
		case sqltypes.Int4Type:
			if ok = len(data) == 4; ok {
				p.Int = int64(int32(be.Uint32(data)))
			}
		case sqltypes.Int2Type:
			if ok = len(data) == 2; ok {
				p.Int = int64(int16(be.Uint16(data)))
			}
		case sqltypes.Float8Type:
			if ok = len(data) == 8; ok {
				p.Float = math.Float64frombits(be.Uint64(data))
			}
		case sqltypes.BoolType:
			if ok = len(data) == 1; ok {
				p.Bool = data[0] != 0
			}
		case sqltypes.TextType:
			p.Str, ok = fastText(data)
		case sqltypes.TimestampType, sqltypes.TimestampTZType:
			if len(data) == 8 {
				if us := int64(be.Uint64(data)); us > -fastTimestampMax && us < fastTimestampMax {
					p.Int, ok = us+pgEpochMicros, true
				}
			}
		}
	case 0:
		switch t {
		case sqltypes.Int8Type:
			p.Int, ok = fastInt(data, 18)
		case sqltypes.Int4Type:
			p.Int, ok = fastInt(data, 9)
		case sqltypes.Int2Type:
			p.Int, ok = fastInt(data, 4)
		case sqltypes.TextType:
			p.Str, ok = fastText(data)
		}
	}
	return p, ok
}

// fastText is a TEXT value: valid UTF-8 without NUL bytes, what
// sqltypes' text check accepts.
func fastText(data []byte) (string, bool) {
	for _, c := range data {
		if c == 0 {
			return "", false
		}
	}
	if !utf8.Valid(data) {
		return "", false
	}
	return string(data), true
}

// fastInt is a text integer of at most max digits, an optional '-' and
// nothing else (no sign '+', spaces or underscores), which fits its type
// whatever the digits.
func fastInt(data []byte, max int) (int64, bool) {
	neg := len(data) > 0 && data[0] == '-'
	if neg {
		data = data[1:]
	}
	if len(data) == 0 || len(data) > max {
		return 0, false
	}
	var v int64
	for _, c := range data {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// decodeValues decodes the Bind parameters of ps into values when every
// one takes the fast path (fastParam); ok is false otherwise, and then
// nothing was kept. vals is reused when it has room.
func decodeValues(vals []ParamValue, ps *prepared, fcodes []int16, data [][]byte) ([]ParamValue, bool) {
	vals = vals[:0]
	for i, t := range ps.params {
		t = paramType(t)
		v, ok := fastParam(t, paramFormat(fcodes, i), data[i])
		if !ok {
			return vals[:0], false
		}
		vals = append(vals, v)
	}
	return vals, true
}

// paramFormat is parameter i's format code in a Bind that sent fcodes:
// none means text for all, one applies to all (as in Postgres).
func paramFormat(fcodes []int16, i int) int16 {
	switch len(fcodes) {
	case 0:
		return 0
	case 1:
		return fcodes[0]
	}
	return fcodes[i]
}
