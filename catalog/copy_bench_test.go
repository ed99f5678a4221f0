package catalog

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// binaryTicks renders n rows of bench -writes' ticks table (ts, sym, px)
// as a binary COPY stream, as pgx's CopyFrom sends it; ts ascends, or
// each run of disorder rows descends when disorder > 0.
func binaryTicks(n, disorder int) []byte {
	b := make([]byte, 0, 19+n*37+2)
	b = append(b, "PGCOPY\n\xff\r\n\x00"...)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
	for i := range n {
		us := int64(i)
		if disorder > 0 {
			us = int64(i/disorder*disorder + disorder - 1 - i%disorder)
		}
		// 2024-01-02 09:30 in microseconds since 2000-01-01.
		ts := int64(757503000)*1e6 + us
		sym := "S" + strconv.Itoa(i%100)
		b = binary.BigEndian.AppendUint16(b, 3)
		b = binary.BigEndian.AppendUint32(b, 8)
		b = binary.BigEndian.AppendUint64(b, uint64(ts))
		b = binary.BigEndian.AppendUint32(b, uint32(len(sym)))
		b = append(b, sym...)
		b = binary.BigEndian.AppendUint32(b, 8)
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(float64(i%1000)/8))
	}
	return append(b, 0xff, 0xff)
}

// BenchmarkCopyBinary loads a binary COPY stream from memory into an
// ordered table of a data directory (the server's side of bench -writes'
// COPY row without the wire): ns/op and cpu-ns/op (user+system of the
// process, the garbage collector and the segment writer included) are per
// row, B/op the bytes the Go heap allocated per row. CATALOG_BENCH_ROWS
// sets the rows of one COPY (default 200,000).
func BenchmarkCopyBinary(b *testing.B) {
	for _, c := range []struct {
		name     string
		disorder int
	}{{"ordered", 0}, {"disordered", 1000}} {
		n := benchRows()
		var data []byte
		b.Run(c.name, func(b *testing.B) {
			if data == nil {
				data = binaryTicks(n, c.disorder)
			}
			ctx := context.Background()
			dir := b.TempDir()
			alloc := &peakAllocator{Allocator: memory.NewGoAllocator()}
			var segs int
			b.SetBytes(int64(len(data) / n))
			b.ReportAllocs()
			cpu0 := benchCPU()
			b.ResetTimer()
			for i := 0; i < b.N; i += n {
				cat, err := Open(ctx, filepath.Join(dir, fmt.Sprintf("data%d", i)), Options{Allocator: alloc, AutoCompact: -1})
				if err != nil {
					b.Fatal(err)
				}
				tx := cat.Begin()
				def := benchDef
				def.Name = "ticks"
				if err := tx.CreateTable(ctx, def, false); err != nil {
					b.Fatal(err)
				}
				got, err := tx.CopyFrom(ctx, "ticks", bytes.NewReader(data), CopyOptions{Format: "binary"})
				if err != nil {
					b.Fatal(err)
				}
				if err := tx.Commit(ctx); err != nil {
					b.Fatal(err)
				}
				if got != int64(n) {
					b.Fatalf("loaded %d rows, want %d", got, n)
				}
				cat.mu.Lock()
				segs = len(cat.cur.tables["ticks"].segs)
				cat.mu.Unlock()
				cat.Close()
			}
			b.StopTimer()
			b.ReportMetric(float64(benchCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(segs), "segments")
			b.ReportMetric(float64(alloc.peak.Load())/(1<<20), "peak-arrow-MB")
			b.ReportMetric(peakRSSMB(), "peak-rss-MB")
		})
	}
}

func benchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
