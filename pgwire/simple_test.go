package pgwire_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSimpleQuery(t *testing.T) {
	h := start(t, nil)
	r, _ := connect(t, h.addr, nil)
	cases := []struct {
		sql  string
		want []string
	}{
		{"select 1 as a; select 'x' as b, null as c", []string{
			"T a:23/4/-1/0", "D 1", "C SELECT 1",
			"T b:25/-1/-1/0 c:25/-1/-1/0", "D x|NULL", "C SELECT 1", "Z I"}},
		{"select 1; select * from nosuch; select 3", []string{
			"T ?column?:23/4/-1/0", "D 1", "C SELECT 1",
			`E ERROR 42P01 relation "nosuch" does not exist P=25`, "Z I"}},
		{"", []string{"I", "Z I"}},
		{";", []string{"I", "Z I"}},
		{"  -- just a comment", []string{"I", "Z I"}},
		{"select 1;;", []string{"T ?column?:23/4/-1/0", "D 1", "C SELECT 1", "Z I"}},
		{"selec 1", []string{`E ERROR 42601 syntax error at or near "selec" P=1`, "Z I"}},
		{"select * from nosuch", []string{`E ERROR 42P01 relation "nosuch" does not exist P=15`, "Z I"}},
		{"select 'abc'::int", []string{`E ERROR 22P02 invalid input syntax for type integer: "abc" P=8`, "Z I"}},
		// Positions count characters of the whole string, not bytes.
		{"select 'ééé', nosuch", []string{`E ERROR 42703 column "nosuch" does not exist P=15`, "Z I"}},
		{"select nosuchfunc(1)", []string{`E ERROR 42883 function nosuchfunc(unknown) does not exist H=No function matches the given name and argument types. You might need to add explicit type casts. P=8`, "Z I"}},
		{"select fail('boom')", []string{"T fail:25/-1/-1/0", `E ERROR 22012 boom D=raised by fail() H=do not call fail() P=8`, "Z I"}},
		{"select $1", []string{`E ERROR 42P02 there is no parameter $1`, "Z I"}},
		{"set nosuch_param = 1", []string{`E ERROR 42704 unrecognized configuration parameter "nosuch_param"`, "Z I"}},
		{"set extra_float_digits = 100", []string{`E ERROR 22023 100 is outside the valid range for parameter "extra_float_digits" (-15 .. 3)`, "Z I"}},
		{"select * from t", []string{
			"T id:23/4/-1/0 name:25/-1/-1/0 price:1700/-1/655366/0 created:1184/8/-1/0",
			"D 1|a|1.50|2024-01-02 03:04:05.123456+00",
			"D 2|b|-2.25|2024-01-02 03:04:06+00",
			"D 3|c|NULL|2024-07-01 00:00:00+00",
			"C SELECT 3", "Z I"}},
		{"select * from t limit 0", []string{
			"T id:23/4/-1/0 name:25/-1/-1/0 price:1700/-1/655366/0 created:1184/8/-1/0", "C SELECT 0", "Z I"}},
		{"select true::bool, 1::int2, 3::int8, 1.5::float4, -2.25::float8, 12.340::numeric, 'héllo'::text, 'vc'::varchar(10), '\\xdeadbeef'::bytea, '2024-01-02'::date, '1999-12-31 23:59:59.5'::timestamp, 'infinity'::timestamp, '1 year 2 mons 3 days 04:05:06.5'::interval, '-1 day'::interval, null::int4", []string{
			"T bool:16/1/-1/0 int2:21/2/-1/0 int8:20/8/-1/0 float4:700/4/-1/0 float8:701/8/-1/0 numeric:1700/-1/-1/0 text:25/-1/-1/0 varchar:1043/-1/14/0 bytea:17/-1/-1/0 date:1082/4/-1/0 timestamp:1114/8/-1/0 timestamp:1114/8/-1/0 interval:1186/16/-1/0 interval:1186/16/-1/0 int4:23/4/-1/0",
			"D t|1|3|1.5|-2.25|12.34|\\x68c3a96c6c6f|vc|\\xdeadbeef|2024-01-02|1999-12-31 23:59:59.5|infinity|1 year 2 mons 3 days 04:05:06.5|-1 days|NULL",
			"C SELECT 1", "Z I"}},
		{"set timezone='America/New_York'; select '2024-01-02 03:04:05.123456+02'::timestamptz, '2024-07-02 03:04:05+00'::timestamptz; set timezone='UTC'", []string{
			"C SET", "S TimeZone=America/New_York",
			"T timestamptz:1184/8/-1/0 timestamptz:1184/8/-1/0", "D 2024-01-01 20:04:05.123456-05|2024-07-01 23:04:05-04", "C SELECT 1",
			"C SET", "S TimeZone=UTC", "Z I"}},
		{"set application_name = 'foo'", []string{"C SET", "S application_name=foo", "Z I"}},
		{"set application_name = 'foo'", []string{"C SET", "Z I"}},
		{"show application_name", []string{"T application_name:25/-1/-1/0", "D foo", "C SHOW", "Z I"}},
		{"set extra_float_digits=0; select 0.1::float8, 1.1::float4; reset extra_float_digits", nil},
	}
	for _, tc := range cases {
		got := r.query(tc.sql)
		if tc.want == nil {
			continue
		}
		require.Equal(t, tc.want, got, tc.sql)
	}
}

func TestSimpleTransactions(t *testing.T) {
	h := start(t, nil)
	r, _ := connect(t, h.addr, nil)
	steps := []struct {
		sql  string
		want []string
	}{
		{"begin", []string{"C BEGIN", "Z T"}},
		{"select fail('x')", []string{"T fail:25/-1/-1/0", "E ERROR 22012 x D=raised by fail() H=do not call fail() P=8", "Z E"}},
		{"select 1", []string{"E ERROR 25P02 current transaction is aborted, commands ignored until end of transaction block", "Z E"}},
		{"commit", []string{"C ROLLBACK", "Z I"}},
		{"begin; select 1", []string{"C BEGIN", "T ?column?:23/4/-1/0", "D 1", "C SELECT 1", "Z T"}},
		{"rollback", []string{"C ROLLBACK", "Z I"}},
		{"rollback", []string{"N WARNING 25P01 there is no transaction in progress", "C ROLLBACK", "Z I"}},
	}
	for _, s := range steps {
		require.Equal(t, s.want, r.query(s.sql), s.sql)
	}
}
