package exec_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
)

// benchRows is the table size of the operator benchmarks: 1M rows by
// default, ASOFSQL_BENCH_ROWS=10000000 for the 10M-row runs.
func benchRows(b *testing.B) int {
	if s := os.Getenv("ASOFSQL_BENCH_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("ASOFSQL_BENCH_ROWS: %v", err)
		}
		return n
	}
	return 1 << 20
}

var benchSchema = arrow.NewSchema([]arrow.Field{
	sqltypes.TimestampType.Field("ts", false),
	sqltypes.TextType.Field("sym", false),
	sqltypes.Float8Type.Field("px", true),
	sqltypes.Int8Type.Field("qty", false),
}, nil)

// benchData builds n rows of trades in 64K-row batches: 100 symbols, 5%
// NULL prices.
func benchData(n int) []arrow.RecordBatch {
	const batch = 64 << 10
	rng := rand.New(rand.NewPCG(1, 2))
	syms := make([]string, 100)
	for i := range syms {
		syms[i] = fmt.Sprintf("SYM%03d", i)
	}
	var out []arrow.RecordBatch
	for start := 0; start < n; start += batch {
		m := min(batch, n-start)
		bld := array.NewRecordBuilder(memory.DefaultAllocator, benchSchema)
		ts := bld.Field(0).(*array.TimestampBuilder)
		sym := bld.Field(1).(*array.StringBuilder)
		px := bld.Field(2).(*array.Float64Builder)
		qty := bld.Field(3).(*array.Int64Builder)
		for i := 0; i < m; i++ {
			ts.Append(arrow.Timestamp(int64(start+i) * 1000))
			sym.Append(syms[rng.IntN(len(syms))])
			if rng.IntN(20) == 0 {
				px.AppendNull()
			} else {
				px.Append(100 * rng.Float64())
			}
			qty.Append(int64(1 + rng.IntN(1000)))
		}
		out = append(out, bld.NewRecordBatch())
		bld.Release()
	}
	return out
}

func runBench(b *testing.B, build func(src exec.Operator) (exec.Operator, error)) {
	n := benchRows(b)
	data := benchData(n)
	defer releaseAll(data)
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		in := make([]arrow.RecordBatch, len(data))
		for i, d := range data {
			d.Retain()
			in[i] = d
		}
		op, err := build(exec.NewBatches(benchSchema, in))
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
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func releaseAll(bs []arrow.RecordBatch) {
	for _, x := range bs {
		x.Release()
	}
}

var (
	bSym = &expr.Column{Index: 1, Name: "sym", T: sqltypes.TextType}
	bPx  = &expr.Column{Index: 2, Name: "px", T: sqltypes.Float8Type}
	bQty = &expr.Column{Index: 3, Name: "qty", T: sqltypes.Int8Type}
)

// BenchmarkFilterProject: SELECT sym, px * qty FROM t WHERE px > 50 AND qty < 900.
func BenchmarkFilterProject(b *testing.B) {
	mem := memory.DefaultAllocator
	runBench(b, func(src exec.Operator) (exec.Operator, error) {
		f, err := exec.NewFilter(src, mem, expr.AndAll(
			bin(expr.Gt, sqltypes.BoolType, bPx, f8(50)),
			bin(expr.Lt, sqltypes.BoolType, bQty, i8(900))), eval.Env{})
		if err != nil {
			return nil, err
		}
		return exec.NewProject(f, mem, []expr.Expr{bSym,
			bin(expr.Mul, sqltypes.Float8Type, bPx, &expr.Cast{X: bQty, T: sqltypes.Float8Type})},
			[]string{"sym", "notional"}, eval.Env{})
	})
}

// BenchmarkSort: SELECT * FROM t ORDER BY sym, px DESC.
func BenchmarkSort(b *testing.B) {
	runBench(b, func(src exec.Operator) (exec.Operator, error) {
		return exec.NewSort(src, memory.DefaultAllocator, []exec.SortKey{{Col: 1}, {Col: 2, Desc: true}}, exec.SortOptions{})
	})
}

// BenchmarkHashAggregate: SELECT sym, count(*), sum(qty), avg(px), max(px) FROM t GROUP BY sym.
func BenchmarkHashAggregate(b *testing.B) {
	runBench(b, func(src exec.Operator) (exec.Operator, error) {
		return exec.NewHashAggregate(src, memory.DefaultAllocator, []expr.Expr{bSym}, []string{"sym"}, []exec.AggSpec{
			agg("count", false), agg("sum", false, bQty), agg("avg", false, bPx), agg("max", false, bPx),
		}, eval.Env{}, exec.AggOptions{})
	})
}

// BenchmarkTopN: SELECT * FROM t ORDER BY px DESC LIMIT 10.
func BenchmarkTopN(b *testing.B) {
	runBench(b, func(src exec.Operator) (exec.Operator, error) {
		return exec.NewTopN(src, memory.DefaultAllocator, []exec.SortKey{{Col: 2, Desc: true}}, 10, exec.SortOptions{})
	})
}
