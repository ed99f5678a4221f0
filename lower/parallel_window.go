package lower

import (
	"math"
	"slices"

	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/sql/planner"
)

// parallelWindow builds a ParallelWindow: the input of the Morsels below
// its bottom Window once, that Window's input pipeline per worker, and per
// worker the serial Sort and Window of each Window of the stack (counted
// as the Window's parts by EXPLAIN ANALYZE), into one
// exec.ParallelWindow.
func (b *builder) parallelWindow(n *planner.ParallelWindow) (exec.Operator, error) {
	stack := []*planner.Window{n.Input} // top first
	for {
		w, ok := stack[len(stack)-1].Input.(*planner.Window)
		if !ok {
			break
		}
		stack = append(stack, w)
	}
	slices.Reverse(stack)
	morsels, views, pipes, err := b.workerPipes(stack[0].Input, n.Workers, nil)
	if err != nil {
		return nil, err
	}
	chain := func(in exec.Operator) (exec.Operator, error) {
		op := in
		for _, w := range stack {
			// A worker's rows are in memory: its Windows hand each
			// other (and the ParallelWindow) one batch, as the Sorts do.
			next, err := b.windowOver(w, op, math.MaxInt32)
			if err != nil {
				op.Close()
				return nil, err
			}
			if b.env.Analysis != nil {
				next = b.env.Analysis.wrapPart(w, next)
			}
			op = next
		}
		return op, nil
	}
	top := n.Input
	var merge []exec.SortKey
	for _, c := range top.Partition {
		merge = append(merge, exec.SortKey{Col: c, Nulls: exec.NullsLast})
	}
	// NewParallelWindow owns morsels and pipes from here on.
	return exec.NewParallelWindow(morsels, views, pipes, b.env.Mem, n.Keys, merge, chain,
		exec.WindowOptions{MemoryLimit: b.env.MemoryLimit})
}
