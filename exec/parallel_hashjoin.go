package exec

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
)

// ParallelHashJoin is HashJoin with its probe (left) side read in morsels
// by several workers. The build (right) side is built once, on the first
// Next, into one hash table that the workers share read-only, and charged
// once to the query's account. Each worker joins the morsels its pipeline
// yields against the table with its own HashJoin (its own residual
// evaluator and match flags), and the output is reassembled in morsel
// order: row for row the serial HashJoin's output (probe rows in input
// order, each with its matches in build order), so every ordering the
// serial join provides still holds.
//
// RIGHT and FULL joins keep their unmatched build rows: the workers' match
// flags are OR-ed once every morsel is joined, and the rows that matched
// nothing come last, in build order, as in the serial join.
//
// At most window morsels are in flight (taken but not yet returned): a
// worker waits before taking another, so the output buffered for morsels
// ahead of the one being returned stays bounded by the window. Close stops
// the workers (cancellation or the first error stops them all) and waits
// for them: no goroutine outlives it.
type ParallelHashJoin struct {
	morsels *Morsels
	views   []*MorselView
	pipes   []Operator  // worker w's pipeline over views[w]
	feeds   []*oneBatch // worker w's join reads its morsels through this
	joins   []*HashJoin // worker w's probe of the shared table
	builder *HashJoin   // builds the table; emits the unmatched build rows
	window  int

	started bool
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	sem     chan struct{}

	mu       sync.Mutex
	cond     *sync.Cond
	slots    map[int64]*joinSlot
	pending  []int64 // per worker: lowest seq its running pipe.Next can yield, -1 when not in one
	finished bool    // every worker returned
	err      error   // the workers' first error
	tailDone bool
}

// joinSlot is the output of one morsel.
type joinSlot struct {
	batches []arrow.RecordBatch
	done    bool
}

var _ Operator = (*ParallelHashJoin)(nil)

// NewParallelHashJoin returns the join of the morsels (through the worker
// pipelines inputs, one per view, all with one schema) with right, as
// NewHashJoin(left, right, ...) would. It takes ownership of morsels,
// inputs and right, also when it fails.
func NewParallelHashJoin(morsels *Morsels, views []*MorselView, inputs []Operator, right Operator, mem memory.Allocator,
	typ JoinType, leftKeys, rightKeys []int, residual expr.Expr, env eval.Env, opts HashJoinOptions) (*ParallelHashJoin, error) {
	p := &ParallelHashJoin{morsels: morsels, views: views, pipes: inputs}
	p.cond = sync.NewCond(&p.mu)
	fail := func(err error) (*ParallelHashJoin, error) {
		if p.builder == nil {
			right.Close()
		}
		p.Close()
		return nil, err
	}
	if len(inputs) == 0 || len(views) != len(inputs) {
		return fail(sqlerr.New(sqlerr.InternalError, "parallel hash join: %d inputs for %d views", len(inputs), len(views)))
	}
	// The serial join builds the right side unless told sizes; so does
	// this one, always, since its probe side is the left.
	opts.LeftRows, opts.RightRows = 0, 0
	ls := inputs[0].Schema()
	builder, err := NewHashJoin(NewBatches(ls, nil), right, mem, typ, leftKeys, rightKeys, residual, env, opts)
	if err != nil {
		return fail(err)
	}
	p.builder = builder
	for range inputs {
		feed := &oneBatch{schema: ls}
		j, err := NewHashJoin(feed, NewBatches(right.Schema(), nil), mem, typ, leftKeys, rightKeys, residual, env, HashJoinOptions{})
		if err != nil {
			return fail(err)
		}
		p.feeds, p.joins = append(p.feeds, feed), append(p.joins, j)
	}
	p.window = 2 * len(inputs)
	return p, nil
}

func (p *ParallelHashJoin) Schema() *arrow.Schema { return p.builder.Schema() }

func (p *ParallelHashJoin) Open(ctx context.Context) error {
	if err := p.morsels.open(ctx); err != nil {
		return err
	}
	if err := p.builder.Open(ctx); err != nil {
		return err
	}
	for w := range p.pipes {
		if err := p.pipes[w].Open(ctx); err != nil {
			return err
		}
		if err := p.joins[w].Open(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Close stops and waits for the workers, then releases everything.
func (p *ParallelHashJoin) Close() error {
	if p.cancel != nil {
		p.cancel()
	}
	p.wg.Wait()
	for _, s := range p.slots {
		releaseBatches(s.batches)
	}
	p.slots = nil
	var errs []error
	for _, in := range p.pipes {
		errs = append(errs, in.Close())
	}
	for _, j := range p.joins {
		errs = append(errs, j.Close())
	}
	if p.builder != nil {
		errs = append(errs, p.builder.Close())
	}
	errs = append(errs, p.morsels.close())
	return errors.Join(errs...)
}

// start builds the table and starts the workers.
func (p *ParallelHashJoin) start(ctx context.Context) error {
	p.started = true
	if err := p.builder.buildTable(ctx); err != nil {
		return err
	}
	b := p.builder
	for _, c := range b.build.Columns() {
		settleNullCounts(c)
	}
	for _, j := range p.joins {
		j.built = true
		b.build.Retain()
		j.build, j.table, j.groups = b.build, b.table, b.groups
		if j.buildOuter() {
			j.matched = make([]bool, b.build.NumRows())
		}
		j.tail = true // the builder emits the unmatched build rows, once
	}
	p.slots = map[int64]*joinSlot{}
	p.pending = make([]int64, len(p.joins))
	for w := range p.pending {
		p.pending[w] = -1
	}
	p.sem = make(chan struct{}, p.window)
	// The workers outlive this Next: they keep ctx's values but not its
	// cancellation, so that a cursor may read on under a later context;
	// Next stops them when its own context ends, Close always.
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel = cancel
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		err := runWorkers(wctx, len(p.joins), p.work)
		p.mu.Lock()
		p.finished, p.err = true, err
		p.cond.Broadcast()
		p.mu.Unlock()
	}()
	return nil
}

// work is worker w: it joins the morsels its pipeline yields, each into
// the slot of its sequence number.
func (p *ParallelHashJoin) work(ctx context.Context, w int) error {
	pipe, feed, j := p.pipes[w], p.feeds[w], p.joins[w]
	for {
		select {
		case p.sem <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		// Any morsel the pipeline takes from here on is numbered at
		// least the next number now: the consumer must not pass it.
		p.mu.Lock()
		p.morsels.mu.Lock()
		p.pending[w] = p.morsels.seq
		p.morsels.mu.Unlock()
		p.mu.Unlock()
		b, err := pipe.Next(ctx)
		if err != nil {
			<-p.sem
			p.mu.Lock()
			p.pending[w] = -1
			p.cond.Broadcast()
			p.mu.Unlock()
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		slot := &joinSlot{}
		p.mu.Lock()
		p.slots[p.views[w].Seq()] = slot
		p.pending[w] = -1
		p.mu.Unlock()
		feed.b = b
		for {
			out, err := j.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			p.mu.Lock()
			slot.batches = append(slot.batches, out)
			p.cond.Broadcast()
			p.mu.Unlock()
		}
		p.mu.Lock()
		slot.done = true
		p.cond.Broadcast()
		p.mu.Unlock()
	}
}

func (p *ParallelHashJoin) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		if p.cancel != nil {
			p.cancel()
		}
		return nil, err
	}
	if !p.started {
		if err := p.start(ctx); err != nil {
			return nil, err
		}
	}
	stop := context.AfterFunc(ctx, func() {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	})
	defer stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if err := ctx.Err(); err != nil {
			p.cancel()
			return nil, err
		}
		if p.err != nil {
			return nil, p.err
		}
		seq, slot := p.head()
		if slot != nil && len(slot.batches) > 0 {
			b := slot.batches[0]
			slot.batches = slot.batches[1:]
			return b, nil
		}
		if slot != nil && slot.done {
			delete(p.slots, seq)
			<-p.sem
			continue
		}
		if slot == nil && seq < 0 && p.finished {
			return p.unmatchedBuild()
		}
		p.cond.Wait()
	}
}

// head returns the slot whose output comes next, nil when it is not known
// yet (a worker may still yield a lower morsel); seq is -1 when no slot
// and no worker is left.
func (p *ParallelHashJoin) head() (int64, *joinSlot) {
	low := int64(-1)
	for s := range p.slots {
		if low < 0 || s < low {
			low = s
		}
	}
	for _, s := range p.pending {
		if s >= 0 && (low < 0 || s <= low) {
			return s, nil
		}
	}
	if low < 0 {
		return -1, nil
	}
	return low, p.slots[low]
}

// unmatchedBuild emits, once every morsel is joined, the build rows that
// matched in no worker (RIGHT and FULL joins).
func (p *ParallelHashJoin) unmatchedBuild() (arrow.RecordBatch, error) {
	if p.tailDone || p.builder.matched == nil {
		return nil, io.EOF
	}
	p.tailDone = true
	for _, j := range p.joins {
		for i, m := range j.matched {
			if m {
				p.builder.matched[i] = true
			}
		}
	}
	return p.builder.unmatchedBuild()
}

// settleNullCounts computes a's null counts, and its children's and
// dictionary's, now: arrow arrays count their nulls lazily on first use and
// store the count, which would be a data race among the workers reading
// the shared build side.
func settleNullCounts(a arrow.Array) {
	a.NullN()
	d := a.Data()
	for _, cd := range d.Children() {
		c := array.MakeFromData(cd)
		settleNullCounts(c)
		c.Release()
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		c := array.MakeFromData(d.Dictionary())
		settleNullCounts(c)
		c.Release()
	}
}

// oneBatch is an Operator yielding the batch last set, once.
type oneBatch struct {
	schema *arrow.Schema
	b      arrow.RecordBatch
}

func (o *oneBatch) Schema() *arrow.Schema      { return o.schema }
func (o *oneBatch) Open(context.Context) error { return nil }
func (o *oneBatch) Close() error {
	if o.b != nil {
		o.b.Release()
		o.b = nil
	}
	return nil
}

func (o *oneBatch) Next(context.Context) (arrow.RecordBatch, error) {
	if o.b == nil {
		return nil, io.EOF
	}
	b := o.b
	o.b = nil
	return b, nil
}
