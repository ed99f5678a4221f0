package asofsql

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
)

// explain is the EXPLAIN text of q in f's session.
func (f *planCacheFixture) explain(q string) string {
	f.t.Helper()
	return strings.Join(f.query("EXPLAIN "+q), "\n")
}

// wantDegree is the degree parallel_degree.go's rule gives an input of
// bytes: 2 from min on, one more each time it triples, at most max.
func wantDegree(bytes, min int64, max int) int {
	if bytes < min {
		return 1
	}
	n := 2
	for t := 3 * min; t <= bytes && n < max; t *= 3 {
		n++
	}
	return n
}

// blocksOf is n bytes as a min_parallel_table_scan_size in 8kB blocks, at
// least one.
func blocksOf(n int64) int64 { return max(1, n/blockBytes) }

// TestParallelJudgement: at max_parallel_workers_per_gather 4 each gather
// gets the degree its largest scanned table's size pays for, and stays
// serial saying why below min_parallel_table_scan_size; the sort stays
// serial while it does not pay; a hash join is judged by its probe side;
// a range on the ordering column counts as PostgreSQL's default
// selectivities; 0 gives every gather the full degree.
func TestParallelJudgement(t *testing.T) {
	f := newPlanCacheFixture(t)
	f.exec(`CREATE TABLE ev (id BIGINT, g INTEGER, v DOUBLE PRECISION);
		INSERT INTO ev SELECT i, i % 13, i * 0.5 FROM generate_series(1, 20000) AS s(i);
		CREATE TABLE dim (g INTEGER, name TEXT);
		INSERT INTO dim SELECT i, 'n' || i FROM generate_series(0, 12) AS s(i);
		CREATE TABLE o (ts BIGINT, v INTEGER) ORDER BY (ts);
		INSERT INTO o SELECT i, i % 7 FROM generate_series(1, 20000) AS s(i);
		SET max_parallel_workers_per_gather = 4`)
	ev, err := f.db.Table("ev")
	require.NoError(t, err)
	require.Less(t, ev.Bytes, int64(defaultMinParallel))
	agg := `SELECT g, count(*), sum(v) FROM ev GROUP BY g`

	// Below 8MB: serial, with no gather, saying why.
	plan := f.explain(agg)
	require.NotContains(t, plan, "workers=")
	require.Contains(t, plan, ", below min_parallel_table_scan_size 8MB)")
	require.Contains(t, plan, "(serial: input ")
	want, err := f.s.Query(f.ctx, agg+" ORDER BY g")
	require.NoError(t, err)
	serial := drainText(t, want)

	// The degree follows the size: 2 at min, 3 at 3 × min, ...
	for _, min := range []int64{blockBytes, blocksOf(ev.Bytes/3) * blockBytes, blocksOf(ev.Bytes/2) * blockBytes, blocksOf(ev.Bytes) * blockBytes} {
		f.exec(fmt.Sprintf("SET min_parallel_table_scan_size = %d", min/blockBytes))
		d := wantDegree(ev.Bytes, min, 4)
		require.Greater(t, d, 1, "min %d, table %d bytes", min, ev.Bytes)
		require.Contains(t, f.explain(agg), fmt.Sprintf("Finalize Aggregate workers=%d ", d), "min %d, table %d bytes", min, ev.Bytes)
		c, err := f.s.Query(f.ctx, agg+" ORDER BY g")
		require.NoError(t, err)
		require.Equal(t, serial, drainText(t, c), "at %d workers", d)
	}
	f.exec(`SET max_parallel_workers_per_gather = 2`)
	require.Contains(t, f.explain(agg), "Finalize Aggregate workers=2 ")
	f.exec(`SET max_parallel_workers_per_gather = 4`)

	// The sort splits by the same rule: serial below the size, saying so,
	// and a GatherMerge from it on.
	f.exec(`SET min_parallel_table_scan_size = '1GB'`)
	plan = f.explain(`SELECT id FROM ev ORDER BY v DESC`)
	require.NotContains(t, plan, "GatherMerge")
	require.Contains(t, plan, "(serial: input ")
	f.exec(`SET min_parallel_table_scan_size = '8kB'`)
	require.Contains(t, f.explain(`SELECT id FROM ev ORDER BY v DESC`), "GatherMerge workers=")
	// Not a top-N, whose sort is serial anyway.
	require.NotContains(t, f.explain(`SELECT id FROM ev ORDER BY v DESC LIMIT 3`), "serial")

	// A hash join is judged by its probe (left) side.
	require.Contains(t, f.explain(`SELECT ev.id, dim.name FROM ev JOIN dim ON ev.g = dim.g`), "ParallelHashJoin workers=")
	plan = f.explain(`SELECT ev.id, dim.name FROM dim JOIN ev ON ev.g = dim.g`)
	require.NotContains(t, plan, "workers=")
	require.Contains(t, plan, "(serial: input ")

	// A range keeps 1/3 for each bound, 0.005 for a point.
	o, err := f.db.Table("o")
	require.NoError(t, err)
	f.exec(fmt.Sprintf("SET min_parallel_table_scan_size = %d", blocksOf(o.Bytes/2)))
	require.Contains(t, f.explain(`SELECT v, count(*) FROM o GROUP BY v`), "Finalize Aggregate workers=")
	for _, q := range []string{`SELECT v, count(*) FROM o WHERE ts >= 10 GROUP BY v`, `SELECT v, count(*) FROM o WHERE ts = 10 GROUP BY v`} {
		plan = f.explain(q)
		require.NotContains(t, plan, "workers=", q)
		require.Contains(t, plan, "(serial: input ", q)
	}
	require.Contains(t, f.explain(`SELECT v, count(*) FROM o WHERE v > 3 GROUP BY v`), "Finalize Aggregate workers=",
		"a filter on another column scans the whole table")

	// 0: every gather at the full degree, the sort too.
	f.exec(`SET min_parallel_table_scan_size = 0`)
	require.Contains(t, f.explain(`SELECT g, count(*) FROM dim GROUP BY g`), "Finalize Aggregate workers=4 ")
	require.Contains(t, f.explain(`SELECT id FROM ev ORDER BY v DESC`), "GatherMerge workers=4 ")
	f.exec(`SET max_parallel_workers_per_gather = 1`)
	require.NotContains(t, f.explain(agg), "serial")
}

// drainText reads c's rows as text and releases it.
func drainText(t *testing.T, c *Cursor) []string {
	t.Helper()
	defer c.Release()
	var out []string
	for c.Next() {
		b := c.RecordBatch()
		for r := range int(b.NumRows()) {
			var vals []string
			for _, col := range b.Columns() {
				vals = append(vals, col.ValueStr(r))
			}
			out = append(out, strings.Join(vals, "|"))
		}
	}
	require.NoError(t, c.Err())
	return out
}

// hasGather reports whether n has a node of the parallel plans'.
func hasGather(n planner.Node) bool {
	switch n.(type) {
	case *planner.Merge, *planner.FinalAggregate, *planner.GatherMerge, *planner.ParallelHashJoin, *planner.ParallelWindow:
		return true
	}
	for _, c := range n.Children() {
		if hasGather(c) {
			return true
		}
	}
	return false
}

// TestParallelJudgementPlanCache: a kept plan is planned again when a
// table it scans grows past the size that chose a degree, or when
// max_parallel_workers_per_gather or min_parallel_table_scan_size
// changes, and kept while the sizes give the same degrees.
func TestParallelJudgementPlanCache(t *testing.T) {
	f := newPlanCacheFixture(t)
	f.exec(`CREATE TABLE ev (id BIGINT, g INTEGER);
		INSERT INTO ev SELECT i, i % 5 FROM generate_series(1, 100) AS s(i);
		SET max_parallel_workers_per_gather = 4;
		SET min_parallel_table_scan_size = '64kB'`)
	st, err := f.s.PrepareNamed(f.ctx, "agg", `SELECT g, count(*) FROM ev GROUP BY g ORDER BY g`, nil)
	require.NoError(t, err)
	rows := func() []string {
		t.Helper()
		out, err := f.rows(st)
		require.NoError(t, err)
		return out
	}
	root := func() planner.Node {
		t.Helper()
		q, ok := plan(st).(*planner.Query)
		require.True(t, ok)
		return q.Root
	}
	require.Equal(t, []string{"0|20", "1|20", "2|20", "3|20", "4|20"}, rows())
	kept := plan(st)
	require.False(t, hasGather(root()))

	// Still small: the same plan.
	f.exec(`INSERT INTO ev VALUES (101, 0)`)
	require.Equal(t, "0|21", rows()[0])
	require.Same(t, kept, plan(st))

	// Past 64kB: planned again, in parallel.
	f.exec(`INSERT INTO ev SELECT i, i % 5 FROM generate_series(102, 20000) AS s(i)`)
	ev, err := f.db.Table("ev")
	require.NoError(t, err)
	require.GreaterOrEqual(t, ev.Bytes, int64(64<<10))
	require.Equal(t, []string{"0|4001", "1|3999", "2|4000", "3|4000", "4|4000"}, rows())
	require.NotSame(t, kept, plan(st))
	require.True(t, hasGather(root()))
	kept = plan(st)

	// The settings: each change plans again.
	f.exec(`SET max_parallel_workers_per_gather = 1`)
	rows()
	require.False(t, hasGather(root()))
	f.exec(`SET max_parallel_workers_per_gather = 4`)
	rows()
	require.True(t, hasGather(root()))
	kept = plan(st)
	f.exec(`SET min_parallel_table_scan_size = '1GB'`)
	rows()
	require.NotSame(t, kept, plan(st))
	require.False(t, hasGather(root()))
}

// TestMinParallelTableScanSizeSetting: PostgreSQL's units (8kB blocks
// without one, rounded to blocks with one), range and messages, RESET to
// the database's default, ROLLBACK of a SET in a block.
func TestMinParallelTableScanSizeSetting(t *testing.T) {
	f := newPlanCacheFixture(t)
	show := func() string {
		t.Helper()
		return f.query(`SHOW min_parallel_table_scan_size`)[0]
	}
	require.Equal(t, "8MB", show())
	for v, want := range map[string]string{"1024": "8MB", "'64kB'": "64kB", "'10kB'": "8kB", "0": "0", "'1GB'": "1GB",
		"'2MB'": "2MB", "3": "24kB", "'4kB'": "0"} {
		f.exec(`SET min_parallel_table_scan_size = ` + v)
		require.Equal(t, want, show(), v)
	}
	for v, msg := range map[string]string{
		"'many'":      `invalid value for parameter "min_parallel_table_scan_size": "many"`,
		"'8 parsecs'": `invalid value for parameter "min_parallel_table_scan_size": "8 parsecs"`,
		"715827883":   `715827883 8kB is outside the valid range for parameter "min_parallel_table_scan_size" (0 .. 715827882)`,
	} {
		_, err := f.s.Exec(f.ctx, `SET min_parallel_table_scan_size = `+v)
		require.Error(t, err, v)
		require.Equal(t, sqlerr.InvalidParameterValue, sqlerr.Code(err), v)
		require.Contains(t, err.Error(), msg)
	}
	f.exec(`RESET min_parallel_table_scan_size`)
	require.Equal(t, "8MB", show())
	f.exec(`BEGIN; SET min_parallel_table_scan_size = 0`)
	require.Equal(t, int64(0), f.s.minParallel)
	f.exec(`ROLLBACK`)
	require.Equal(t, "8MB", show())
	require.Equal(t, int64(defaultMinParallel), f.s.minParallel)

	db, err := Open(":memory:", WithMinParallelTableScanSize(0))
	require.NoError(t, err)
	defer db.Close()
	s := db.Session()
	defer s.Close()
	v, _ := s.Setting("min_parallel_table_scan_size")
	require.Equal(t, "0", v)
	_, err = s.Exec(f.ctx, `SET min_parallel_table_scan_size = '1MB'; RESET min_parallel_table_scan_size`)
	require.NoError(t, err)
	v, _ = s.Setting("min_parallel_table_scan_size")
	require.Equal(t, "0", v)
	require.Equal(t, int64(0), s.minParallel)
}

// TestPartitionsJudged: a result driven by a small table is one part at
// the default min_parallel_table_scan_size, and max_parallel_workers_per_gather
// parts at 0.
func TestPartitionsJudged(t *testing.T) {
	f := newPlanCacheFixture(t)
	f.exec(`CREATE TABLE p (ts BIGINT, v INTEGER) ORDER BY (ts);
		INSERT INTO p SELECT i, i FROM generate_series(1, 100) AS s(i);
		SET max_parallel_workers_per_gather = 3`)
	for min, parts := range map[string]int{"'8MB'": 1, "0": 3} {
		f.exec(`SET min_parallel_table_scan_size = ` + min)
		st, err := f.s.Prepare(f.ctx, `SELECT ts, v FROM p WHERE v > 0`, nil)
		require.NoError(t, err)
		cs, err := st.ExecutePartitions(f.ctx, nil)
		require.NoError(t, err)
		require.Len(t, cs, parts, min)
		n := 0
		for _, c := range cs {
			n += len(drainText(t, c))
		}
		require.Equal(t, 100, n)
	}
}
