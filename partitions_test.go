package asofsql_test

import (
	"context"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql"
)

// cursorRows reads c to its end as text rows and releases it.
func cursorRows(t *testing.T, c *asofsql.Cursor) []string {
	t.Helper()
	defer c.Release()
	var rows []string
	for c.Next() {
		b := c.RecordBatch()
		for i := 0; i < int(b.NumRows()); i++ {
			row := ""
			for _, col := range b.Columns() {
				row += col.ValueStr(i) + "|"
			}
			rows = append(rows, row)
		}
	}
	require.NoError(t, c.Err())
	return rows
}

// TestExecutePartitions: a row-wise query runs as one cursor per part, on
// one snapshot, read concurrently; concatenated in order they are the
// single cursor's rows. Other statements, and any inside a transaction
// block, give one cursor.
func TestExecutePartitions(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db, err := asofsql.Open(":memory:", asofsql.WithAllocator(mem),
		asofsql.WithMinParallelTableScanSize(0)) // small tables, parallel plans
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	_, err = db.Exec(ctx, `CREATE TABLE l (ts BIGINT, k INT, v DOUBLE PRECISION) ORDER BY (ts);
		CREATE TABLE r (ts BIGINT, k INT, w DOUBLE PRECISION) ORDER BY (ts);
		INSERT INTO l SELECT g * 3, g % 11, g * 0.5 FROM generate_series(1, 30000) g;
		INSERT INTO l SELECT g * 3 + 1, g % 7, g * 0.25 FROM generate_series(1, 10000) g;
		INSERT INTO r SELECT g * 2, g % 11, g FROM generate_series(1, 50000) g`)
	require.NoError(t, err)
	s := db.Session()
	defer s.Close()
	require.NoError(t, s.Set("max_parallel_workers_per_gather", "3"))
	for _, q := range []string{
		`SELECT * FROM l WHERE v > 10`,
		`SELECT 1 AS one FROM l WHERE ts BETWEEN 88000 AND 89000`, // parts balanced by the range's rows
		`SELECT l.ts, l.k, r.w FROM l ASOF LEFT JOIN r ON ts BETWEEN -9 AND 0 USING (k)`,
		`SELECT l.ts, r.w, r.ts FROM l ASOF JOIN r ON l.k = r.k AND l.ts >= r.ts`,
	} {
		st, err := s.Prepare(ctx, q, nil)
		require.NoError(t, err)
		one, err := st.Execute(ctx)
		require.NoError(t, err)
		want := cursorRows(t, one)

		parts, err := st.ExecutePartitions(ctx, nil)
		require.NoError(t, err)
		require.Len(t, parts, 3, q)
		// A write after the parts opened: they read the earlier snapshot.
		_, err = db.Exec(ctx, `INSERT INTO l VALUES (5, 1, -1), (60000, 2, -1)`)
		require.NoError(t, err)
		got := make([][]string, len(parts))
		var wg sync.WaitGroup
		for i := len(parts) - 1; i >= 0; i-- {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i] = cursorRows(t, parts[i])
			}()
		}
		wg.Wait()
		var all []string
		for _, g := range got {
			require.NotEmpty(t, g)
			all = append(all, g...)
		}
		require.Equal(t, want, all, q)
		_, err = db.Exec(ctx, `DELETE FROM l WHERE v = -1`)
		require.NoError(t, err)
	}

	// Not row-wise: one cursor, the whole result.
	st, err := s.Prepare(ctx, `SELECT count(*) FROM l`, nil)
	require.NoError(t, err)
	parts, err := st.ExecutePartitions(ctx, nil)
	require.NoError(t, err)
	require.Len(t, parts, 1)
	require.Equal(t, []string{"40000|"}, cursorRows(t, parts[0]))

	// Inside a block: one cursor, seeing the block's own writes.
	_, err = s.Exec(ctx, `BEGIN; INSERT INTO l VALUES (7, 1, 1)`)
	require.NoError(t, err)
	st, err = s.Prepare(ctx, `SELECT ts FROM l WHERE ts < 10`, nil)
	require.NoError(t, err)
	parts, err = st.ExecutePartitions(ctx, nil)
	require.NoError(t, err)
	require.Len(t, parts, 1)
	require.Equal(t, []string{"3|", "4|", "6|", "7|", "7|", "9|"}, cursorRows(t, parts[0]))
	_, err = s.Exec(ctx, `ROLLBACK`)
	require.NoError(t, err)
}
