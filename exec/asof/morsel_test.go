package asof

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/stretchr/testify/require"
)

// morselRights are pgenRights made backward (lo unbounded: a prime per
// morsel) for the first input and bounded for the others.
func morselRights(mem memory.Allocator, kinds ...Kind) []Right {
	rs := pgenRights(mem, kinds...)
	rs[0].Lo = Unbounded
	rs[0].Hi = IntBound(0)
	return rs
}

// TestMorselMatchesSerial: the pipelined morsels (many morsels in flight,
// of 1 to 700 rows, at 2, 3 and 8 workers) give the serial join's rows.
func TestMorselMatchesSerial(t *testing.T) {
	render := func(op operator.Operator, mem memory.Allocator) string {
		got, err := exectest.Collect(context.Background(), op, mem)
		require.NoError(t, err)
		defer got.Release()
		return exectest.Format(got)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	j, err := New(newPGen(mem, 60, 64, 13, 0, 3), morselRights(mem, Left, Inner), Options{Allocator: mem})
	require.NoError(t, err)
	want := render(j, mem)
	for _, w := range []int{2, 3, 8} {
		for _, rows := range []int{1, 7, 64, 100, 700} {
			t.Run(fmt.Sprintf("workers=%d/rows=%d", w, rows), func(t *testing.T) {
				op, err := newMorsel(newPGen(mem, 60, 64, 13, 0, 3), morselRights(mem, Left, Inner), Options{Allocator: mem}, w, rows)
				require.NoError(t, err)
				require.IsType(t, &Morsel{}, op)
				require.Equal(t, want, render(op, mem))
			})
		}
	}
}

// TestMorselOrderErrors: a disorder in either input is the serial join's
// error, with the row counted over the whole input.
func TestMorselOrderErrors(t *testing.T) {
	checkOrderErrors(t, morselRights, func(left operator.Operator, rs []Right, opts Options, workers int) (operator.Operator, error) {
		return newMorsel(left, rs, opts, workers, 40)
	})
}

// TestMorselStopsEveryWorker: after reading one batch and closing (what
// LIMIT does), after a cancellation and after an input error mid-query,
// the reader and every worker have stopped and every buffer is back.
func TestMorselStopsEveryWorker(t *testing.T) {
	for _, how := range []string{"limit", "cancel", "left error", "right error"} {
		t.Run(how, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			before := runtime.NumGoroutine()
			left := newPGen(mem, 200, 64, 13, 0, 3)
			rs := morselRights(mem, Left, Inner)
			switch how {
			case "left error":
				left.failAt = 70
			case "right error":
				rs[1].Input.(*pgenSource).failAt = 30
			}
			op, err := newMorsel(left, rs, Options{Allocator: mem}, 4, 100)
			require.NoError(t, err)
			require.IsType(t, &Morsel{}, op)
			checkStops(t, op, how, left, rs, before, mem)
		})
	}
}
