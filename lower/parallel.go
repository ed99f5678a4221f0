package lower

import (
	"github.com/asofsql/asofsql/exec"
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
	if b.view != nil {
		return nil, sqlerr.New(sqlerr.InternalError, "nested parallel operators cannot be executed")
	}
	a := n.Input.Agg
	m, err := b.morselsBelow(a.Input)
	if err != nil {
		return nil, err
	}
	src, err := b.node(m.Input)
	if err != nil {
		return nil, err
	}
	morsels := exec.NewMorsels(src)
	views := make([]*exec.MorselView, 0, n.Workers)
	pipes := make([]exec.Operator, 0, n.Workers)
	for w := 0; w < n.Workers; w++ {
		v := morsels.View()
		b.view = v
		pipe, err := b.node(a.Input)
		b.view = nil
		if err != nil {
			closeAll(pipes)
			src.Close()
			return nil, err
		}
		if b.env.Analysis != nil {
			pipe = b.env.Analysis.wrapPart(n.Input, pipe)
		}
		views, pipes = append(views, v), append(pipes, pipe)
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
