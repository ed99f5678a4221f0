package asofsql_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql"
	"github.com/stretchr/testify/require"
)

// opsDB holds a 40000-row table: five scan batches (morsels) of 8192
// rows, so every worker gets some at 2, 3 and 4 workers.
func opsDB(t *testing.T, mem memory.Allocator) *asofsql.DB {
	db, err := asofsql.Open(":memory:", asofsql.WithAllocator(mem), asofsql.WithWorkers(4),
		asofsql.WithMinParallelTableScanSize(0)) // small tables, parallel plans
	require.NoError(t, err)
	s := db.Session()
	defer s.Close()
	_, err = s.Exec(t.Context(), `
		CREATE TABLE ev (id BIGINT, g INTEGER, sym TEXT, v BIGINT, f DOUBLE PRECISION, amt NUMERIC(12,2), ok BOOLEAN);
		INSERT INTO ev SELECT i, (i * 7919) % 13, CASE WHEN i % 97 = 0 THEN NULL ELSE 's' || ((i * 31) % 41) END,
			CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 104729) % 100003 - 50000 END, ((i * 13) % 1000) / 4.0,
			((i * 17) % 100000) / 100.0, i % 5 <> 0
		FROM generate_series(1::bigint, 40000::bigint) AS s(i)`)
	require.NoError(t, err)
	return db
}

// TestParallelOpsMatchSerial runs aggregates at 1 to 4 workers and
// requires the same rows in the same order, and EXPLAIN to show the split
// (or why an aggregate stays serial).
func TestParallelOpsMatchSerial(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db := opsDB(t, mem)
	defer db.Close()
	s := db.Session()
	defer s.Close()
	// Float sums here add multiples of 1/4 (exact in any order); corr is
	// rounded: combined float statistics can differ in the last bits.
	queries := map[string]string{
		`SELECT sym, count(*), count(v), sum(v), avg(v), min(v), max(sym), sum(amt), avg(amt), stddev(v), var_pop(amt),
			bool_and(ok), bool_or(v > 49000), sum(f), max(f) FROM ev GROUP BY sym`: "Finalize Aggregate workers=%d",
		`SELECT g, sym, sum(v * 2) FROM ev WHERE id % 3 = 0 GROUP BY g, sym HAVING count(*) > 2`:                         "Finalize Aggregate workers=%d",
		`SELECT count(*), sum(v), min(id), max(id), avg(f), round(corr(f, id::float8)::numeric, 12) FROM ev WHERE v > 0`: "Finalize Aggregate workers=%d",
		`SELECT count(*), sum(v) FROM ev WHERE id > 1000000`:                                                             "Finalize Aggregate workers=%d",
		`SELECT g % 3, max(v) FROM (SELECT g, v + 1 AS v FROM ev) AS x GROUP BY 1`:                                       "Finalize Aggregate workers=%d",
		`SELECT sym, count(DISTINCT g) FROM ev GROUP BY sym`:                                                             "serial: DISTINCT aggregate",
		`SELECT g, string_agg(sym, ',') FROM ev WHERE id < 50 GROUP BY g`:                                                "serial: string_agg does not combine",
		`SELECT g, count(*) FROM ev GROUP BY ROLLUP (g)`:                                                                 "serial: grouping sets",
		`SELECT g, sum(v) FROM ev WHERE v > random() GROUP BY g`:                                                         "Morsels workers=%d",
		// Sorts: ties (many equal g, sym) keep the input order.
		`SELECT id, g, sym FROM ev ORDER BY g DESC, sym NULLS FIRST`:                  "GatherMerge workers=%d",
		`SELECT sym, v * 2, f FROM ev WHERE id % 5 = 1 ORDER BY f, v DESC NULLS LAST`: "GatherMerge workers=%d",
		`SELECT g, id FROM ev ORDER BY g LIMIT 10`:                                    "Limit 10",
		`SELECT sym, count(*) FROM ev GROUP BY sym ORDER BY count(*) DESC, sym`:       "Finalize Aggregate workers=%d",
		`SELECT DISTINCT ON (g) g, id, amt FROM ev ORDER BY g, amt DESC`:              "GatherMerge workers=%d",
	}
	checkDegrees(t, s, queries, []int{1, 2, 3, 4}, nil)
}

// checkDegrees runs every query at each degree (the first is 1: the
// serial plan, which must show no "workers=") and requires at the others
// an EXPLAIN containing the query's shows (%d: the degree) and the serial
// rows, unless same says a query's rows may differ (a volatile function).
func checkDegrees(t *testing.T, s *asofsql.Session, queries map[string]string, degrees []int, same func(q string) bool) {
	t.Helper()
	for q, shows := range queries {
		var want []string
		for _, w := range degrees {
			_, err := s.Exec(t.Context(), fmt.Sprintf("SET max_parallel_workers_per_gather = %d", w))
			require.NoError(t, err)
			got, err := sessRows(t, s, q)
			require.NoError(t, err, q)
			plan, err := sessRows(t, s, "EXPLAIN "+q)
			require.NoError(t, err)
			if w == 1 {
				want = got
				require.NotEmpty(t, want, q)
				require.NotContains(t, strings.Join(plan, "\n"), "workers=", q)
				continue
			}
			require.Contains(t, strings.Join(plan, "\n"), strings.ReplaceAll(shows, "%d", fmt.Sprint(w)), q)
			if same == nil || same(q) {
				require.Equal(t, want, got, "%s at %d workers", q, w)
			}
		}
	}
}

// TestParallelOpsStopWorkers: LIMIT, a cancelled context and an
// error mid-query leave no goroutine running and no buffer allocated.
func TestParallelOpsStopWorkers(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db := opsDB(t, mem)
	defer db.Close()
	s, waitIdle := workersSession(t, db, 3)
	defer s.Close()
	rows, err := sessRows(t, s, `SELECT id % 1000, count(*) FROM ev GROUP BY 1 LIMIT 3`)
	require.NoError(t, err)
	require.Len(t, rows, 3)
	waitIdle()

	requireCancelled(t, s, `SELECT sym, sum(v) FROM ev GROUP BY sym`)
	waitIdle()

	// 22012 in a worker's projection, in a late morsel.
	_, err = sessRows(t, s, `SELECT sym, sum(v / (CASE WHEN id = 39000 THEN 0 ELSE 1 END)) FROM ev GROUP BY sym`)
	require.ErrorContains(t, err, "division by zero")
	waitIdle()

	// A parallel sort read in part, then closed.
	c, err := s.Query(t.Context(), `SELECT id, sym FROM ev ORDER BY sym, id DESC`)
	require.NoError(t, err)
	require.True(t, c.Next())
	c.Close()
	waitIdle()
	_, err = sessRows(t, s, `SELECT id FROM ev ORDER BY v / (CASE WHEN id = 39000 THEN 0 ELSE 1 END)`)
	require.ErrorContains(t, err, "division by zero")
	waitIdle()

	// The memory limit holds per worker.
	_, err = s.Exec(t.Context(), "SET memory_limit = '64kB'")
	require.NoError(t, err)
	_, err = sessRows(t, s, `SELECT id, count(*) FROM ev GROUP BY id`)
	require.ErrorContains(t, err, "memory")
	_, err = sessRows(t, s, `SELECT * FROM ev ORDER BY sym`)
	require.ErrorContains(t, err, "memory")
	waitIdle()
}

// TestParallelOpsExplainAnalyze: the workers' counters add up to the
// serial plan's.
func TestParallelOpsExplainAnalyze(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db := opsDB(t, mem)
	defer db.Close()
	s := db.Session()
	defer s.Close()
	_, err := s.Exec(t.Context(), "SET max_parallel_workers_per_gather = 3")
	require.NoError(t, err)
	plan, err := sessRows(t, s, `EXPLAIN ANALYZE SELECT g, count(*) FROM ev WHERE id % 2 = 0 GROUP BY g`)
	require.NoError(t, err)
	text := strings.Join(plan, "\n")
	require.Contains(t, text, "Finalize Aggregate workers=3 (combines the partial states) (actual rows=13 ")
	require.Contains(t, text, "Partial Aggregate group (ev.g) aggs count(*) (actual rows=20000 ")
	require.Contains(t, text, "Filter ((ev.id % 2) = 0) (actual rows=20000 ")
	require.Contains(t, text, "Morsels workers=3 (numbered in input order) (actual rows=40000 batches=5 ")
	plan, err = sessRows(t, s, `EXPLAIN ANALYZE SELECT id FROM ev ORDER BY sym`)
	require.NoError(t, err)
	text = strings.Join(plan, "\n")
	require.Contains(t, text, "GatherMerge workers=3 (sorted runs merged, ties in input order) [ordering: ev.sym]")
	require.Contains(t, text, "Morsels workers=3 (numbered in input order) (actual rows=40000 batches=5 ")
}

// workersSession opens a session of db planning for workers; waitIdle
// waits until no more goroutines run than when it was opened (a query's
// workers all stopped). The caller closes the session.
func workersSession(t *testing.T, db *asofsql.DB, workers int) (s *asofsql.Session, waitIdle func()) {
	t.Helper()
	s = db.Session()
	_, err := s.Exec(t.Context(), fmt.Sprintf("SET max_parallel_workers_per_gather = %d", workers))
	require.NoError(t, err)
	before := runtime.NumGoroutine()
	return s, func() { t.Helper(); waitGoroutines(t, before) }
}

// requireCancelled runs q on s under a context cancelled before it starts
// and requires the query (its start or its rows) to end in
// context.Canceled.
func requireCancelled(t *testing.T, s *asofsql.Session, q string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	c, err := s.Query(ctx, q)
	if err == nil {
		for c.Next() {
		}
		err = c.Err()
		c.Close()
	}
	require.ErrorIs(t, err, context.Canceled)
}
