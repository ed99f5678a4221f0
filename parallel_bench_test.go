package asofsql_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql"
)

// genCSVText is genCSV with 16-character text keys (S4).
func genCSVText(rows int, card int, seed uint64) *bytes.Buffer {
	rng := rand.New(rand.NewPCG(seed, seed))
	var buf bytes.Buffer
	var t int64
	line := make([]byte, 0, 64)
	for i := 0; i < rows; i++ {
		t += 1 + int64(rng.IntN(2))
		line = strconv.AppendInt(line[:0], t, 10)
		line = fmt.Appendf(line, ",sym-%011d,", rng.IntN(card))
		line = strconv.AppendFloat(line, rng.Float64(), 'g', -1, 64)
		line = append(line, '\n')
		buf.Write(line)
	}
	return &buf
}

// genMarket is the market-data shape of `asofsql demo` (cmd/asofsql,
// which the tests cannot import): a trading day from 09:30 of 300 text
// symbols, one row per event at a random step of 1 to 2*meanStep
// microseconds, with two prices. Trades and quotes use different seeds
// and steps (quotes at 3x the density) over about the same span.
func genMarket(rows int, meanStep int64, seed uint64) *bytes.Buffer {
	rng := rand.New(rand.NewPCG(seed, seed))
	var buf bytes.Buffer
	open := time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)
	var us int64
	line := make([]byte, 0, 96)
	for i := 0; i < rows; i++ {
		us += 1 + rng.Int64N(2*meanStep)
		line = open.Add(time.Duration(us)*time.Microsecond).AppendFormat(line[:0], "2006-01-02 15:04:05.999999")
		line = fmt.Appendf(line, ",SYM%03d,", rng.IntN(300))
		px := 100 + 50*rng.Float64()
		line = strconv.AppendFloat(line, px, 'f', 2, 64)
		line = append(line, ',')
		line = strconv.AppendFloat(line, px+0.01, 'f', 2, 64)
		line = append(line, '\n')
		buf.Write(line)
	}
	return &buf
}

// BenchmarkParallelASOF runs the ASOF shapes of exec/asof's BenchmarkJoin
// through SQL at max_parallel_workers_per_gather 1 and 2, interleaved in
// the same iterations, and reports ns per left row of each and their
// ratio (speedup = w1/w2). S1 (1M × 1M, int keys, backward), S4 (string
// keys, backward) and S5 (nearest [-500, 500]) always; S2 (10M × 10M) and
// S4 at its full 5M × 5M with ASOFSQL_BENCH_S2=1 (S4 is 1M × 1M without);
// the market-data shape (2M trades × 6M quotes, text symbols, timestamps,
// the prevailing quote) with ASOFSQL_BENCH_MARKET=1.
func BenchmarkParallelASOF(b *testing.B) {
	big := os.Getenv("ASOFSQL_BENCH_S2") == "1"
	market := os.Getenv("ASOFSQL_BENCH_MARKET") == "1"
	s4rows := 1 << 20
	if big {
		s4rows = 5 << 20
	}
	type shape struct {
		name string
		rows int
		text bool
		q    string
	}
	const backward = `SELECT l.t, l.k, l.lp, r.t, r.rp FROM l ASOF LEFT JOIN r ON l.k = r.k AND l.t >= r.t`
	shapes := []shape{
		{"S1_1Mx1M_backward", 1 << 20, false, backward},
		{fmt.Sprintf("S4_%dMx%dM_text_keys", s4rows>>20, s4rows>>20), s4rows, true, backward},
		{"S5_1Mx1M_nearest", 1 << 20, false,
			`SELECT l.t, l.k, l.lp, r.t, r.rp FROM l ASOF LEFT JOIN r ON t BETWEEN -500 AND 500 USING (k)`},
	}
	if big {
		shapes = append(shapes, shape{"S2_10Mx10M_backward", 10 << 20, false, backward})
	}
	if market {
		shapes = append(shapes, shape{"Market_2Mx6M_prevailing_quote", 2_000_000, true,
			`SELECT t.ts, t.sym, t.price, q.ts, q.bid, q.ask FROM trades t ASOF LEFT JOIN quotes q ON t.sym = q.sym AND t.ts >= q.ts`})
	}
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			ctx := context.Background()
			db, err := asofsql.Open(":memory:", asofsql.WithAllocator(memory.NewGoAllocator()))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			s := db.Session()
			defer s.Close()
			if strings.HasPrefix(sh.name, "Market") {
				if _, err := s.Exec(ctx, `CREATE TABLE trades (ts TIMESTAMP, sym TEXT, price DOUBLE PRECISION, size DOUBLE PRECISION) ORDER BY (ts);
					CREATE TABLE quotes (ts TIMESTAMP, sym TEXT, bid DOUBLE PRECISION, ask DOUBLE PRECISION) ORDER BY (ts)`); err != nil {
					b.Fatal(err)
				}
				for i, tbl := range []string{"trades", "quotes"} {
					rows, step := sh.rows, int64(6000)
					if tbl == "quotes" {
						rows, step = 3*sh.rows, 2000
					}
					if _, err := s.CopyFrom(ctx, "COPY "+tbl+" FROM STDIN WITH (FORMAT csv)", genMarket(rows, step, uint64(i+1))); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				kt := "BIGINT"
				if sh.text {
					kt = "TEXT"
				}
				if _, err := s.Exec(ctx, fmt.Sprintf(`CREATE TABLE l (t BIGINT, k %[1]s, lp DOUBLE PRECISION) ORDER BY (t);
					CREATE TABLE r (t BIGINT, k %[1]s, rp DOUBLE PRECISION) ORDER BY (t)`, kt)); err != nil {
					b.Fatal(err)
				}
				card := 1000
				if sh.text {
					card = 5000
				}
				for i, tbl := range []string{"l", "r"} {
					data := genCSV(sh.rows, card, uint64(i+1))
					if sh.text {
						data = genCSVText(sh.rows, card, uint64(i+1))
					}
					if _, err := s.CopyFrom(ctx, "COPY "+tbl+" FROM STDIN WITH (FORMAT csv)", data); err != nil {
						b.Fatal(err)
					}
				}
			}
			benchDegrees(b, ctx, s, sh.q, int64(sh.rows), int64(sh.rows), "leftrow")
		})
	}
}

// benchDegrees runs q through s at max_parallel_workers_per_gather 1 and 2,
// alternating which goes first in each iteration (so neither always meets
// a warmer cache or a busier neighbour), checks that it returns out rows,
// and reports wall and CPU (user + system, whole process) ns per `per`
// input rows at each degree ("w1-ns/"+unit, ...) and the wall ratio
// (speedup = w1/w2).
func benchDegrees(b *testing.B, ctx context.Context, s *asofsql.Session, q string, out, per int64, unit string) {
	b.Helper()
	var c1, c2 time.Duration
	run := func(workers int) time.Duration {
		cpu0 := cpuTime() // window_bench_test.go: ns of user + system time
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
		if n != out {
			b.Fatalf("%d rows at %d workers, want %d", n, workers, out)
		}
		return time.Since(start)
	}
	b.ResetTimer()
	var w1, w2 time.Duration
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			w1 += run(1)
			w2 += run(2)
		} else {
			w2 += run(2)
			w1 += run(1)
		}
	}
	b.StopTimer()
	n := float64(b.N) * float64(per)
	b.ReportMetric(float64(w1.Nanoseconds())/n, "w1-ns/"+unit)
	b.ReportMetric(float64(w2.Nanoseconds())/n, "w2-ns/"+unit)
	b.ReportMetric(float64(w1)/float64(w2), "speedup")
	b.ReportMetric(float64(c1.Nanoseconds())/n, "w1-cpu-ns/"+unit)
	b.ReportMetric(float64(c2.Nanoseconds())/n, "w2-cpu-ns/"+unit)
}
