package asofsql

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/sqlerr"
)

// TestDirectInsert: a prepared INSERT INTO t VALUES ($1, ...) appends the
// bound row without operators (directinsert.go), with the general path's
// results: conversions of the arguments, NOT NULL and VARCHAR(n) errors,
// re-planning after DDL, memory returned. Other shapes take the general
// path.
func TestDirectInsert(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	db, err := Open(":memory:", WithAllocator(mem))
	require.NoError(t, err)
	defer func() {
		require.NoError(t, db.Close())
		mem.AssertSize(t, 0)
	}()
	ctx := context.Background()
	s := db.Session()
	exec := func(sql string, args ...any) error {
		st, err := s.Prepare(ctx, sql, nil)
		if err != nil {
			return err
		}
		c, err := st.Execute(ctx, args...)
		if err != nil {
			return err
		}
		c.Release()
		return nil
	}
	require.NoError(t, exec(`CREATE TABLE t (ts TIMESTAMP NOT NULL, sym VARCHAR(4), px DOUBLE PRECISION, n BIGINT DEFAULT 7) ORDER BY (ts)`))

	ins, err := s.Prepare(ctx, `INSERT INTO t VALUES ($1, $2, $3, $4)`, nil)
	require.NoError(t, err)
	run := func(args ...any) error {
		c, err := ins.Execute(ctx, args...)
		if err == nil {
			require.Equal(t, "INSERT 0 1", c.Tag())
			c.Release()
		}
		return err
	}
	base := time.Date(2024, 1, 2, 9, 30, 0, 0, time.UTC)
	require.NoError(t, run(base.Add(2*time.Second), "AAPL", 1.5, 1))
	require.NotNil(t, ins.directPlan.Load().cols, "the plain VALUES ($n) shape is appended directly")
	// Arguments of other Go types convert as Bind converts them.
	require.NoError(t, run("2024-01-02 09:30:01", "MSFT", 2, int32(2)))
	require.NoError(t, run(base.Add(3*time.Second), nil, nil, nil))

	err = run(nil, "X", 1.0, 1)
	require.Equal(t, sqlerr.NotNullViolation, sqlerr.Code(err), "%v", err)
	require.ErrorContains(t, err, `null value in column "ts" of relation "t" violates not-null constraint`)
	err = run(base, "TOOLONG", 1.0, 1)
	require.Equal(t, "22001", sqlerr.Code(err), "%v", err)
	err = run("not a time", "X", 1.0, 1)
	require.Equal(t, "22007", sqlerr.Code(err), "%v", err)

	// Other shapes: expressions, defaults, several rows.
	other := []string{
		`INSERT INTO t VALUES ($1::timestamp + interval '1 day', $2, $3 * 2, $4)`,
		`INSERT INTO t (ts, sym) VALUES ($1, $2)`,
		`INSERT INTO t VALUES ($1, 'A', 1, 1), ($2, 'B', 2, 2)`,
	}
	args := [][]any{{base, "E", 1.0, 5}, {base.Add(5 * time.Second), "D"}, {base.Add(6 * time.Second), base.Add(7 * time.Second)}}
	for i, sql := range other {
		st, err := s.Prepare(ctx, sql, nil)
		require.NoError(t, err)
		c, err := st.Execute(ctx, args[i]...)
		require.NoError(t, err, sql)
		c.Release()
		require.Nil(t, st.directPlan.Load().cols, sql)
	}

	// DDL re-plans the statement, and the new plan is analysed afresh.
	require.NoError(t, exec(`ALTER TABLE t DROP COLUMN n`))
	err = run(base.Add(8*time.Second), "Z", 9.0, 9)
	require.Error(t, err, "the statement's target list no longer fits the table")
	ins2, err := s.Prepare(ctx, `INSERT INTO t VALUES ($1, $2, $3)`, nil)
	require.NoError(t, err)
	c, err := ins2.Execute(ctx, base.Add(9*time.Second), "Z", 9.0)
	require.NoError(t, err)
	c.Release()

	cur, err := s.Query(ctx, `SELECT ts, sym, px FROM t ORDER BY ts`)
	require.NoError(t, err)
	var got []string
	for cur.Next() {
		b := cur.RecordBatch()
		for r := 0; r < int(b.NumRows()); r++ {
			row := ""
			for c := 0; c < int(b.NumCols()); c++ {
				row += b.Column(c).ValueStr(r) + "|"
			}
			got = append(got, row)
		}
	}
	require.NoError(t, cur.Err())
	cur.Release()
	require.Equal(t, []string{
		"2024-01-02T09:30:01|MSFT|2|",
		"2024-01-02T09:30:02|AAPL|1.5|",
		"2024-01-02T09:30:03|(null)|(null)|",
		"2024-01-02T09:30:05|D|(null)|",
		"2024-01-02T09:30:06|A|1|",
		"2024-01-02T09:30:07|B|2|",
		"2024-01-02T09:30:09|Z|9|",
		"2024-01-03T09:30:00|E|2|",
	}, got)
}
