package asofsql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql"
	"github.com/stretchr/testify/require"
)

// TestASOFReusedBuffersKeepResults: over the Go allocator, the ASOF
// joins' output buffers (and the morsel join's primes) come from a
// process-wide cache that the previous queries' buffers went back to
// (exec/operator.Pool through the query's memory account). A result a
// client still holds must never be written by a later query, and every
// query must return the serial join's rows: the same query at 1 and 2
// workers, several times, every result kept until the end and compared
// then with the first. The tables span several morsels (128K left rows
// each), text and int keys, backward and bounded.
func TestASOFReusedBuffersKeepResults(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 2 x 300K rows")
	}
	db, err := asofsql.Open(":memory:", asofsql.WithAllocator(memory.NewGoAllocator()), asofsql.WithWorkers(2),
		asofsql.WithMinParallelTableScanSize(0))
	require.NoError(t, err)
	defer db.Close()
	s := db.Session()
	defer s.Close()
	ctx := t.Context()
	_, err = s.Exec(ctx, `CREATE TABLE l (t BIGINT, k TEXT, lp DOUBLE PRECISION) ORDER BY (t);
		CREATE TABLE r (t BIGINT, k TEXT, rp DOUBLE PRECISION) ORDER BY (t)`)
	require.NoError(t, err)
	const rows = 300_000
	for i, tbl := range []string{"l", "r"} {
		_, err := s.CopyFrom(ctx, "COPY "+tbl+" FROM STDIN WITH (FORMAT csv)", genCSVText(rows, 700, uint64(i+1)))
		require.NoError(t, err)
	}
	queries := []string{
		`SELECT l.t, l.k, l.lp, r.t, r.rp FROM l ASOF LEFT JOIN r ON l.k = r.k AND l.t >= r.t`,
		`SELECT l.t, l.lp, r.t, r.k, r.rp FROM l ASOF LEFT JOIN r ON t BETWEEN -40 AND 40 USING (k)`,
	}
	// result is a query's columns as the client received them: every
	// batch's arrays, held (retained) until the end of the test.
	type result struct {
		q, w int
		cols []*arrow.Chunked
	}
	run := func(q, w int) result {
		_, err := s.Exec(ctx, fmt.Sprintf("SET max_parallel_workers_per_gather = %d", w))
		require.NoError(t, err)
		if w > 1 {
			plan, err := sessRows(t, s, "EXPLAIN "+queries[q])
			require.NoError(t, err)
			require.Contains(t, strings.Join(plan, "\n"), "Merge workers=2 morsels")
		}
		c, err := s.Query(ctx, queries[q])
		require.NoError(t, err)
		defer c.Close()
		var chunks [][]arrow.Array
		n := 0
		for c.Next() {
			b := c.RecordBatch()
			if chunks == nil {
				chunks = make([][]arrow.Array, b.NumCols())
			}
			for i, col := range b.Columns() {
				col.Retain() // the batch is the cursor's until its next Next
				chunks[i] = append(chunks[i], col)
			}
			n += int(b.NumRows())
		}
		require.NoError(t, c.Err())
		require.Equal(t, rows, n)
		res := result{q: q, w: w}
		for _, ch := range chunks {
			col := arrow.NewChunked(ch[0].DataType(), ch) // retains the arrays
			for _, a := range ch {
				a.Release()
			}
			res.cols = append(res.cols, col)
			t.Cleanup(col.Release)
		}
		return res
	}
	// Every result is held while the later queries run, and compared with
	// the query's first serial result only at the end: a buffer handed out
	// again while a result held it would have changed one of them.
	var all []result
	ref := map[int]result{}
	for range 3 {
		for q := range queries {
			for _, w := range []int{1, 2} {
				r := run(q, w)
				if _, ok := ref[q]; !ok {
					ref[q] = r
				}
				all = append(all, r)
			}
		}
	}
	for _, r := range all {
		want := ref[r.q]
		require.Len(t, r.cols, len(want.cols))
		for i := range want.cols {
			require.True(t, array.ChunkedEqual(want.cols[i], r.cols[i]), "query %d column %d at %d workers", r.q, i, r.w)
		}
	}
}
