package exec_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/stretchr/testify/require"
)

// countingAllocator counts the allocations that reach it.
type countingAllocator struct {
	memory.Allocator
	n atomic.Int64
}

func (c *countingAllocator) Allocate(size int) []byte {
	c.n.Add(1)
	return c.Allocator.Allocate(size)
}

// TestParallelSortReusesOutput: a consumer that releases each batch before
// it asks for the next gets the serial Sort's rows, although the sort
// builds later batches in the buffers of earlier ones (ParallelSort's
// recycler), and those buffers are reused: the allocations that reach
// the query's allocator stay a small multiple of the workers, not one per
// output batch and column (on the range path; the merge path's text
// columns vary in size). Run back to back, the sorts also reuse the
// range path's entries (the pool outlives them).
func TestParallelSortReusesOutput(t *testing.T) {
	table := sortDiffTable(240)
	for i, keys := range [][]exec.SortKey{
		{{Col: 6}, {Col: 7, Desc: true}}, // the range path
		{{Col: 4}, {Col: 6}, {Col: 5}},   // the merge
	} {
		want := serialSorted(t, table, keys)
		for _, workers := range []int{1, 2, 3, 8} {
			for _, batch := range []int{1, 7, 1024} {
				t.Run(fmt.Sprintf("%v/workers=%d/batch=%d", keys, workers, batch), func(t *testing.T) {
					checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer checked.AssertSize(t, 0)
					mem := &countingAllocator{Allocator: checked}
					in := table(checked)
					op, err := parallelSort(keys, exec.SortOptions{BatchSize: batch}, nil)(mem, []exec.Operator{exec.NewBatches(sortDiffSchema, in)}, workers)
					require.NoError(t, err)
					ctx := context.Background()
					require.NoError(t, op.Open(ctx))
					var rows []string
					batches := 0
					before := mem.n.Load()
					for {
						b, err := op.Next(ctx)
						if err != nil {
							require.ErrorContains(t, err, "EOF")
							break
						}
						batches++
						for _, r := range strings.Split(exectest.Format(b), "\n") {
							if r != "" {
								rows = append(rows, r)
							}
						}
						b.Release()
					}
					allocs := mem.n.Load() - before
					require.NoError(t, op.Close())
					require.Equal(t, strings.TrimSuffix(want, "\n"), strings.Join(rows, "\n"))
					// Counted on the range path only: the merge path's
					// first Next also concatenates the runs. Without reuse,
					// each batch allocates two buffers for each of its seven
					// fixed-width columns and three for its text column (17);
					// with reuse, the first batches of each worker do, and
					// then the text column's data (its size varies).
					if i == 0 {
						require.Less(t, allocs, int64(4*batches+20*workers), "allocations for %d output batches", batches)
					}
				})
			}
		}
	}
}

// TestParallelSortLaterContext: the output workers outlive the Next that
// started them but not its context's values only: a cursor whose first
// fetch ran under a context that ended since reads on under a later one
// and gets every row, in the serial Sort's order.
func TestParallelSortLaterContext(t *testing.T) {
	table := sortDiffTable(240)
	keys := []exec.SortKey{{Col: 6}, {Col: 7, Desc: true}}
	want := serialSorted(t, table, keys)
	for _, workers := range []int{2, 3} {
		checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
		op, err := parallelSort(keys, exec.SortOptions{BatchSize: 7}, nil)(checked, []exec.Operator{exec.NewBatches(sortDiffSchema, table(checked))}, workers)
		require.NoError(t, err)
		first, stop := context.WithCancel(context.Background())
		require.NoError(t, op.Open(first))
		b, err := op.Next(first)
		require.NoError(t, err)
		rows := strings.Split(strings.TrimSuffix(exectest.Format(b), "\n"), "\n")
		b.Release()
		stop()
		// A guard, not a timing: a worker stopped with the first context
		// would leave Next waiting for ever.
		later, done := context.WithTimeout(context.Background(), time.Minute)
		for {
			b, err := op.Next(later)
			if err != nil {
				require.ErrorContains(t, err, "EOF")
				break
			}
			rows = append(rows, strings.Split(strings.TrimSuffix(exectest.Format(b), "\n"), "\n")...)
			b.Release()
		}
		done()
		require.NoError(t, op.Close())
		require.Equal(t, strings.TrimSuffix(want, "\n"), strings.Join(rows, "\n"))
		checked.AssertSize(t, 0)
	}
}
