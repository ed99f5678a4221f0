package asofsql_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql"
	"github.com/stretchr/testify/require"
)

// parallelDB holds trades and two quote tables with NULL keys and t,
// duplicate t values and keys of both kinds.
func parallelDB(t *testing.T, mem memory.Allocator) *asofsql.DB {
	db, err := asofsql.Open(":memory:", asofsql.WithAllocator(mem), asofsql.WithWorkers(4),
		asofsql.WithMinParallelTableScanSize(0)) // small tables, parallel plans
	require.NoError(t, err)
	s := db.Session()
	defer s.Close()
	_, err = s.Exec(t.Context(), `
		CREATE TABLE tr (ts BIGINT, sym TEXT, id INTEGER, qty BIGINT) ORDER BY (ts);
		CREATE TABLE q1 (ts BIGINT, sym TEXT, id INTEGER, bid DOUBLE PRECISION) ORDER BY (ts);
		CREATE TABLE q2 (ts BIGINT, sym TEXT, id INTEGER, ask DOUBLE PRECISION) ORDER BY (ts)`)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(7, 7))
	for _, tbl := range []string{"tr", "q1", "q2"} {
		var sb strings.Builder
		ts := int64(0)
		for i := 0; i < 3000; i++ {
			ts += int64(rng.IntN(3))
			sym := fmt.Sprintf("'s%d'", rng.IntN(37))
			if rng.IntN(50) == 0 {
				sym = "NULL"
			}
			fmt.Fprintf(&sb, "(%d, %s, %d, %d),", ts, sym, rng.IntN(5), rng.IntN(1000))
		}
		_, err := s.Exec(t.Context(), "INSERT INTO "+tbl+" VALUES "+strings.TrimSuffix(sb.String(), ","))
		require.NoError(t, err)
	}
	return db
}

// TestParallelQueriesMatchSerial runs ASOF queries at 1, 2, 3 and 4
// workers and requires the same rows in the same order, and EXPLAIN to
// show the degree.
func TestParallelQueriesMatchSerial(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db := parallelDB(t, mem)
	defer db.Close()
	s := db.Session()
	defer s.Close()
	queries := []string{
		`SELECT * FROM tr ASOF LEFT JOIN q1 ON ts BETWEEN -5 AND 0 USING (sym)`,
		`SELECT tr.ts, tr.sym, q1.bid FROM tr ASOF JOIN q1 ON ts BETWEEN -3 AND 3 USING (sym) PREFER LATER WHERE tr.qty > 300`,
		`SELECT tr.*, q1.bid, q2.ask FROM tr ASOF LEFT JOIN q1 ON ts BETWEEN -4 AND 0 USING (sym, id)
			ASOF JOIN q2 ON ts BETWEEN 0 AND 6 USING (sym)`,
		`SELECT tr.ts, tr.sym, q1.bid, q2.ask FROM tr ASOF LEFT JOIN q1 ON tr.sym = q1.sym AND tr.ts >= q1.ts
			ASOF LEFT JOIN q2 ON tr.sym = q2.sym AND tr.ts >= q2.ts WHERE tr.ts >= 1000 LIMIT 20`,
		`SELECT tr.ts, q1.ts, q1.bid FROM tr ASOF JOIN q1 ON tr.sym = q1.sym AND tr.ts >= q1.ts ORDER BY tr.ts LIMIT 50`,
		`SELECT count(*), sum(q1.bid) FROM tr ASOF LEFT JOIN q1 ON ts BETWEEN -1 AND 1 USING (sym)`,
	}
	for _, q := range queries {
		var want []string
		for _, w := range []int{1, 2, 3, 4} {
			_, err := s.Exec(t.Context(), fmt.Sprintf("SET max_parallel_workers_per_gather = %d", w))
			require.NoError(t, err)
			got, err := sessRows(t, s, q)
			require.NoError(t, err, q)
			plan, err := sessRows(t, s, "EXPLAIN "+q)
			require.NoError(t, err)
			if w == 1 {
				want = got
				require.NotContains(t, strings.Join(plan, "\n"), "Merge")
				continue
			}
			require.Contains(t, strings.Join(plan, "\n"), fmt.Sprintf("Merge workers=%d", w), q)
			require.Equal(t, want, got, "%s at %d workers", q, w)
		}
	}
}

// TestParallelQueriesStopWorkers: LIMIT, a cancelled context and an error
// mid-query leave no goroutine running and no buffer allocated.
func TestParallelQueriesStopWorkers(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db := parallelDB(t, mem)
	defer db.Close()
	s := db.Session()
	defer s.Close()
	before := runtime.NumGoroutine()
	waitIdle := func() { t.Helper(); waitGoroutines(t, before) }
	const join = `SELECT * FROM tr ASOF LEFT JOIN q1 ON ts BETWEEN -5 AND 0 USING (sym)`

	rows, err := sessRows(t, s, join+` LIMIT 3`)
	require.NoError(t, err)
	require.Len(t, rows, 3)
	waitIdle()

	ctx, cancel := context.WithCancel(t.Context())
	c, err := s.Query(ctx, join)
	require.NoError(t, err)
	require.True(t, c.Next())
	cancel()
	for c.Next() {
	}
	require.ErrorIs(t, c.Err(), context.Canceled)
	c.Close()
	waitIdle()

	// 22012 raised by the projection above the join, mid-stream.
	_, err = sessRows(t, s, `SELECT tr.qty / (CASE WHEN tr.ts > 2000 THEN 0 ELSE 1 END), q1.bid FROM tr ASOF LEFT JOIN q1 ON ts BETWEEN -5 AND 0 USING (sym)`)
	require.ErrorContains(t, err, "division by zero")
	waitIdle()
}

// waitGoroutines waits up to 10 s for the goroutine count to fall back to
// before, failing t if a query's goroutines outlive it.
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		require.False(t, time.Now().After(deadline), "%d goroutines outlive the query (%d before)", runtime.NumGoroutine(), before)
		time.Sleep(5 * time.Millisecond)
	}
}
