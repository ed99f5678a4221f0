package asofsql_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

func TestDatabaseSQL(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	ctx := context.Background()
	sdb := asofsql.OpenDB(db)
	defer sdb.Close()

	// ? and $n placeholders, NULLs from an ASOF LEFT join.
	for _, q := range []string{
		`SELECT t.ts, t.qty, q.bid FROM trades t ASOF LEFT JOIN quotes q ON ts BETWEEN -10 AND 0 USING (sym) WHERE t.qty >= ? ORDER BY t.ts`,
		`SELECT t.ts, t.qty, q.bid FROM trades t ASOF LEFT JOIN quotes q ON ts BETWEEN -10 AND 0 USING (sym) WHERE t.qty >= $1 ORDER BY t.ts`,
	} {
		rs, err := sdb.QueryContext(ctx, q, 50)
		require.NoError(t, err)
		types, err := rs.ColumnTypes()
		require.NoError(t, err)
		require.Equal(t, []string{"INT8", "INT4", "FLOAT8"},
			[]string{types[0].DatabaseTypeName(), types[1].DatabaseTypeName(), types[2].DatabaseTypeName()})
		var got []string
		for rs.Next() {
			var ts, qty int64
			var bid sql.NullFloat64
			require.NoError(t, rs.Scan(&ts, &qty, &bid))
			got = append(got, time.Duration(ts).String()+" "+time.Duration(qty).String()+" "+map[bool]string{true: "bid", false: "null"}[bid.Valid])
		}
		require.NoError(t, rs.Err())
		require.NoError(t, rs.Close())
		require.Equal(t, []string{"1ns 50ns null", "10ns 100ns bid", "13ns 200ns bid", "25ns 300ns bid"}, got)
	}

	// Timestamps come back as time.Time; prepared statements run again.
	_, err := sdb.ExecContext(ctx, `CREATE TABLE ev (at TIMESTAMPTZ, d DATE, n NUMERIC(10,2), v VARCHAR(5)) ORDER BY (at)`)
	require.NoError(t, err)
	ins, err := sdb.PrepareContext(ctx, `INSERT INTO ev VALUES (?, ?, ?, ?)`)
	require.NoError(t, err)
	at := time.Date(2024, 3, 1, 9, 30, 0, 0, time.UTC)
	res, err := ins.ExecContext(ctx, at, "2024-03-01", "12.50", "abc")
	require.NoError(t, err)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	_, err = ins.ExecContext(ctx, at.Add(time.Hour), nil, nil, nil)
	require.NoError(t, err)
	require.NoError(t, ins.Close())
	rs, err := sdb.QueryContext(ctx, `SELECT at, d, n, v FROM ev`)
	require.NoError(t, err)
	types, err := rs.ColumnTypes()
	require.NoError(t, err)
	p, s, ok := types[2].DecimalSize()
	require.True(t, ok)
	require.Equal(t, []int64{10, 2}, []int64{p, s})
	l, ok := types[3].Length()
	require.True(t, ok)
	require.Equal(t, int64(5), l)
	require.Equal(t, "TIMESTAMPTZ", types[0].DatabaseTypeName())
	var gotAt []time.Time
	var nums []sql.NullString
	for rs.Next() {
		var a time.Time
		var d sql.NullTime
		var num, v sql.NullString
		require.NoError(t, rs.Scan(&a, &d, &num, &v))
		gotAt = append(gotAt, a)
		nums = append(nums, num)
		if num.Valid {
			require.Equal(t, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), d.Time)
			require.Equal(t, "abc", v.String)
		}
	}
	require.NoError(t, rs.Err())
	require.NoError(t, rs.Close())
	require.Equal(t, []time.Time{at, at.Add(time.Hour)}, gotAt)
	require.Equal(t, []sql.NullString{{String: "12.50", Valid: true}, {}}, nums)

	// Transactions: commit, rollback, and a failed one.
	count := func() (c int64) {
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT count(*) FROM ev`).Scan(&c))
		return c
	}
	tx, err := sdb.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `INSERT INTO ev (at) VALUES ($1)`, at.Add(2*time.Hour))
	require.NoError(t, err)
	require.Equal(t, int64(2), count(), "not visible before COMMIT")
	require.NoError(t, tx.Commit())
	require.Equal(t, int64(3), count())
	tx, err = sdb.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `INSERT INTO ev (at) VALUES ($1)`, at)
	require.NoError(t, err)
	require.NoError(t, tx.Rollback())
	require.Equal(t, int64(3), count())
	tx, err = sdb.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `INSERT INTO ev (at) VALUES ($1)`, at)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `INSERT INTO ev (at) VALUES ('not a time')`)
	require.Error(t, err)
	_, err = tx.ExecContext(ctx, `SELECT 1`)
	require.Equal(t, sqlerr.InFailedSQLTransaction, sqlerr.Code(err))
	require.Equal(t, sqlerr.InFailedSQLTransaction, sqlerr.Code(tx.Commit()))
	require.Equal(t, int64(3), count())
	_, err = sdb.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
	require.Equal(t, sqlerr.FeatureNotSupported, sqlerr.Code(err))

	// Errors keep their SQLSTATE; named parameters are refused.
	_, err = sdb.ExecContext(ctx, `SELECT * FROM nosuch`)
	require.Equal(t, sqlerr.UndefinedTable, sqlerr.Code(err))
	_, err = sdb.QueryContext(ctx, `SELECT $1::int`, sql.Named("x", 1))
	require.Equal(t, sqlerr.FeatureNotSupported, sqlerr.Code(err))
	// A statement without rows through Query is fine (database/sql allows it).
	rs, err = sdb.QueryContext(ctx, `INSERT INTO ev (at) VALUES (?)`, at)
	require.NoError(t, err)
	require.False(t, rs.Next())
	require.NoError(t, rs.Close())
	require.Equal(t, int64(4), count())
}

func TestDriverOpenByName(t *testing.T) {
	// The registered name opens a database.
	sdb, err := sql.Open("asofsql", ":memory:")
	require.NoError(t, err)
	var one int
	require.NoError(t, sdb.QueryRow(`SELECT 1`).Scan(&one))
	require.Equal(t, 1, one)
	require.NoError(t, sdb.Close())
	_, err = sql.Open("asofsql", "")
	require.Equal(t, sqlerr.InvalidParameterValue, sqlerr.Code(err))
	_, err = asofsql.Driver{}.Open("")
	require.Equal(t, sqlerr.InvalidParameterValue, sqlerr.Code(err))
	dc, err := asofsql.Driver{}.Open(":memory:") // a connection owning its database
	require.NoError(t, err)
	require.NoError(t, dc.Close())

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	for _, dsn := range []string{":memory:", "file:" + dir} {
		conn, err := asofsql.NewConnector(dsn, asofsql.WithAllocator(mem))
		require.NoError(t, err)
		sdb := sql.OpenDB(conn)
		sdb.SetMaxOpenConns(3)
		ctx := context.Background()
		_, err = sdb.ExecContext(ctx, `CREATE TABLE t (x INT); INSERT INTO t VALUES (1), (2)`)
		require.NoError(t, err)
		// Several connections see one database.
		c1, err := sdb.Conn(ctx)
		require.NoError(t, err)
		c2, err := sdb.Conn(ctx)
		require.NoError(t, err)
		var n1, n2 int
		require.NoError(t, c1.QueryRowContext(ctx, `SELECT sum(x) FROM t`).Scan(&n1))
		require.NoError(t, c2.QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&n2))
		require.Equal(t, []int{3, 2}, []int{n1, n2})
		// Settings are per connection.
		_, err = c1.ExecContext(ctx, `SET TimeZone = 'Asia/Tokyo'`)
		require.NoError(t, err)
		var z1, z2 string
		require.NoError(t, c1.QueryRowContext(ctx, `SHOW TimeZone`).Scan(&z1))
		require.NoError(t, c2.QueryRowContext(ctx, `SHOW TimeZone`).Scan(&z2))
		require.Equal(t, []string{"Asia/Tokyo", "UTC"}, []string{z1, z2})
		require.NoError(t, c1.Close())
		require.NoError(t, c2.Close())
		require.NoError(t, sdb.Close())
	}
	// The directory holds the data after Close.
	conn, err := asofsql.NewConnector("file:"+dir, asofsql.WithAllocator(mem))
	require.NoError(t, err)
	sdb = sql.OpenDB(conn)
	defer sdb.Close()
	var n int
	require.NoError(t, sdb.QueryRow(`SELECT count(*) FROM t`).Scan(&n))
	require.Equal(t, 2, n)
}

// Connections of one sql.DB run concurrently on one engine (run with
// -race): writers append, readers see only whole statements.
func TestDatabaseSQLConcurrent(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	sdb := asofsql.OpenDB(db)
	defer sdb.Close()
	sdb.SetMaxOpenConns(4)
	ctx := context.Background()
	errs := make(chan error, 8)
	for w := 0; w < 4; w++ {
		go func(w int) {
			for i := 0; i < 20; i++ {
				if w%2 == 0 {
					if _, err := sdb.ExecContext(ctx, `INSERT INTO trades VALUES (?, 'c', 1), (?, 'c', 1)`, 100+i, 100+i); err != nil {
						errs <- err
						return
					}
					continue
				}
				var n int64
				if err := sdb.QueryRowContext(ctx, `SELECT count(*) FROM trades t ASOF LEFT JOIN quotes q ON ts BETWEEN -10 AND 0 USING (sym) WHERE sym = ?`, "c").Scan(&n); err != nil {
					errs <- err
					return
				}
				if n%2 != 0 {
					errs <- fmt.Errorf("saw half a statement: %d rows", n)
					return
				}
			}
			errs <- nil
		}(w)
	}
	for w := 0; w < 4; w++ {
		require.NoError(t, <-errs)
	}
	var n int64
	require.NoError(t, sdb.QueryRowContext(ctx, `SELECT count(*) FROM trades WHERE sym = 'c'`).Scan(&n))
	require.Equal(t, int64(80), n)
}
