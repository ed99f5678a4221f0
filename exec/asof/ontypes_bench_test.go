package asof

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/operator"
)

// retype replaces the int64 t column of generated batches with the same
// values as zero-padded text (bytewise order is numeric order) or as a
// decimal(38,2) (128-bit kernel) or decimal(18,2) (number line), so that
// the kernels are compared on identical data.
func retype(mem memory.Allocator, in []arrow.RecordBatch, to string) []arrow.RecordBatch {
	var out []arrow.RecordBatch
	for _, rec := range in {
		ts := rec.Column(0).(*array.Int64)
		var col arrow.Array
		switch to {
		case "text":
			b := array.NewStringBuilder(mem)
			for _, v := range ts.Int64Values() {
				b.Append(fmt.Sprintf("%012d", v))
			}
			col = b.NewArray()
			b.Release()
		case "decimal", "decimal18":
			p := int32(38)
			if to == "decimal18" {
				p = 18
			}
			b := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: p, Scale: 2})
			for _, v := range ts.Int64Values() {
				b.Append(decimal128.FromI64(v).Mul(decimal128.FromI64(100)))
			}
			col = b.NewArray()
			b.Release()
		default:
			col = ts
			col.Retain()
		}
		fields := append([]arrow.Field(nil), rec.Schema().Fields()...)
		fields[0].Type = col.DataType()
		cols := append([]arrow.Array{col}, rec.Columns()[1:]...)
		out = append(out, array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows()))
		col.Release()
	}
	return out
}

// BenchmarkOnTypes is S1 (1M × 1M, backward, 1000 int keys) with the on
// column as int64 (number line), text and decimal(38,2) (comparison
// kernel) and decimal(18,2) (number line).
func BenchmarkOnTypes(b *testing.B) {
	mem := memory.NewGoAllocator()
	const rows = 1 << 20
	left0 := materialize(b, newGen(mem, rows, 1000, false, 1, "lp"))
	right0 := materialize(b, newGen(mem, rows, 1000, false, 2, "rp"))
	for _, to := range []string{"int64", "text", "decimal", "decimal18"} {
		b.Run(to, func(b *testing.B) {
			left, right := retype(mem, left0, to), retype(mem, right0, to)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sp := Right{Name: "r", Input: replay(right[0].Schema(), right), LeftOn: 0, On: 0,
					LeftKeys: []int{1}, Keys: []int{1}, Lo: Unbounded, Hi: IntBound(0), Kind: Left, Payload: []int{2}}
				j, err := New(replay(left[0].Schema(), left), []Right{sp}, Options{Allocator: mem})
				if err != nil {
					b.Fatal(err)
				}
				if err := operator.Drain(context.Background(), j, func(arrow.RecordBatch) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*rows), "ns/leftrow")
			for _, r := range append(left, right...) {
				r.Release()
			}
		})
	}
}
