package asofsql_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/asof"
)

// genCSV renders the exec/asof benchmark series as CSV: t grows by 1 or 2
// per row, k is uniform over card values, p is a float64 payload.
func genCSV(rows int, card int, seed uint64) *bytes.Buffer {
	rng := rand.New(rand.NewPCG(seed, seed))
	var buf bytes.Buffer
	buf.Grow(rows * 28)
	var t int64
	line := make([]byte, 0, 64)
	for i := 0; i < rows; i++ {
		t += 1 + int64(rng.IntN(2))
		line = strconv.AppendInt(line[:0], t, 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(rng.IntN(card)), 10)
		line = append(line, ',')
		line = strconv.AppendFloat(line, rng.Float64(), 'g', -1, 64)
		line = append(line, '\n')
		buf.Write(line)
	}
	return &buf
}

// BenchmarkQueryOverhead runs the S1 shape of exec/asof's BenchmarkJoin
// (1M × 1M rows, 1000 int keys, backward unbounded, LEFT) through
// DB.Query, and the bare asof operator over the same rows (read once from
// the tables into memory), in the same iterations. It reports ns/leftrow
// of both and their ratio (the target is sql/bare ≤ 1.15). S2 (10M × 10M)
// runs with ASOFSQL_BENCH_S2=1.
func BenchmarkQueryOverhead(b *testing.B) {
	sizes := []struct {
		name string
		rows int
	}{{"S1_1Mx1M_backward", 1 << 20}}
	if os.Getenv("ASOFSQL_BENCH_S2") == "1" {
		sizes = append(sizes, struct {
			name string
			rows int
		}{"S2_10Mx10M_backward", 10 << 20})
	}
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			ctx := context.Background()
			mem := memory.NewGoAllocator()
			db, err := asofsql.Open(":memory:", asofsql.WithAllocator(mem))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			s := db.Session()
			if _, err := s.Exec(ctx, `CREATE TABLE l (t BIGINT, k BIGINT, lp DOUBLE PRECISION) ORDER BY (t);
				CREATE TABLE r (t BIGINT, k BIGINT, rp DOUBLE PRECISION) ORDER BY (t)`); err != nil {
				b.Fatal(err)
			}
			for i, tbl := range []string{"l", "r"} {
				if _, err := s.CopyFrom(ctx, "COPY "+tbl+" FROM STDIN WITH (FORMAT csv)", genCSV(sz.rows, 1000, uint64(i+1))); err != nil {
					b.Fatal(err)
				}
			}
			left, lschema := readAll(b, db, "SELECT * FROM l")
			right, rschema := readAll(b, db, "SELECT * FROM r")
			defer releaseAll(left)
			defer releaseAll(right)
			const q = `SELECT l.t, l.k, l.lp, r.t, r.rp FROM l ASOF LEFT JOIN r ON l.k = r.k AND l.t >= r.t`
			b.ResetTimer()
			var bare, viaSQL time.Duration
			var nBare, nSQL int64
			for i := 0; i < b.N; i++ {
				start := time.Now()
				j, err := asof.New(replay(lschema, left), []asof.Right{{Name: "r", Input: replay(rschema, right),
					LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1}, Lo: asof.Unbounded, Hi: asof.IntBound(0),
					Kind: asof.Left, Payload: []int{0, 2}}}, asof.Options{Allocator: mem})
				if err != nil {
					b.Fatal(err)
				}
				nBare = 0
				if err := exec.Drain(ctx, j, func(rec arrow.RecordBatch) error { nBare += rec.NumRows(); return nil }); err != nil {
					b.Fatal(err)
				}
				bare += time.Since(start)

				start = time.Now()
				rdr, err := db.Query(ctx, q)
				if err != nil {
					b.Fatal(err)
				}
				nSQL = 0
				for rdr.Next() {
					nSQL += rdr.RecordBatch().NumRows()
				}
				if err := rdr.Err(); err != nil {
					b.Fatal(err)
				}
				rdr.Release()
				viaSQL += time.Since(start)
			}
			b.StopTimer()
			if nBare != nSQL || nSQL != int64(sz.rows) {
				b.Fatalf("bare operator returned %d rows, the query %d, want %d", nBare, nSQL, sz.rows)
			}
			n := float64(b.N) * float64(sz.rows)
			b.ReportMetric(float64(bare.Nanoseconds())/n, "bare-ns/leftrow")
			b.ReportMetric(float64(viaSQL.Nanoseconds())/n, "sql-ns/leftrow")
			b.ReportMetric(float64(viaSQL)/float64(bare), "sql/bare")
		})
	}
}

func readAll(b *testing.B, db *asofsql.DB, q string) ([]arrow.RecordBatch, *arrow.Schema) {
	rdr, err := db.Query(context.Background(), q)
	if err != nil {
		b.Fatal(err)
	}
	defer rdr.Release()
	var out []arrow.RecordBatch
	for rdr.Next() {
		rec := rdr.RecordBatch()
		rec.Retain()
		out = append(out, rec)
	}
	if err := rdr.Err(); err != nil {
		b.Fatal(err)
	}
	return out, rdr.Schema()
}

func releaseAll(bs []arrow.RecordBatch) {
	for _, r := range bs {
		r.Release()
	}
}

func replay(schema *arrow.Schema, batches []arrow.RecordBatch) exec.Operator {
	for _, r := range batches {
		r.Retain()
	}
	return exec.NewBatches(schema, append([]arrow.RecordBatch(nil), batches...))
}

// BenchmarkBatchStatement runs one statement of a simple Query the way the
// wire server does (Session.Batch, Next to describe it, Execute, read to
// the end): the per-statement cost of analysis, planning and snapshots on
// a small ASOF query, where planning is a large share of the work.
func BenchmarkBatchStatement(b *testing.B) {
	ctx := context.Background()
	db, err := asofsql.Open(":memory:")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	_, err = db.Exec(ctx, `CREATE TABLE bt (ts BIGINT, sym TEXT, px DOUBLE PRECISION) ORDER BY (ts);
		CREATE TABLE bq (ts BIGINT, sym TEXT, bid DOUBLE PRECISION) ORDER BY (ts);
		INSERT INTO bt SELECT g * 2, 's' || (g % 10), g FROM generate_series(1, 100) AS g;
		INSERT INTO bq SELECT g, 's' || (g % 10), g FROM generate_series(1, 200) AS g`)
	if err != nil {
		b.Fatal(err)
	}
	s := db.Session()
	defer s.Close()
	const q = `SELECT t.ts, t.px, q.bid FROM bt t ASOF LEFT JOIN bq q ON ts BETWEEN -10 AND 0 USING (sym) WHERE t.px > 10`
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		batch, err := s.Batch(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		st, err := batch.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		cur, err := st.Execute(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for cur.Next() {
		}
		if err := cur.Close(); err != nil {
			b.Fatal(err)
		}
		batch.Close()
	}
}

// BenchmarkInsertRow measures single-row autocommit INSERTs through
// Session.Exec into an ordered table in a data directory: parse, plan,
// session and the catalog's log with group commit, for 1 and 16 sessions
// and synchronous_commit on and off. ns/op is per row (all sessions).
func BenchmarkInsertRow(b *testing.B) {
	for _, sync := range []string{"on", "off"} {
		for _, clients := range []int{1, 16} {
			b.Run("sync="+sync+"/clients="+strconv.Itoa(clients), func(b *testing.B) {
				ctx := context.Background()
				dsn := b.TempDir()
				if os.Getenv("ASOFSQL_BENCH_MEMORY") == "1" {
					dsn = ":memory:"
				}
				db, err := asofsql.Open(dsn)
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				if _, err := db.Exec(ctx, `CREATE TABLE ticks (ts BIGINT NOT NULL, sym TEXT, px DOUBLE PRECISION) ORDER BY (ts)`); err != nil {
					b.Fatal(err)
				}
				per := (b.N + clients - 1) / clients
				errs := make(chan error, clients)
				b.ResetTimer()
				for c := 0; c < clients; c++ {
					go func(c int) {
						s := db.Session()
						defer s.Close()
						if _, err := s.Exec(ctx, "SET synchronous_commit = "+sync); err != nil {
							errs <- err
							return
						}
						for i := 0; i < per; i++ {
							if _, err := s.Exec(ctx, "INSERT INTO ticks VALUES ($1, 'AAPL', 1.5)", int64(c*per+i)); err != nil {
								errs <- err
								return
							}
						}
						errs <- nil
					}(c)
				}
				for c := 0; c < clients; c++ {
					if err := <-errs; err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(per*clients)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}
