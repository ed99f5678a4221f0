package asofsql_test

import (
	"context"
	"testing"
)

// BenchmarkParallelHashJoin joins a 10M-row probe table (k one of 1000
// keys) with a 1000-row build table (one row per key) through SQL at
// max_parallel_workers_per_gather 1 and 2, interleaved in the same
// iterations as BenchmarkParallelOps, and reports wall and CPU (user +
// system, whole process) ns per probe row at each degree and the wall
// ratio (speedup = w1/w2). Every probe row matches once, so the query
// returns 10M rows. ASOFSQL_BENCH_OPS_ROWS sets the probe rows.
func BenchmarkParallelHashJoin(b *testing.B) {
	ctx := context.Background()
	s, rows := opsBenchTable(b, `CREATE TABLE dim AS SELECT i AS k, i * 2 AS w FROM generate_series(0::bigint, 999::bigint) AS s(i)`)
	const q = `SELECT big.t, big.p, dim.w FROM big JOIN dim ON big.k = dim.k`
	benchDegrees(b, ctx, s, q, int64(rows), int64(rows), "row")
}
