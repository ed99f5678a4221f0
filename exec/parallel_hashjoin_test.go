package exec_test

import (
	"context"
	"fmt"
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

// parallelJoin wires a ParallelHashJoin of in[0] cut into morsels (each
// worker's pipeline built by pipe over its view, nil: the view) with in[1]
// built once.
func parallelJoin(typ exec.JoinType, lk, rk []int, residual expr.Expr, opts exec.HashJoinOptions,
	pipe func(mem memory.Allocator, in exec.Operator) (exec.Operator, error)) func(memory.Allocator, []exec.Operator, int) (exec.Operator, error) {
	return func(mem memory.Allocator, in []exec.Operator, workers int) (exec.Operator, error) {
		m, views, inputs, err := morselPipes(mem, in[0], workers, pipe)
		if err != nil {
			in[1].Close()
			return nil, err
		}
		return exec.NewParallelHashJoin(m, views, inputs, in[1], mem, typ, lk, rk, residual, eval.Env{}, opts)
	}
}

// serialJoinRows runs the serial HashJoin over the whole tables.
func serialJoinRows(t *testing.T, typ exec.JoinType, residual expr.Expr,
	pipe func(mem memory.Allocator, in exec.Operator) (exec.Operator, error)) []string {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tabs := tradesAndSyms(t)(mem)
	var left exec.Operator = exec.NewBatches(tabs[0].Schema(), tabs[:1])
	if pipe != nil {
		var err error
		left, err = pipe(mem, left)
		require.NoError(t, err)
	}
	j, err := exec.NewHashJoin(left, exec.NewBatches(tabs[1].Schema(), tabs[1:]), mem, typ, []int{1}, []int{0}, residual, eval.Env{}, exec.HashJoinOptions{})
	require.NoError(t, err)
	got, err := collect(mem, j)
	require.NoError(t, err)
	defer got.Release()
	return pgRows(got)
}

func TestParallelHashJoin(t *testing.T) {
	// The serial join's rows in its order, for every kind, at every degree
	// and batch layout; with a residual, and a filter in every worker.
	residual := bin(expr.Gt, bt, pxCol, f8(10))
	filter := func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
		return exec.NewFilter(in, mem, bin(expr.Ne, bt, idCol, &expr.Literal{Value: int64(5), T: sqltypes.Int4Type}), eval.Env{})
	}
	for _, typ := range []exec.JoinType{exec.InnerJoin, exec.LeftJoin, exec.RightJoin, exec.FullJoin} {
		for _, res := range []expr.Expr{nil, residual} {
			for _, pipe := range []func(memory.Allocator, exec.Operator) (exec.Operator, error){nil, filter} {
				name := fmt.Sprintf("%s residual=%v filter=%v", typ, res != nil, pipe != nil)
				t.Run(name, func(t *testing.T) {
					want := serialJoinRows(t, typ, res, pipe)
					require.NotEmpty(t, want)
					exectest.Run(t, exectest.Case{
						Inputs:   tradesAndSyms(t),
						Parallel: parallelJoin(typ, []int{1}, []int{0}, res, exec.HashJoinOptions{}, pipe),
						Check:    wantPG(want...),
					})
				})
			}
		}
	}
	// A check that the comparison can fail: PostgreSQL's rows, in tr order.
	exectest.Run(t, exectest.Case{
		Inputs:   tradesAndSyms(t),
		Parallel: parallelJoin(exec.InnerJoin, []int{1}, []int{0}, nil, exec.HashJoinOptions{}, nil),
		Check:    wantPG(innerJoinRows...),
	})
}

func TestParallelHashJoinMemoryLimit(t *testing.T) {
	exectest.Run(t, exectest.Case{
		Inputs:   tradesAndSyms(t),
		Parallel: parallelJoin(exec.InnerJoin, []int{1}, []int{0}, nil, exec.HashJoinOptions{MemoryLimit: 50}, nil),
		Check:    wantCode("53200", "hash join exceeded the memory limit of 50 bytes"),
	})
}

func TestParallelHashJoinErrorStopsWorkers(t *testing.T) {
	// ... on 10 / (qty - 7) > 0: division by zero at the row of qty 7,
	// whichever worker joins it.
	before := runtime.NumGoroutine()
	div := bin(expr.Gt, bt, bin(expr.Div, sqltypes.Int8Type, i8(10), bin(expr.Sub, sqltypes.Int8Type, qtyCol, i8(7))), i8(0))
	exectest.Run(t, exectest.Case{
		Inputs: tradesAndSyms(t),
		Parallel: parallelJoin(exec.LeftJoin, []int{1}, []int{0}, nil, exec.HashJoinOptions{}, func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
			return exec.NewFilter(in, mem, div, eval.Env{})
		}),
		Check: wantCode("22012", "division by zero"),
	})
	requireGoroutines(t, before)
}

// bigJoinInputs are a probe table of n rows cut into batches of 7 and a
// build table matching every key twice but one (and a NULL key).
func bigJoinInputs(mem memory.Allocator, t *testing.T, n int) (exec.Operator, exec.Operator) {
	l := mkTable(t, mem, tcol{"k", sqltypes.Int4Type, ints(n, func(i int) string { return fmt.Sprint(i % 50) })})
	r := mkTable(t, mem, tcol{"k", sqltypes.Int4Type, ints(100, func(i int) string {
		if i == 99 {
			return "NULL"
		}
		return fmt.Sprint(i % 50)
	})})
	src := exec.NewBatches(l.Schema(), exectest.Split(l, exectest.Layout{Size: 7}, 0))
	l.Release()
	return src, exec.NewBatches(r.Schema(), []arrow.RecordBatch{r})
}

func TestParallelHashJoinLimitAndCancel(t *testing.T) {
	before := runtime.NumGoroutine()
	for _, workers := range exectest.Workers {
		// Closed after two batches, with workers running ahead.
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		l, r := bigJoinInputs(mem, t, 2000)
		op, err := parallelJoin(exec.InnerJoin, []int{0}, []int{0}, nil, exec.HashJoinOptions{}, nil)(mem, []exec.Operator{l, r}, workers)
		require.NoError(t, err)
		ctx := context.Background()
		require.NoError(t, op.Open(ctx))
		for range 2 {
			b, err := op.Next(ctx)
			require.NoError(t, err)
			b.Release()
		}
		require.NoError(t, op.Close())
		mem.AssertSize(t, 0)

		// Cancelled after five probe batches.
		mem = memory.NewCheckedAllocator(memory.NewGoAllocator())
		ctx, cancel := context.WithCancel(context.Background())
		l, r = bigJoinInputs(mem, t, 2000)
		op, err = parallelJoin(exec.InnerJoin, []int{0}, []int{0}, nil, exec.HashJoinOptions{}, nil)(
			mem, []exec.Operator{&cancelAfter{Operator: l, n: 5, cancel: cancel}, r}, workers)
		require.NoError(t, err)
		err = exec.Drain(ctx, op, func(arrow.RecordBatch) error { return nil })
		require.ErrorIs(t, err, context.Canceled)
		cancel()
		mem.AssertSize(t, 0)
	}
	requireGoroutines(t, before)
}

func TestParallelHashJoinManyMorsels(t *testing.T) {
	// Hundreds of morsels through a window of 2 per worker: the serial
	// rows, in order, at every degree.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var want []string
	for _, workers := range []int{0, 1, 2, 3, 8} {
		l, r := bigJoinInputs(mem, t, 3000)
		var op exec.Operator
		var err error
		if workers == 0 {
			op, err = exec.NewHashJoin(l, r, mem, exec.FullJoin, []int{0}, []int{0}, nil, eval.Env{}, exec.HashJoinOptions{})
		} else {
			op, err = parallelJoin(exec.FullJoin, []int{0}, []int{0}, nil, exec.HashJoinOptions{}, nil)(mem, []exec.Operator{l, r}, workers)
		}
		require.NoError(t, err)
		got, err := collect(mem, op)
		require.NoError(t, err)
		rows := pgRows(got)
		got.Release()
		require.Len(t, rows, 5941)
		if want == nil {
			want = rows
			continue
		}
		require.Equal(t, want, rows, "workers=%d", workers)
	}
}

// collect drains op into one batch.
func collect(mem memory.Allocator, op exec.Operator) (arrow.RecordBatch, error) {
	var parts []arrow.RecordBatch
	defer func() {
		for _, b := range parts {
			b.Release()
		}
	}()
	err := exec.Drain(context.Background(), op, func(b arrow.RecordBatch) error {
		b.Retain()
		parts = append(parts, b)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return exectest.Concat(op.Schema(), parts, mem)
}
