package exec_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// parallelAgg wires a ParallelHashAggregate over in[0] cut into morsels,
// each worker's pipeline built by pipe over its view (nil: the view).
func parallelAgg(groupBy []expr.Expr, names []string, aggs []exec.AggSpec, opts exec.AggOptions,
	pipe func(mem memory.Allocator, in exec.Operator) (exec.Operator, error)) func(memory.Allocator, []exec.Operator, int) (exec.Operator, error) {
	return func(mem memory.Allocator, in []exec.Operator, workers int) (exec.Operator, error) {
		m, views, inputs, err := morselPipes(mem, in[0], workers, pipe)
		if err != nil {
			return nil, err
		}
		return exec.NewParallelHashAggregate(m, views, inputs, mem, groupBy, names, aggs, eval.Env{}, opts)
	}
}

// combinableTradeAggs are tradeAggs but count(DISTINCT px), first and
// last, which do not combine; wantTradeCols picks their columns of
// tradeAggRows.
var combinableTradeAggs = append(append([]exec.AggSpec(nil), tradeAggs[:2]...), tradeAggs[3:17]...)

func wantTradeCols(syms ...string) []string {
	var out []string
	for _, s := range syms {
		f := strings.Split(tradeAggRows[s], "|")
		out = append(out, strings.Join(append(append([]string(nil), f[:3]...), f[4:18]...), "|"))
	}
	return out
}

func TestParallelHashAggregate(t *testing.T) {
	// Groups in order of first appearance, as the serial HashAggregate.
	exectest.Run(t, exectest.Case{
		Inputs:   trades(t),
		Parallel: parallelAgg([]expr.Expr{symCol}, []string{"sym"}, combinableTradeAggs, exec.AggOptions{BatchSize: 3}, nil),
		Check:    wantPG(wantTradeCols("A", "B", "", "C")...),
	})
}

func TestParallelGlobalAggregate(t *testing.T) {
	aggs := []exec.AggSpec{agg("count", false), agg("sum", false, qtyCol), agg("avg", false, qtyCol), agg("stddev", false, qtyCol), agg("max", false, symCol)}
	for pred, want := range map[expr.Expr]string{
		&expr.IsNull{X: idCol, Not: true}:                                               "12|78|6.5|3.6055512754639893|C",
		bin(expr.Gt, bt, idCol, &expr.Literal{Value: int64(100), T: sqltypes.Int4Type}): "0||||",
	} {
		exectest.Run(t, exectest.Case{
			Inputs: trades(t),
			Parallel: parallelAgg(nil, nil, aggs, exec.AggOptions{}, func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
				return exec.NewFilter(in, mem, pred, eval.Env{})
			}),
			Check: wantPG(want),
		})
	}
}

func TestParallelAggregateExpressionKeys(t *testing.T) {
	// select qty % 3, sum(px), min(sym), max(id) from tr where id <> 4 group by 1,
	// over a projection in every worker.
	proj := func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
		f, err := exec.NewFilter(in, mem, bin(expr.Ne, bt, idCol, &expr.Literal{Value: int64(4), T: sqltypes.Int4Type}), eval.Env{})
		if err != nil {
			return nil, err
		}
		p, err := exec.NewProject(f, mem, []expr.Expr{bin(expr.Mod, sqltypes.Int8Type, qtyCol, i8(3)), pxCol, symCol, idCol},
			[]string{"m", "px", "sym", "id"}, eval.Env{})
		if err != nil {
			f.Close()
		}
		return p, err
	}
	m := &expr.Column{Index: 0, Name: "m", T: sqltypes.Int8Type}
	px := &expr.Column{Index: 1, Name: "px", T: sqltypes.Float8Type}
	sym := &expr.Column{Index: 2, Name: "sym", T: sqltypes.TextType}
	id := &expr.Column{Index: 3, Name: "id", T: sqltypes.Int4Type}
	exectest.Run(t, exectest.Case{
		Inputs: trades(t),
		Parallel: parallelAgg([]expr.Expr{m, sym}, []string{"m", "sym"},
			[]exec.AggSpec{agg("sum", false, px), agg("max", false, id), agg("count", false)}, exec.AggOptions{}, proj),
		Check: wantPG("1|A|22.5|6|2", "2|B|20|1|1", "0|A||2|1", "1||5|3|1", "0|B|20|5|1", "2|C|7|7|1", "0||1|8|1",
			"1|B||9|1", "2|A|10|10|1", "0|C|30|11|1"),
	})
}

func TestParallelAggregateMemoryLimit(t *testing.T) {
	exectest.Run(t, exectest.Case{
		Inputs:   trades(t),
		Parallel: parallelAgg([]expr.Expr{idCol}, []string{"id"}, []exec.AggSpec{agg("count", false)}, exec.AggOptions{MemoryLimit: 300}, nil),
		Workers:  []int{1},
		Check:    wantCode("53200", "hash aggregate exceeded the memory limit of 300 bytes"),
	})
}

func TestParallelAggregateRejectsUncombinable(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src := exec.NewBatches(arrow.NewSchema([]arrow.Field{sqltypes.Int4Type.Field("id", true)}, nil), nil)
	m := exec.NewMorsels(src)
	v := m.View()
	_, err := exec.NewParallelHashAggregate(m, []*exec.MorselView{v}, []exec.Operator{v}, mem, nil, nil,
		[]exec.AggSpec{agg("count", true, idCol)}, eval.Env{}, exec.AggOptions{})
	require.ErrorContains(t, err, "does not combine")
	require.NoError(t, context.Background().Err())
}

func TestParallelAggregateErrorStopsWorkers(t *testing.T) {
	// select sum(10 / (qty - 7)) from tr: division by zero at the row of
	// qty 7, whichever worker takes it; the checked allocator ends at zero
	// and no worker is left running.
	before := runtime.NumGoroutine()
	div := bin(expr.Div, sqltypes.Int8Type, i8(10), bin(expr.Sub, sqltypes.Int8Type, qtyCol, i8(7)))
	exectest.Run(t, exectest.Case{
		Inputs:   trades(t),
		Parallel: parallelAgg(nil, nil, []exec.AggSpec{agg("sum", false, div)}, exec.AggOptions{}, nil),
		Check:    wantCode("22012", "division by zero"),
	})
	requireGoroutines(t, before)
}

// cancelAfter cancels its context when its child has yielded n batches.
type cancelAfter struct {
	exec.Operator
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if c.n--; c.n < 0 {
		c.cancel()
	}
	return c.Operator.Next(ctx)
}

func TestParallelAggregateCancel(t *testing.T) {
	before := runtime.NumGoroutine()
	for _, workers := range exectest.Workers {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		ctx, cancel := context.WithCancel(context.Background())
		rec := trades(t)(mem)[0]
		src := exec.NewBatches(rec.Schema(), exectest.Split(rec, exectest.Layout{Size: 1}, 0))
		rec.Release()
		op, err := parallelAgg([]expr.Expr{symCol}, []string{"sym"}, []exec.AggSpec{agg("count", false)}, exec.AggOptions{}, nil)(
			mem, []exec.Operator{&cancelAfter{Operator: src, n: 5, cancel: cancel}}, workers)
		require.NoError(t, err)
		err = exec.Drain(ctx, op, func(arrow.RecordBatch) error { return nil })
		require.ErrorIs(t, err, context.Canceled)
		cancel()
		mem.AssertSize(t, 0)
	}
	requireGoroutines(t, before)
}

// requireGoroutines waits briefly for goroutines to wind down to n.
func requireGoroutines(t *testing.T, n int) {
	t.Helper()
	for i := 0; i < 100 && runtime.NumGoroutine() > n; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), n, "goroutines left running")
}

// morselPipes cuts in into morsels and builds each of workers pipelines
// over its own view with pipe (nil: the view itself), as the planner's
// parallel operators run; on an error it closes the pipelines built.
func morselPipes(mem memory.Allocator, in exec.Operator, workers int,
	pipe func(mem memory.Allocator, in exec.Operator) (exec.Operator, error)) (*exec.Morsels, []*exec.MorselView, []exec.Operator, error) {
	m := exec.NewMorsels(in)
	var views []*exec.MorselView
	var inputs []exec.Operator
	for w := 0; w < workers; w++ {
		v := m.View()
		var op exec.Operator = v
		if pipe != nil {
			var err error
			if op, err = pipe(mem, v); err != nil {
				for _, in := range inputs {
					in.Close()
				}
				return nil, nil, nil, err
			}
		}
		views, inputs = append(views, v), append(inputs, op)
	}
	return m, views, inputs, nil
}
