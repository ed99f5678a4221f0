package asof

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func BenchmarkGatherFixed(b *testing.B) {
	mem := memory.NewGoAllocator()
	const n = 64 * 1024
	var srcs []arrow.Array
	for s := 0; s < 2; s++ {
		fb := array.NewFloat64Builder(mem)
		for i := 0; i < n; i++ {
			fb.Append(float64(i))
		}
		srcs = append(srcs, fb.NewArray())
	}
	rng := rand.New(rand.NewPCG(1, 2))
	refs := make([]ref, n)
	for i := range refs {
		row := i - rng.IntN(2000)
		slot := int32(1)
		if row < 0 {
			row += n
			slot = 0
		}
		refs[i] = ref{slot: slot, row: int32(row)}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a, _ := gather(context.Background(), mem, mem, f64, srcs, refs)
		a.Release()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
}

func BenchmarkGatherLoopOnly(b *testing.B) {
	const n = 64 * 1024
	src := make([]uint64, n)
	out := make([]uint64, n)
	rng := rand.New(rand.NewPCG(1, 2))
	rows := make([]int32, n)
	for i := range rows {
		rows[i] = int32(max(0, i-rng.IntN(2000)))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, r := range rows {
			out[j] = src[r]
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
}

func BenchmarkAlloc512K(b *testing.B) {
	mem := memory.NewGoAllocator()
	for i := 0; i < b.N; i++ {
		buf := memory.NewResizableBuffer(mem)
		buf.Resize(512 * 1024)
		buf.Release()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*64*1024), "ns/row")
}
