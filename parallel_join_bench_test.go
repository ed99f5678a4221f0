package asofsql_test

import (
	"context"
	"os"
	"strconv"
	"testing"

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
	benchDegrees(b, ctx, s, q, int64(rows), int64(rows), "row")
}
