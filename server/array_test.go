package server_test

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestPgxArrays sends Go slices as array parameters (`= ANY($1)`, pgx's
// idiom for IN lists) in every exec mode, so in binary, text and inlined
// form, and scans array columns back into slices.
func TestPgxArrays(t *testing.T) {
	addr := start(t)
	modes := []pgx.QueryExecMode{
		pgx.QueryExecModeCacheStatement, pgx.QueryExecModeDescribeExec,
		pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol,
	}
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			c := dial(t, addr, mode)
			var n int64
			require.NoError(t, c.QueryRow(ctx(t), `SELECT count(*) FROM generate_series(1, 10) g(x) WHERE x = ANY($1)`, []int64{2, 3, 99}).Scan(&n))
			require.Equal(t, int64(2), n)
			var s string
			require.NoError(t, c.QueryRow(ctx(t), `SELECT string_agg(y, ',') FROM (VALUES ('a'), ('b c'), ('d')) v(y) WHERE y = ANY($1)`, []string{"b c", "d", `q"x`}).Scan(&s))
			require.Equal(t, "b c,d", s)
			var none bool
			require.NoError(t, c.QueryRow(ctx(t), `SELECT 5 <> ALL($1)`, []int32{1, 2}).Scan(&none))
			require.True(t, none)

			var ints []int64
			var strs []string
			var fl []float64
			var nullable []*int32
			require.NoError(t, c.QueryRow(ctx(t), `SELECT ARRAY[1, 2, 3]::bigint[], ARRAY['x', 'y z', '"q"'], ARRAY[1.5, -2]::float8[], ARRAY[7, NULL]`).
				Scan(&ints, &strs, &fl, &nullable))
			require.Equal(t, []int64{1, 2, 3}, ints)
			require.Equal(t, []string{"x", "y z", `"q"`}, strs)
			require.Equal(t, []float64{1.5, -2}, fl)
			require.Len(t, nullable, 2)
			require.Equal(t, int32(7), *nullable[0])
			require.Nil(t, nullable[1])
		})
	}
}
