package asof

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/stretchr/testify/require"
)

// pgenSource emits batches of (t, k, v): t ascending by step from start,
// k = row mod keys. failAt > 0 makes batch failAt an error; swapAt > 0
// puts a t lower than its predecessor at that global row (1-based).
type pgenSource struct {
	mem                  memory.Allocator
	batches, rows, keys  int
	start, step          int64
	sent, failAt, swapAt int
	closed               bool
	schema               *arrow.Schema
}

func newPGen(mem memory.Allocator, batches, rows, keys int, start, step int64) *pgenSource {
	return &pgenSource{mem: mem, batches: batches, rows: rows, keys: keys, start: start, step: step,
		schema: arrow.NewSchema([]arrow.Field{{Name: "t", Type: i64}, {Name: "k", Type: i64}, {Name: "v", Type: i64}}, nil)}
}

func (g *pgenSource) Schema() *arrow.Schema      { return g.schema }
func (g *pgenSource) Open(context.Context) error { return nil }
func (g *pgenSource) Close() error               { g.closed = true; return nil }
func (g *pgenSource) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if g.sent == g.batches {
		return nil, io.EOF
	}
	g.sent++
	if g.sent == g.failAt {
		return nil, errors.New("input failed")
	}
	rows := make([][]any, g.rows)
	for i := range rows {
		n := (g.sent-1)*g.rows + i
		t := g.start + int64(n)*g.step
		if n+1 == g.swapAt {
			t -= 3 * g.step
		}
		rows[i] = []any{t, int64(n % g.keys), int64(n)}
	}
	return table(g.mem, append([]arrow.Field(nil), g.schema.Fields()...), rows...), nil
}

func pgenRights(mem memory.Allocator, kinds ...Kind) []Right {
	var rs []Right
	for i, k := range kinds {
		rs = append(rs, Right{Name: fmt.Sprintf("r%d", i), Input: newPGen(mem, 40, 70, 7+i, int64(i), 5),
			LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1}, Lo: IntBound(-20), Hi: IntBound(int64(10 * i)),
			Kind: k, Payload: []int{0, 2}})
	}
	return rs
}

// batchesOf reads op to the end and renders each batch on its own.
func pbatchesOf(t *testing.T, op operator.Operator) []string {
	var out []string
	require.NoError(t, operator.Drain(context.Background(), op, func(b arrow.RecordBatch) error {
		out = append(out, exectest.Format(b))
		return nil
	}))
	return out
}

// TestParallelBatchForBatch: split by key, the join gives the serial
// join's batches, one per left batch, row for row, with INNER and LEFT
// inputs (INNER drops rows, which the reassembly must leave out).
func TestParallelBatchForBatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	serial, err := New(newPGen(mem, 30, 97, 11, 0, 3), pgenRights(mem, Left, Inner), Options{Allocator: mem, Serial: true})
	require.NoError(t, err)
	want := pbatchesOf(t, serial)
	for _, w := range []int{2, 3, 8} {
		p, err := NewParallel(newPGen(mem, 30, 97, 11, 0, 3), pgenRights(mem, Left, Inner), Options{Allocator: mem}, w)
		require.NoError(t, err)
		require.IsType(t, &Parallel{}, p)
		require.Equal(t, want, pbatchesOf(t, p), "workers=%d", w)
	}
}

// TestParallelFallsBack: joins that cannot be split run serially.
func TestParallelFallsBack(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rs := pgenRights(mem, Left)
	rs[0].LeftKeys, rs[0].Keys = nil, nil
	p, err := NewParallel(newPGen(mem, 2, 5, 3, 0, 3), rs, Options{Allocator: mem}, 4)
	require.NoError(t, err)
	require.IsType(t, &Join{}, p)
	require.NoError(t, p.Close())
	p, err = NewParallel(newPGen(mem, 2, 5, 3, 0, 3), pgenRights(mem, Left), Options{Allocator: mem}, 1)
	require.NoError(t, err)
	require.IsType(t, &Join{}, p)
	require.NoError(t, p.Close())
}

// TestParallelOrderErrors: a disorder in either input is the serial
// join's error, with the row counted over the whole input.
func TestParallelOrderErrors(t *testing.T) {
	checkOrderErrors(t, pgenRights, func(left operator.Operator, rs []Right, opts Options, workers int) (operator.Operator, error) {
		return NewParallel(left, rs, opts, workers)
	})
}

// checkOrderErrors requires the error build's join gives at 2 and 3
// workers for a disorder in the left or the first right input (rights
// builds those) to be the one it gives at 1 worker, the serial join's.
func checkOrderErrors(t *testing.T, rights func(memory.Allocator, ...Kind) []Right,
	build func(left operator.Operator, rs []Right, opts Options, workers int) (operator.Operator, error)) {
	for _, side := range []string{"left", "right"} {
		t.Run(side, func(t *testing.T) {
			run := func(workers int) error {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				left := newPGen(mem, 20, 50, 5, 0, 10)
				rs := rights(mem, Left)
				if side == "left" {
					left.swapAt = 333
				} else {
					rs[0].Input.(*pgenSource).swapAt = 444
				}
				op, err := build(left, rs, Options{Allocator: mem, LeftName: "l"}, workers)
				require.NoError(t, err)
				defer op.Close()
				return operator.Drain(context.Background(), op, func(arrow.RecordBatch) error { return nil })
			}
			want := run(1)
			require.Error(t, want)
			for _, w := range []int{2, 3} {
				got := run(w)
				require.Error(t, got)
				require.Equal(t, want.Error(), got.Error())
			}
		})
	}
}

// waitGoroutines waits until no more goroutines run than before: the
// workers exit once Close returns, but the runtime may take a moment to
// retire them.
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines outlive the join (%d before):\n%s", runtime.NumGoroutine(), before,
				buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestParallelStopsEveryWorker: after reading one batch and closing (what
// LIMIT does), after a cancellation and after an input error mid-query,
// every worker has stopped and every buffer is back.
func TestParallelStopsEveryWorker(t *testing.T) {
	for _, how := range []string{"limit", "cancel", "left error", "right error"} {
		t.Run(how, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			before := runtime.NumGoroutine()
			left := newPGen(mem, 200, 64, 13, 0, 3)
			rs := pgenRights(mem, Left, Inner)
			switch how {
			case "left error":
				left.failAt = 7
			case "right error":
				rs[1].Input.(*pgenSource).failAt = 5
			}
			op, err := NewParallel(left, rs, Options{Allocator: mem}, 4)
			require.NoError(t, err)
			checkStops(t, op, how, left, rs, before, mem)
		})
	}
}

// checkStops reads one batch of op, then stops it as how says (close after
// the batch as LIMIT does, cancel, or drain into an input's error), and
// requires every input closed, no goroutine left beyond before and every
// buffer of mem back.
func checkStops(t *testing.T, op operator.Operator, how string, left *pgenSource, rs []Right, before int, mem *memory.CheckedAllocator) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, op.Open(ctx))
	b, err := op.Next(ctx)
	require.NoError(t, err)
	b.Release()
	switch how {
	case "cancel":
		cancel()
		_, err = op.Next(ctx)
		require.ErrorIs(t, err, context.Canceled)
	case "left error", "right error":
		err = operator.Drain(ctx, op, func(arrow.RecordBatch) error { return nil })
		require.ErrorContains(t, err, "input failed")
	}
	require.NoError(t, op.Close())
	require.True(t, left.closed)
	for _, r := range rs {
		require.True(t, r.Input.(*pgenSource).closed)
	}
	waitGoroutines(t, before)
	mem.AssertSize(t, 0)
}
