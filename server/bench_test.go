package server_test

import (
	"context"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/server"
)

const benchRows = 1_000_000

// benchDB is a database with a table big of benchRows quotes, loaded
// through the embedded COPY.
func benchDB(b *testing.B) *asofsql.DB {
	b.Helper()
	db, err := asofsql.Open(":memory:")
	require.NoError(b, err)
	b.Cleanup(func() { db.Close() })
	ctx := context.Background()
	_, err = db.Exec(ctx, `CREATE TABLE big (ts BIGINT, sym TEXT, bid DOUBLE PRECISION) ORDER BY (ts)`)
	require.NoError(b, err)
	pr, pw := newPipe()
	go func() {
		for i := range benchRows {
			pw.printf("%d\tS%d\t%d.25\n", i, i%300, i%1000)
		}
		pw.close()
	}()
	_, err = db.Session().CopyFrom(ctx, `COPY big FROM STDIN`, pr)
	require.NoError(b, err)
	return db
}

const benchQuery = `SELECT b.ts, b.sym, b.bid, q.bid FROM big b ASOF LEFT JOIN big q ON ts BETWEEN -5 AND -1 USING (sym)`

// BenchmarkASOFOverPgx streams an ASOF result of benchRows rows to pgx
// over loopback (text format, as psql reads it).
func BenchmarkASOFOverPgx(b *testing.B) {
	db := benchDB(b)
	srv, err := server.New(db, pgwire.Config{})
	require.NoError(b, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	go srv.Serve(l)
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	ctx := context.Background()
	c, err := pgx.Connect(ctx, "postgres://bench@"+l.Addr().String()+"/asofsql?sslmode=disable")
	require.NoError(b, err)
	defer c.Close(ctx)
	b.ResetTimer()
	for b.Loop() {
		rs, err := c.Query(ctx, benchQuery, pgx.QueryResultFormats{pgx.TextFormatCode})
		require.NoError(b, err)
		n := 0
		for rs.Next() {
			_ = rs.RawValues()
			n++
		}
		require.NoError(b, rs.Err())
		require.Equal(b, benchRows, n)
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkASOFEmbedded runs the same query through the embedded API.
func BenchmarkASOFEmbedded(b *testing.B) {
	db := benchDB(b)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		c, err := db.Session().Query(ctx, benchQuery)
		require.NoError(b, err)
		n := 0
		for c.Next() {
			n += int(c.RecordBatch().NumRows())
		}
		require.NoError(b, c.Err())
		c.Release()
		require.Equal(b, benchRows, n)
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkInsertOverPgx: single-row autocommit INSERTs, prepared by pgx
// (Bind, Describe, Execute, Sync per row), into an ordered in-memory
// table over loopback: the per-statement cost of the wire and the engine.
func BenchmarkInsertOverPgx(b *testing.B) {
	ctx := context.Background()
	c := ticksOverPgx(b, ":memory:")
	b.ReportAllocs()
	i := 0
	cpu0 := cpuTime()
	for b.Loop() {
		i++
		_, err := c.Exec(ctx, `INSERT INTO ticks VALUES ($1, $2, $3)`, i, "AAPL", 1.5)
		require.NoError(b, err)
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/1e3/float64(b.N), "cpu-us/op")
}

// BenchmarkNoopOverPgx: a prepared `SELECT 1` per round trip, the same
// messages as BenchmarkInsertOverPgx without the write: the ceiling of
// single-row statements over the wire on this machine.
func BenchmarkNoopOverPgx(b *testing.B) {
	db, err := asofsql.Open(":memory:")
	require.NoError(b, err)
	b.Cleanup(func() { db.Close() })
	ctx := context.Background()
	srv, err := server.New(db, pgwire.Config{})
	require.NoError(b, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	go srv.Serve(l)
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	c, err := pgx.Connect(ctx, "postgres://bench@"+l.Addr().String()+"/asofsql?sslmode=disable")
	require.NoError(b, err)
	defer c.Close(ctx)
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		// Query: pgx's Exec without arguments uses the simple protocol.
		rows, err := c.Query(ctx, `SELECT 1`)
		require.NoError(b, err)
		rows.Close()
		require.NoError(b, rows.Err())
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/1e3/float64(b.N), "cpu-us/op")
}

// cpuTime is this process's user+system CPU time in nanoseconds (client
// and server together): on a shared machine it moves far less than the
// wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkInsertTxOverPgx: the same prepared single-row INSERTs inside
// 100-row transaction blocks (BEGIN, 100 INSERTs, COMMIT), into a table
// of a data directory with synchronous_commit off: what each INSERT pays
// inside a block.
func BenchmarkInsertTxOverPgx(b *testing.B) {
	ctx := context.Background()
	c := ticksOverPgx(b, b.TempDir())
	_, err := c.Exec(ctx, `SET synchronous_commit = off`)
	require.NoError(b, err)
	b.ReportAllocs()
	i := 0
	var tx pgx.Tx
	cpu0 := cpuTime()
	for b.Loop() {
		if i%100 == 0 {
			tx, err = c.Begin(ctx)
			require.NoError(b, err)
		}
		i++
		_, err := tx.Exec(ctx, `INSERT INTO ticks VALUES ($1, $2, $3)`, i, "AAPL", 1.5)
		require.NoError(b, err)
		if i%100 == 0 {
			require.NoError(b, tx.Commit(ctx))
		}
	}
	if i%100 != 0 {
		require.NoError(b, tx.Commit(ctx))
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/1e3/float64(b.N), "cpu-us/op")
}

// ticksOverPgx opens a database at path with an ordered table ticks (ts
// BIGINT NOT NULL, sym TEXT, px DOUBLE PRECISION), serves it on loopback
// and returns a pgx connection to it; all are closed at the end of b.
func ticksOverPgx(b *testing.B, path string) *pgx.Conn {
	b.Helper()
	db, err := asofsql.Open(path)
	require.NoError(b, err)
	b.Cleanup(func() { db.Close() })
	ctx := context.Background()
	_, err = db.Exec(ctx, `CREATE TABLE ticks (ts BIGINT NOT NULL, sym TEXT, px DOUBLE PRECISION) ORDER BY (ts)`)
	require.NoError(b, err)
	srv, err := server.New(db, pgwire.Config{})
	require.NoError(b, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	go srv.Serve(l)
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	c, err := pgx.Connect(ctx, "postgres://bench@"+l.Addr().String()+"/asofsql?sslmode=disable")
	require.NoError(b, err)
	b.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// BenchmarkInsertDurableOverPgx: single-row autocommit INSERTs into a
// table of a data directory with synchronous_commit on (the default): each
// one is acknowledged only once its log record is on disk, so this is the
// whole commit path (log append, write, fdatasync, publish) per statement.
func BenchmarkInsertDurableOverPgx(b *testing.B) {
	ctx := context.Background()
	c := ticksOverPgx(b, b.TempDir())
	b.ReportAllocs()
	i := 0
	cpu0 := cpuTime()
	for b.Loop() {
		i++
		_, err := c.Exec(ctx, `INSERT INTO ticks VALUES ($1, $2, $3)`, i, "AAPL", 1.5)
		require.NoError(b, err)
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/1e3/float64(b.N), "cpu-us/op")
}
