package asofsql_test

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

// TestParallelWindowMatchesSerial runs window queries serially and at 2,
// 3 and 8 workers and requires the same rows in the same order (no ORDER
// BY: the window's own order, ties in ORDER BY in input order), and
// EXPLAIN to show the split or why a window stays serial.
func TestParallelWindowMatchesSerial(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db := opsDB(t, mem)
	defer db.Close()
	s := db.Session()
	defer s.Close()
	// wk: float keys with 0, -0, NaN and NULL, which group as one key each
	// (-0 with 0), and ties everywhere in o.
	_, err := s.Exec(t.Context(), `CREATE TABLE wk AS SELECT i, CASE i % 5 WHEN 0 THEN 0.0::float8 WHEN 1 THEN '-0'::float8
		WHEN 2 THEN 'NaN'::float8 WHEN 3 THEN NULL ELSE 1.5 END AS fk, i % 7 AS o, DATE '2024-01-01' + i % 9 AS d,
		TIMESTAMP '2024-01-01 00:00:00' + (i % 11) * INTERVAL '1 hour' AS ts FROM generate_series(1, 30000) AS s(i)`)
	require.NoError(t, err)
	// wo: an ordered table, already in partition order.
	_, err = s.Exec(t.Context(), `CREATE TABLE wo (k INTEGER, t BIGINT, p DOUBLE PRECISION) ORDER BY (k, t);
		INSERT INTO wo SELECT i / 1000, i, (i * 37) % 101 FROM generate_series(1, 30000) AS s(i)`)
	require.NoError(t, err)
	const par = "ParallelWindow workers=%d"
	queries := map[string]string{
		// ties in v % 50 within a partition keep their input order
		`SELECT id, g, m, row_number() OVER w, rank() OVER w, dense_rank() OVER w, sum(v) OVER w, count(*) OVER w
			FROM (SELECT id, g, v, v % 50 AS m FROM ev) AS x WINDOW w AS (PARTITION BY g ORDER BY m)`: par + " hash(x.g)",
		// text keys with NULLs, frames, value and distribution functions
		`SELECT id, sym, lag(id) OVER (PARTITION BY sym ORDER BY g), lead(id, 2, -1) OVER (PARTITION BY sym ORDER BY g),
			first_value(id) OVER (PARTITION BY sym ORDER BY g ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING),
			last_value(id) OVER (PARTITION BY sym ORDER BY g), nth_value(v, 3) OVER (PARTITION BY sym ORDER BY g),
			ntile(4) OVER (PARTITION BY sym ORDER BY g), percent_rank() OVER (PARTITION BY sym ORDER BY g),
			cume_dist() OVER (PARTITION BY sym ORDER BY g), min(v) OVER (PARTITION BY sym ORDER BY g GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE TIES)
			FROM ev WHERE id % 3 = 0`: par + " hash(ev.sym)",
		// a stack: two windows over (g), one over (g, sym): one split by g
		`SELECT id, row_number() OVER (PARTITION BY g ORDER BY id DESC), sum(f) OVER (PARTITION BY g ORDER BY f DESC NULLS LAST),
			count(v) OVER (PARTITION BY sym, g ORDER BY v NULLS FIRST RANGE BETWEEN 1000 PRECEDING AND 1000 FOLLOWING) FROM ev`: par + " hash(ev.g)",
		// windows sharing no key: two parallel windows, one over the other
		`SELECT id, rank() OVER (PARTITION BY g ORDER BY ok), rank() OVER (PARTITION BY ok ORDER BY g) FROM ev`: par + " hash(ev.ok)",
		// numeric and boolean keys (hashed through their encoding)
		`SELECT amt, ok, avg(v) OVER (PARTITION BY amt, ok ORDER BY id ROWS 3 PRECEDING) FROM ev WHERE id < 20000`:                par + " hash(ev.amt, ev.ok)",
		`SELECT i, fk, o, row_number() OVER (PARTITION BY fk ORDER BY o), sum(i) OVER (PARTITION BY fk ORDER BY o) FROM wk`:       par + " hash(wk.fk)",
		`SELECT i, d, ts, rank() OVER (PARTITION BY d, ts ORDER BY o DESC), count(*) OVER (PARTITION BY ts) FROM wk`:              par + " hash(wk.ts)",
		`SELECT g2, s, rank() OVER (PARTITION BY g2 ORDER BY s) FROM (SELECT g % 2 AS g2, sum(v) AS s FROM ev GROUP BY g) AS x`:   par + " hash(x.g2)",
		`SELECT g, id, sum(v) OVER (PARTITION BY g ORDER BY id) FROM ev ORDER BY id DESC LIMIT 20`:                                par + " hash(ev.g)",
		`SELECT k, t, sum(p) OVER (PARTITION BY k ORDER BY t ROWS 9 PRECEDING), lead(p) OVER (PARTITION BY k ORDER BY t) FROM wo`: par + " hash(wo.k)",
		`SELECT id, row_number() OVER (ORDER BY g) FROM ev`:                                                                       "serial: no PARTITION BY: one partition",
	}
	checkDegrees(t, s, queries, []int{1, 2, 3, 8}, nil)
	plan, err := sessRows(t, s, "EXPLAIN SELECT g, sum(random()) OVER (PARTITION BY g) FROM ev")
	require.NoError(t, err)
	require.Contains(t, strings.Join(plan, "\n"), "(serial: volatile function or subquery in an argument)")
}

// TestParallelWindowStopWorkers: LIMIT, a cancelled context, an error
// mid-query and the memory limit leave no goroutine running and no buffer
// allocated.
func TestParallelWindowStopWorkers(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db := opsDB(t, mem)
	defer db.Close()
	s, waitIdle := workersSession(t, db, 3)
	defer s.Close()
	rows, err := sessRows(t, s, `SELECT id, rank() OVER (PARTITION BY g ORDER BY v) FROM ev LIMIT 3`)
	require.NoError(t, err)
	require.Len(t, rows, 3)
	waitIdle()

	c, err := s.Query(t.Context(), `SELECT id, sum(v) OVER (PARTITION BY sym ORDER BY id) FROM ev`)
	require.NoError(t, err)
	require.True(t, c.Next())
	c.Close()
	waitIdle()

	requireCancelled(t, s, `SELECT id, sum(v) OVER (PARTITION BY sym ORDER BY id) FROM ev`)
	waitIdle()

	// 22012 in a worker's window argument, in a late morsel.
	_, err = sessRows(t, s, `SELECT id, sum(v / (CASE WHEN id = 39000 THEN 0 ELSE 1 END)) OVER (PARTITION BY g) FROM ev`)
	require.ErrorContains(t, err, "division by zero")
	waitIdle()

	_, err = s.Exec(t.Context(), "SET memory_limit = '64kB'")
	require.NoError(t, err)
	_, err = sessRows(t, s, `SELECT id, row_number() OVER (PARTITION BY g ORDER BY id) FROM ev`)
	require.ErrorContains(t, err, "memory")
	waitIdle()
}
