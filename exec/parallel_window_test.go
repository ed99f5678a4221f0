package exec_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// symWindows is the serial chain of TestWindow's window over in, sorted
// by (sym, px) only: ties in px keep the input (id) order. With stacked,
// a second window over sym by qty DESC goes on top.
func symWindows(stacked bool, batch int) func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
	return func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
		s, err := exec.NewSort(in, mem, []exec.SortKey{{Col: 1, Nulls: exec.NullsLast}, {Col: 2}}, exec.SortOptions{BatchSize: batch})
		if err != nil {
			return nil, err
		}
		w, err := exec.NewWindow(s, mem, []int{1}, []exec.SortKey{{Col: 2}}, []exec.WindowFunc{
			{Func: "row_number", Name: "rn"},
			{Func: "rank", Name: "rk"},
			{Func: "dense_rank", Name: "drk"},
			{Func: "lag", Arg: pxCol, Name: "prev"},
			{Func: "lead", Arg: qtyCol, Offset: 2, Default: i8(-1), Name: "next2"},
			{Func: "lag", Arg: idCol, Zero: true, Name: "self"},
		}, eval.Env{}, exec.WindowOptions{BatchSize: batch})
		if err != nil {
			s.Close()
			return nil, err
		}
		if !stacked {
			return w, nil
		}
		s2, err := exec.NewSort(w, mem, []exec.SortKey{{Col: 1, Nulls: exec.NullsLast}, {Col: 3, Desc: true}}, exec.SortOptions{BatchSize: batch})
		if err != nil {
			w.Close()
			return nil, err
		}
		w2, err := exec.NewWindow(s2, mem, []int{1}, []exec.SortKey{{Col: 3, Desc: true}}, []exec.WindowFunc{
			{Func: "sum", Arg: pxCol, Name: "sum", Frame: exec.WindowFrame{Unit: exec.FrameRows,
				Start: exec.FrameBound{Kind: exec.OffsetPreceding, N: 1}, End: exec.FrameBound{Kind: exec.CurrentRow}}},
		}, eval.Env{}, exec.WindowOptions{BatchSize: batch})
		if err != nil {
			s2.Close()
		}
		return w2, err
	}
}

// parallelWindow wires a ParallelWindow over in[0] cut into morsels, split
// by sym, each worker's pipeline built by pipe over its view (nil: the
// view) and its chain by chain; project picks the columns checked.
func parallelWindow(chain func(memory.Allocator, exec.Operator) (exec.Operator, error), opts exec.WindowOptions,
	pipe func(mem memory.Allocator, in exec.Operator) (exec.Operator, error), project []int) func(memory.Allocator, []exec.Operator, int) (exec.Operator, error) {
	return func(mem memory.Allocator, in []exec.Operator, workers int) (exec.Operator, error) {
		m, views, inputs, err := morselPipes(mem, in[0], workers, pipe)
		if err != nil {
			return nil, err
		}
		p, err := exec.NewParallelWindow(m, views, inputs, mem, []int{1}, []exec.SortKey{{Col: 1, Nulls: exec.NullsLast}},
			func(in exec.Operator) (exec.Operator, error) { return chain(mem, in) }, opts)
		if err != nil || project == nil {
			return p, err
		}
		var cols []expr.Expr
		var names []string
		for _, c := range project {
			f := p.Schema().Field(c)
			t, err := sqltypes.FromArrow(f.Type)
			if err != nil {
				p.Close()
				return nil, err
			}
			cols, names = append(cols, &expr.Column{Index: c, Name: f.Name, T: t}), append(names, f.Name)
		}
		pr, err := exec.NewProject(p, mem, cols, names, eval.Env{})
		if err != nil {
			p.Close()
		}
		return pr, err
	}
}

// TestParallelWindowMatchesSerial: TestWindow's rows (PostgreSQL 15's) in
// the serial order at 1, 2, 3 and 8 workers, under every batch layout.
func TestParallelWindowMatchesSerial(t *testing.T) {
	exectest.Run(t, exectest.Case{
		Inputs:   trades(t),
		Parallel: parallelWindow(symWindows(false, 0), exec.WindowOptions{BatchSize: 16}, nil, []int{0, 4, 5, 6, 7, 8, 9}),
		Check: wantPG("0|1|1|1||7|0", "10|2|1|1|10|3|10", "6|3|3|2|10|-1|6", "2|4|4|3|12.5|-1|2",
			"1|1|1|1||10|1", "5|2|1|1|20|-1|5", "9|3|3|2|20|-1|9",
			"7|1|1|1||12|7", "4|2|2|2|7|-1|4", "11|3|2|2|30|-1|11",
			"8|1|1|1||-1|8", "3|2|2|2|1|-1|3"),
	})
}

// TestParallelWindowStack: two windows over sym in one split, after a
// filter in the workers' pipelines; the serial chain's output, row for
// row.
func TestParallelWindowStack(t *testing.T) {
	pipe := func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
		return exec.NewFilter(in, mem, bin(expr.Ne, bt, qtyCol, i8(6)), eval.Env{})
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	in := trades(t)(mem)[0]
	f, err := pipe(mem, exec.NewBatches(in.Schema(), []arrow.RecordBatch{in}))
	require.NoError(t, err)
	chain, err := symWindows(true, 0)(mem, f)
	require.NoError(t, err)
	var want []string
	require.NoError(t, exec.Drain(context.Background(), chain, func(b arrow.RecordBatch) error {
		want = append(want, pgRows(b)...)
		return nil
	}))
	mem.AssertSize(t, 0)
	require.Len(t, want, 11)
	exectest.Run(t, exectest.Case{
		Inputs:   trades(t),
		Parallel: parallelWindow(symWindows(true, 1<<30), exec.WindowOptions{}, pipe, nil),
		Check:    wantPG(want...),
	})
}

func TestParallelWindowErrors(t *testing.T) {
	before := runtime.NumGoroutine()
	div := bin(expr.Div, sqltypes.Int8Type, i8(10), bin(expr.Sub, sqltypes.Int8Type, qtyCol, i8(7)))
	exectest.Run(t, exectest.Case{
		Inputs: trades(t),
		Parallel: parallelWindow(symWindows(false, 0), exec.WindowOptions{}, func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
			return exec.NewProject(in, mem, []expr.Expr{idCol, symCol, pxCol, div}, []string{"id", "sym", "px", "qty"}, eval.Env{})
		}, nil),
		Check: wantCode("22012", "division by zero"),
	})
	exectest.Run(t, exectest.Case{
		Inputs:   trades(t),
		Parallel: parallelWindow(symWindows(false, 0), exec.WindowOptions{MemoryLimit: 100}, nil, nil),
		Workers:  []int{1},
		Check:    wantCode("53200", "window exceeded the memory limit of 100 bytes"),
	})
	requireGoroutines(t, before)
}

func TestParallelWindowCancel(t *testing.T) {
	before := runtime.NumGoroutine()
	for _, workers := range exectest.Workers {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		ctx, cancel := context.WithCancel(context.Background())
		rec := trades(t)(mem)[0]
		src := exec.NewBatches(rec.Schema(), exectest.Split(rec, exectest.Layout{Size: 1}, 0))
		rec.Release()
		op, err := parallelWindow(symWindows(false, 0), exec.WindowOptions{}, nil, nil)(
			mem, []exec.Operator{&cancelAfter{Operator: src, n: 5, cancel: cancel}}, workers)
		require.NoError(t, err)
		err = exec.Drain(ctx, op, func(arrow.RecordBatch) error { return nil })
		require.ErrorIs(t, err, context.Canceled)
		cancel()
		mem.AssertSize(t, 0)
	}
	requireGoroutines(t, before)
}
