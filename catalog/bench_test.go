package catalog

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/asofsql/asofsql/sqltypes"
)

// Bulk-load benchmarks. CATALOG_BENCH_ROWS sets the row count (default
// 200,000; the figures in docs/storage.md use 10,000,000):
//
//	CATALOG_BENCH_ROWS=10000000 go test -run '^$' -bench Load -benchtime 1x ./catalog/
//
// Each reports rows/s and the peak bytes of Arrow memory the catalog held
// (peak-arrow-MB); peak-rss-MB is the process high-water mark (VmHWM), which
// includes the Go heap's slack and the benchmark's own setup.

func benchRows() int {
	if s := os.Getenv("CATALOG_BENCH_ROWS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	return 200_000
}

// peakAllocator counts live and peak bytes of an underlying allocator.
type peakAllocator struct {
	memory.Allocator
	cur, peak atomic.Int64
}

func (p *peakAllocator) add(n int) {
	c := p.cur.Add(int64(n))
	for {
		pk := p.peak.Load()
		if c <= pk || p.peak.CompareAndSwap(pk, c) {
			return
		}
	}
}

func (p *peakAllocator) Allocate(n int) []byte { p.add(n); return p.Allocator.Allocate(n) }
func (p *peakAllocator) Free(b []byte)         { p.add(-len(b)); p.Allocator.Free(b) }
func (p *peakAllocator) Reallocate(n int, b []byte) []byte {
	p.add(n - len(b))
	return p.Allocator.Reallocate(n, b)
}

var benchDef = TableDef{
	Name: "quotes",
	Columns: []Column{
		{Name: "ts", Type: sqltypes.TimestampType, NotNull: true},
		{Name: "sym", Type: sqltypes.TextType},
		{Name: "bid", Type: sqltypes.Float8Type},
	},
	OrderBy: []string{"ts"},
}

// benchTS is mostly ascending with 1% of rows arriving up to a second late,
// the shape of a real quote feed.
func benchTS(i int) int64 {
	base := int64(1_700_000_000_000_000) + int64(i)*1000
	if i%100 == 7 {
		base -= 1_000_000
	}
	return base
}

func writeBenchCSV(b *testing.B, path string, n int) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := 0; i < n; i++ {
		ts := time.UnixMicro(benchTS(i)).UTC().Format("2006-01-02 15:04:05.999999")
		fmt.Fprintf(w, "%s,SYM%d,%d.%02d\n", ts, i%500, i%1000, i%100)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
}

func writeBenchParquet(b *testing.B, path string, n int) {
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
		{Name: "sym", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "bid", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithMaxRowGroupLength(1<<20))
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		b.Fatal(err)
	}
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	for i := 0; i < n; {
		for j := 0; j < 65536 && i < n; j, i = j+1, i+1 {
			rb.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(benchTS(i)))
			rb.Field(1).(*array.StringBuilder).Append("SYM" + strconv.Itoa(i%500))
			rb.Field(2).(*array.Float64Builder).Append(float64(i%1000) + float64(i%100)/100)
		}
		rec := rb.NewRecordBatch()
		err := w.WriteBuffered(rec)
		rec.Release()
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

func peakRSSMB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	var kb float64
	for _, line := range splitLines(string(data)) {
		if _, err := fmt.Sscanf(line, "VmHWM: %f kB", &kb); err == nil {
			return kb / 1024
		}
	}
	return 0
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

func benchLoad(b *testing.B, file string, write func(*testing.B, string, int)) {
	n := benchRows()
	dir := b.TempDir()
	path := filepath.Join(dir, file)
	write(b, path, n)
	ctx := context.Background()
	alloc := &peakAllocator{Allocator: memory.NewGoAllocator()}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		c, err := Open(ctx, filepath.Join(dir, fmt.Sprintf("data%d", i)), Options{Allocator: alloc})
		if err != nil {
			b.Fatal(err)
		}
		tx := c.Begin()
		if err := tx.CreateTable(ctx, benchDef, false); err != nil {
			b.Fatal(err)
		}
		got, err := tx.CopyFromFile(ctx, "quotes", path, CopyOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			b.Fatal(err)
		}
		if got != int64(n) {
			b.Fatalf("loaded %d rows, want %d", got, n)
		}
		c.Close()
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(n)*float64(b.N)/elapsed.Seconds(), "rows/s")
	b.ReportMetric(float64(alloc.peak.Load())/(1<<20), "peak-arrow-MB")
	b.ReportMetric(peakRSSMB(), "peak-rss-MB")
}

func BenchmarkLoadCSV(b *testing.B)     { benchLoad(b, "quotes.csv", writeBenchCSV) }
func BenchmarkLoadParquet(b *testing.B) { benchLoad(b, "quotes.parquet", writeBenchParquet) }

// BenchmarkScanMerge measures an ordered scan that merges overlapping
// segments (the out-of-order case compaction has not yet cleaned up).
func BenchmarkScanMerge(b *testing.B) {
	n := benchRows()
	ctx := context.Background()
	c, err := Open(ctx, Memory, Options{AutoCompact: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	createTable(b, c, benchDef)
	info, _ := c.Table("quotes")
	// Eight statements whose keys interleave: statement k holds 8j+k, so
	// the merge alternates segments on every row.
	for k := 0; k < 8; k++ {
		rb := array.NewRecordBuilder(c.mem, info.Schema)
		for j := 0; j < n/8; j++ {
			rb.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(8*j + k))
			rb.Field(1).(*array.StringBuilder).Append("s")
			rb.Field(2).(*array.Float64Builder).Append(1)
		}
		rec := rb.NewRecordBatch()
		rb.Release()
		r := reader(b, info.Schema, rec)
		tx := c.Begin()
		if _, err := tx.Insert(ctx, "quotes", r); err != nil {
			b.Fatal(err)
		}
		r.Release()
		if err := tx.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
	n = n / 8 * 8
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		snap, _ := c.Snapshot()
		sr, err := snap.Scan(ctx, "quotes", ScanOptions{})
		if err != nil {
			b.Fatal(err)
		}
		rows := 0
		for sr.Next() {
			rows += int(sr.RecordBatch().NumRows())
		}
		sr.Release()
		snap.Release()
		if rows != n {
			b.Fatalf("scanned %d rows", rows)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkCommitRow measures the catalog's part of a single-row
// autocommit INSERT (no SQL): Begin, Insert of a one-row batch, Commit with
// synchronous_commit off, into a table already holding b.N rows in memory.
func BenchmarkCommitRow(b *testing.B) {
	ctx := context.Background()
	c, err := Open(ctx, b.TempDir(), Options{AutoCompact: -1, CheckpointRows: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	createTable(b, c, kvDef)
	info, _ := c.Table("kv")
	rec := batch(b, c.mem, info.Schema, []any{1, "some text value"})
	defer rec.Release()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rdr, _ := array.NewRecordReader(info.Schema, []arrow.RecordBatch{rec})
		tx := c.Begin()
		tx.SetSynchronousCommit(false)
		if _, err := tx.Insert(ctx, "kv", rdr); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			b.Fatal(err)
		}
		rdr.Release()
	}
}
