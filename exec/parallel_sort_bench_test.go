package exec_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/sqltypes"
)

var opsSchema = arrow.NewSchema([]arrow.Field{
	sqltypes.Int8Type.Field("t", false),
	sqltypes.Int8Type.Field("k", false),
	sqltypes.Float8Type.Field("p", false),
}, nil)

// opsData is the root package's BenchmarkParallelOps table in memory: n
// rows in 4096-row batches, t increasing, k one of 1000 keys, p random.
func opsData(n int) []arrow.RecordBatch {
	const batch = 4096
	rng := rand.New(rand.NewPCG(1, 1))
	var out []arrow.RecordBatch
	var t int64
	for start := 0; start < n; start += batch {
		m := min(batch, n-start)
		bld := array.NewRecordBuilder(memory.DefaultAllocator, opsSchema)
		tb := bld.Field(0).(*array.Int64Builder)
		kb := bld.Field(1).(*array.Int64Builder)
		pb := bld.Field(2).(*array.Float64Builder)
		for i := 0; i < m; i++ {
			t += 1 + int64(rng.IntN(2))
			tb.Append(t)
			kb.Append(int64(rng.IntN(1000)))
			pb.Append(rng.Float64())
		}
		out = append(out, bld.NewRecordBatch())
		bld.Release()
	}
	return out
}

func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkSortDegrees is ORDER BY k, p over opsData (ASOFSQL_BENCH_ROWS
// rows, default 1M) by the serial Sort and by ParallelSort at 1, 2 and 4
// workers, without the SQL layer: wall and CPU (user + system, whole
// process) ns per row.
func BenchmarkSortDegrees(b *testing.B) {
	n := benchRows(b)
	data := opsData(n)
	defer releaseAll(data)
	keys := []exec.SortKey{{Col: 1}, {Col: 2}}
	for _, workers := range []int{0, 1, 2, 4} {
		name := "serial"
		if workers > 0 {
			name = "workers=" + strconv.Itoa(workers)
		}
		b.Run(name, func(b *testing.B) {
			mem := memory.DefaultAllocator
			cpu0 := processCPU()
			for it := 0; it < b.N; it++ {
				in := make([]arrow.RecordBatch, len(data))
				for i, d := range data {
					d.Retain()
					in[i] = d
				}
				src := exec.NewBatches(opsSchema, in)
				var op exec.Operator
				var err error
				if workers == 0 {
					op, err = exec.NewSort(src, mem, keys, exec.SortOptions{})
				} else {
					m := exec.NewMorsels(src)
					var views []*exec.MorselView
					var inputs []exec.Operator
					for w := 0; w < workers; w++ {
						v := m.View()
						views, inputs = append(views, v), append(inputs, v)
					}
					op, err = exec.NewParallelSort(m, views, inputs, mem, keys, exec.SortOptions{})
				}
				if err != nil {
					b.Fatal(err)
				}
				var rows int64
				if err := exec.Drain(context.Background(), op, func(r arrow.RecordBatch) error {
					rows += r.NumRows()
					return nil
				}); err != nil {
					b.Fatal(err)
				}
				if rows != int64(n) {
					b.Fatalf("%d rows, want %d", rows, n)
				}
			}
			rows := float64(n) * float64(b.N)
			b.ReportMetric(float64(processCPU()-cpu0)/rows, "cpu-ns/row")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/rows, "ns/row")
		})
	}
}
