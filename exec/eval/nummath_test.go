package eval

import (
	"testing"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// TestNumericMathFunctions checks the numeric ln/exp/sqrt/log/power, trunc
// and sign kernels over a column (NULL row included). Values are PG15's
// (select ln(x), ... from a numeric(10,2) column holding 1.25, 0.50, NULL,
// 100.00), rounded at Postgres' result scale but at most 16 digits and
// printed without trailing zeros (the result's display scale is unknown
// when the argument is not a constant; docs/sql.md).
func TestNumericMathFunctions(t *testing.T) {
	cols := []colSpec{
		{"x", num102, []string{"1.25", "0.50", "NULL", "100.00"}},
		{"p", sqltypes.Int4Type, []string{"1", "0", "NULL", "-1"}},
		{"neg", num102, []string{"-1.00", "0.00", "NULL", "2.00"}},
	}
	c := func(name string) *expr.Column { return colOf(cols, name) }
	num := sqltypes.NumericDisplay(-1)
	n2 := sqltypes.NumericDisplay(2)
	cases := []evalCase{
		{"ln", fn("ln", num, c("x")), "0.2231435513142098|-0.6931471805599453|NULL|4.6051701859880914", "", ""},
		{"sqrt", fn("sqrt", num, c("x")), "1.118033988749895|0.7071067811865475|NULL|10", "", ""},
		{"log10", fn("log10", num, c("x")), "0.0969100130080564|-0.3010299956639812|NULL|2", "", ""},
		{"power int", fn("power", num, c("x"), litText(n2, "2")), "1.5625|0.25|NULL|10000", "", ""},
		{"power frac", fn("power", num, c("x"), litText(n2, "0.5")), "1.1180339887498948|0.7071067811865475|NULL|10", "", ""},
		{"log base", fn("log", num, litText(n2, "2.0"), c("x")), "0.3219280948873623|-1|NULL|6.6438561897747247", "", ""},
		{"exp", fn("exp", num, bin(expr.Div, sqltypes.NumericDisplay(16), c("x"), litText(n2, "100"))), "1.0125784515406344|1.0050125208594011|NULL|2.7182818284590452", "", ""},
		{"trunc places", fn("trunc", sqltypes.NumericDisplay(1), c("x"), i4(1)), "1.2|0.5|NULL|100.0", "", ""},
		{"trunc places column", fn("trunc", num, c("x"), c("p")), "1.2|0|NULL|100", "", ""},
		{"trunc", fn("trunc", sqltypes.NumericDisplay(0), c("x")), "1|0|NULL|100", "", ""},
		{"sign", fn("sign", sqltypes.NumericDisplay(0), c("neg")), "-1|0|NULL|1", "", ""},
		{"trunc double", fn("trunc", sqltypes.Float8Type, f8(-2.5)), "-2|-2|-2|-2", "", ""},
		{"sign double", fn("sign", sqltypes.Float8Type, f8(-0.5)), "-1|-1|-1|-1", "", ""},
		{"log10 double", fn("log10", sqltypes.Float8Type, f8(1000)), "3|3|3|3", "", ""},
		{"log10 double zero", fn("log10", sqltypes.Float8Type, f8(0)), "", "2201E", "cannot take logarithm of zero"},
		{"ln negative", fn("ln", num, c("neg")), "", "2201E", "cannot take logarithm of a negative number"},
		{"log of zero", fn("log10", num, c("neg")), "", "2201E", "cannot take logarithm"},
		{"log base zero", fn("log", num, c("neg"), litText(n2, "2")), "", "2201E", "cannot take logarithm"},
		{"log base one", fn("log", num, litText(n2, "1"), c("x")), "", "22012", "division by zero"},
		{"sqrt negative", fn("sqrt", num, c("neg")), "", "2201F", "cannot take square root of a negative number"},
		{"power zero negative", fn("power", num, c("neg"), litText(n2, "-1")), "", "2201F", "zero raised to a negative power is undefined"},
		{"power complex", fn("power", num, c("neg"), litText(n2, "0.5")), "", "2201F", "a negative number raised to a non-integer power yields a complex result"},
		{"power overflow", fn("power", num, c("x"), litText(n2, "30")), "", "22003", "value overflows numeric format"},
		{"exp overflow", fn("exp", num, c("x")), "", "22003", "value overflows numeric format"},
		// NULL propagation from a NULL literal argument.
		{"ln null", fn("ln", num, lit(num, nil)), "NULL|NULL|NULL|NULL", "", ""},
		{"power null exponent", fn("power", num, c("x"), lit(num, nil)), "NULL|NULL|NULL|NULL", "", ""},
		{"trunc null places", fn("trunc", num, c("x"), lit(sqltypes.Int4Type, nil)), "NULL|NULL|NULL|NULL", "", ""},
		// A display scale prints its digits: 7.0 / 2 is 3.5000000000000000.
		{"display scale", bin(expr.Div, sqltypes.NumericDisplay(16), litText(n2, "7.0"), litText(n2, "2")), "3.5000000000000000|3.5000000000000000|3.5000000000000000|3.5000000000000000", "", ""},
		{"display scale rounds the stored digits", cast(litText(sqltypes.NumericDisplay(-1), "2.345"), sqltypes.NumericDisplay(2)), "2.35|2.35|2.35|2.35", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := evalText(t, cols, tc.e, Env{})
			if tc.code != "" {
				require.Error(t, err)
				require.Equal(t, tc.code, sqlerr.Code(err), "error %v", err)
				require.Contains(t, err.Error(), tc.msg)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestExtract checks EXTRACT's exact numeric fields (PG15 values) and
// time_bucket's origin and offset forms.
func TestExtract(t *testing.T) {
	ts, tz, iv, d := sqltypes.TimestampType, sqltypes.TimestampTZType, sqltypes.IntervalType, sqltypes.DateType
	cols := []colSpec{
		{"ts", ts, []string{"2024-01-02 03:04:05.123456", "1969-12-31 23:59:59.999999", "NULL", "infinity"}},
		{"tz", tz, []string{"2024-07-02 12:00:00+00", "2024-01-02 12:00:00+00", "NULL", "-infinity"}},
		{"d", d, []string{"2024-01-02", "1999-12-31", "NULL", "2000-02-29"}},
		{"iv", iv, []string{"1 year 2 mons 3 days 04:05:06.7", "-65.5 seconds", "NULL", "49 hours"}},
	}
	c := func(name string) *expr.Column { return colOf(cols, name) }
	ex := func(unit string, x string, scale int) expr.Expr {
		return fn("extract", sqltypes.NumericDisplay(scale), txt(unit), c(x))
	}
	cases := []evalCase{
		{"second", ex("second", "ts", 6), "5.123456|59.999999|NULL|NULL", "", ""},
		{"milliseconds", ex("milliseconds", "ts", 3), "5123.456|59999.999|NULL|NULL", "", ""},
		{"microseconds", ex("microseconds", "ts", 0), "5123456|59999999|NULL|NULL", "", ""},
		{"epoch exact", ex("epoch", "d", 0), "1704153600|946598400|NULL|951782400", "", ""},
		{"epoch infinite", ex("epoch", "ts", 6), "", "22003", "numeric field overflow"},
		{"year infinite", ex("year", "ts", 0), "", "22003", "numeric field overflow"},
		{"hour of date", ex("hour", "d", 0), "", "0A000", `unit "hour" not supported for type date`},
		{"julian of date", ex("julian", "d", 0), "2460312|2451544|NULL|2451604", "", ""},
		{"dow of date", ex("dow", "d", 0), "2|5|NULL|2", "", ""},
		{"interval epoch", ex("epoch", "iv", 6), "37015506.700000|-65.500000|NULL|176400.000000", "", ""},
		{"interval second", ex("second", "iv", 6), "6.700000|-5.500000|NULL|0.000000", "", ""},
		{"interval hour", ex("hour", "iv", 0), "4|0|NULL|49", "", ""},
		{"interval dow", ex("dow", "iv", 0), "", "0A000", `unit "dow" not supported for type interval`},
		{"timezone of timestamp", ex("timezone", "ts", 0), "", "0A000", `unit "timezone" not supported for type timestamp without time zone`},
		{"timezone utc", ex("timezone", "tz", 0), "0|0|NULL|NULL", "", ""},
		{"unknown unit", ex("fortnight", "ts", 0), "", "22023", `unit "fortnight" not recognized`},
		{"null unit", fn("extract", sqltypes.NumericDisplay(-1), lit(sqltypes.TextType, nil), c("ts")), "NULL|NULL|NULL|NULL", "", ""},
		{"date_part julian", fn("date_part", sqltypes.Float8Type, txt("julian"), litText(ts, "2024-01-02 12:00")), "2460312.5|2460312.5|2460312.5|2460312.5", "", ""},
		{"time_bucket origin", fn("time_bucket", ts, litText(iv, "1 hour"), c("ts"), litText(ts, "2000-01-01 00:30")), "2024-01-02 02:30:00|1969-12-31 23:30:00|NULL|infinity", "", ""},
		{"time_bucket offset", fn("time_bucket", ts, litText(iv, "1 hour"), c("ts"), litText(iv, "10 minutes")), "2024-01-02 02:10:00|1969-12-31 23:10:00|NULL|infinity", "", ""},
		{"time_bucket month origin", fn("time_bucket", d, litText(iv, "2 months"), c("d"), litText(d, "2000-02-01")), "2023-12-01|1999-12-01|NULL|2000-02-01", "", ""},
		{"time_bucket null origin", fn("time_bucket", ts, litText(iv, "1 hour"), c("ts"), lit(ts, nil)), "NULL|NULL|NULL|NULL", "", ""},
		{"date_trunc in a zone", fn("date_trunc", tz, txt("day"), c("tz"), txt("Asia/Tokyo")), "2024-07-01 15:00:00+00|2024-01-01 15:00:00+00|NULL|-infinity", "", ""},
		{"date_trunc null zone", fn("date_trunc", tz, txt("day"), c("tz"), lit(sqltypes.TextType, nil)), "NULL|NULL|NULL|NULL", "", ""},
		{"date_trunc bad zone", fn("date_trunc", tz, txt("day"), c("tz"), txt("Mars/X")), "", "22023", `time zone "Mars/X" not recognized`},
		{"date_trunc interval", fn("date_trunc", iv, txt("hour"), c("iv")), "1 year 2 mons 3 days 04:00:00|00:00:00|NULL|49:00:00", "", ""},
		{"date_trunc interval year", fn("date_trunc", iv, txt("year"), c("iv")), "1 year|00:00:00|NULL|00:00:00", "", ""},
		{"date_trunc interval week", fn("date_trunc", iv, txt("week"), c("iv")), "", "0A000", `unit "week" not supported for type interval`},
		{"time_bucket infinite origin", fn("time_bucket", ts, litText(iv, "1 hour"), c("ts"), litText(ts, "infinity")), "", "22023", "invalid origin"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := evalText(t, cols, tc.e, Env{})
			if tc.code != "" {
				require.Error(t, err)
				require.Equal(t, tc.code, sqlerr.Code(err), "error %v", err)
				require.Contains(t, err.Error(), tc.msg)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// colOf is column name of cols.
func colOf(cols []colSpec, name string) *expr.Column {
	for i, c := range cols {
		if c.name == name {
			return &expr.Column{Index: i, Name: name, T: c.t}
		}
	}
	panic("no column " + name)
}
