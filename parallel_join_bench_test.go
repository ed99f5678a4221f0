package asofsql_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql"
)

// BenchmarkParallelHashJoin joins a 10M-row probe table (k one of 1000
// keys) with a 1000-row build table (one row per key) through SQL at
// max_parallel_workers_per_gather 1 and 2, interleaved in the same
// iterations as BenchmarkParallelOps, and reports wall and CPU (user +
// system, whole process) ns per probe row at each degree and the wall
// ratio (speedup = w1/w2). Every probe row matches once, so the query
// returns 10M rows. ASOFSQL_BENCH_OPS_ROWS sets the probe rows.
func BenchmarkParallelHashJoin(b *testing.B) {
	rows := 10 << 20
	if v, err := strconv.Atoi(os.Getenv("ASOFSQL_BENCH_OPS_ROWS")); err == nil && v > 0 {
		rows = v
	}
	ctx := context.Background()
	db, err := asofsql.Open(":memory:", asofsql.WithAllocator(memory.NewGoAllocator()))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	s := db.Session()
	defer s.Close()
	if _, err := s.Exec(ctx, `CREATE TABLE big (t BIGINT, k BIGINT, p DOUBLE PRECISION);
		CREATE TABLE dim AS SELECT i AS k, i * 2 AS w FROM generate_series(0::bigint, 999::bigint) AS s(i)`); err != nil {
		b.Fatal(err)
	}
	if _, err := s.CopyFrom(ctx, "COPY big FROM STDIN WITH (FORMAT csv)", genCSV(rows, 1000, 1)); err != nil {
		b.Fatal(err)
	}
	const q = `SELECT big.t, big.p, dim.w FROM big JOIN dim ON big.k = dim.k`
	var c1, c2 time.Duration
	run := func(workers int) time.Duration {
		cpu0 := cpuTime() // window_bench_test.go
		defer func() {
			if workers == 1 {
				c1 += time.Duration(cpuTime() - cpu0)
			} else {
				c2 += time.Duration(cpuTime() - cpu0)
			}
		}()
		if _, err := s.Exec(ctx, "SET max_parallel_workers_per_gather = "+strconv.Itoa(workers)); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		c, err := s.Query(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		var n int64
		for c.Next() {
			n += c.RecordBatch().NumRows()
		}
		if err := c.Err(); err != nil {
			b.Fatal(err)
		}
		c.Close()
		if n != int64(rows) {
			b.Fatalf("%d rows at %d workers, want %d", n, workers, rows)
		}
		return time.Since(start)
	}
	b.ResetTimer()
	var w1, w2 time.Duration
	for i := 0; i < b.N; i++ {
		// Alternate which runs first, so neither always meets a warmer
		// cache or a busier neighbour.
		if i%2 == 0 {
			w1 += run(1)
			w2 += run(2)
		} else {
			w2 += run(2)
			w1 += run(1)
		}
	}
	b.StopTimer()
	n := float64(b.N) * float64(rows)
	b.ReportMetric(float64(w1.Nanoseconds())/n, "w1-ns/row")
	b.ReportMetric(float64(w2.Nanoseconds())/n, "w2-ns/row")
	b.ReportMetric(float64(w1)/float64(w2), "speedup")
	b.ReportMetric(float64(c1.Nanoseconds())/n, "w1-cpu-ns/row")
	b.ReportMetric(float64(c2.Nanoseconds())/n, "w2-cpu-ns/row")
}
