package sqltypes

// Binary cases recorded from PostgreSQL 15 as
// SELECT <type>send('<text>'::<type>), '<text>'::<type>: the hex of the
// binary send format and the canonical text output. One table per type;
// TestEncodeBinaryPG and TestDecodeBinaryPG run each in one direction.

type pgBinaryCase struct {
	typ, text, hex, out string
}

var pgBoolBinary = []pgBinaryCase{
	{"bool", "t", "01", "t"},
	{"bool", "f", "00", "f"},
}

var pgIntBinary = []pgBinaryCase{
	{"int2", "-2", "fffe", "-2"},
	{"int2", "32767", "7fff", "32767"},
	{"int4", "-123456", "fffe1dc0", "-123456"},
	{"int4", "2147483647", "7fffffff", "2147483647"},
	{"int8", "-9223372036854775808", "8000000000000000", "-9223372036854775808"},
	{"int8", "1234567890123", "0000011f71fb04cb", "1234567890123"},
}

var pgFloatBinary = []pgBinaryCase{
	{"float4", "1.5", "3fc00000", "1.5"},
	{"float4", "-0", "80000000", "-0"},
	{"float4", "NaN", "7fc00000", "NaN"},
	{"float4", "-Infinity", "ff800000", "-Infinity"},
	{"float4", "3.4e38", "7f7fc99e", "3.4e+38"},
	{"float8", "0.1", "3fb999999999999a", "0.1"},
	{"float8", "-1e300", "fe37e43c8800759c", "-1e+300"},
	{"float8", "Infinity", "7ff0000000000000", "Infinity"},
	{"float8", "5e-324", "0000000000000001", "5e-324"},
}

var pgNumericBinary = []pgBinaryCase{
	{"numeric(10,3)", "12.34", "0002000000000003000c0d48", "12.340"},
	{"numeric(10,2)", "0", "0000000000000002", "0.00"},
	{"numeric(10,4)", "-0.0001", "0001ffff400000040001", "-0.0001"},
	{"numeric(10,0)", "10000", "00010001000000000001", "10000"},
	{"numeric(12,1)", "123456789.5", "0004000200000001000109291a851388", "123456789.5"},
	{"numeric(5,1)", "0.5", "0001ffff000000011388", "0.5"},
	{"numeric(12,2)", "100000000", "00010002000000020001", "100000000.00"},
	{"numeric(20,12)", "-1.23e-10", "0001fffd4000000c007b", "-0.000000000123"},
	{"numeric(38,0)", "99999999999999999999999999999999999999", "000a0009000000000063270f270f270f270f270f270f270f270f270f", "99999999999999999999999999999999999999"},
	{"numeric(38,10)", "-1234567890123456789012345678.0123456789", "000a00064000000a04d2162e23340d801ed204d2162e007b11d722c4", "-1234567890123456789012345678.0123456789"},
	{"numeric(6,6)", "0.000001", "0001fffe000000060064", "0.000001"},
}

var pgStringBinary = []pgBinaryCase{
	{"text", "héllo", "68c3a96c6c6f", "héllo"},
	{"text", "", "", ""},
	{"varchar(5)", "abc", "616263", "abc"},
}

var pgByteaBinary = []pgBinaryCase{
	{"bytea", "\\xdeadbeef00", "deadbeef00", "\\xdeadbeef00"},
	{"bytea", "", "", "\\x"},
}

var pgDateBinary = []pgBinaryCase{
	{"date", "2024-01-02", "0000223f", "2024-01-02"},
	{"date", "2000-01-01", "00000000", "2000-01-01"},
	{"date", "1999-12-31", "ffffffff", "1999-12-31"},
	{"date", "4714-11-24 BC", "ffda97a7", "4714-11-24 BC"},
	{"date", "5874897-12-31", "7fda970c", "5874897-12-31"},
	{"date", "infinity", "7fffffff", "infinity"},
	{"date", "-infinity", "80000000", "-infinity"},
}

var pgTimestampBinary = []pgBinaryCase{
	{"timestamp", "1999-12-31 23:59:59.5", "fffffffffff85ee0", "1999-12-31 23:59:59.5"},
	{"timestamp", "2000-01-01 00:00:00", "0000000000000000", "2000-01-01 00:00:00"},
	{"timestamp", "2024-01-02 03:04:05.123456", "0002b0ec8517d580", "2024-01-02 03:04:05.123456"},
	{"timestamp", "4714-11-24 00:00:00 BC", "fd0f7cc1411fa000", "4714-11-24 00:00:00 BC"},
	{"timestamp", "infinity", "7fffffffffffffff", "infinity"},
	{"timestamp", "-infinity", "8000000000000000", "-infinity"},
}

var pgTimestampTZBinary = []pgBinaryCase{
	{"timestamptz", "2024-01-02 03:04:05.123456+00", "0002b0ec8517d580", "2024-01-02 03:04:05.123456+00"},
	{"timestamptz", "1970-01-01 00:00:00+00", "fffca2fec4c82000", "1970-01-01 00:00:00+00"},
	{"timestamptz", "infinity", "7fffffffffffffff", "infinity"},
}

var pgIntervalBinary = []pgBinaryCase{
	{"interval", "1 year 2 mons 3 days 04:05:06.5", "000000036c9361a0000000030000000e", "1 year 2 mons 3 days 04:05:06.5"},
	{"interval", "-1 days", "0000000000000000ffffffff00000000", "-1 days"},
	{"interval", "00:00:00", "00000000000000000000000000000000", "00:00:00"},
	{"interval", "-1 years -2 mons +3 days -00:00:00.000001", "ffffffffffffffff00000003fffffff2", "-1 years -2 mons +3 days -00:00:00.000001"},
	{"interval", "2562047:47:16.854775", "0020c49ba5e353f70000000000000000", "2562047:47:16.854775"},
}

var pgBinaryTables = map[string][]pgBinaryCase{
	"Bool":        pgBoolBinary,
	"Int":         pgIntBinary,
	"Float":       pgFloatBinary,
	"Numeric":     pgNumericBinary,
	"String":      pgStringBinary,
	"Bytea":       pgByteaBinary,
	"Date":        pgDateBinary,
	"Timestamp":   pgTimestampBinary,
	"TimestampTZ": pgTimestampTZBinary,
	"Interval":    pgIntervalBinary,
}
