package asofsql_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql"
)

// BenchmarkParallelOps runs the non-ASOF parallel operators through SQL
// over one 10M-row table (t increasing, k one of 1000 keys, p random; no
// declared order, so no aggregate streams) at max_parallel_workers_per_gather
// 1 and 2, interleaved in the same iterations as BenchmarkParallelASOF,
// and reports wall and CPU (user + system, whole process) ns per input
// row at each degree and the wall ratio (speedup = w1/w2).
// ASOFSQL_BENCH_OPS_ROWS sets the rows (default 10M).
func BenchmarkParallelOps(b *testing.B) {
	ctx := context.Background()
	s, rows := opsBenchTable(b, "")
	shapes := []struct {
		name string
		q    string
		out  int64 // rows the query returns
	}{
		{"hash_aggregate", `SELECT k, count(*), sum(t), avg(p), min(p), max(t) FROM big GROUP BY k`, 1000},
		{"sort", `SELECT t, k, p FROM big ORDER BY k, p`, int64(rows)},
		{"window", `SELECT k, t, sum(p) OVER (PARTITION BY k ORDER BY t ROWS BETWEEN 9 PRECEDING AND CURRENT ROW) FROM big`, int64(rows)},
	}
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			benchDegrees(b, ctx, s, sh.q, sh.out, int64(rows), "row")
		})
	}
}

// opsBenchTable opens an in-memory database with big (t BIGINT, k BIGINT,
// p DOUBLE PRECISION): ASOFSQL_BENCH_OPS_ROWS rows (default 10M) of
// genCSV, k one of 1000 keys, after running ddl (if any); it returns a
// session on it, closed with the database at the end of b, and the rows.
func opsBenchTable(b *testing.B, ddl string) (*asofsql.Session, int) {
	b.Helper()
	rows := 10 << 20
	if v, err := strconv.Atoi(os.Getenv("ASOFSQL_BENCH_OPS_ROWS")); err == nil && v > 0 {
		rows = v
	}
	ctx := context.Background()
	db, err := asofsql.Open(":memory:", asofsql.WithAllocator(memory.NewGoAllocator()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	s := db.Session()
	b.Cleanup(func() { s.Close() })
	if _, err := s.Exec(ctx, `CREATE TABLE big (t BIGINT, k BIGINT, p DOUBLE PRECISION)`); err != nil {
		b.Fatal(err)
	}
	if ddl != "" {
		if _, err := s.Exec(ctx, ddl); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := s.CopyFrom(ctx, "COPY big FROM STDIN WITH (FORMAT csv)", genCSV(rows, 1000, 1)); err != nil {
		b.Fatal(err)
	}
	return s, rows
}
