package exec

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// ParallelSort is Sort run by workers, as PostgreSQL's Gather Merge over
// per-worker sorts: each worker drains its pipeline over the morsels it
// takes and sorts its rows into a run (the serial Sort's stable sort),
// and the runs are merged by (keys, morsel sequence, row in morsel).
// Since a worker's rows are in (sequence, row) order and its sort is
// stable, the merge yields rows with equal keys in input order: the output
// is the serial Sort's, row for row, at every degree.
//
// The runs are sorted in parallel within the first Next (no goroutine
// outlives it; cancellation or the first error stops every worker); the
// merge and the gather of each output batch then run on the caller's
// goroutine, batch by batch. Each worker's rows count against
// SortOptions.MemoryLimit (per worker) or the query's account.
type ParallelSort struct {
	morsels *Morsels
	views   []*MorselView
	inputs  []Operator
	mem     memory.Allocator
	keys    []SortKey
	types   []sqltypes.Type
	opts    SortOptions
	budgets []memBudget
	runs    []sortRun
	heap    []int // workers with rows left, a binary heap by less
	cmps    [][]func(i, j int) int
	loaded  bool
}

// sortRun is one worker's sorted rows: all of them, their order, and each
// row's position in the input (morsel sequence << 32 | row in morsel).
type sortRun struct {
	rows  arrow.RecordBatch
	order []int
	pos   []int64
	next  int // index into order of the run's head
}

var _ Operator = (*ParallelSort)(nil)

// NewParallelSort returns the sort of the morsels by keys, one worker per
// input: inputs[w] is worker w's pipeline over views[w]. It takes
// ownership of morsels and inputs, also when it fails.
func NewParallelSort(morsels *Morsels, views []*MorselView, inputs []Operator, mem memory.Allocator, keys []SortKey, opts SortOptions) (*ParallelSort, error) {
	p := &ParallelSort{morsels: morsels, views: views, inputs: inputs, mem: mem, keys: keys, opts: opts}
	if len(inputs) == 0 || len(views) != len(inputs) {
		p.Close()
		return nil, sqlerr.New(sqlerr.InternalError, "parallel sort: %d inputs for %d views", len(inputs), len(views))
	}
	types, err := checkKeys(inputs[0].Schema(), keys)
	if err != nil {
		p.Close()
		return nil, err
	}
	p.types = types
	if p.opts.BatchSize <= 0 {
		p.opts.BatchSize = DefaultBatchSize
	}
	for range inputs {
		p.budgets = append(p.budgets, newBudget("sort", mem, opts.MemoryLimit))
	}
	p.runs = make([]sortRun, len(inputs))
	return p, nil
}

func (p *ParallelSort) Schema() *arrow.Schema { return p.inputs[0].Schema() }

func (p *ParallelSort) Open(ctx context.Context) error {
	if err := p.morsels.open(ctx); err != nil {
		return err
	}
	for _, in := range p.inputs {
		if err := in.Open(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (p *ParallelSort) Close() error {
	var errs []error
	for i := range p.runs {
		if p.runs[i].rows != nil {
			p.runs[i].rows.Release()
			p.runs[i].rows = nil
		}
	}
	for _, in := range p.inputs {
		errs = append(errs, in.Close())
	}
	errs = append(errs, p.morsels.close())
	return errors.Join(errs...)
}

// work is worker w: it drains its pipeline and sorts what it got.
func (p *ParallelSort) work(ctx context.Context, w int) error {
	budget := &p.budgets[w]
	var parts []arrow.RecordBatch
	var pos []int64
	defer func() { releaseBatches(parts) }()
	for {
		b, err := p.inputs[w].Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		parts = append(parts, b)
		seq := p.views[w].Seq() << 32
		for i := range b.NumRows() {
			pos = append(pos, seq|i)
		}
		if err := budget.retain(b); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if len(parts) == 0 {
		return nil
	}
	all, err := concatBatches(p.mem, p.Schema(), parts)
	if err != nil {
		return err
	}
	run := &p.runs[w]
	run.rows, run.pos = all, pos
	if err := budget.check(); err != nil {
		return err
	}
	// The order and the positions: two words a row on the Go heap.
	if err := budget.grow(16 * all.NumRows()); err != nil {
		return err
	}
	run.order, err = sortedOrder(all, p.keys, p.types)
	return err
}

// load sorts the runs in parallel and readies their merge.
func (p *ParallelSort) load(ctx context.Context) error {
	p.loaded = true
	if err := runWorkers(ctx, len(p.inputs), p.work); err != nil {
		return err
	}
	n := len(p.runs)
	p.cmps = make([][]func(i, j int) int, n)
	for a := range p.runs {
		p.cmps[a] = make([]func(i, j int) int, n)
		if p.runs[a].rows == nil {
			continue
		}
		for b := range p.runs {
			if p.runs[b].rows == nil {
				continue
			}
			c, err := rowComparator2(p.runs[a].rows, p.runs[b].rows, p.keys, p.types)
			if err != nil {
				return err
			}
			p.cmps[a][b] = c
		}
		p.heap = append(p.heap, a)
	}
	for i := len(p.heap)/2 - 1; i >= 0; i-- {
		p.down(i)
	}
	return nil
}

// less orders the heads of runs a and b: by keys, then by position.
func (p *ParallelSort) less(a, b int) bool {
	ra, rb := &p.runs[a], &p.runs[b]
	i, j := ra.order[ra.next], rb.order[rb.next]
	if c := p.cmps[a][b](i, j); c != 0 {
		return c < 0
	}
	return ra.pos[i] < rb.pos[j]
}

func (p *ParallelSort) down(i int) {
	h := p.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && p.less(h[r], h[l]) {
			m = r
		}
		if !p.less(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (p *ParallelSort) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !p.loaded {
		if err := p.load(ctx); err != nil {
			return nil, err
		}
	}
	if len(p.heap) == 0 {
		return nil, io.EOF
	}
	refs := make([]operator.Ref, 0, p.opts.BatchSize)
	for len(refs) < p.opts.BatchSize && len(p.heap) > 0 {
		w := p.heap[0]
		r := &p.runs[w]
		refs = append(refs, operator.Ref{Src: int32(w), Row: int32(r.order[r.next])})
		if r.next++; r.next == len(r.order) {
			last := len(p.heap) - 1
			p.heap[0] = p.heap[last]
			p.heap = p.heap[:last]
		}
		if len(p.heap) > 0 {
			p.down(0)
		}
	}
	schema := p.Schema()
	cols := make([]arrow.Array, schema.NumFields())
	srcs := make([]arrow.Array, len(p.runs))
	for c := range cols {
		for w := range p.runs {
			srcs[w] = nil
			if p.runs[w].rows != nil {
				srcs[w] = p.runs[w].rows.Column(c)
			}
		}
		col, err := operator.Gather(ctx, p.mem, schema.Field(c).Type, srcs, refs)
		if err != nil {
			releaseArrays(cols[:c])
			return nil, err
		}
		cols[c] = col
	}
	out := array.NewRecordBatch(schema, cols, int64(len(refs)))
	releaseArrays(cols)
	return out, nil
}
