package asofsql_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/asofsql/asofsql"
)

// BenchmarkDefaultPlans runs queries through the embedded SQL API at the
// database's default settings (no SET: the plans a client gets without
// asking), small ones over 1,000-row tables, where a parallel plan would
// only cost, and large ones over ASOFSQL_BENCH_DEFAULT_ROWS rows (1M by
// default). It reports wall and CPU (user + system, whole process) ns per
// query. Run the same benchmark from two builds (say main's default of 1
// worker and GOMAXPROCS with the planner's judgement) alternated, to
// compare what the defaults cost (issue 15, par-default).
func BenchmarkDefaultPlans(b *testing.B) {
	ctx := context.Background()
	rows := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("ASOFSQL_BENCH_DEFAULT_ROWS")); err == nil && v > 0 {
		rows = v
	}
	db, err := asofsql.Open(":memory:")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	s := db.Session()
	defer s.Close()
	n := strconv.Itoa(rows)
	// l and r: ordered by ts, 1000 int keys; s*: 1,000 rows of the same
	// shape; d: 1,000 dimension rows. k is random-ish, v a payload.
	if _, err := s.Exec(ctx, `
		CREATE TABLE l (ts BIGINT, k BIGINT, v DOUBLE PRECISION) ORDER BY (ts);
		CREATE TABLE r (ts BIGINT, k BIGINT, v DOUBLE PRECISION) ORDER BY (ts);
		CREATE TABLE sl (ts BIGINT, k BIGINT, v DOUBLE PRECISION) ORDER BY (ts);
		CREATE TABLE sr (ts BIGINT, k BIGINT, v DOUBLE PRECISION) ORDER BY (ts);
		CREATE TABLE d (k BIGINT, name TEXT);
		INSERT INTO l SELECT i * 2, (i::bigint * 7919) % 1000, i * 0.25 FROM generate_series(1, `+n+`) AS s(i);
		INSERT INTO r SELECT i * 2 + 1, (i::bigint * 104729) % 1000, i * 0.5 FROM generate_series(1, `+n+`) AS s(i);
		INSERT INTO sl SELECT i * 2, (i::bigint * 7919) % 100, i * 0.25 FROM generate_series(1, 1000) AS s(i);
		INSERT INTO sr SELECT i * 2 + 1, (i::bigint * 104729) % 100, i * 0.5 FROM generate_series(1, 1000) AS s(i);
		INSERT INTO d SELECT i, 'n' || i FROM generate_series(0, 999) AS s(i)`); err != nil {
		b.Fatal(err)
	}
	for _, q := range []struct{ name, sql string }{
		{"small_asof", `SELECT sl.ts, sl.k, sr.v FROM sl ASOF LEFT JOIN sr ON ts BETWEEN -100 AND 0 USING (k)`},
		{"small_agg", `SELECT k, count(*), sum(v) FROM sl GROUP BY k`},
		{"small_join", `SELECT sl.ts, d.name FROM sl JOIN d ON sl.k = d.k`},
		{"small_window", `SELECT k, sum(v) OVER (PARTITION BY k ORDER BY ts) FROM sl`},
		{"small_sort", `SELECT ts, k FROM sl ORDER BY v DESC`},
		{"asof", `SELECT l.ts, l.k, r.v FROM l ASOF LEFT JOIN r ON ts BETWEEN -1000 AND 0 USING (k)`},
		{"agg", `SELECT k, count(*), sum(v), min(ts), max(v) FROM l GROUP BY k`},
		{"hash_join", `SELECT l.ts, d.name FROM l JOIN d ON l.k = d.k`},
		{"window", `SELECT k, sum(v) OVER (PARTITION BY k ORDER BY ts ROWS 9 PRECEDING) FROM l`},
		{"sort", `SELECT ts, k FROM l ORDER BY v DESC`},
	} {
		b.Run(q.name, func(b *testing.B) {
			var cpu int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				cpu0 := cpuTime() // window_bench_test.go
				c, err := s.Query(ctx, q.sql)
				if err != nil {
					b.Fatal(err)
				}
				for c.Next() {
				}
				if err := c.Err(); err != nil {
					b.Fatal(err)
				}
				c.Close()
				cpu += cpuTime() - cpu0
			}
			b.StopTimer()
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
