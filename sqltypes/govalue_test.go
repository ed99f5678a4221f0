package sqltypes

import (
	"database/sql/driver"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

type valuer struct {
	v   any
	err error
}

func (v valuer) Value() (driver.Value, error) { return v.v, v.err }

func TestAppendGo(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	nyOpts := &Options{Location: ny, ExtraFloatDigits: 1}
	cases := []struct {
		name string
		typ  Type
		v    any
		want string // text output, or "ERR <code>: <message>"
	}{
		{"nil", Int4Type, nil, "NULL"},
		{"bool", BoolType, true, "t"},
		{"string to bool", BoolType, "yes", "t"},
		{"int to int2", Int2Type, 7, "7"},
		{"int to int2 overflow", Int2Type, 40000, "ERR 22003: smallint out of range"},
		{"int64 to int4 overflow", Int4Type, int64(math.MaxInt32) + 1, "ERR 22003: integer out of range"},
		{"uint64 to int8 overflow", Int8Type, uint64(math.MaxUint64), "ERR 22003: bigint out of range"},
		{"uint64 to numeric", NumericType(20, 0), uint64(math.MaxUint64), "18446744073709551615"},
		{"float rounds half even into int", Int4Type, 2.5, "2"},
		{"float rounds into int", Int4Type, -3.5, "-4"},
		{"float NaN into int", Int8Type, math.NaN(), "ERR 22003: bigint out of range"},
		{"int to float8", Float8Type, int32(-3), "-3"},
		{"float64 to float4 overflow", Float4Type, 1e300, "ERR 22003: value out of range: overflow"},
		{"float64 to float4", Float4Type, 0.1, "0.1"},
		{"float64 to numeric uses 15 digits", NumericType(NoLimit, NoLimit), 1.0 / 3, "0.333333333333333"},
		{"float32 to numeric uses 6 digits", NumericType(10, 8), float32(1.0 / 3), "0.33333300"},
		{"float to numeric rounds to scale", NumericType(5, 2), 2.675, "2.68"},
		{"float inf to numeric", NumericType(5, 2), math.Inf(1), "ERR 22003: numeric field overflow"},
		{"int to numeric overflow", NumericType(3, 1), 100, "ERR 22003: numeric field overflow"},
		{"decimal to numeric", NumericType(6, 3), Decimal{Coef: decimal128.FromI64(-12345), Scale: 2}, "-123.450"},
		{"decimal to int rounds", Int4Type, Decimal{Coef: decimal128.FromI64(-125), Scale: 1}, "-13"},
		{"string to numeric", NumericType(6, 3), " 1.5 ", "1.500"},
		{"string error keeps wording", Int4Type, "abc", `ERR 22P02: invalid input syntax for type integer: "abc"`},
		{"bytes to bytea are raw", ByteaType, []byte(`\x41`), `\x5c783431`},
		{"string to bytea is text input", ByteaType, `\x41`, `\x41`},
		{"bytes to text", TextType, []byte("héllo"), "héllo"},
		{"bytes to text checks utf8", TextType, []byte{0xff}, `ERR 22021: invalid byte sequence for encoding "UTF8": 0xff`},
		{"varchar limit", VarcharOf(2), "abc", "ERR 22001: value too long for type character varying(2)"},
		{"time to date uses its own calendar day", DateType, time.Date(2024, 1, 2, 23, 0, 0, 0, ny), "2024-01-02"},
		{"time to date BC", DateType, time.Date(0, 3, 1, 0, 0, 0, 0, time.UTC), "0001-03-01 BC"},
		{"time to date out of range", DateType, time.Date(-5000, 1, 1, 0, 0, 0, 0, time.UTC), `ERR 22008: date out of range: "-5000-01-01"`},
		{"time to timestamp keeps the wall clock", TimestampType, time.Date(2024, 1, 2, 3, 4, 5, 123456789, ny), "2024-01-02 03:04:05.123457"},
		{"time to timestamptz keeps the instant", TimestampTZType, time.Date(2024, 1, 2, 3, 4, 5, 0, ny), "2024-01-02 08:04:05+00"},
		{"time to timestamp(0)", Type{Kind: Timestamp, Precision: 0, Scale: NoLimit, Length: NoLimit}, time.Date(2024, 1, 2, 3, 4, 5, 500000000, time.UTC), "2024-01-02 03:04:06"},
		{"nanoseconds round half even", TimestampType, time.Date(2024, 1, 2, 3, 4, 5, 2500, time.UTC), "2024-01-02 03:04:05.000002"},
		{"string to timestamptz uses session zone", TimestampTZType, "2024-01-02 03:04:05", "2024-01-02 08:04:05+00"},
		{"interval value", IntervalType, IntervalValue{Months: 14, Days: -3, Microseconds: 1500000}, "1 year 2 mons -3 days +00:00:01.5"},
		{"duration", IntervalType, 90*time.Minute + time.Microsecond, "01:30:00.000001"},
		{"valuer", Int8Type, valuer{v: int64(5)}, "5"},
		{"valuer error", Int8Type, valuer{err: errors.New("boom")}, "ERR 22023: boom"},
		{"mismatch", Int4Type, time.Second * 0, "ERR 42804: cannot store Go value of type time.Duration in a column of type integer"},
		{"mismatch struct", TextType, struct{}{}, "ERR 42804: cannot store Go value of type struct {} in a column of type text"},
		{"bool into int", Int4Type, true, "ERR 42804: cannot store Go value of type bool in a column of type integer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			b := array.NewBuilder(mem, c.typ.Arrow())
			defer b.Release()
			o := nyOpts
			if c.typ.Kind != TimestampTZ {
				o = nil
			}
			err := AppendGo(b, c.typ, c.v, o)
			if err != nil {
				e, ok := sqlerr.As(err)
				require.True(t, ok)
				require.Equal(t, c.want, "ERR "+e.Code+": "+e.Message)
				require.Zero(t, b.Len())
				return
			}
			a := b.NewArray()
			defer a.Release()
			require.Equal(t, 1, a.Len())
			got := "NULL"
			if !a.IsNull(0) {
				got = string(EncodeText(nil, a, 0, c.typ, nil))
			}
			require.Equal(t, c.want, got)
		})
	}
}

func TestGoValue(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cases := []struct {
		typ  Type
		in   string
		want any
	}{
		{BoolType, "t", true},
		{Int2Type, "-5", int64(-5)},
		{Int4Type, "7", int64(7)},
		{Int8Type, "9223372036854775807", int64(math.MaxInt64)},
		{Float4Type, "1.5", float64(1.5)},
		{Float8Type, "-0.25", -0.25},
		{NumericType(6, 3), "1.5", Decimal{Coef: decimal128.FromI64(1500), Scale: 3}},
		{TextType, "héllo", "héllo"},
		{VarcharOf(3), "ab", "ab"},
		{ByteaType, `\x0102`, []byte{1, 2}},
		{DateType, "2024-01-02", time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)},
		{DateType, "0044-03-15 BC", time.Date(-43, 3, 15, 0, 0, 0, 0, time.UTC)},
		{DateType, "5874897-12-31", time.Date(5874897, 12, 31, 0, 0, 0, 0, time.UTC)},
		{DateType, "infinity", "infinity"},
		{TimestampType, "2024-01-02 03:04:05.5", time.Date(2024, 1, 2, 3, 4, 5, 500000000, time.UTC)},
		{TimestampType, "-infinity", "-infinity"},
		{TimestampTZType, "2024-01-02 03:04:05-05", time.Date(2024, 1, 2, 8, 4, 5, 0, time.UTC)},
		{IntervalType, "1 year 2 days 00:00:01", IntervalValue{Months: 12, Days: 2, Microseconds: 1000000}},
	}
	for _, c := range cases {
		b := array.NewBuilder(mem, c.typ.Arrow())
		require.NoError(t, DecodeText(b, c.typ, c.in, nil))
		b.AppendNull()
		a := b.NewArray()
		require.Equal(t, c.want, GoValue(a, 0, c.typ), "%s %s", c.typ, c.in)
		require.Nil(t, GoValue(a, 1, c.typ))
		a.Release()
		b.Release()
	}
	require.Equal(t, "12.340", Decimal{Coef: decimal128.FromI64(12340), Scale: 3}.String())
	require.Equal(t, 12.34, Decimal{Coef: decimal128.FromI64(12340), Scale: 3}.Float64())
	require.Equal(t, "-1 years -2 mons +3 days -00:00:00.000001", IntervalValue{Months: -14, Days: 3, Microseconds: -1}.String())
}

func TestDisplayDecimal(t *testing.T) {
	num := func(s string, t Type) decimal128.Num {
		v, err := decimal128.FromString(s, MaxNumericPrecision, int32(DefaultNumericScale))
		if err != nil {
			panic(err)
		}
		if t.Precision != NoLimit {
			v, _ = decimal128.FromString(s, int32(t.Precision), int32(t.Scale))
		}
		return v
	}
	for _, tc := range []struct {
		v    string
		t    Type
		want string
	}{
		{"1.2500", NumericType(NoLimit, NoLimit), "1.25"}, // unknown scale: its digits
		{"3", NumericType(NoLimit, NoLimit), "3"},
		{"1.25", NumericDisplay(4), "1.2500"},
		{"1.25", NumericDisplay(1), "1.3"}, // half away from zero
		{"-1.25", NumericDisplay(1), "-1.3"},
		{"2.50", NumericType(10, 2), "2.50"},
	} {
		if got := DisplayDecimal(num(tc.v, tc.t), tc.t).String(); got != tc.want {
			t.Errorf("DisplayDecimal(%s, %s) = %s, want %s", tc.v, tc.t, got, tc.want)
		}
	}
}
