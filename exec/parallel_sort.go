package exec

import (
	"context"
	"errors"
	"io"
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// ParallelSort is Sort run by workers. Each worker drains its pipeline
// over the morsels it takes. When every key is a number, date or
// timestamp without NULLs and there are at most two keys, the range path
// (rangeSort) sorts: the rows are cut into one key range per worker,
// each worker sorts one range, and the output is the ranges in order,
// with no merge. Otherwise, as PostgreSQL's Gather Merge over per-worker
// sorts, each worker sorts its rows into a run (the serial Sort's stable
// sort), and the runs are merged by (keys, morsel sequence, row in morsel).
// Since a worker's rows are in (sequence, row) order and its sort is
// stable, the merge yields rows with equal keys in input order: the output
// is the serial Sort's, row for row, at every degree.
//
// The runs are sorted and merged in parallel within the first Next
// (cancellation or the first error stops every worker): the merge cuts
// the rows into one key range per worker at splitters sampled from the
// runs, and each worker merges its range. The output batches (the serial
// Sort's: BatchSize rows of the merged order) are gathered in parallel
// too: with one worker, on the consumer's goroutine at each Next; with
// more, by output workers that run ahead of the consumer from the first
// Next to Close (outputPipe: at most one batch waiting per worker), so no
// goroutine outlives the operator. Each worker's rows count against
// SortOptions.MemoryLimit (per worker) or the query's account.
type ParallelSort struct {
	morsels *Morsels
	views   []*MorselView
	inputs  []Operator
	mem     memory.Allocator
	out     *recycler // mem for the output batches, their buffers reused
	keys    []SortKey
	types   []sqltypes.Type
	opts    SortOptions
	budgets []memBudget
	runs    []sortRun
	cmps    [][]func(i, j int) int // cmps[a][b] compares a row of run a with one of run b
	refs    []operator.Ref         // the merged order
	// fast: every key normalizes exactly to uint64s comparable across
	// runs (numbers, dates, timestamps), so the merge compares those.
	fast   bool
	pos    int
	ready  []arrow.RecordBatch // gathered output batches not yet returned
	loaded bool
	// parts[w] are the batches worker w drained, seqs[w] their morsel
	// sequences; the merge path's runs or the range path take them.
	parts [][]arrow.RecordBatch
	seqs  [][]int64
	rs    *rangeSort  // the range path, when it applies
	pipe  *outputPipe // the output workers, at more than one worker
}

// sortRun is one worker's sorted rows: all of them, their order, and each
// row's position in the input (morsel sequence << 32 | row in morsel).
type sortRun struct {
	rows  arrow.RecordBatch
	order []int
	pos   []int64
	// With fast, per key in sorted order (index k is row order[k]), so
	// the merge reads them sequentially: the normalized keys, the NULL
	// flags (nil for a column without NULLs), and spos the positions.
	norms [][]uint64
	nulls [][]bool
	spos  []int64
}

var _ Operator = (*ParallelSort)(nil)

// NewParallelSort returns the sort of the morsels by keys, one worker per
// input: inputs[w] is worker w's pipeline over views[w]. It takes
// ownership of morsels and inputs, also when it fails.
func NewParallelSort(morsels *Morsels, views []*MorselView, inputs []Operator, mem memory.Allocator, keys []SortKey, opts SortOptions) (*ParallelSort, error) {
	p := &ParallelSort{morsels: morsels, views: views, inputs: inputs, mem: mem, out: newRecycler(mem), keys: keys, opts: opts}
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
	p.fast = numericKeys(types)
	if p.opts.BatchSize <= 0 {
		p.opts.BatchSize = DefaultBatchSize
	}
	for range inputs {
		p.budgets = append(p.budgets, newBudget("sort", mem, opts.MemoryLimit))
	}
	p.runs = make([]sortRun, len(inputs))
	p.parts = make([][]arrow.RecordBatch, len(inputs))
	p.seqs = make([][]int64, len(inputs))
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
	if p.pipe != nil {
		p.pipe.stop()
		p.pipe = nil
	}
	releaseBatches(p.ready)
	p.ready = nil
	for w := range p.parts {
		releaseBatches(p.parts[w])
		p.parts[w] = nil
	}
	if p.rs != nil {
		releaseBatches(p.rs.parts)
		putEntries(p.rs.ebuf)
		putEntries(p.rs.sbuf)
		for _, b := range p.rs.flat {
			putEntries(b)
		}
		p.rs = nil
	}
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
	p.out.close()
	return errors.Join(errs...)
}

// drain is worker w's first step: it drains its pipeline into
// p.parts[w], each part's morsel sequence in p.seqs[w].
func (p *ParallelSort) drain(ctx context.Context, w int) error {
	budget := &p.budgets[w]
	for {
		b, err := p.inputs[w].Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		// Arrow counts a column's NULLs lazily, a write: count them here,
		// on the part's only reader, before other workers read it.
		for _, col := range b.Columns() {
			col.NullN()
		}
		p.parts[w] = append(p.parts[w], b)
		p.seqs[w] = append(p.seqs[w], p.views[w].Seq())
		if err := budget.retain(b); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// work is worker w on the merge path: it sorts the parts it drained
// into its run.
func (p *ParallelSort) work(ctx context.Context, w int) error {
	budget := &p.budgets[w]
	parts, seqs := p.parts[w], p.seqs[w]
	p.parts[w], p.seqs[w] = nil, nil
	defer func() { releaseBatches(parts) }()
	if len(parts) == 0 {
		return nil
	}
	all, err := concatBatches(p.mem, p.Schema(), parts)
	if err != nil {
		return err
	}
	// Each row's position, allocated once at its size (appending row by
	// row regrew it a dozen times on millions of rows).
	pos := make([]int64, 0, all.NumRows())
	for k, b := range parts {
		seq := seqs[k] << 32
		for i := range b.NumRows() {
			pos = append(pos, seq|i)
		}
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
	if run.order, err = sortedOrder(all, p.keys, p.types); err != nil || !p.fast {
		return err
	}
	if err := budget.grow(8 * int64(len(p.keys)+1) * all.NumRows()); err != nil {
		return err
	}
	run.spos = make([]int64, len(run.order))
	for k, i := range run.order {
		run.spos[k] = run.pos[i]
	}
	run.pos = nil // the merge reads spos
	for k, key := range p.keys {
		norm, _, _ := normalizedKeys(all.Column(key.Col), p.types[k], key.Desc)
		sorted := make([]uint64, len(run.order))
		for x, i := range run.order {
			sorted[x] = norm[i]
		}
		run.norms = append(run.norms, sorted)
		var nulls []bool
		if col := all.Column(key.Col); col.NullN() > 0 {
			nulls = make([]bool, len(run.order))
			for x, i := range run.order {
				nulls[x] = col.IsNull(i)
			}
		}
		run.nulls = append(run.nulls, nulls)
	}
	return nil
}

// lessFast is less by the sorted normalized keys and positions (fast).
func (p *ParallelSort) lessFast(a, b sortRef) bool {
	ra, rb := &p.runs[a.r], &p.runs[b.r]
	for k := range p.keys {
		if ra.nulls[k] != nil || rb.nulls[k] != nil {
			na := ra.nulls[k] != nil && ra.nulls[k][a.k]
			nb := rb.nulls[k] != nil && rb.nulls[k][b.k]
			switch {
			case na && nb:
				continue
			case na || nb:
				return na == p.keys[k].nullsFirst()
			}
		}
		if x, y := ra.norms[k][a.k], rb.norms[k][b.k]; x != y {
			return x < y
		}
	}
	return ra.spos[a.k] < rb.spos[b.k]
}

// load sorts the runs in parallel, then merges them in parallel: the
// rows are cut into one key range per worker at splitters sampled from the
// runs, and each worker merges its range of every run into its part of
// the output order.
func (p *ParallelSort) load(ctx context.Context) error {
	p.loaded = true
	if err := runWorkers(ctx, len(p.inputs), p.drain); err != nil {
		return err
	}
	if rs := p.newRangeSort(); rs != nil {
		p.rs = rs
		return p.loadRanges(ctx)
	}
	if err := runWorkers(ctx, len(p.inputs), p.work); err != nil {
		return err
	}
	// Arrow counts a slice's NULLs lazily, a write: count them now, before
	// the merge's and the gather's workers read the runs at once.
	for _, run := range p.runs {
		if run.rows != nil {
			for _, col := range run.rows.Columns() {
				col.NullN()
			}
		}
	}
	n := len(p.runs)
	p.cmps = make([][]func(i, j int) int, n)
	total := 0
	for a := range p.runs {
		p.cmps[a] = make([]func(i, j int) int, n)
		if p.runs[a].rows == nil {
			continue
		}
		total += len(p.runs[a].order)
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
	}
	if total == 0 {
		return nil
	}
	// bounds[j][r] is where range j starts in run r's order (range j ends
	// where j+1 starts); ranges are cut at the splitters.
	ranges := n
	splitters := p.splitters(ranges)
	bounds := make([][]int, len(splitters)+2)
	bounds[0] = make([]int, n)
	for j, s := range splitters {
		bounds[j+1] = make([]int, n)
		for r := range p.runs {
			run := &p.runs[r]
			// The first row of run r after the splitter.
			bounds[j+1][r] = sort.Search(len(run.order), func(k int) bool { return p.less(s, sortRef{r, k}) })
		}
	}
	last := make([]int, n)
	for r := range p.runs {
		last[r] = len(p.runs[r].order)
	}
	bounds[len(bounds)-1] = last
	offsets := make([]int, len(bounds))
	for j := 1; j < len(bounds); j++ {
		offsets[j] = offsets[j-1]
		for r := range p.runs {
			offsets[j] += bounds[j][r] - bounds[j-1][r]
		}
	}
	// The merged order: a Ref a row on the Go heap, charged to the
	// first worker's budget.
	if err := p.budgets[0].grow(8 * int64(total)); err != nil {
		return err
	}
	p.refs = make([]operator.Ref, total)
	return runWorkers(ctx, len(bounds)-1, func(ctx context.Context, j int) error {
		p.mergeRange(bounds[j], bounds[j+1], p.refs[offsets[j]:offsets[j+1]])
		return ctx.Err()
	})
}

// sortRef is row order[k] of run r (the k-th of its run in sorted order).
type sortRef struct{ r, k int }

// less orders two rows of the runs by keys, then by input position: a
// total order, the serial stable sort's.
func (p *ParallelSort) less(a, b sortRef) bool {
	if p.fast {
		return p.lessFast(a, b)
	}
	ra, rb := &p.runs[a.r], &p.runs[b.r]
	i, j := ra.order[a.k], rb.order[b.k]
	if c := p.cmps[a.r][b.r](i, j); c != 0 {
		return c < 0
	}
	return ra.pos[i] < rb.pos[j]
}

// splitters picks up to ranges-1 rows that cut the runs into ranges of
// about equal size: each run's quantiles, sorted, every ranges-th.
func (p *ParallelSort) splitters(ranges int) []sortRef {
	var cands []sortRef
	for r := range p.runs {
		m := len(p.runs[r].order)
		if m == 0 {
			continue
		}
		for q := 1; q < ranges; q++ {
			cands = append(cands, sortRef{r, m * q / ranges})
		}
	}
	slices.SortFunc(cands, func(a, b sortRef) int {
		switch {
		case p.less(a, b):
			return -1
		case p.less(b, a):
			return 1
		}
		return 0
	})
	var out []sortRef
	for q := 1; q < ranges && len(cands) > 0; q++ {
		s := cands[len(cands)*q/ranges]
		if len(out) > 0 && !p.less(out[len(out)-1], s) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// mergeRange merges rows [lo[r], hi[r]) of each run r's order into out.
func (p *ParallelSort) mergeRange(lo, hi []int, out []operator.Ref) {
	heads := slices.Clone(lo)
	var heap []int
	less := func(a, b int) bool { return p.less(sortRef{a, heads[a]}, sortRef{b, heads[b]}) }
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(heap) {
				return
			}
			m := l
			if r := l + 1; r < len(heap) && less(heap[r], heap[l]) {
				m = r
			}
			if !less(heap[m], heap[i]) {
				return
			}
			heap[i], heap[m] = heap[m], heap[i]
			i = m
		}
	}
	for r := range lo {
		if lo[r] < hi[r] {
			heap = append(heap, r)
		}
	}
	for i := len(heap)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for k := range out {
		r := heap[0]
		out[k] = operator.Ref{Src: int32(r), Row: int32(p.runs[r].order[heads[r]])}
		if heads[r]++; heads[r] == hi[r] {
			heap[0] = heap[len(heap)-1]
			heap = heap[:len(heap)-1]
		}
		if len(heap) > 1 {
			down(0)
		}
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
		if len(p.inputs) > 1 {
			p.startOutput(ctx)
		}
	}
	if p.pipe != nil {
		return p.nextOutput(ctx)
	}
	if len(p.ready) == 0 {
		if p.pos >= p.rows() {
			return nil, io.EOF
		}
		if err := p.gatherAhead(ctx); err != nil {
			return nil, err
		}
	}
	out := p.ready[0]
	p.ready[0] = nil
	p.ready = p.ready[1:]
	return out, nil
}

// rows is the number of rows of the output.
func (p *ParallelSort) rows() int {
	if p.rs != nil {
		return len(p.rs.entries)
	}
	return len(p.refs)
}

// gatherAhead gathers the next output batches, one per worker, in
// parallel: the gather reads the runs at random rows, so it costs as much
// as the sort itself and would otherwise be the serial part of the query.
// The batches are the ones the serial Sort emits (BatchSize rows each from
// the merged order), so at most workers-1 of them wait in ready. Only a
// one-worker sort gathers this way now (one batch, on the consumer's
// goroutine); more workers run an outputPipe.
func (p *ParallelSort) gatherAhead(ctx context.Context) error {
	size := p.opts.BatchSize
	total := p.rows()
	k := min(len(p.inputs), (total-p.pos+size-1)/size)
	batches := make([]arrow.RecordBatch, k)
	gather := func(ctx context.Context, w int) error {
		lo := p.pos + w*size
		hi := min(total, lo+size)
		var b arrow.RecordBatch
		var err error
		if p.rs != nil {
			b, err = p.rs.gather(ctx, p, lo, hi, w)
		} else {
			b, err = p.gather(ctx, p.refs[lo:hi])
		}
		batches[w] = b
		return err
	}
	var err error
	if k == 1 {
		err = gather(ctx, 0)
	} else {
		err = runWorkers(ctx, k, gather)
	}
	if err != nil {
		releaseBatches(batches)
		return err
	}
	p.pos = min(total, p.pos+k*size)
	p.ready = batches
	return nil
}

// gather builds the output rows refs from the runs.
func (p *ParallelSort) gather(ctx context.Context, refs []operator.Ref) (arrow.RecordBatch, error) {
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
		col, err := operator.Gather(ctx, p.out, schema.Field(c).Type, srcs, refs)
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
