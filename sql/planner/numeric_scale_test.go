package planner

import (
	"testing"

	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// TestNumericDisplayScales pins the plan-time display scales of numeric
// expressions (docs/sql.md, "Numbers"); the printed values are checked
// against PG15 in tests/sqllogic/testdata/types/numeric.slt.
func TestNumericDisplayScales(t *testing.T) {
	cat := newCatalog(t)
	d := sqltypes.NumericDisplay
	f8 := sqltypes.Float8Type
	tests := []struct {
		name, sql string
		want      []sqltypes.Type
	}{
		{"literals", `SELECT 12.50, 5::numeric, '1.5e-3'::numeric, 18446744073709551616`, []sqltypes.Type{d(2), d(0), d(4), d(0)}},
		{"casts keep the operand's", `SELECT n::numeric, k::numeric, 1.50::numeric(5,1) FROM nums`, []sqltypes.Type{d(2), d(0), sqltypes.NumericType(5, 1)}},
		{"add sub mod", `SELECT 1.50 + 2, n - 0.125, n % 3 FROM nums`, []sqltypes.Type{d(2), d(3), d(2)}},
		{"mul", `SELECT 1.5 * 2.25, n * n FROM nums`, []sqltypes.Type{d(3), d(4)}},
		{"div", `SELECT n / 3, 7.0 / 2, 100000.0 / 3, 1.0 / 3 FROM nums`, []sqltypes.Type{d(16), d(16), d(12), d(16)}},
		{"unknown scale spreads", `SELECT n::float8::numeric + 1.5 FROM nums`, []sqltypes.Type{d(-1)}},
		{"aggregates", `SELECT sum(n), avg(n), sum(k), avg(k), sum(k::bigint), max(n) FROM nums`, []sqltypes.Type{d(2), d(16), sqltypes.Int8Type, d(16), d(0), sqltypes.NumericType(10, 2)}},
		{"rounding", `SELECT round(n), round(n, 1), trunc(n, -1), round(n, k), floor(n), ceil(n), sign(n), abs(n) FROM nums`, []sqltypes.Type{d(0), d(1), d(0), d(-1), d(0), d(0), d(0), d(2)}},
		{"rounding integers", `SELECT round(k), floor(k), trunc(k), sign(k), abs(k), round(k, 2) FROM nums`, []sqltypes.Type{f8, f8, f8, f8, sqltypes.Int4Type, d(2)}},
		{"math of constants", `SELECT sqrt(2.0), exp(10.0), ln(1.05), power(2.0, 3), log(100.0), log(2, 8)`, []sqltypes.Type{d(15), d(12), d(16), d(16), d(16), d(16)}},
		{"math of columns", `SELECT sqrt(n), power(n, 2) FROM nums`, []sqltypes.Type{d(-1), d(-1)}},
		{"math of doubles", `SELECT sqrt(2), ln(k), power(2, 10), log(1000), exp(1.5::float8) FROM nums`, []sqltypes.Type{f8, f8, f8, f8, f8}},
		{"extract", `SELECT EXTRACT(second FROM ts), EXTRACT(epoch FROM ts), EXTRACT(milliseconds FROM ts), EXTRACT(year FROM ts) FROM trades`, []sqltypes.Type{d(6), d(6), d(3), d(0)}},
		{"extract of a date", `SELECT EXTRACT(epoch FROM d), extract('doy', d) FROM daily`, []sqltypes.Type{d(0), d(0)}},
		{"date_trunc", `SELECT date_trunc('day', d), date_trunc('day', ts), date_trunc('day', ts, 'UTC') FROM daily, trades`, []sqltypes.Type{sqltypes.TimestampTZType, sqltypes.TimestampType, sqltypes.TimestampTZType}},
		{"time_bucket", `SELECT time_bucket('1 day', d), time_bucket('1 hour', ts, '2000-01-01'), time_bucket('1 hour', ts, INTERVAL '5 minutes') FROM daily, trades`, []sqltypes.Type{sqltypes.DateType, sqltypes.TimestampType, sqltypes.TimestampType}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, types(schemaOf(t, cat, tt.sql)))
		})
	}
}
