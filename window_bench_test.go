package asofsql_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql"
)

// cpuTime is the process's user+system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkWindowMovingAverage runs a 5-minute moving average through
// SQL, RANGE BETWEEN INTERVAL '5 minutes' PRECEDING AND CURRENT ROW over
// one tick a second (about 300 rows a frame), on 1M rows, and on 10M
// with ASOFSQL_BENCH_WINDOW_10M=1. It reports ns/row; a linear-time
// sliding aggregate keeps ns/row flat from 1M to 10M.
func BenchmarkWindowMovingAverage(b *testing.B) {
	sizes := []int{1_000_000}
	if os.Getenv("ASOFSQL_BENCH_WINDOW_10M") == "1" {
		sizes = append(sizes, 10_000_000)
	}
	for _, rows := range sizes {
		b.Run(strconv.Itoa(rows/1_000_000)+"M", func(b *testing.B) {
			ctx := context.Background()
			db, err := asofsql.Open(":memory:", asofsql.WithAllocator(memory.NewGoAllocator()))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			s := db.Session()
			if _, err := s.Exec(ctx, `CREATE TABLE ticks (ts TIMESTAMP, px DOUBLE PRECISION)`); err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			var buf bytes.Buffer
			buf.Grow(rows * 40)
			t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
			line := make([]byte, 0, 64)
			for i := 0; i < rows; i++ {
				line = t0.Add(time.Duration(i)*time.Second).AppendFormat(line[:0], "2006-01-02 15:04:05")
				line = append(line, ',')
				line = strconv.AppendFloat(line, 100+rng.Float64(), 'g', -1, 64)
				line = append(line, '\n')
				buf.Write(line)
			}
			if _, err := s.CopyFrom(ctx, "COPY ticks FROM STDIN WITH (FORMAT csv)", &buf); err != nil {
				b.Fatal(err)
			}
			const q = `SELECT count(*), max(ma) FROM (SELECT avg(px) OVER (ORDER BY ts RANGE BETWEEN INTERVAL '5 minutes' PRECEDING AND CURRENT ROW) AS ma FROM ticks) s`
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := s.Query(ctx, q)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for r.Next() {
					n++
				}
				if err := r.Err(); err != nil {
					b.Fatal(err)
				}
				r.Close()
				if n != 1 {
					b.Fatalf("%d result rows", n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
			// CPU time is steadier than wall time on a shared machine.
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/float64(rows), "cpu-ns/row")
		})
	}
}
