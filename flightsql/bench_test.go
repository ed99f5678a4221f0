package flightsql_test

import (
	"context"
	"net"
	"os"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	afsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/flightsql"
	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/server"
)

const benchRows = 1_000_000

// benchQuery is the ASOF join of server/bench_test.go: 1M rows of four
// columns (int64, text, two float64). With FLIGHT_BENCH_SCAN=1 it is a
// plain scan of the same columns instead, whose engine cost is ~1 ns a
// row, so that the figures are the transports' alone.
var benchQuery = func() string {
	if os.Getenv("FLIGHT_BENCH_SCAN") == "1" {
		return `SELECT ts, sym, bid, bid FROM big`
	}
	return `SELECT b.ts, b.sym, b.bid, q.bid FROM big b ASOF LEFT JOIN big q ON ts BETWEEN -5 AND -1 USING (sym)`
}()

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
// (arrow-go's client with flightclient's dial options, which keeps every
// batch it receives until the end, as a client collecting a table does;
// and flight-parallel: at degree 2, its 2 endpoints fetched at once, each
// on its own connection), pgx in binary format twice (Scan into typed Go
// values, as an application does; and raw values, pgx's cheapest path,
// which decodes nothing: a floor no application reaches) and the embedded
// API, interleaved within each iteration so that the paths see the same
// machine load. It reports each path's median wall and CPU time per row
// (CPU: user+system of the whole process, client and server, summed over
// cores) and the ratios the issue sets targets for: pgx/flight (at least
// 5; pgx-raw/flight beside it) and flight/embedded (at most 2).
func BenchmarkFetch(b *testing.B) {
	db := benchData(b)
	ctx := context.Background()

	faddr, _ := serve(b, db, flightsql.Config{})
	fe := &env{db: db, addr: faddr}
	// The Flight clients are arrow-go's with the dial options
	// docs/clients.md recommends to every Go client (flightclient).
	fc := fe.fastClient(b)
	// flight-parallel: a connection whose session plans 2 parts, and one
	// client (connection) per endpoint, as a parallel reader has.
	pfc := fe.fastClient(b)
	two, err := flight.NewSessionOptionValues(map[string]any{"max_parallel_workers_per_gather": int64(2),
		"min_parallel_table_scan_size": int64(0)})
	require.NoError(b, err)
	_, err = pfc.SetSessionOptions(ctx, &flight.SetSessionOptionsRequest{SessionOptions: two})
	require.NoError(b, err)
	readers := []*afsql.Client{fe.fastClient(b), fe.fastClient(b)}

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

	paths := []struct {
		name string
		run  func() int
	}{
		{"flight", func() int {
			info, err := fc.Execute(ctx, benchQuery)
			require.NoError(b, err)
			n := 0
			var held []arrow.RecordBatch
			for _, ep := range info.Endpoint {
				rdr, err := fc.DoGet(ctx, ep.Ticket)
				require.NoError(b, err)
				for rdr.Next() {
					rec := rdr.RecordBatch()
					rec.Retain()
					held = append(held, rec)
					n += int(rec.NumRows())
				}
				require.NoError(b, rdr.Err())
				rdr.Release()
			}
			for _, rec := range held {
				rec.Release()
			}
			return n
		}},
		{"flight-parallel", func() int {
			info, err := pfc.Execute(ctx, benchQuery)
			require.NoError(b, err)
			require.Len(b, info.Endpoint, 2)
			counts := make([]int, len(info.Endpoint))
			held := make([][]arrow.RecordBatch, len(info.Endpoint))
			errs := make([]error, len(info.Endpoint))
			var wg sync.WaitGroup
			for i, ep := range info.Endpoint {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rdr, err := readers[i].DoGet(ctx, ep.Ticket)
					if err != nil {
						errs[i] = err
						return
					}
					defer rdr.Release()
					for rdr.Next() {
						rec := rdr.RecordBatch()
						rec.Retain()
						held[i] = append(held[i], rec)
						counts[i] += int(rec.NumRows())
					}
					errs[i] = rdr.Err()
				}()
			}
			wg.Wait()
			n := 0
			for i := range held {
				require.NoError(b, errs[i])
				n += counts[i]
				for _, rec := range held[i] {
					rec.Release()
				}
			}
			return n
		}},
		{"pgx", func() int {
			rs, err := pc.Query(ctx, benchQuery)
			require.NoError(b, err)
			n := 0
			var (
				ts       int64
				sym      string
				bid      float64
				quoteBid pgtype.Float8 // NULL without a match
			)
			for rs.Next() {
				if err := rs.Scan(&ts, &sym, &bid, &quoteBid); err != nil {
					b.Fatal(err)
				}
				n++
			}
			require.NoError(b, rs.Err())
			return n
		}},
		{"pgx-raw", func() int {
			rs, err := pc.Query(ctx, benchQuery)
			require.NoError(b, err)
			n := 0
			for rs.Next() {
				_ = rs.RawValues()
				n++
			}
			require.NoError(b, rs.Err())
			return n
		}},
		{"embedded", func() int {
			c, err := db.Session().Query(ctx, benchQuery)
			require.NoError(b, err)
			n := 0
			for c.Next() {
				n += int(c.RecordBatch().NumRows())
			}
			require.NoError(b, c.Err())
			c.Release()
			return n
		}},
	}
	wall := make([][]float64, len(paths))
	cpu := make([][]float64, len(paths))
	for _, p := range paths { // warm up each path once
		require.Equal(b, benchRows, p.run())
	}
	b.ResetTimer()
	for b.Loop() {
		for i, p := range paths {
			runtime.GC()
			t0, c0 := time.Now(), cpuTime()
			require.Equal(b, benchRows, p.run())
			wall[i] = append(wall[i], float64(time.Since(t0).Nanoseconds())/benchRows)
			cpu[i] = append(cpu[i], float64(cpuTime()-c0)/benchRows)
		}
	}
	med := func(xs []float64) float64 {
		s := slices.Clone(xs)
		slices.Sort(s)
		return s[len(s)/2]
	}
	for i, p := range paths {
		b.ReportMetric(med(wall[i]), p.name+"-ns/row")
		b.ReportMetric(med(cpu[i]), p.name+"-cpu-ns/row")
	}
	const flt, par, pgs, raw, emb = 0, 1, 2, 3, 4
	b.ReportMetric(med(wall[pgs])/med(wall[flt]), "pgx/flight")
	b.ReportMetric(med(wall[raw])/med(wall[flt]), "pgx-raw/flight")
	b.ReportMetric(med(wall[flt])/med(wall[emb]), "flight/embedded")
	b.ReportMetric(med(wall[pgs])/med(wall[par]), "pgx/flight-parallel")
	b.ReportMetric(med(wall[par])/med(wall[emb]), "flight-parallel/embedded")
	b.ReportMetric(med(cpu[pgs])/med(cpu[flt]), "cpu-pgx/flight")
	b.ReportMetric(med(cpu[raw])/med(cpu[flt]), "cpu-pgx-raw/flight")
	b.ReportMetric(med(cpu[flt])/med(cpu[emb]), "cpu-flight/embedded")
	b.ReportMetric(med(cpu[par])/med(cpu[flt]), "cpu-flight-parallel/flight")
}

// cpuTime is this process's user+system CPU time in nanoseconds: on a
// shared machine it is a steadier figure than wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
