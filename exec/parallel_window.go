package exec

import (
	"context"
	"errors"
	"hash/maphash"
	"io"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// ParallelWindow runs a window (a Sort and a Window, or a stack of them
// whose PARTITION BYs share columns) on workers, each over whole
// partitions, as DataFusion repartitions a window's input by hash of its
// partition keys:
//
//  1. split: each worker drains its pipeline over the morsels it takes
//     and sends every row to worker hash(keys) mod workers;
//  2. window: each worker gathers the rows sent to it in input order
//     (morsel sequence, row in morsel) and runs its own copy of the serial
//     chain over them (the stable Sort by partition and order keys, then
//     the Window, per window of the stack);
//  3. merge: the workers' outputs are merged by the top window's
//     partition keys.
//
// Every partition lies in one worker, whose rows are a subsequence of the
// input in input order, so each worker's chain gives each of its rows the
// serial value and the serial order among its partition (ties in ORDER BY,
// peers and frames included). The serial output is ordered by the top
// window's partition keys first, and rows with equal keys are in one
// worker (keys that compare equal hash equally: the hash is keyEncoder's
// equality, -0 as 0, one NaN); so merging the workers' runs of equal keys
// by those keys restores the serial output row for row, and cut into the
// same batches.
//
// Steps 1 and 2 run within the first Next (no goroutine outlives it;
// cancellation or the first error stops every worker). Memory is the
// serial window's, spread over the workers: the split holds the input once
// until the workers have gathered their rows (counted against
// WindowOptions.MemoryLimit per worker, or the query's account), each
// worker's Sort and Window count theirs as the serial ones do, and the
// outputs are held until returned, as the serial Window holds its output.
type ParallelWindow struct {
	morsels    *Morsels
	views      []*MorselView
	pipes      []Operator  // worker w's pipeline over views[w]
	feeds      []*oneBatch // worker w's chain reads its rows from this
	chains     []Operator  // worker w's serial Sort and Window chain, nil once drained
	schema     *arrow.Schema
	mem        memory.Allocator
	hashKeys   []int
	hashTypes  []sqltypes.Type
	mergeKeys  []SortKey
	mergeTypes []sqltypes.Type
	seed       maphash.Seed
	budgets    []memBudget
	batchSize  int

	pieces [][]windowPiece // per worker: the morsels it split
	outs   []arrow.RecordBatch
	runs   [][]int // per worker: where each run of equal merge keys starts in outs[w], then its length
	cmps   [][]func(i, j int) int
	run    []int // per worker: its current run
	head   []int // per worker: its next row
	heap   []int // the workers with rows left, by their next row
	loaded bool
}

// windowPiece is one morsel after the split: its rows, and per worker the
// rows (in order) sent to it.
type windowPiece struct {
	seq  int64
	rows arrow.RecordBatch
	idx  [][]int32
}

var _ Operator = (*ParallelWindow)(nil)

// NewParallelWindow returns the window computed by chain over the morsels
// (through the worker pipelines inputs, one per view, all with one
// schema), split by the hash of the input columns hashKeys. chain builds
// one worker's serial chain over an operator yielding that worker's rows
// (its Sorts may emit one batch: the rows are in memory already); every
// column of hashKeys must be a PARTITION BY column of every window of the
// chain, and mergeKeys are the top window's partition keys (ascending,
// NULLs last) over the chain's output. It takes ownership of morsels and
// inputs, also when it fails.
func NewParallelWindow(morsels *Morsels, views []*MorselView, inputs []Operator, mem memory.Allocator, hashKeys []int,
	mergeKeys []SortKey, chain func(in Operator) (Operator, error), opts WindowOptions) (*ParallelWindow, error) {
	p := &ParallelWindow{morsels: morsels, views: views, pipes: inputs, mem: mem, hashKeys: hashKeys, mergeKeys: mergeKeys,
		seed: maphash.MakeSeed(), batchSize: opts.BatchSize}
	fail := func(err error) (*ParallelWindow, error) {
		p.Close()
		return nil, err
	}
	if len(inputs) == 0 || len(views) != len(inputs) {
		return fail(sqlerr.New(sqlerr.InternalError, "parallel window: %d inputs for %d views", len(inputs), len(views)))
	}
	if len(hashKeys) == 0 {
		return fail(sqlerr.New(sqlerr.InternalError, "parallel window: no partition keys to split by"))
	}
	if p.batchSize <= 0 {
		p.batchSize = DefaultBatchSize
	}
	in := inputs[0].Schema()
	for _, c := range hashKeys {
		t, err := columnType(in, c)
		if err != nil {
			return fail(err)
		}
		p.hashTypes = append(p.hashTypes, t)
	}
	for range inputs {
		feed := &oneBatch{schema: in}
		op, err := chain(feed)
		if err != nil {
			return fail(err)
		}
		p.feeds, p.chains = append(p.feeds, feed), append(p.chains, op)
		p.budgets = append(p.budgets, newBudget("window", mem, opts.MemoryLimit))
	}
	p.schema = p.chains[0].Schema()
	types, err := checkKeys(p.schema, mergeKeys)
	if err != nil {
		return fail(err)
	}
	p.mergeTypes = types
	p.pieces = make([][]windowPiece, len(inputs))
	p.outs = make([]arrow.RecordBatch, len(inputs))
	p.runs = make([][]int, len(inputs))
	return p, nil
}

func (p *ParallelWindow) Schema() *arrow.Schema { return p.schema }

func (p *ParallelWindow) Open(ctx context.Context) error {
	if err := p.morsels.open(ctx); err != nil {
		return err
	}
	for w := range p.pipes {
		if err := p.pipes[w].Open(ctx); err != nil {
			return err
		}
		if err := p.chains[w].Open(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (p *ParallelWindow) Close() error {
	p.releasePieces()
	for w, o := range p.outs {
		if o != nil {
			o.Release()
			p.outs[w] = nil
		}
	}
	var errs []error
	for _, in := range p.pipes {
		errs = append(errs, in.Close())
	}
	for w, c := range p.chains {
		if c != nil {
			errs = append(errs, c.Close())
			p.chains[w] = nil
		}
	}
	if p.morsels != nil {
		errs = append(errs, p.morsels.close())
	}
	return errors.Join(errs...)
}

func (p *ParallelWindow) releasePieces() {
	for w := range p.pieces {
		for _, pc := range p.pieces[w] {
			pc.rows.Release()
		}
		p.pieces[w] = nil
	}
}

// split is step 1 for worker w: it drains its pipeline, each morsel's
// rows sorted into the workers they go to.
func (p *ParallelWindow) split(ctx context.Context, w int) error {
	budget := &p.budgets[w]
	n := len(p.pipes)
	var hashes []uint64
	var enc []byte
	for {
		b, err := p.pipes[w].Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		rows := int(b.NumRows())
		if rows == 0 {
			b.Release()
			continue
		}
		// The workers read this batch at once in step 2: arrow counts
		// nulls lazily, which would race.
		for _, c := range b.Columns() {
			settleNullCounts(c)
		}
		pc := windowPiece{seq: p.views[w].Seq(), rows: b, idx: make([][]int32, n)}
		p.pieces[w] = append(p.pieces[w], pc)
		if err := budget.retain(b); err != nil {
			return err
		}
		if err := budget.grow(4 * int64(rows)); err != nil {
			return err
		}
		hashes = slices.Grow(hashes[:0], rows)[:rows]
		clear(hashes)
		enc = p.hash(b, hashes, enc)
		for i, h := range hashes {
			// The high bits of the mixed hash, scaled to the workers.
			to := int((mix64(h) >> 32) * uint64(n) >> 32)
			pc.idx[to] = append(pc.idx[to], int32(i))
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// hash folds the hash keys of each row of b into hashes; rows whose keys
// are equal under grouping (keyEncoder: NULL = NULL, -0 = 0, one NaN) get
// equal hashes. enc is scratch space, returned for reuse.
func (p *ParallelWindow) hash(b arrow.RecordBatch, hashes []uint64, enc []byte) []byte {
	const null = 0x9e3779b97f4a7c15
	for k, c := range p.hashKeys {
		col := b.Column(c)
		t := p.hashTypes[k]
		nulls := col.NullN() > 0
		fold := func(i int, v uint64) {
			if nulls && col.IsNull(i) {
				v = null
			}
			hashes[i] = mix64(hashes[i]^v) + uint64(k)
		}
		switch t.Kind {
		case sqltypes.Int2:
			for i, v := range eval.FixedValues[int16](col) {
				fold(i, uint64(v))
			}
		case sqltypes.Int4, sqltypes.Date:
			for i, v := range eval.FixedValues[int32](col) {
				fold(i, uint64(v))
			}
		case sqltypes.Int8, sqltypes.Timestamp, sqltypes.TimestampTZ:
			for i, v := range eval.FixedValues[int64](col) {
				fold(i, uint64(v))
			}
		case sqltypes.Float8:
			for i, v := range eval.FixedValues[float64](col) {
				fold(i, floatKeyBits(v))
			}
		case sqltypes.Float4:
			for i, v := range eval.FixedValues[float32](col) {
				fold(i, floatKeyBits(float64(v)))
			}
		default:
			ke := keyEncoder{cols: []arrow.Array{col}, types: []sqltypes.Type{t}}
			for i := range hashes {
				enc = ke.encode(enc[:0], i)
				hashes[i] = mix64(hashes[i]^maphash.Bytes(p.seed, enc)) + uint64(k)
			}
		}
	}
	return enc
}

// floatKeyBits are the bits of f as keyEncoder compares it: -0 as 0, every
// NaN as one.
func floatKeyBits(f float64) uint64 {
	switch {
	case f != f:
		f = math.NaN()
	case f == 0:
		f = 0
	}
	return math.Float64bits(f)
}

// window is step 2 for worker w: it gathers its rows in input order, runs
// its chain over them and finds the runs of equal merge keys it yields.
func (p *ParallelWindow) window(ctx context.Context, w int) error {
	budget := &p.budgets[w]
	var mine []*windowPiece
	total := 0
	for v := range p.pieces {
		for k := range p.pieces[v] {
			if pc := &p.pieces[v][k]; len(pc.idx[w]) > 0 {
				mine = append(mine, pc)
				total += len(pc.idx[w])
			}
		}
	}
	if total == 0 {
		return nil
	}
	slices.SortFunc(mine, func(a, b *windowPiece) int { return int(a.seq - b.seq) })
	if err := budget.grow(8 * int64(total)); err != nil {
		return err
	}
	refs := make([]operator.Ref, 0, total)
	for s, pc := range mine {
		for _, r := range pc.idx[w] {
			refs = append(refs, operator.Ref{Src: int32(s), Row: r})
		}
	}
	schema := p.feeds[w].schema
	cols := make([]arrow.Array, schema.NumFields())
	srcs := make([]arrow.Array, len(mine))
	for c := range cols {
		for s, pc := range mine {
			srcs[s] = pc.rows.Column(c)
		}
		col, err := operator.Gather(ctx, p.mem, schema.Field(c).Type, srcs, refs)
		if err != nil {
			releaseArrays(cols[:c])
			return err
		}
		cols[c] = col
	}
	p.feeds[w].b = array.NewRecordBatch(schema, cols, int64(total))
	releaseArrays(cols)
	refs = nil
	parts, err := drainAll(ctx, p.chains[w], budget)
	if err != nil {
		return err
	}
	out, err := concatBatches(p.mem, p.Schema(), parts)
	releaseBatches(parts)
	if err != nil {
		return err
	}
	p.outs[w] = out
	// The chain's operators hold their input until closed: close it now,
	// its output lives on in out.
	err = p.chains[w].Close()
	p.chains[w] = nil
	if err != nil {
		return err
	}
	n := int(out.NumRows())
	if err := budget.grow(8 * int64(n)); err != nil {
		return err
	}
	cmp, err := rowComparator(out, p.mergeKeys, p.mergeTypes)
	if err != nil {
		return err
	}
	starts := []int{0}
	for i := 1; i < n; i++ {
		if cmp(i-1, i) != 0 {
			starts = append(starts, i)
		}
	}
	p.runs[w] = append(starts, n)
	return ctx.Err()
}

// load runs steps 1 and 2 and readies the merge.
func (p *ParallelWindow) load(ctx context.Context) error {
	p.loaded = true
	n := len(p.pipes)
	if err := runWorkers(ctx, n, p.split); err != nil {
		return err
	}
	err := runWorkers(ctx, n, p.window)
	p.releasePieces()
	if err != nil {
		return err
	}
	p.cmps = make([][]func(i, j int) int, n)
	p.run, p.head = make([]int, n), make([]int, n)
	for a := range p.outs {
		p.cmps[a] = make([]func(i, j int) int, n)
		if p.outs[a] == nil || p.outs[a].NumRows() == 0 {
			continue
		}
		for b := range p.outs {
			if b == a || p.outs[b] == nil || p.outs[b].NumRows() == 0 {
				continue
			}
			c, err := rowComparator2(p.outs[a], p.outs[b], p.mergeKeys, p.mergeTypes)
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

// less orders workers a and b by the merge keys of their next rows. No two
// workers hold equal keys; the worker number only makes the order total.
func (p *ParallelWindow) less(a, b int) bool {
	if c := p.cmps[a][b](p.head[a], p.head[b]); c != 0 {
		return c < 0
	}
	return a < b
}

func (p *ParallelWindow) down(i int) {
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

// windowSeg is rows [lo, hi) of worker w's output.
type windowSeg struct{ w, lo, hi int }

// Next returns the next rows of the merge, at most batchSize: a slice of
// one worker's output while its run of rows has a quarter batch left, else
// the rows of the next runs gathered into a batch of at least a quarter
// batch. (The rows are the serial ones, in order; the batches are cut
// where the runs make copying least.)
func (p *ParallelWindow) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !p.loaded {
		if err := p.load(ctx); err != nil {
			return nil, err
		}
	}
	var segs []windowSeg
	minSlice := max(p.batchSize/4, 1)
	for room := p.batchSize; room > 0 && len(p.heap) > 0; {
		w := p.heap[0]
		end := p.runs[w][p.run[w]+1]
		lo := p.head[w]
		if taken := p.batchSize - room; end-lo >= minSlice && taken >= minSlice {
			break // gather what is taken; the long run starts the next batch
		}
		hi := min(end, lo+room)
		if k := len(segs) - 1; k >= 0 && segs[k].w == w && segs[k].hi == lo {
			segs[k].hi = hi
		} else {
			segs = append(segs, windowSeg{w, lo, hi})
		}
		room -= hi - lo
		p.head[w] = hi
		if hi < end {
			continue
		}
		if p.run[w]++; p.run[w] == len(p.runs[w])-1 {
			p.heap[0] = p.heap[len(p.heap)-1]
			p.heap = p.heap[:len(p.heap)-1]
		}
		p.down(0)
	}
	switch len(segs) {
	case 0:
		return nil, io.EOF
	case 1:
		s := segs[0]
		return p.outs[s.w].NewSlice(int64(s.lo), int64(s.hi)), nil
	}
	var refs []operator.Ref
	for _, s := range segs {
		for r := s.lo; r < s.hi; r++ {
			refs = append(refs, operator.Ref{Src: int32(s.w), Row: int32(r)})
		}
	}
	schema := p.Schema()
	cols := make([]arrow.Array, schema.NumFields())
	srcs := make([]arrow.Array, len(p.outs))
	for c := range cols {
		for w, o := range p.outs {
			srcs[w] = nil
			if o != nil {
				srcs[w] = o.Column(c)
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

// mix64 is splitmix64's finalizer: every bit of x moves every bit of the
// result.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ (x >> 31)
}
