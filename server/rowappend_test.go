package server_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/sqlerr"
)

// TestPreparedInsertsInBlock: a driver's prepared single-row INSERTs in
// transaction blocks (which the engine gathers into one append after the
// first, rowappend.go) are invisible to other connections until COMMIT,
// seen by the block's own statements in order, gone with ROLLBACK and
// with a block that failed on a malformed Bind, and never written to a
// table another connection dropped and re-created meanwhile.
func TestPreparedInsertsInBlock(t *testing.T) {
	addr := start(t)
	ctx := context.Background()
	connect := func() *pgx.Conn {
		c, err := pgx.Connect(ctx, "postgres://u@"+addr+"/asofsql?sslmode=disable")
		require.NoError(t, err)
		t.Cleanup(func() { c.Close(ctx) })
		return c
	}
	a, b := connect(), connect()
	_, err := a.Exec(ctx, `CREATE TABLE ticks (ts BIGINT NOT NULL, sym TEXT, px DOUBLE PRECISION) ORDER BY (ts)`)
	require.NoError(t, err)
	const ins = `INSERT INTO ticks VALUES ($1, $2, $3)`
	count := func(c *pgx.Conn) (n, sum int64) {
		require.NoError(t, c.QueryRow(ctx, `SELECT count(*), coalesce(sum(ts), 0) FROM ticks`).Scan(&n, &sum))
		return n, sum
	}
	keys := func(c *pgx.Conn) []int64 {
		rows, err := c.Query(ctx, `SELECT ts FROM ticks`)
		require.NoError(t, err)
		ks, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		require.NoError(t, err)
		return ks
	}

	// Visibility, order, ROLLBACK.
	tx, err := a.Begin(ctx)
	require.NoError(t, err)
	for i := range 50 {
		_, err := tx.Exec(ctx, ins, 100-i, "S", 1.5)
		require.NoError(t, err)
	}
	n, _ := count(b)
	require.Zero(t, n, "uncommitted rows seen by another connection")
	n, sum := count(a)
	require.Equal(t, []int64{50, 3775}, []int64{n, sum}, "the block sees its own rows")
	for i := range 20 {
		_, err := tx.Exec(ctx, ins, i, nil, nil)
		require.NoError(t, err)
	}
	require.NoError(t, tx.Rollback(ctx))
	n, _ = count(a)
	require.Zero(t, n, "ROLLBACK left rows")

	// COMMIT: every row, in the table's order (ties in insertion order).
	tx, err = a.Begin(ctx)
	require.NoError(t, err)
	for i := range 300 {
		_, err := tx.Exec(ctx, ins, i%7, "S", float64(i))
		require.NoError(t, err)
	}
	n, _ = count(b)
	require.Zero(t, n)
	require.NoError(t, tx.Commit(ctx))
	n, _ = count(b)
	require.EqualValues(t, 300, n)
	rows, err := b.Query(ctx, `SELECT ts, px FROM ticks`)
	require.NoError(t, err)
	type row struct {
		Ts int64
		Px float64
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	require.NoError(t, err)
	for i := 1; i < len(got); i++ {
		prev, cur := got[i-1], got[i]
		require.True(t, prev.Ts < cur.Ts || prev.Ts == cur.Ts && prev.Px < cur.Px, "row %d: %v after %v", i, cur, prev)
	}

	// A NOT NULL violation among gathered rows fails the block; COMMIT
	// rolls back.
	_, err = b.Exec(ctx, `TRUNCATE ticks`)
	require.NoError(t, err)
	tx, err = a.Begin(ctx)
	require.NoError(t, err)
	for i := range 5 {
		_, err := tx.Exec(ctx, ins, i, "S", 1.0)
		require.NoError(t, err)
	}
	_, err = tx.Exec(ctx, ins, nil, "S", 1.0)
	require.Equal(t, sqlerr.NotNullViolation, pgCode(err))
	require.Error(t, tx.Commit(ctx)) // pgx: ErrTxCommitRollback
	n, _ = count(b)
	require.Zero(t, n)

	// A malformed Bind (text "x" for a BIGINT) fails the block at Sync.
	tx, err = a.Begin(ctx)
	require.NoError(t, err)
	for i := range 5 {
		_, err := tx.Exec(ctx, ins, i, "S", 1.0)
		require.NoError(t, err)
	}
	res := a.PgConn().ExecParams(ctx, ins, [][]byte{[]byte("x"), []byte("S"), []byte("1")}, nil, []int16{0}, nil).Read()
	require.Equal(t, "22P02", pgCode(res.Err))
	require.Error(t, tx.Commit(ctx))
	n, _ = count(b)
	require.Zero(t, n)

	// Another connection drops and re-creates the table between the
	// block's INSERTs: none of the block's rows reach the new table.
	tx, err = a.Begin(ctx)
	require.NoError(t, err)
	for i := range 5 {
		_, err := tx.Exec(ctx, ins, i, "old", 1.0)
		require.NoError(t, err)
	}
	_, err = b.Exec(ctx, `DROP TABLE ticks`)
	require.NoError(t, err)
	_, err = b.Exec(ctx, `CREATE TABLE ticks (ts BIGINT NOT NULL, sym TEXT, px DOUBLE PRECISION) ORDER BY (ts)`)
	require.NoError(t, err)
	for i := range 5 {
		_, err := tx.Exec(ctx, ins, 10+i, "new", 1.0)
		require.NoError(t, err)
	}
	require.Error(t, tx.Commit(ctx), "the block wrote the dropped table")
	require.Empty(t, keys(b))

	// ALTER TABLE between them: the rows before it went to the old
	// definition, so the block cannot commit; after a new block the
	// statement writes the altered table.
	tx, err = a.Begin(ctx)
	require.NoError(t, err)
	for i := range 5 {
		_, err := tx.Exec(ctx, ins, i, "S", 1.0)
		require.NoError(t, err)
	}
	_, err = b.Exec(ctx, `ALTER TABLE ticks ADD COLUMN note TEXT`)
	require.NoError(t, err)
	for i := range 5 {
		_, err := tx.Exec(ctx, ins, 10+i, "S", 1.0)
		require.NoError(t, err)
	}
	require.Error(t, tx.Commit(ctx))
	require.Empty(t, keys(b))
	tx, err = a.Begin(ctx)
	require.NoError(t, err)
	for i := range 5 {
		_, err := tx.Exec(ctx, ins, i, "S", 1.0)
		require.NoError(t, err)
	}
	require.NoError(t, tx.Commit(ctx))
	var notes int64
	require.NoError(t, b.QueryRow(ctx, `SELECT count(*) FROM ticks WHERE note IS NULL`).Scan(&notes))
	require.EqualValues(t, 5, notes)
}

func pgCode(err error) string {
	if e, ok := err.(*pgconn.PgError); ok {
		return e.Code
	}
	return ""
}
