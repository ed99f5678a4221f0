package exec

import (
	"cmp"
	"context"
	"errors"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
)

// ParallelHashAggregate is HashAggregate split as PostgreSQL's and
// DataFusion's Partial/Final aggregates: each worker aggregates the
// morsels it takes into its own partial state (its own group table and
// accumulators, bounded by AggOptions.MemoryLimit and charged to the
// query's account), and once the input is consumed the partial states are
// combined into the final groups.
//
// The output is the serial HashAggregate's, row for row: groups come out
// in the order of their first appearance in the input, because each
// worker notes the morsel where each of its groups first appeared, and the
// final table takes the groups in (morsel, worker's group number) order,
// which is the serial order (a morsel belongs to one worker, whose groups
// are numbered in row order). Integer and numeric sums, counts, min/max
// and the boolean aggregates are exact; float sums and float statistics
// are combined from per-worker sums, which can differ from the serial sum
// in the last bits, as PostgreSQL's parallel aggregates can.
//
// Every aggregate must combine (CombinableAgg); the planner keeps the
// others serial. All workers finish within the first Next: no goroutine
// outlives it, and cancellation or the first error stops them all.
type ParallelHashAggregate struct {
	morsels  *Morsels
	views    []*MorselView
	partials []*HashAggregate
	firstSeq [][]int64 // per worker and local group: the morsel it first appeared in
	final    *HashAggregate
	mem      memory.Allocator
	done     bool
}

var _ Operator = (*ParallelHashAggregate)(nil)

// NewParallelHashAggregate returns the aggregation of the morsels, with
// one worker per input: inputs[w] is worker w's pipeline over views[w]
// (a view of morsels, or the view itself), all with one schema. It takes
// ownership of morsels and inputs, also when it fails.
func NewParallelHashAggregate(morsels *Morsels, views []*MorselView, inputs []Operator, mem memory.Allocator, groupBy []expr.Expr,
	groupNames []string, aggs []AggSpec, env eval.Env, opts AggOptions) (*ParallelHashAggregate, error) {
	p := &ParallelHashAggregate{morsels: morsels, views: views, mem: mem}
	fail := func(err error) (*ParallelHashAggregate, error) {
		for _, in := range inputs[len(p.partials):] {
			in.Close()
		}
		p.Close()
		return nil, err
	}
	if len(inputs) == 0 || len(views) != len(inputs) {
		return fail(sqlerr.New(sqlerr.InternalError, "parallel hash aggregate: %d inputs for %d views", len(inputs), len(views)))
	}
	for _, a := range aggs {
		if !CombinableAgg(a.Func, a.Distinct) {
			return fail(sqlerr.New(sqlerr.InternalError, "parallel hash aggregate: %s does not combine", a.Func))
		}
	}
	for _, in := range inputs {
		h, err := NewHashAggregate(in, mem, groupBy, groupNames, aggs, env, opts)
		if err != nil {
			return fail(err)
		}
		p.partials = append(p.partials, h)
	}
	// The final aggregate reads no rows: it holds the combined groups.
	final, err := NewHashAggregate(NewBatches(inputs[0].Schema(), nil), mem, groupBy, groupNames, aggs, env, opts)
	if err != nil {
		return fail(err)
	}
	p.final = final
	p.firstSeq = make([][]int64, len(inputs))
	return p, nil
}

func (p *ParallelHashAggregate) Schema() *arrow.Schema { return p.final.Schema() }

func (p *ParallelHashAggregate) Open(ctx context.Context) error {
	if err := p.morsels.open(ctx); err != nil {
		return err
	}
	for _, h := range p.partials {
		if err := h.Open(ctx); err != nil {
			return err
		}
	}
	return p.final.Open(ctx)
}

func (p *ParallelHashAggregate) Close() error {
	var errs []error
	for _, h := range p.partials {
		errs = append(errs, h.Close())
	}
	if p.final != nil {
		errs = append(errs, p.final.Close())
	}
	errs = append(errs, p.morsels.close())
	return errors.Join(errs...)
}

func (p *ParallelHashAggregate) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !p.done {
		p.done = true
		if err := runWorkers(ctx, len(p.partials), p.work); err != nil {
			return nil, err
		}
		if err := p.combine(); err != nil {
			return nil, err
		}
	}
	return p.final.Next(ctx)
}

// work is worker w: it aggregates the morsels its pipeline yields.
func (p *ParallelHashAggregate) work(ctx context.Context, w int) error {
	h := p.partials[w]
	for {
		b, err := h.child.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		before := h.core.ngroups
		err = h.consume(ctx, b)
		b.Release()
		if err != nil {
			return err
		}
		for range h.core.ngroups - before {
			p.firstSeq[w] = append(p.firstSeq[w], p.views[w].Seq())
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// combine folds the partial states into the final aggregate's groups, in
// the order of their first appearance, and releases them.
func (p *ParallelHashAggregate) combine() error {
	type entry struct {
		seq  int64
		w, g int32
	}
	var entries []entry
	for w, seqs := range p.firstSeq {
		for g, s := range seqs {
			entries = append(entries, entry{s, int32(w), int32(g)})
		}
	}
	slices.SortFunc(entries, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.seq, b.seq), cmp.Compare(a.g, b.g))
	})
	final := p.final
	if len(entries) > 0 {
		offsets := make([]int, len(p.partials))
		total := 0
		for w, h := range p.partials {
			offsets[w] = total
			total += h.core.ngroups
		}
		idx := make([]int, len(entries))
		for j, e := range entries {
			idx[j] = offsets[e.w] + int(e.g)
		}
		keys, err := p.orderedKeys(idx)
		if err != nil {
			return err
		}
		gids, newRows, tableBytes := final.groupIDs(keys, len(entries))
		err = final.core.addKeys(keys, newRows)
		releaseArrays(keys)
		if err != nil {
			return err
		}
		final.tableBytes += tableBytes
		gmap := make([][]int32, len(p.partials))
		for w, h := range p.partials {
			gmap[w] = make([]int32, h.core.ngroups)
		}
		for j, e := range entries {
			gmap[e.w][e.g] = gids[j]
		}
		for w, h := range p.partials {
			for i, acc := range final.core.accs {
				if err := acc.(combiner).merge(h.core.accs[i], gmap[w]); err != nil {
					return err
				}
			}
			h.release()
			h.core.accs = nil
			if err := h.core.budget.set(0); err != nil {
				return err
			}
		}
		if err := final.core.budget.set(final.core.stateBytes(final.tableBytes)); err != nil {
			return err
		}
	}
	return nil
}

// orderedKeys gathers the partial groups' key values, one array per
// group column: row j is the group at idx[j] of the workers' groups
// numbered one worker after another.
func (p *ParallelHashAggregate) orderedKeys(idx []int) ([]arrow.Array, error) {
	ncols := len(p.final.core.groupEvs)
	if ncols == 0 {
		return nil, nil
	}
	keys := make([]arrow.Array, 0, ncols)
	for i := 0; i < ncols; i++ {
		var chunks []arrow.Array
		for _, h := range p.partials {
			chunks = append(chunks, h.core.keyChunks[i]...)
		}
		all, err := array.Concatenate(chunks, p.mem)
		if err != nil {
			releaseArrays(keys)
			return nil, err
		}
		k, err := eval.Take(p.mem, all, idx)
		all.Release()
		if err != nil {
			releaseArrays(keys)
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}
