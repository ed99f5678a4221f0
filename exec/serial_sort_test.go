package exec_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/stretchr/testify/require"
)

// TestSerialSortMatchesSort: the one-core sort the planner's serial plans
// use gives Sort's output row for row, taking ParallelSort's range path
// (one worker) for one or two numeric keys, NULLs or not, and Sort for
// anything else.
func TestSerialSortMatchesSort(t *testing.T) {
	table := sortDiffTable(240)
	for _, tc := range []struct {
		keys   []exec.SortKey
		ranged bool
	}{
		{[]exec.SortKey{{Col: 4}}, true},
		{[]exec.SortKey{{Col: 5, Desc: true}, {Col: 4}}, true},
		{[]exec.SortKey{{Col: 6}}, true},
		{[]exec.SortKey{{Col: 7, Desc: true}, {Col: 6}}, true},
		{[]exec.SortKey{{Col: 1, Nulls: exec.NullsFirst}}, true}, // NULLs: its single run
		{[]exec.SortKey{{Col: 2, Desc: true}, {Col: 4}}, true},
		{[]exec.SortKey{{Col: 3}}, false},                     // text
		{[]exec.SortKey{{Col: 4}, {Col: 6}, {Col: 5}}, false}, // three keys
	} {
		t.Run(fmt.Sprint(tc.keys), func(t *testing.T) {
			want := serialSorted(t, table, tc.keys)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			op, err := exec.NewSerialSort(exec.NewBatches(sortDiffSchema, table(mem)), mem, tc.keys, exec.SortOptions{BatchSize: 7})
			require.NoError(t, err)
			_, ranged := op.(*exec.ParallelSort)
			require.Equal(t, tc.ranged, ranged)
			got, err := exectest.Collect(context.Background(), op, mem)
			require.NoError(t, err)
			defer got.Release()
			require.Equal(t, want, exectest.Format(got))
		})
	}
}
