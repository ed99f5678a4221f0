package asof

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/stretchr/testify/require"
)

// runOuterCase runs a RIGHT or FULL join under every standard layout and
// compares its rows with want, the left rows first: the interleaving of
// left rows and unmatched right rows is not promised (spec §2.6).
func runOuterCase(t *testing.T, name string, left, right func(memory.Allocator) arrow.RecordBatch, sp Right, want []string) {
	t.Helper()
	for _, l := range exectest.Layouts() {
		t.Run(fmt.Sprintf("%s/%s", name, l.Name), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			lt, rt := left(mem), right(mem)
			lop := operator.NewBatches(lt.Schema(), exectest.Split(lt, l, 0))
			sp.Input = operator.NewBatches(rt.Schema(), exectest.Split(rt, l, 1))
			lt.Release()
			rt.Release()
			j, err := New(lop, []Right{sp}, Options{Allocator: mem})
			require.NoError(t, err)
			got, err := exectest.Collect(context.Background(), j, mem)
			require.NoError(t, err)
			defer got.Release()
			require.Equal(t, strings.Join(want, "\n")+"\n", leftRowsFirst(exectest.Format(got), 3))
		})
	}
}

func TestRightFull(t *testing.T) {
	left := rowsOf(lf, []any{10, "a", 1}, []any{20, "x", 2}, []any{30, "a", 3}, []any{nil, "a", 4})
	// 5 is superseded by 8 for t = 10; 27 has a NULL key, a NULL t never
	// wins, 40 lies after every window.
	right := rowsOf(rf, []any{5, "a", 100}, []any{8, "a", 101}, []any{25, "a", 102}, []any{27, nil, 103},
		[]any{nil, "a", 104}, []any{40, "a", 105})
	unmatched := []string{"NULL | NULL | NULL | 5 | 100", "NULL | NULL | NULL | 27 | 103",
		"NULL | NULL | NULL | NULL | 104", "NULL | NULL | NULL | 40 | 105"}
	runOuterCase(t, "right", left, right, keyed(IntBound(-5), IntBound(0), RightOuter),
		append([]string{"10 | a | 1 | 8 | 101", "30 | a | 3 | 25 | 102"}, unmatched...))
	runOuterCase(t, "full", left, right, keyed(IntBound(-5), IntBound(0), FullOuter),
		append([]string{"10 | a | 1 | 8 | 101", "20 | x | 2 | NULL | NULL", "30 | a | 3 | 25 | 102", "NULL | a | 4 | NULL | NULL"}, unmatched...))
	// Forward, unbounded: 10 takes 25, 30 takes 40.
	runOuterCase(t, "right forward", left, right, keyed(IntBound(1), Unbounded, RightOuter),
		[]string{"10 | a | 1 | 25 | 102", "30 | a | 3 | 40 | 105",
			"NULL | NULL | NULL | 5 | 100", "NULL | NULL | NULL | 8 | 101", "NULL | NULL | NULL | 27 | 103", "NULL | NULL | NULL | NULL | 104"})
	// An empty left input: every right row, in order.
	runOuterCase(t, "empty left", rowsOf(lf), right, keyed(Unbounded, IntBound(0), FullOuter),
		[]string{"NULL | NULL | NULL | 5 | 100", "NULL | NULL | NULL | 8 | 101", "NULL | NULL | NULL | 25 | 102",
			"NULL | NULL | NULL | 27 | 103", "NULL | NULL | NULL | NULL | 104", "NULL | NULL | NULL | 40 | 105"})
}

// TestOuterStreams checks that unmatched right rows leave while the left
// input is still being read, and that what the join keeps for them stays
// bounded by the window, not the input: 20,000 right rows (every second
// one never wins) against 10,000 left rows in batches of 100, three keys,
// both the range form and the unbounded backward form.
func TestOuterStreams(t *testing.T) {
	const n = 10_000
	for _, lo := range []Bound{IntBound(-3), Unbounded} {
		t.Run(fmt.Sprint(lo.Unbounded), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			var lrows, rrows [][]any
			keys := []string{"a", "b", "c"}
			for i := 0; i < n; i++ {
				lrows = append(lrows, []any{2 * i, keys[i%3], i})
				rrows = append(rrows, []any{2*i - 1, keys[i%3], i}, []any{2 * i, keys[i%3], i})
			}
			lt, rt := table(mem, lf, lrows...), table(mem, rf, rrows...)
			l := exectest.Layout{Name: "100", Size: 100}
			lop := operator.NewBatches(lt.Schema(), exectest.Split(lt, l, 0))
			sp := keyed(lo, IntBound(0), RightOuter)
			sp.Input = operator.NewBatches(rt.Schema(), exectest.Split(rt, l, 1))
			lt.Release()
			rt.Release()
			j, err := New(lop, []Right{sp}, Options{Allocator: mem})
			require.NoError(t, err)
			defer j.Close()
			ctx := context.Background()
			var matched, unmatchedEarly, unmatched, maxRows, maxBatches int
			for {
				b, err := j.Next(ctx)
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				if b.NumRows() == 0 || b.Column(0).IsNull(0) {
					unmatched += int(b.NumRows())
					if !j.outer.leftDone {
						unmatchedEarly += int(b.NumRows())
					}
				} else {
					matched += int(b.NumRows())
				}
				maxRows = max(maxRows, len(j.outer.rows))
				maxBatches = max(maxBatches, len(j.outer.batches))
				b.Release()
			}
			require.Equal(t, n, matched)
			require.Equal(t, n, unmatched)
			require.Greater(t, unmatchedEarly, n-500)
			require.Less(t, maxRows, 1_000)
			require.Less(t, maxBatches, 10)
		})
	}
}
