package asofsql_test

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql"
	"github.com/stretchr/testify/require"
)

// joinDB is opsDB's 40000-row table ev (five morsels) and a small table
// dim: keys with two rows, a NULL key and keys ev lacks.
func joinDB(t *testing.T, mem memory.Allocator) *asofsql.DB {
	db := opsDB(t, mem)
	s := db.Session()
	defer s.Close()
	_, err := s.Exec(t.Context(), `
		CREATE TABLE dim (g INTEGER, name TEXT, w INTEGER);
		INSERT INTO dim SELECT i % 11, 'n' || i, i FROM generate_series(0, 15) AS s(i);
		INSERT INTO dim VALUES (NULL, 'nil', -1), (99, 'none', 99)`)
	require.NoError(t, err)
	return db
}

// TestParallelJoinMatchSerial runs hash joins of every kind at 1 to 4
// workers and requires the same rows in the same order, and EXPLAIN to
// show the split (or why a join stays serial).
func TestParallelJoinMatchSerial(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db := joinDB(t, mem)
	defer db.Close()
	s := db.Session()
	defer s.Close()
	const split = "ParallelHashJoin workers=%d"
	queries := map[string]string{
		`SELECT ev.id, ev.sym, dim.name FROM ev JOIN dim ON ev.g = dim.g`:                                                    split,
		`SELECT ev.id, dim.name, dim.w FROM ev LEFT JOIN dim ON ev.g = dim.g AND ev.v > dim.w * 1000`:                        split,
		`SELECT ev.id, dim.name FROM ev RIGHT JOIN dim ON ev.g = dim.g AND ev.id % 7 = 0`:                                    split,
		`SELECT ev.id, dim.name FROM ev FULL JOIN dim ON ev.g = dim.g AND ev.amt > 900`:                                      split,
		`SELECT ev.id * 2, dim.name FROM ev JOIN dim ON ev.g = dim.g AND ev.sym = 's3' WHERE ev.id % 3 = 1`:                  split,
		`SELECT a.id, b.sym FROM ev a JOIN ev b ON a.id = b.id WHERE a.g = 4`:                                                split,
		`SELECT dim.name, count(*), sum(ev.v) FROM ev JOIN dim ON ev.g = dim.g GROUP BY dim.name`:                            "Finalize Aggregate workers=%d",
		`SELECT ev.id, dim.name FROM ev JOIN dim ON ev.g = dim.g ORDER BY dim.name, ev.amt`:                                  "GatherMerge workers=%d",
		`SELECT ev.id, dim.name FROM ev JOIN dim ON ev.g = dim.g AND ev.f > random() * 1000`:                                 "serial: volatile function",
		`SELECT x.id, x.name FROM (SELECT ev.id, dim.name FROM ev JOIN dim ON ev.g = dim.g) x JOIN dim ON x.name = dim.name`: split,
	}
	checkDegrees(t, s, queries, []int{1, 2, 3, 4}, func(q string) bool { return !strings.Contains(q, "random()") })
}

// TestParallelJoinStopWorkers: LIMIT, a cancelled context, an error
// mid-query and the memory limit leave no goroutine running and no buffer
// allocated.
func TestParallelJoinStopWorkers(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db := joinDB(t, mem)
	defer db.Close()
	s, waitIdle := workersSession(t, db, 3)
	defer s.Close()
	rows, err := sessRows(t, s, `SELECT ev.id, dim.name FROM ev JOIN dim ON ev.g = dim.g LIMIT 3`)
	require.NoError(t, err)
	require.Len(t, rows, 3)
	waitIdle()

	// Read in part, then closed.
	c, err := s.Query(t.Context(), `SELECT ev.id, dim.name FROM ev FULL JOIN dim ON ev.g = dim.g`)
	require.NoError(t, err)
	require.True(t, c.Next())
	c.Close()
	waitIdle()

	requireCancelled(t, s, `SELECT ev.id, dim.name FROM ev JOIN dim ON ev.g = dim.g`)
	waitIdle()

	// 22012 in a worker's filter, in a late morsel, and in the join
	// condition.
	_, err = sessRows(t, s, `SELECT ev.id, dim.name FROM ev JOIN dim ON ev.g = dim.g WHERE ev.v / (CASE WHEN ev.id = 39000 THEN 0 ELSE 1 END) > 0`)
	require.ErrorContains(t, err, "division by zero")
	waitIdle()
	_, err = sessRows(t, s, `SELECT ev.id, dim.name FROM ev LEFT JOIN dim ON ev.g = dim.g AND ev.id / (ev.id - 39000) > 0`)
	require.ErrorContains(t, err, "division by zero")
	waitIdle()

	// The build side is charged to the query's memory limit.
	_, err = s.Exec(t.Context(), "SET memory_limit = '64kB'")
	require.NoError(t, err)
	_, err = sessRows(t, s, `SELECT a.id FROM ev a JOIN ev b ON a.id = b.id`)
	require.ErrorContains(t, err, "memory")
	waitIdle()
}

// TestParallelJoinExplainAnalyze: the workers' counters add up to the
// serial plan's.
func TestParallelJoinExplainAnalyze(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db := joinDB(t, mem)
	defer db.Close()
	s := db.Session()
	defer s.Close()
	n, err := sessRows(t, s, `SELECT count(*) FROM ev JOIN dim ON ev.g = dim.g`)
	require.NoError(t, err)
	_, err = s.Exec(t.Context(), "SET max_parallel_workers_per_gather = 3")
	require.NoError(t, err)
	plan, err := sessRows(t, s, `EXPLAIN ANALYZE SELECT ev.id, dim.name FROM ev JOIN dim ON ev.g = dim.g WHERE ev.id > 0`)
	require.NoError(t, err)
	text := strings.Join(plan, "\n")
	require.Contains(t, text, "ParallelHashJoin workers=3 (right side built once and shared, left morsels probed in order) (actual rows="+n[0]+" ")
	require.Contains(t, text, "HashJoin INNER keys (ev.g = dim.g) (actual rows="+n[0]+" ")
	require.Contains(t, text, "Filter (ev.id > 0) (actual rows=40000 ")
	require.Contains(t, text, "Morsels workers=3 (numbered in input order) (actual rows=40000 batches=5 ")
	require.Contains(t, text, "Scan dim (g, name) (actual rows=18 ")
}
