package asof

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/operator"
)

// Join is the ASOF join operator: one left input and N >= 1 right inputs,
// each matched independently against every left row. Its output is the left
// columns followed by each right input's payload columns, one output batch
// per left batch.
type Join struct {
	left operator.Operator
	// leftWidth is the number of the left input's own columns (the
	// output's first columns); converted on columns follow them.
	leftWidth int
	opts      Options
	specs     []spec
	rights    []rightInput
	schema    *arrow.Schema

	// Distinct left on columns, decoded once per left batch and checked for
	// order; onOf maps each right input to its entry.
	leftOns  []int
	checkT   []bool // whether leftOns[i] must ascend over the whole input
	onLine   []bool // whether leftOns[i] is decoded to the number line
	onOf     []int
	lastT    []uint64
	hasLast  []bool
	leftRows int64
	// Key dictionaries: right inputs matching on the same left key
	// columns share one (see keyDict); keysOf maps each right input to
	// its group.
	groups []keyGroup
	keysOf []int
	serial *leftBatch // the serial mode's decoded left batch

	// pool recycles the gathered output buffers once consumers release
	// them; it is drained at Close.
	pool *operator.Pool
	// outer tracks the right rows that won nothing, for a RIGHT or FULL
	// join (outer.go); nil otherwise.
	outer *unmatched
	// pair runs a right input with a condition on both inputs (pairs.go);
	// nil otherwise.
	pair *pairState

	workers  []chan work
	results  []chan result
	pending  []*inflight // dispatched, not yet assembled (oldest first)
	spare    []*leftBatch
	leftDone bool
	wg       sync.WaitGroup
	err      error
	opened   bool
	closed   bool
}

type work struct {
	ctx context.Context
	lb  arrow.RecordBatch
	lt  *onColumn
	lk  *leftKeys
}

type result struct {
	cols []arrow.Array
	// matched[i] says row i found a winner; set only for the kinds that
	// filter (INNER, SEMI, ANTI), in
	// a slice of its own (the worker's refs are reused by its next batch).
	matched []bool
	err     error
}

// inflight is a left batch handed to the right-input goroutines, with the
// decoded on columns and keys they read.
type inflight struct {
	lb  arrow.RecordBatch
	dec *leftBatch
}

// leftBatch is what the join derives from one left batch for the right
// inputs: its distinct on columns decoded, and its keys per dictionary.
type leftBatch struct {
	decoded []onColumn
	keys    []leftKeys
}

// keyGroup is one key dictionary and the left key columns its inputs
// match on.
type keyGroup struct {
	dict *keyDict
	enc  *keyEncoding
	cols []int
	// cond is the group's one input's left condition (an input with one
	// has a group of its own: its rows' ids depend on it).
	cond Cond
}

// pipelineDepth is how many left batches the right-input goroutines may
// have in hand at once: with more than one, a fast input goes on to the
// next batch instead of waiting for the slowest, which keeps both cores
// busy when there are more inputs than cores. At 2, a runtime trace of S6
// (four inputs, two cores) showed a core idle for 0.3-1.3 ms at a time while
// the inputs ahead waited for the slowest; 4 took S6 from ~51 to ~48 ns
// per left row. Each batch in hand holds its output buffers, so memory
// stays bounded by depth x inputs x batch.
const pipelineDepth = 4

func matchedOf(refs []ref, kind Kind) []bool {
	if !kind.filters() {
		return nil
	}
	m := make([]bool, len(refs))
	for i, r := range refs {
		m[i] = r.Src >= 0
	}
	return m
}

var _ operator.Operator = (*Join)(nil)

// New validates the join and builds its output schema. It takes ownership of
// left and of every right input: Close closes them, also when New fails.
func New(left operator.Operator, rights []Right, opts Options) (*Join, error) {
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	// The left columns output are the input's own, not the converted on
	// columns convertOns may append.
	leftWidth := left.Schema().NumFields()
	left, rights = convertOns(left, rights, opts.Allocator)
	specs, err := validate(left.Schema(), rights, &opts)
	if err != nil {
		left.Close()
		for _, r := range rights {
			if r.Input != nil {
				r.Input.Close()
			}
		}
		return nil, err
	}
	pool := opts.pool
	if pool == nil {
		pool = operator.NewPool(opts.Allocator)
	}
	j := &Join{left: left, leftWidth: leftWidth, opts: opts, specs: specs, pool: pool}
	ls := left.Schema()
	fields := append([]arrow.Field(nil), ls.Fields()[:leftWidth]...)
	pair := specs[0].PairCond != nil
	if specs[0].Kind.outer() {
		// Unmatched right rows come out with every left column NULL.
		for i := range fields {
			fields[i].Nullable = true
		}
		if !pair {
			j.outer = newUnmatched(&specs[0], opts.Allocator)
		}
	}
	for si, sp := range specs {
		rs := sp.Input.Schema()
		payload := sp.Payload
		if j.outer != nil {
			payload = j.outer.payload // not the ordinal column
		}
		for _, c := range payload {
			f := rs.Field(c)
			f.Nullable = true
			fields = append(fields, f)
		}
		idx := -1
		for i, c := range j.leftOns {
			if c == sp.LeftOn {
				idx = i
			}
		}
		if idx < 0 {
			idx = len(j.leftOns)
			j.leftOns = append(j.leftOns, sp.LeftOn)
			j.checkT = append(j.checkT, false)
			j.onLine = append(j.onLine, false)
		}
		// A decimal column may feed both kernels (per-input bounds decide);
		// it is decoded to the line when some input uses the line.
		j.onLine[idx] = j.onLine[idx] || sp.ord == ordNone
		// Key-major inputs check t within each key group themselves.
		j.checkT[idx] = j.checkT[idx] || !sp.KeyMajor && !opts.leftChecked
		j.onOf = append(j.onOf, idx)
		// Inputs on the same left key columns encode the left keys alike
		// (validate checked each against the left types), so they can
		// share ids. Key-major inputs track key groups of their own.
		g := -1
		for gi, kg := range j.groups {
			if !sp.KeyMajor && !j.specs[j.groupFirst(gi)].KeyMajor && slices.Equal(kg.cols, sp.LeftKeys) && slices.Equal(kg.enc.nullSafe, sp.leftEnc.nullSafe) && slices.Equal(kg.enc.cols, sp.leftEnc.cols) &&
				kg.cond == nil && sp.LeftCond == nil {
				g = gi
			}
		}
		if g < 0 {
			g = len(j.groups)
			d := newKeyDict(sp.keyEnc.u64, &j.opts)
			if si < len(opts.dicts) && opts.dicts[si] != nil {
				d = opts.dicts[si]
			}
			j.groups = append(j.groups, keyGroup{dict: d, enc: &specs[len(j.rights)].leftEnc, cols: sp.LeftKeys, cond: sp.LeftCond})
		}
		j.keysOf = append(j.keysOf, g)
		if !pair {
			j.rights = append(j.rights, newRightInput(sp, &j.opts, j.pool, ls, j.groups[g].dict))
		}
	}
	md := ls.Metadata()
	j.schema = arrow.NewSchema(fields, &md)
	if pair {
		j.pair = newPairState(&j.specs[0], opts.Allocator, j.groups[0].dict, leftWidth, j.schema)
	}
	j.serial = j.newLeftBatch()
	j.lastT = make([]uint64, len(j.leftOns))
	j.hasLast = make([]bool, len(j.leftOns))
	return j, nil
}

// newRightInput builds the kernel of one right input: the number line's
// or, for the on columns off the line, the comparison kernel over the
// column's value type.
func newRightInput(sp spec, opts *Options, pool *operator.Pool, left *arrow.Schema, dict *keyDict) rightInput {
	switch sp.ord {
	case ordNone:
		return newLineRight(sp, opts, pool, left, dict)
	case ordDecimal:
		return newOrdRight[decimalValue](decOps{}, sp, opts, pool, left, dict)
	}
	return newOrdRight[string](bytesOps{}, sp, opts, pool, left, dict)
}

// groupFirst is the index of the first right input of key group g.
func (j *Join) groupFirst(g int) int {
	for i, kg := range j.keysOf {
		if kg == g {
			return i
		}
	}
	return -1
}

func (j *Join) newLeftBatch() *leftBatch {
	return &leftBatch{decoded: make([]onColumn, len(j.leftOns)), keys: make([]leftKeys, len(j.groups))}
}

// Schema is the left schema followed by every right input's payload fields
// (all nullable).
func (j *Join) Schema() *arrow.Schema { return j.schema }

// Open opens the inputs and, unless serial, starts one goroutine per right
// input.
func (j *Join) Open(ctx context.Context) error {
	if j.opened {
		return nil
	}
	j.opened = true
	if err := j.left.Open(ctx); err != nil {
		return err
	}
	for _, sp := range j.specs {
		if err := sp.Input.Open(ctx); err != nil {
			return err
		}
	}
	if j.opts.Serial || len(j.rights) == 1 {
		// One right input gains nothing from a goroutine: the left input
		// and the assembly wait for it anyway.
		return nil
	}
	for _, r := range j.rights {
		// Buffered to the pipeline depth, so neither side ever blocks on a
		// send while the other waits.
		in, out := make(chan work, pipelineDepth), make(chan result, pipelineDepth)
		j.workers = append(j.workers, in)
		j.results = append(j.results, out)
		j.wg.Add(1)
		go func(r rightInput) {
			defer j.wg.Done()
			for w := range in {
				cols, matched, err := r.process(w.ctx, w.lb, w.lt, w.lk)
				out <- result{cols: cols, matched: matched, err: err}
			}
		}(r)
	}
	return nil
}

// Next returns the join of the next left batch.
func (j *Join) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if j.err != nil {
		return nil, j.err
	}
	if !j.opened {
		if err := j.Open(ctx); err != nil {
			return nil, err
		}
	}
	rec, err := j.next(ctx)
	if err != nil {
		j.err = err
	}
	return rec, err
}

func (j *Join) next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if j.pair != nil {
		return j.nextPair(ctx)
	}
	if j.outer != nil {
		return j.nextOuter(ctx)
	}
	if j.workers == nil {
		lb, err := j.left.Next(ctx)
		if err != nil {
			return nil, err
		}
		defer lb.Release()
		dec := j.serial
		if err := j.decodeLeft(ctx, lb, dec); err != nil {
			return nil, err
		}
		results := make([]result, len(j.rights))
		for i, r := range j.rights {
			results[i].cols, results[i].matched, results[i].err = r.process(ctx, lb, &dec.decoded[j.onOf[i]], &dec.keys[j.keysOf[i]])
		}
		return j.assemble(ctx, lb, results)
	}
	// Keep up to pipelineDepth left batches with the goroutines, then
	// assemble the oldest.
	for len(j.pending) < pipelineDepth && !j.leftDone {
		lb, err := j.left.Next(ctx)
		if errors.Is(err, io.EOF) {
			j.leftDone = true
			break
		}
		if err != nil {
			return nil, err
		}
		var dec *leftBatch
		if n := len(j.spare); n > 0 {
			dec, j.spare = j.spare[n-1], j.spare[:n-1]
		} else {
			dec = j.newLeftBatch()
		}
		if err := j.decodeLeft(ctx, lb, dec); err != nil {
			j.spare = append(j.spare, dec)
			lb.Release()
			return nil, err
		}
		for i := range j.rights {
			j.workers[i] <- work{ctx: ctx, lb: lb, lt: &dec.decoded[j.onOf[i]], lk: &dec.keys[j.keysOf[i]]}
		}
		j.pending = append(j.pending, &inflight{lb: lb, dec: dec})
	}
	if len(j.pending) == 0 {
		return nil, io.EOF
	}
	f := j.pending[0]
	j.pending = j.pending[1:]
	results := make([]result, len(j.rights))
	for i := range j.rights {
		results[i] = <-j.results[i]
	}
	defer f.lb.Release()
	j.spare = append(j.spare, f.dec)
	return j.assemble(ctx, f.lb, results)
}

// assemble builds the output batch of lb from the right inputs' results.
func (j *Join) assemble(ctx context.Context, lb arrow.RecordBatch, results []result) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, 0, j.schema.NumFields())
	release := func() {
		for _, c := range cols {
			c.Release()
		}
	}
	for _, c := range lb.Columns()[:j.leftWidth] {
		c.Retain()
		cols = append(cols, c)
	}
	var firstErr error
	for _, res := range results {
		if res.err != nil && firstErr == nil {
			firstErr = res.err
		}
		cols = append(cols, res.cols...)
	}
	if firstErr != nil {
		release()
		return nil, firstErr
	}
	rec := array.NewRecordBatch(j.schema, cols, lb.NumRows())
	release()
	return j.filterInner(ctx, rec, results)
}

// decodeLeft maps the left on columns, checking they never decrease, and
// encodes and looks up the left keys once per key dictionary.
func (j *Join) decodeLeft(ctx context.Context, lb arrow.RecordBatch, dec *leftBatch) error {
	decoded := dec.decoded
	// arrow-go computes null counts lazily and caches them: settle them
	// here, before the batch is shared with the right-input goroutines.
	for _, c := range lb.Columns() {
		c.NullN()
	}
	for i, c := range j.leftOns {
		d := &decoded[i]
		arr := lb.Column(c)
		if !j.onLine[i] {
			d.t, d.valid = d.t[:0], nil
			continue
		}
		if err := decodeOn(arr, d, j.opts.LeftName); err != nil {
			return err
		}
		if !j.checkT[i] {
			continue
		}
		last, has := j.lastT[i], j.hasLast[i]
		for r, t := range d.t {
			if !d.ok(r) {
				continue
			}
			if has && t < last {
				return orderError(j.opts.LeftName, j.left.Schema().Field(c).Name, j.leftRows+int64(r)+1, arr.ValueStr(r))
			}
			last, has = t, true
		}
		j.lastT[i], j.hasLast[i] = last, has
	}
	n := int(lb.NumRows())
	for g := range j.groups {
		kg := &j.groups[g]
		cols := make([]arrow.Array, len(kg.cols))
		for i, c := range kg.cols {
			cols[i] = lb.Column(c)
		}
		dec.keys[g].load(kg.enc, kg.dict, cols, n)
		if kg.cond != nil {
			if err := maskRows(ctx, kg.cond, lb, &dec.keys[g].kb, dec.keys[g].ids); err != nil {
				return err
			}
		}
	}
	j.leftRows += lb.NumRows()
	return nil
}

// filterInner drops the rows some INNER or SEMI right input found no
// winner for, and those some ANTI right input found one for.
func (j *Join) filterInner(ctx context.Context, rec arrow.RecordBatch, results []result) (arrow.RecordBatch, error) {
	n := int(rec.NumRows())
	var keep []bool
	for i, sp := range j.specs {
		if !sp.Kind.filters() {
			continue
		}
		want := sp.Kind != Anti
		for row, ok := range results[i].matched[:n] {
			if ok != want {
				if keep == nil {
					keep = make([]bool, n)
					for k := range keep {
						keep[k] = true
					}
				}
				keep[row] = false
			}
		}
	}
	if keep == nil {
		return rec, nil
	}
	defer rec.Release()
	mem := j.opts.Allocator
	bb := array.NewBooleanBuilder(mem)
	defer bb.Release()
	bb.AppendValues(keep, nil)
	mask := bb.NewArray()
	defer mask.Release()
	return compute.FilterRecordBatch(compute.WithAllocator(ctx, mem), rec, mask, compute.DefaultFilterOptions())
}

// Close stops the right-input goroutines and releases every batch the join
// holds; it closes all inputs. It is idempotent.
func (j *Join) Close() error {
	if j.closed {
		return nil
	}
	j.closed = true
	for _, w := range j.workers {
		close(w)
	}
	j.wg.Wait()
	// Results of batches dispatched but never assembled.
	for _, f := range j.pending {
		for _, out := range j.results {
			for _, c := range (<-out).cols {
				c.Release()
			}
		}
		f.lb.Release()
	}
	for _, f := range j.pending {
		f.dec.free()
	}
	j.pending = nil
	for _, r := range j.rights {
		r.close()
	}
	if j.outer != nil {
		j.outer.close()
	}
	if j.pair != nil {
		j.pair.close()
	}
	// The goroutines have stopped: nothing reads the decoded batches now.
	j.serial.free()
	for _, dec := range j.spare {
		dec.free()
	}
	j.spare = nil
	if j.opts.pool == nil {
		j.pool.Close()
	}
	return j.left.Close()
}

// Allocator returns the allocator the join builds its output with.
func (j *Join) Allocator() memory.Allocator { return j.opts.Allocator }

// nextOuter is next for a RIGHT or FULL join (one right input, serial):
// each left batch's rows as INNER or LEFT gives them, then whatever right
// rows that batch decided were the winner of no left row; at the end of
// the left input, the rest of the right input's unmatched rows.
func (j *Join) nextOuter(ctx context.Context) (arrow.RecordBatch, error) {
	u, nLeft := j.outer, j.leftWidth
	for {
		b, ok, err := u.next(ctx, j.schema, nLeft)
		if err != nil || ok {
			return b, err
		}
		if u.leftDone {
			return nil, io.EOF
		}
		lb, err := j.left.Next(ctx)
		if errors.Is(err, io.EOF) {
			u.leftDone = true
			continue
		}
		if err != nil {
			return nil, err
		}
		rec, err := j.outerBatch(ctx, lb)
		lb.Release()
		return rec, err
	}
}

func (j *Join) outerBatch(ctx context.Context, lb arrow.RecordBatch) (arrow.RecordBatch, error) {
	u, dec := j.outer, j.serial
	if err := j.decodeLeft(ctx, lb, dec); err != nil {
		return nil, err
	}
	var res result
	res.cols, res.matched, res.err = j.rights[0].process(ctx, lb, &dec.decoded[j.onOf[0]], &dec.keys[j.keysOf[0]])
	if res.err != nil {
		return nil, res.err
	}
	// The kernel's last column is the winners' ordinals.
	ords := res.cols[len(res.cols)-1]
	res.cols = res.cols[:len(res.cols)-1]
	u.markWon(ords)
	ords.Release()
	sp := &j.specs[0]
	lt := lb.Column(sp.LeftOn)
	for i := lt.Len() - 1; i >= 0; i-- {
		if lt.IsValid(i) && !isNaN(lt, i) {
			// The last left t read: no later left row has a smaller one.
			if err := u.decided(u, lt, i); err != nil {
				releaseArrays(res.cols)
				return nil, err
			}
			break
		}
	}
	if err := u.collect(ctx, j.schema, j.leftWidth); err != nil {
		releaseArrays(res.cols)
		return nil, err
	}
	return j.assemble(ctx, lb, []result{res})
}
