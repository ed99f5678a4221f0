package exec_test

import (
	"context"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
)

// cpuNanos is the process's user+system CPU time: steadier than wall
// time on a shared machine.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkWindowSlidingWidth runs a moving avg, sum and max over 1M
// sorted rows with ROWS frames 10, 1,000 and 100,000 rows wide: sliding
// aggregates cost the same per row whatever the width (a recomputing
// implementation would grow 10,000-fold).
func BenchmarkWindowSlidingWidth(b *testing.B) {
	const n = 1 << 20
	mem := memory.NewGoAllocator()
	kb, vb := array.NewInt64Builder(mem), array.NewFloat64Builder(mem)
	for i := 0; i < n; i++ {
		kb.Append(int64(i))
		vb.Append(float64(i%1000) / 8)
	}
	schema := arrow.NewSchema([]arrow.Field{sqltypes.Int8Type.Field("k", false), sqltypes.Float8Type.Field("v", false)}, nil)
	cols := []arrow.Array{kb.NewArray(), vb.NewArray()}
	rec := array.NewRecordBatch(schema, cols, n)
	defer rec.Release()
	v := &expr.Column{Index: 1, Name: "v", T: sqltypes.Float8Type}
	for _, width := range []int64{10, 1000, 100000} {
		for _, fn := range []string{"avg", "sum", "max"} {
			b.Run(fmt.Sprintf("%s/%d", fn, width), func(b *testing.B) {
				frame := exec.WindowFrame{Unit: exec.FrameRows, Start: exec.FrameBound{Kind: exec.OffsetPreceding, N: width - 1}, End: exec.FrameBound{Kind: exec.CurrentRow}}
				cpu0 := cpuNanos()
				for i := 0; i < b.N; i++ {
					rec.Retain()
					w, err := exec.NewWindow(exec.NewBatches(schema, []arrow.RecordBatch{rec}), mem, nil, []exec.SortKey{{Col: 0}},
						[]exec.WindowFunc{{Func: fn, Arg: v, Frame: frame, Name: "m"}}, eval.Env{}, exec.WindowOptions{})
					if err != nil {
						b.Fatal(err)
					}
					ctx := context.Background()
					if err := w.Open(ctx); err != nil {
						b.Fatal(err)
					}
					for {
						out, err := w.Next(ctx)
						if err == io.EOF {
							break
						}
						if err != nil {
							b.Fatal(err)
						}
						out.Release()
					}
					w.Close()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/row")
				b.ReportMetric(float64(cpuNanos()-cpu0)/float64(b.N)/n, "cpu-ns/row")
			})
		}
	}
}
