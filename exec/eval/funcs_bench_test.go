package eval

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
)

// BenchmarkFunctions evaluates scalar function calls over a 64K-row batch
// of testCols (its four rows repeated): the cost of the kernels and of
// handing them their arguments.
func BenchmarkFunctions(b *testing.B) {
	cols := make([]colSpec, len(testCols))
	for i, c := range testCols {
		cols[i] = c
		cols[i].vals = nil
		for k := 0; k < 1<<14; k++ {
			cols[i].vals = append(cols[i].vals, c.vals...)
		}
	}
	mem := memory.NewGoAllocator()
	batch := mkBatch(b, mem, cols)
	defer batch.Release()
	tt, f8t, i4t, ts := sqltypes.TextType, sqltypes.Float8Type, sqltypes.Int4Type, sqltypes.TimestampType
	for _, c := range []struct {
		name string
		e    expr.Expr
	}{
		{"abs_float8", fn("abs", f8t, col("f8"))},
		{"round_float8", fn("round", f8t, col("f8"))},
		{"sqrt_abs", fn("sqrt", f8t, fn("abs", f8t, col("f8")))},
		{"power", fn("power", f8t, col("f8"), f8(2))},
		{"round_numeric", fn("round", num102, col("n"), i4(1))},
		{"lower", fn("lower", tt, col("s"))},
		{"length", fn("length", i4t, col("s"))},
		{"substr", fn("substr", tt, col("s"), i4(2), i4(3))},
		{"replace", fn("replace", tt, col("s"), txt("l"), txt("L"))},
		{"concat", fn("concat", tt, col("s"), txt("x"))},
		{"textcat", bin(expr.Concat, tt, col("s"), txt("x"))},
		{"coalesce", fn("coalesce", f8t, col("f8"), f8(0))},
		{"greatest", fn("greatest", f8t, col("f8"), f8(0))},
		{"date_trunc", fn("date_trunc", ts, txt("hour"), col("ts"))},
		{"date_part", fn("date_part", f8t, txt("hour"), col("ts"))},
		{"extract", fn("extract", sqltypes.NumericDisplay(0), txt("hour"), col("ts"))},
		{"time_bucket", fn("time_bucket", ts, litText(sqltypes.IntervalType, "15 minutes"), col("ts"))},
	} {
		b.Run(c.name, func(b *testing.B) {
			ev, err := Compile(c.e, batch.Schema(), Env{Mem: mem})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			for b.Loop() {
				out, err := ev.Eval(ctx, batch)
				if err != nil {
					b.Fatal(err)
				}
				out.Release()
			}
		})
	}
}
