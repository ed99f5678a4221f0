package flightsql_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/flightsql"
	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/server"
)

const benchRows = 1_000_000

// benchQuery is the ASOF join of server/bench_test.go: 1M rows of four
// columns (int64, text, two float64).
const benchQuery = `SELECT b.ts, b.sym, b.bid, q.bid FROM big b ASOF LEFT JOIN big q ON ts BETWEEN -5 AND -1 USING (sym)`

func benchData(b *testing.B) *asofsql.DB {
	b.Helper()
	db, err := asofsql.Open(":memory:")
	require.NoError(b, err)
	b.Cleanup(func() { db.Close() })
	ctx := context.Background()
	_, err = db.Exec(ctx, `CREATE TABLE big (ts BIGINT, sym TEXT, bid DOUBLE PRECISION) ORDER BY (ts)`)
	require.NoError(b, err)
	_, err = db.Exec(ctx, `INSERT INTO big SELECT g, 'S' || (g % 300), (g % 1000) + 0.25 FROM generate_series(0, 999999) AS g`)
	require.NoError(b, err)
	return db
}

// BenchmarkFetch fetches the same 1M-row ASOF result through Flight SQL
// (arrow-go client), pgx (binary format, raw values: pgx's cheapest
// path) and the embedded API, in one run: compare ns/row.
func BenchmarkFetch(b *testing.B) {
	db := benchData(b)
	ctx := context.Background()

	faddr, _ := serve(b, db, flightsql.Config{})
	fe := &env{db: db, addr: faddr}
	fc := fe.client(b)

	psrv, err := server.New(db, pgwire.Config{})
	require.NoError(b, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	go psrv.Serve(l)
	b.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		psrv.Shutdown(sctx)
	})
	pc, err := pgx.Connect(ctx, "postgres://bench@"+l.Addr().String()+"/asofsql?sslmode=disable")
	require.NoError(b, err)
	b.Cleanup(func() { pc.Close(ctx) })

	perRow := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(benchRows)/float64(b.N), "ns/row")
	}
	b.Run("flight", func(b *testing.B) {
		for b.Loop() {
			info, err := fc.Execute(ctx, benchQuery)
			require.NoError(b, err)
			n := 0
			for _, ep := range info.Endpoint {
				rdr, err := fc.DoGet(ctx, ep.Ticket)
				require.NoError(b, err)
				for rdr.Next() {
					n += int(rdr.RecordBatch().NumRows())
				}
				require.NoError(b, rdr.Err())
				rdr.Release()
			}
			require.Equal(b, benchRows, n)
		}
		perRow(b)
	})
	b.Run("pgx", func(b *testing.B) {
		for b.Loop() {
			rs, err := pc.Query(ctx, benchQuery)
			require.NoError(b, err)
			n := 0
			for rs.Next() {
				_ = rs.RawValues()
				n++
			}
			require.NoError(b, rs.Err())
			require.Equal(b, benchRows, n)
		}
		perRow(b)
	})
	b.Run("embedded", func(b *testing.B) {
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
		perRow(b)
	})
}
