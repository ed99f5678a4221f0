package sqltypes

import (
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

// pgCase is one PostgreSQL-verified text input: want is the text output
// of the value, or "ERR <sqlstate>: <message>[ | <detail>]".
type pgCase struct {
	zone, typ, in, want string
}

func optsIn(t *testing.T, zone string) *Options {
	o := DefaultOptions()
	if zone != "" && zone != "UTC" {
		loc, err := time.LoadLocation(zone)
		require.NoError(t, err)
		o.Location = loc
	}
	return o
}

// decodeEncode runs DecodeText then EncodeText and renders the outcome the
// way pgCase.want does.
func decodeEncode(t *testing.T, mem memory.Allocator, typ Type, in string, o *Options) string {
	b := array.NewBuilder(mem, typ.Arrow())
	defer b.Release()
	if err := DecodeText(b, typ, in, o); err != nil {
		e, ok := sqlerr.As(err)
		require.True(t, ok, "error is not a *sqlerr.Error: %v", err)
		require.Zero(t, b.Len(), "nothing is appended on error")
		got := "ERR " + e.Code + ": " + e.Message
		if e.Detail != "" {
			got += " | " + e.Detail
		}
		return got
	}
	a := b.NewArray()
	defer a.Release()
	require.Equal(t, 1, a.Len())
	return string(EncodeText(nil, a, 0, typ, o))
}

func runPGCases(t *testing.T, cases []pgCase) {
	for _, c := range cases {
		t.Run(c.zone+"/"+c.typ+"/"+c.in, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			typ, err := ParseTypeName(c.typ)
			require.NoError(t, err)
			require.Equal(t, c.want, decodeEncode(t, mem, typ, c.in, optsIn(t, c.zone)))
		})
	}
}

func TestDecodeTextBool(t *testing.T)        { runPGCases(t, pgBoolTextIn) }
func TestDecodeTextInt(t *testing.T)         { runPGCases(t, pgIntTextIn) }
func TestDecodeTextFloat(t *testing.T)       { runPGCases(t, pgFloatTextIn) }
func TestDecodeTextNumeric(t *testing.T)     { runPGCases(t, pgNumericTextIn) }
func TestDecodeTextString(t *testing.T)      { runPGCases(t, pgStringTextIn) }
func TestDecodeTextBytea(t *testing.T)       { runPGCases(t, pgByteaTextIn) }
func TestDecodeTextDate(t *testing.T)        { runPGCases(t, pgDateTextIn) }
func TestDecodeTextTimestamp(t *testing.T)   { runPGCases(t, pgTimestampTextIn) }
func TestDecodeTextTimestampTZ(t *testing.T) { runPGCases(t, pgTimestampTZTextIn) }
func TestDecodeTextInterval(t *testing.T)    { runPGCases(t, pgIntervalTextIn) }

// textDeviations are inputs where asofsql deliberately differs from
// PostgreSQL 15 (see doc.go); the Postgres result is in the comment.
var textDeviations = []pgCase{
	// Unconstrained NUMERIC is numeric(38,16): no NaN, 22 integer digits,
	// 16 fraction digits, printed without trailing zeros.
	{"", "numeric", "NaN", "ERR 0A000: numeric NaN cannot be stored | NUMERIC values are stored as Arrow decimal128, which has no NaN."}, // NaN
	{"", "numeric", "1e1000", "ERR 22003: numeric field overflow | A field with precision 38, scale 16 must round to an absolute value less than 10^22."},
	{"", "numeric", "1e-1001", "0"},                              // 0.000…(1001 zeros)
	{"", "numeric", " 12.500 ", "12.5"},                          // 12.500
	{"", "numeric", "-0.00", "0"},                                // 0.00
	{"", "numeric", "0.12345678901234567", "0.1234567890123457"}, // 0.12345678901234567
	{"", "numeric(5,2)", "NaN", "ERR 0A000: numeric NaN cannot be stored | NUMERIC values are stored as Arrow decimal128, which has no NaN."},
	// Input is assignment, not an explicit cast: '…'::varchar(3) truncates
	// in Postgres but INSERT and COPY raise this error.
	{"", "varchar(3)", "abcd", "ERR 22001: value too long for type character varying(3)"},
	{"", "varchar(3)", "éé€x", "ERR 22001: value too long for type character varying(3)"},
	{"", "varchar(3)", " abc", "ERR 22001: value too long for type character varying(3)"},
	// Microseconds since 1970 in an int64 end in 294247 AD, not 294276.
	{"", "timestamp", "294276-12-31 23:59:59.999999", `ERR 22008: timestamp out of range: "294276-12-31 23:59:59.999999"`},
	// month_day_nano holds +/-2562047 hours, Postgres +/-2562047788.
	{"", "interval", "2562048 hours", "ERR 22008: interval out of range"},
	{"", "interval", "2147483648:00:00", "ERR 22008: interval out of range"},
	// POSIX zones with a daylight-saving part are not implemented.
	{"", "timestamptz", "2024-01-02 03:00 EST5EDT4", `ERR 22023: time zone "est5edt4" not recognized`},
}

func TestDecodeTextDeviations(t *testing.T) { runPGCases(t, textDeviations) }

func TestDecodeTextVarcharTruncatesSpaces(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	// Verified with INSERT INTO t(v varchar(3)) on PG15: stored as "ab ".
	for in, want := range map[string]string{"ab    ": "ab ", "abc   ": "abc", "éé€  ": "éé€", "ab": "ab"} {
		require.Equal(t, want, decodeEncode(t, mem, VarcharOf(3), in, nil), in)
	}
}

func TestDecodeTextInvalidUTF8(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for in, want := range map[string]string{
		"a\xffb":   `ERR 22021: invalid byte sequence for encoding "UTF8": 0xff`,
		"a\xe9 b":  `ERR 22021: invalid byte sequence for encoding "UTF8": 0xe9 0x20 0x62`,
		"nul\x00x": `ERR 22021: invalid byte sequence for encoding "UTF8": 0x00`,
		"ok é":     "ok é",
	} {
		require.Equal(t, want, decodeEncode(t, mem, TextType, in, nil), in)
		require.Equal(t, want, decodeEncode(t, mem, VarcharOf(10), in, nil), in)
	}
}

func TestDecodeTextRelativeDates(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	saved := nowFunc
	defer func() { nowFunc = saved }()
	nowFunc = func() time.Time { return time.Date(2024, 3, 10, 4, 30, 0, 123456000, time.UTC) }
	ny := optsIn(t, "America/New_York")
	cases := []struct {
		typ  Type
		in   string
		o    *Options
		want string
	}{
		{DateType, "today", nil, "2024-03-10"},
		{DateType, "yesterday", nil, "2024-03-09"},
		{DateType, "tomorrow", nil, "2024-03-11"},
		{DateType, "today", ny, "2024-03-09"}, // still the 9th in New York
		{TimestampType, "now", nil, "2024-03-10 04:30:00.123456"},
		{TimestampType, "today", nil, "2024-03-10 00:00:00"},
		{TimestampTZType, "today", ny, "2024-03-09 00:00:00-05"},
		{TimestampTZType, "tomorrow", ny, "2024-03-10 00:00:00-05"},
		{TimestampTZType, "now", ny, "2024-03-09 23:30:00.123456-05"},
		{Type{Kind: Timestamp, Precision: 2, Scale: NoLimit, Length: NoLimit}, "now", nil, "2024-03-10 04:30:00.12"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, decodeEncode(t, mem, c.typ, c.in, c.o), c.in)
	}
}

// buildOne builds a one-element array with fill and returns it.
func buildOne(mem memory.Allocator, typ Type, fill func(b array.Builder)) arrow.Array {
	b := array.NewBuilder(mem, typ.Arrow())
	defer b.Release()
	fill(b)
	return b.NewArray()
}

func encodeOne(t *testing.T, typ Type, o *Options, fill func(b array.Builder)) string {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	a := buildOne(mem, typ, fill)
	defer a.Release()
	return string(EncodeText(nil, a, 0, typ, o))
}

func TestEncodeTextInterval(t *testing.T) {
	for _, c := range pgIntervalTextOut {
		got := encodeOne(t, IntervalType, nil, func(b array.Builder) {
			b.(*array.MonthDayNanoIntervalBuilder).Append(arrow.MonthDayNanoInterval{Months: c.months, Days: c.days, Nanoseconds: c.us * 1000})
		})
		require.Equal(t, c.want, got)
	}
}

func TestEncodeTextDate(t *testing.T) {
	cases := append(pgDateTextOut, struct {
		days int32
		want string
	}{DateInfinity, "infinity"}, struct {
		days int32
		want string
	}{DateNegInfinity, "-infinity"})
	for _, c := range cases {
		got := encodeOne(t, DateType, nil, func(b array.Builder) { b.(*array.Date32Builder).Append(arrow.Date32(c.days)) })
		require.Equal(t, c.want, got)
	}
}

func TestEncodeTextTimestamp(t *testing.T) {
	for _, c := range pgTimestampTextOut {
		typ, o := TimestampType, (*Options)(nil)
		if c.zone != "" {
			typ, o = TimestampTZType, optsIn(t, c.zone)
		}
		got := encodeOne(t, typ, o, func(b array.Builder) { b.(*array.TimestampBuilder).Append(arrow.Timestamp(c.us)) })
		require.Equal(t, c.want, got, "%s %d", c.zone, c.us)
	}
	for _, typ := range []Type{TimestampType, TimestampTZType} {
		require.Equal(t, "infinity", encodeOne(t, typ, nil, func(b array.Builder) {
			b.(*array.TimestampBuilder).Append(TimestampInfinity)
		}))
		require.Equal(t, "-infinity", encodeOne(t, typ, nil, func(b array.Builder) {
			b.(*array.TimestampBuilder).Append(TimestampNegInfinity)
		}))
	}
}

func TestEncodeTextFloat(t *testing.T) {
	for _, c := range pgFloatTextOut {
		o := DefaultOptions()
		o.ExtraFloatDigits = c.efd
		typ, err := ParseTypeName(c.typ)
		require.NoError(t, err)
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		require.Equal(t, c.want, decodeEncode(t, mem, typ, c.in, o), "efd %d %s", c.efd, c.in)
		mem.AssertSize(t, 0)
	}
}

func TestEncodeTextScalars(t *testing.T) {
	cases := []struct {
		name string
		typ  Type
		fill func(b array.Builder)
		want string
	}{
		{"true", BoolType, func(b array.Builder) { b.(*array.BooleanBuilder).Append(true) }, "t"},
		{"false", BoolType, func(b array.Builder) { b.(*array.BooleanBuilder).Append(false) }, "f"},
		{"int2 min", Int2Type, func(b array.Builder) { b.(*array.Int16Builder).Append(-32768) }, "-32768"},
		{"int4", Int4Type, func(b array.Builder) { b.(*array.Int32Builder).Append(42) }, "42"},
		{"int8 min", Int8Type, func(b array.Builder) { b.(*array.Int64Builder).Append(-9223372036854775808) }, "-9223372036854775808"},
		{"numeric scale", NumericType(10, 3), func(b array.Builder) { b.(*array.Decimal128Builder).Append(decimal128.FromI64(12340)) }, "12.340"},
		{"numeric small", NumericType(10, 3), func(b array.Builder) { b.(*array.Decimal128Builder).Append(decimal128.FromI64(-5)) }, "-0.005"},
		{"numeric zero", NumericType(10, 3), func(b array.Builder) { b.(*array.Decimal128Builder).Append(decimal128.FromI64(0)) }, "0.000"},
		{"numeric int", NumericType(5, 0), func(b array.Builder) { b.(*array.Decimal128Builder).Append(decimal128.FromI64(-12345)) }, "-12345"},
		{"numeric 38", NumericType(38, 2), func(b array.Builder) {
			n, err := decimal128.FromString("-999999999999999999999999999999999999.98", 38, 2)
			if err != nil {
				panic(err)
			}
			b.(*array.Decimal128Builder).Append(n)
		}, "-999999999999999999999999999999999999.98"},
		{"numeric unconstrained", NumericType(NoLimit, NoLimit), func(b array.Builder) {
			b.(*array.Decimal128Builder).Append(decimal128.FromI64(15).Mul(decimal128.FromI64(1_000_000_000_000_000)))
		}, "1.5"},
		{"text", TextType, func(b array.Builder) { b.(*array.StringBuilder).Append("héllo") }, "héllo"},
		{"bytea", ByteaType, func(b array.Builder) { b.(*array.BinaryBuilder).Append([]byte{0xde, 0xad, 0, 1}) }, `\xdead0001`},
		{"bytea empty", ByteaType, func(b array.Builder) { b.(*array.BinaryBuilder).Append(nil) }, `\x`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, encodeOne(t, c.typ, nil, c.fill))
		})
	}
}

func TestEncodeTextAppends(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	a := buildOne(mem, Int8Type, func(b array.Builder) { b.(*array.Int64Builder).AppendValues([]int64{1, 22}, nil) })
	defer a.Release()
	dst := []byte("x=")
	dst = EncodeText(dst, a, 1, Int8Type, nil)
	require.Equal(t, "x=22", string(dst))
	require.True(t, strings.HasPrefix(string(EncodeText([]byte("p"), a, 0, Int8Type, nil)), "p1"))
}

func TestDecodeTextIntervalCorners(t *testing.T) { runPGCases(t, pgIntervalCornersTextIn) }
func TestDecodeTextIntOverflow(t *testing.T)     { runPGCases(t, pgRandomNumberTextIn) }
func TestDecodeTextFloatBoundary(t *testing.T)   { runPGCases(t, pgFloatBoundaryTextIn) }
func TestDecodeTextDateTimeRandom(t *testing.T)  { runPGCases(t, pgDateTimeRandomTextIn) }
