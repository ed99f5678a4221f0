package main

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/asofsql/asofsql"
	"github.com/stretchr/testify/require"
)

// TestDemoChainParallel reruns what once showed issue 15's NULL bid_alt
// (a race in the catalog's commit, fixed on main, not the split join):
// right after the demo's COPY (in memory and in a data directory), the
// two-input chain (and its LIMIT form, as the tour runs it) must give the
// serial answer at 2 and 3 workers, several times over, and the second
// input must match at all.
func TestDemoChainParallel(t *testing.T) {
	const chain = `SELECT t.ts, t.sym, t.price, q.bid AS bid_primary, a.bid AS bid_alt
FROM trades t
ASOF LEFT JOIN quotes q ON t.sym = q.sym AND t.ts >= q.ts
ASOF LEFT JOIN quotes_alt a ON t.sym = a.sym AND t.ts >= a.ts
WHERE t.ts >= TIMESTAMP '2026-11-30 12:00:00'`
	for _, dir := range []string{"", t.TempDir()} {
		dsn := ":memory:"
		if dir != "" {
			dsn = dir
		}
		db, err := asofsql.Open(dsn)
		require.NoError(t, err)
		require.NoError(t, runDemo(t.Context(), db, 3000, dir, io.Discard))
		s := db.Session()
		// The demo's 3000 rows are small: parallel plans all the same.
		_, err = s.Exec(t.Context(), "SET min_parallel_table_scan_size = 0")
		require.NoError(t, err)
		rows := func(workers int, q string) []string {
			t.Helper()
			_, err := s.Exec(t.Context(), fmt.Sprintf("SET max_parallel_workers_per_gather = %d", workers))
			require.NoError(t, err)
			c, err := s.Query(t.Context(), q)
			require.NoError(t, err)
			defer c.Close()
			var out []string
			for c.Next() {
				b := c.RecordBatch()
				for r := 0; r < int(b.NumRows()); r++ {
					var f []string
					for _, col := range b.Columns() {
						f = append(f, col.ValueStr(r))
					}
					out = append(out, strings.Join(f, "|"))
				}
			}
			require.NoError(t, c.Err())
			return out
		}
		for _, q := range []string{chain, chain + "\nLIMIT 8"} {
			want := rows(1, q)
			alt := 0
			for _, r := range want {
				if !strings.HasSuffix(r, "|(null)") {
					alt++
				}
			}
			require.Greater(t, alt, len(want)/2, "most trades have a second-venue quote (dir %q)", dir)
			for i := 0; i < 2; i++ {
				for _, w := range []int{2, 3} {
					require.Equal(t, want, rows(w, q), "%q at %d workers, run %d (dir %q)", q, w, i, dir)
				}
			}
		}
		s.Close()
		require.NoError(t, db.Close())
	}
}
