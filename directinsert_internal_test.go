package asofsql

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
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

// TestDirectInsertInBlock: inside a transaction block a direct append
// skips the block's view of its own changes (directInBlock), and the
// block's reads still see every row it wrote, in order; after DDL in the
// block the plan cache is closed and the INSERT plans against the
// block's definitions, so the view is taken again.
func TestDirectInsertInBlock(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	db, err := Open(t.TempDir(), WithAllocator(mem))
	require.NoError(t, err)
	defer func() {
		require.NoError(t, db.Close())
		mem.AssertSize(t, 0)
	}()
	ctx := context.Background()
	s := db.Session()
	defer s.Close()
	_, err = s.Exec(ctx, `CREATE TABLE t (ts BIGINT NOT NULL, sym TEXT, px DOUBLE PRECISION) ORDER BY (ts)`)
	require.NoError(t, err)
	ins, err := s.Prepare(ctx, `INSERT INTO t VALUES ($1, $2, $3)`, nil)
	require.NoError(t, err)
	run := func(args ...any) {
		t.Helper()
		c, err := ins.Execute(ctx, args...)
		require.NoError(t, err)
		c.Release()
	}
	count := func() string {
		t.Helper()
		var out string
		cur, err := s.Query(ctx, `SELECT count(*), coalesce(sum(px), 0) FROM t`)
		require.NoError(t, err)
		for cur.Next() {
			b := cur.RecordBatch()
			out = b.Column(0).ValueStr(0) + "|" + b.Column(1).ValueStr(0)
		}
		require.NoError(t, cur.Err())
		cur.Release()
		return out
	}
	run(int64(1), "A", 1.0) // keeps the plan
	_, err = s.Exec(ctx, `BEGIN`)
	require.NoError(t, err)
	p, snap, err := ins.directInBlock()
	require.NoError(t, err)
	require.NotNil(t, p, "a kept direct INSERT in a block needs no view")
	require.Nil(t, snap.base, "the snapshot is the committed state alone")
	snap.Release()
	for i := int64(2); i <= 5; i++ {
		run(i*10, "B", float64(i))
		require.Equal(t, strconv.FormatInt(i, 10)+"|"+strconv.FormatInt(i*(i+1)/2, 10), count())
	}
	// A DDL statement in the block closes the plan cache: the INSERT is
	// planned on the block's definitions, through its view.
	_, err = s.Exec(ctx, `ALTER TABLE t RENAME COLUMN px TO price`)
	require.NoError(t, err)
	p, _, err = ins.directInBlock()
	require.NoError(t, err)
	require.Nil(t, p)
	run(int64(60), "C", 6.0)
	cur, err := s.Query(ctx, `SELECT ts, price FROM t WHERE ts >= 40 ORDER BY ts`)
	require.NoError(t, err)
	var got []string
	for cur.Next() {
		b := cur.RecordBatch()
		for r := 0; r < int(b.NumRows()); r++ {
			got = append(got, b.Column(0).ValueStr(r)+"|"+b.Column(1).ValueStr(r))
		}
	}
	require.NoError(t, cur.Err())
	cur.Release()
	require.Equal(t, []string{"40|4", "50|5", "60|6"}, got)
	_, err = s.Exec(ctx, `ROLLBACK`)
	require.NoError(t, err)
	require.Equal(t, "1|1", count(), "the block's rows are gone with it")
}

// TestOneValue: the one-row columns of the direct append are those
// eval.LiteralColumn builds, for the types built straight into buffers
// and for those it hands over (NULL, other types).
func TestOneValue(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cases := []*expr.Literal{
		{Value: int64(-42), T: sqltypes.Type{Kind: sqltypes.Int8}},
		{Value: int64(1_700_000_000_000_000), T: sqltypes.Type{Kind: sqltypes.Timestamp}},
		{Value: int64(1_700_000_000_000_000), T: sqltypes.Type{Kind: sqltypes.TimestampTZ}},
		{Value: 1.5, T: sqltypes.Type{Kind: sqltypes.Float8}},
		{Value: "AAPL", T: sqltypes.Type{Kind: sqltypes.Text}},
		{Value: "", T: sqltypes.Type{Kind: sqltypes.Varchar}},
		{Value: "héllo", T: sqltypes.Type{Kind: sqltypes.Text}},
		{Value: nil, T: sqltypes.Type{Kind: sqltypes.Int8}},
		{Value: nil, T: sqltypes.Type{Kind: sqltypes.Text}},
		{Value: int64(7), T: sqltypes.Type{Kind: sqltypes.Int4}},
		{Value: true, T: sqltypes.Type{Kind: sqltypes.Bool}},
	}
	for _, lit := range cases {
		got, err := oneValue(mem, lit.T, lit.T.Arrow(), lit.Value, lit)
		require.NoError(t, err)
		got2, err := oneValue(mem, lit.T, lit.T.Arrow(), lit.Value, nil)
		require.NoError(t, err)
		require.True(t, array.Equal(got, got2))
		got2.Release()
		require.NoError(t, err)
		want, err := eval.LiteralColumn(mem, lit.T, []*expr.Literal{lit})
		require.NoError(t, err)
		require.True(t, array.Equal(want, got), "%v: got %v, want %v", lit.T, got, want)
		require.True(t, arrow.TypeEqual(want.DataType(), got.DataType()))
		require.Equal(t, want.NullN(), got.NullN())
		got.Release()
		want.Release()
	}
}
