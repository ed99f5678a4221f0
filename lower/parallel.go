package lower

import (
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
)

// aggSpecs are the exec form of n's aggregate calls.
func (b *builder) aggSpecs(n *planner.Aggregate) []exec.AggSpec {
	cols := n.Schema()
	specs := make([]exec.AggSpec, len(n.Aggs))
	for i, a := range n.Aggs {
		specs[i] = exec.AggSpec{Func: a.Func, Args: b.bindAll(a.Args), Distinct: a.Distinct, Desc: a.Desc, Type: a.T,
			Name: cols[n.AggOffset()+i].Name}
		if a.Star {
			specs[i].Args = nil
		}
	}
	return specs
}

// parallelAggregate builds a FinalAggregate: the input of its Morsels
// once, then per worker the pipeline between the Morsels and the
// Aggregate over the worker's view, all into one
// exec.ParallelHashAggregate.
func (b *builder) parallelAggregate(n *planner.FinalAggregate) (exec.Operator, error) {
	a := n.Input.Agg
	morsels, views, pipes, err := b.workerPipes(a.Input, n.Workers, n.Input)
	if err != nil {
		return nil, err
	}
	cols := a.Schema()
	// NewParallelHashAggregate owns morsels and pipes from here on.
	return exec.NewParallelHashAggregate(morsels, views, pipes, b.env.Mem, b.bindAll(a.GroupBy), names(cols[:len(a.GroupBy)]),
		b.aggSpecs(a), b.env.Eval, exec.AggOptions{MemoryLimit: b.env.MemoryLimit})
}

// morselsBelow finds the Morsels at the bottom of a worker pipeline
// (Filters and Projects).
func (b *builder) morselsBelow(n planner.Node) (*planner.Morsels, error) {
	for {
		switch x := n.(type) {
		case *planner.Morsels:
			return x, nil
		case *planner.Filter:
			n = x.Input
		case *planner.Project:
			n = x.Input
		default:
			return nil, sqlerr.New(sqlerr.InternalError, "a parallel pipeline over %T cannot be executed", n)
		}
	}
}

// workerPipes builds the input of the Morsels below pipe once, then pipe
// per worker over the worker's view; counted (EXPLAIN ANALYZE) as node
// part when part is not nil.
func (b *builder) workerPipes(pipe planner.Node, workers int, part planner.Node) (*exec.Morsels, []*exec.MorselView, []exec.Operator, error) {
	if b.view != nil {
		return nil, nil, nil, sqlerr.New(sqlerr.InternalError, "nested parallel operators cannot be executed")
	}
	m, err := b.morselsBelow(pipe)
	if err != nil {
		return nil, nil, nil, err
	}
	src, err := b.node(m.Input)
	if err != nil {
		return nil, nil, nil, err
	}
	morsels := exec.NewMorsels(src)
	views := make([]*exec.MorselView, 0, workers)
	pipes := make([]exec.Operator, 0, workers)
	for w := 0; w < workers; w++ {
		v := morsels.View()
		b.view = v
		op, err := b.node(pipe)
		b.view = nil
		if err != nil {
			closeAll(pipes)
			src.Close()
			return nil, nil, nil, err
		}
		if b.env.Analysis != nil && part != nil {
			op = b.env.Analysis.wrapPart(part, op)
		}
		views, pipes = append(views, v), append(pipes, op)
	}
	return morsels, views, pipes, nil
}

// parallelSort builds a GatherMerge: its Sort's pipeline per worker, into
// one exec.ParallelSort (counted as both the GatherMerge and the Sort).
func (b *builder) parallelSort(n *planner.GatherMerge) (exec.Operator, error) {
	morsels, views, pipes, err := b.workerPipes(n.Input.Input, n.Workers, nil)
	if err != nil {
		return nil, err
	}
	// NewParallelSort owns morsels and pipes from here on.
	op, err := exec.NewParallelSort(morsels, views, pipes, b.env.Mem, sortKeys(n.Input.Keys), exec.SortOptions{MemoryLimit: b.env.MemoryLimit})
	if err == nil && b.env.Analysis != nil {
		return b.env.Analysis.wrap(n.Input, op), nil
	}
	return op, err
}

// parallelHashJoin builds a ParallelHashJoin: its Join's right input and
// the input of the Morsels below its left once, then the left pipeline
// per worker, into one exec.ParallelHashJoin (counted as both the
// ParallelHashJoin and the Join).
func (b *builder) parallelHashJoin(n *planner.ParallelHashJoin) (exec.Operator, error) {
	j := n.Input
	right, err := b.node(j.Right)
	if err != nil {
		return nil, err
	}
	morsels, views, pipes, err := b.workerPipes(j.Left, n.Workers, nil)
	if err != nil {
		right.Close()
		return nil, err
	}
	var residual expr.Expr
	if j.Residual != nil {
		residual = b.bind(j.Residual)
	}
	// NewParallelHashJoin owns morsels, pipes and right from here on.
	op, err := exec.NewParallelHashJoin(morsels, views, pipes, right, b.env.Mem, execJoinType(j.Kind), j.LeftKeys, j.RightKeys,
		residual, b.env.Eval, exec.HashJoinOptions{MemoryLimit: b.env.MemoryLimit})
	if err == nil && b.env.Analysis != nil {
		return b.env.Analysis.wrap(j, op), nil
	}
	return op, err
}
