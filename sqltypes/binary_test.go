package sqltypes

import (
	"encoding/hex"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

// TestEncodeBinaryPG: text input, then EncodeBinary must equal PG's *send.
func TestEncodeBinaryPG(t *testing.T) {
	for name, table := range pgBinaryTables {
		t.Run(name, func(t *testing.T) { encodeBinaryCases(t, table) })
	}
}

func encodeBinaryCases(t *testing.T, cases []pgBinaryCase) {
	for _, c := range cases {
		t.Run(c.typ+"/"+c.text, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			typ, err := ParseTypeName(c.typ)
			require.NoError(t, err)
			b := array.NewBuilder(mem, typ.Arrow())
			defer b.Release()
			require.NoError(t, DecodeText(b, typ, c.text, nil))
			a := b.NewArray()
			defer a.Release()
			got, err := EncodeBinary([]byte{0xAA}, a, 0, typ)
			require.NoError(t, err)
			require.Equal(t, "aa"+c.hex, hex.EncodeToString(got))
		})
	}
}

// TestDecodeBinaryPG: PG's *send bytes decode to the value PG prints.
func TestDecodeBinaryPG(t *testing.T) {
	for name, table := range pgBinaryTables {
		t.Run(name, func(t *testing.T) { decodeBinaryCases(t, table) })
	}
}

func decodeBinaryCases(t *testing.T, cases []pgBinaryCase) {
	for _, c := range cases {
		t.Run(c.typ+"/"+c.text, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			typ, err := ParseTypeName(c.typ)
			require.NoError(t, err)
			raw, err := hex.DecodeString(c.hex)
			require.NoError(t, err)
			b := array.NewBuilder(mem, typ.Arrow())
			defer b.Release()
			require.NoError(t, DecodeBinary(b, typ, raw))
			a := b.NewArray()
			defer a.Release()
			require.Equal(t, c.out, string(EncodeText(nil, a, 0, typ, nil)))
		})
	}
}

func TestDecodeBinaryErrors(t *testing.T) {
	cases := []struct {
		name string
		typ  Type
		hex  string
		code string
		msg  string
	}{
		{"int4 short", Int4Type, "000001", sqlerr.ProtocolViolation, "insufficient data left in message"},
		{"int4 long", Int4Type, "0000000100", "22P03", "incorrect binary data format for type integer"},
		{"bool empty", BoolType, "", sqlerr.ProtocolViolation, "insufficient data left in message"},
		{"int8 short", Int8Type, "00", sqlerr.ProtocolViolation, "insufficient data left in message"},
		{"interval short", IntervalType, "00000000000000000000000000", sqlerr.ProtocolViolation, "insufficient data left in message"},
		{"numeric NaN", NumericType(10, 2), "00000000c0000000", sqlerr.FeatureNotSupported, "numeric NaN cannot be stored"},
		{"numeric inf", NumericType(10, 2), "00000000d0000000", sqlerr.NumericValueOutOfRange, "numeric field overflow"},
		{"numeric bad sign", NumericType(10, 2), "0000000012340000", "22P03", `invalid sign in external "numeric" value`},
		{"numeric bad digit", NumericType(10, 2), "000100000000000027a0", "22P03", `invalid digit in external "numeric" value`},
		{"numeric bad length", NumericType(10, 2), "ffff000000000000", "22P03", `invalid length in external "numeric" value`},
		{"numeric missing digits", NumericType(10, 2), "0002000000000000000c", sqlerr.ProtocolViolation, "insufficient data left in message"},
		{"numeric overflow", NumericType(5, 2), "00010001000000000001", sqlerr.NumericValueOutOfRange, "numeric field overflow"},
		{"text bad utf8", TextType, "61ff", "22021", `invalid byte sequence for encoding "UTF8": 0xff`},
		{"varchar too long", VarcharOf(2), "616263", sqlerr.StringDataRightTruncation, "value too long for type character varying(2)"},
		{"date out of range", DateType, "7ffffff0", sqlerr.DatetimeFieldOverflow, "date out of range"},
		{"timestamp out of range", TimestampType, "7ffffffffffffff0", sqlerr.DatetimeFieldOverflow, "timestamp out of range"},
		{"timestamp before 4714 BC", TimestampTZType, "f000000000000000", sqlerr.DatetimeFieldOverflow, "timestamp out of range"},
		{"interval too many hours", IntervalType, "7fffffffffffffff0000000000000000", sqlerr.DatetimeFieldOverflow, "interval out of range"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			raw, err := hex.DecodeString(c.hex)
			require.NoError(t, err)
			b := array.NewBuilder(mem, c.typ.Arrow())
			defer b.Release()
			err = DecodeBinary(b, c.typ, raw)
			require.Error(t, err)
			require.Equal(t, c.code, sqlerr.Code(err))
			require.Equal(t, c.msg, err.Error())
			require.Zero(t, b.Len())
		})
	}
}

func TestDecodeBinaryAppliesModifiers(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cases := []struct {
		typ  Type
		hex  string
		want string
	}{
		// 123456789.5 into numeric(12,0) rounds half away from zero.
		{NumericType(12, 0), "0004000200000001000109291a851388", "123456790"},
		{NumericType(12, 0), "000400024000000100010929 1a851388", "-123456790"},
		// 1999-12-31 23:59:59.5 into timestamp(0): half away from
		// Postgres' epoch 2000-01-01 (checked against PG15).
		{Type{Kind: Timestamp, Precision: 0, Scale: NoLimit, Length: NoLimit}, "fffffffffff85ee0", "1999-12-31 23:59:59"},
		{VarcharOf(3), "61626320202020", "abc"},
	}
	for _, c := range cases {
		raw, err := hex.DecodeString(stripSpaces(c.hex))
		require.NoError(t, err)
		b := array.NewBuilder(mem, c.typ.Arrow())
		require.NoError(t, DecodeBinary(b, c.typ, raw))
		a := b.NewArray()
		require.Equal(t, c.want, string(EncodeText(nil, a, 0, c.typ, nil)))
		a.Release()
		b.Release()
	}
}

func stripSpaces(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' {
			out = append(out, s[i])
		}
	}
	return string(out)
}
