package asof

import (
	"context"
	"errors"
	"hash/maphash"
	"io"
	"math/bits"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/sqlerr"
)

// The ASOF join split by key: every input is cut by the hash of the by-keys
// all right inputs share, each of the workers joins its partition with a
// serial Join of its own, and the output of each left batch is put back
// together in left order, so the result is the serial join's, byte for
// byte, batch for batch.
//
// Splitting is demand-driven: a partition that needs its next batch of an
// input and has none queued reads the input's next batch itself (under that
// input's lock), splits it and queues every partition's share. No goroutine
// reads ahead on its own, so no bounded queue can deadlock the workers
// (a partition waiting for a right row never waits for another one to take
// its share), and a queue only grows by what one partition runs ahead of
// another: the workers are at most outDepth left batches ahead of the
// consumer, so on t-ordered inputs that is a few batches' worth of t.
//
// The order checks of the serial join see only their partition, so the
// splitter checks each input's on columns over the whole input as it reads
// them, with the serial join's message and global row numbers. It checks
// a batch when it reads it, where the serial join checks a row when it
// steps past it: on an unordered input (which ordered tables and the
// planner's ordering proofs rule out) the parallel join may report the
// disorder where the serial one would have stopped reading first.

// outDepth is how many output batches each worker may finish ahead of the
// consumer: enough that a worker does not idle while the consumer
// reassembles, few enough that memory stays a handful of batches per
// worker.
const outDepth = 2

// Parallel is the ASOF join run by several workers partitioned by key.
type Parallel struct {
	opts    Options
	schema  *arrow.Schema
	left    *splitter
	rights  []*splitter
	joins   []*Join
	outs    []chan partOut
	idxCol  int // the row index column in a partition's output
	payload int // first payload column in a partition's output
	nLeft   int

	cancel  context.CancelFunc
	wg      sync.WaitGroup
	started bool
	closed  bool
	err     error
}

type partOut struct {
	b   arrow.RecordBatch
	err error
}

var _ operator.Operator = (*Parallel)(nil)

// PartitionKeys returns, for the left input and each right input in turn,
// the by-key columns every right input matches on (the left columns of the
// first right's LeftKeys that all rights share, and each right's columns
// paired with them), or nil when the rights share none.
func PartitionKeys(rights []Right) (left []int, perRight [][]int) {
	if len(rights) == 0 {
		return nil, nil
	}
	for _, c := range rights[0].LeftKeys {
		if slices.Contains(left, c) {
			continue
		}
		shared := true
		for _, r := range rights[1:] {
			if !slices.Contains(r.LeftKeys, c) {
				shared = false
			}
		}
		if shared {
			left = append(left, c)
		}
	}
	if len(left) == 0 {
		return nil, nil
	}
	perRight = make([][]int, len(rights))
	for i, r := range rights {
		for _, c := range left {
			perRight[i] = append(perRight[i], r.Keys[slices.Index(r.LeftKeys, c)])
		}
	}
	return left, perRight
}

// NewParallel builds the join run by workers partitions. It returns the
// serial Join (same output) when workers < 2 or the join cannot be split:
// the rights share no by-key, an input is key-major, the join is RIGHT or
// FULL (its unmatched right rows belong to no left batch), it has ON
// conditions, the rights encode the shared keys differently (one converts
// or compares NULL-safe a key another does not), or an on column
// is compared off the number line (text, bytea, bool, wide decimals). Like New
// it takes ownership of every input.
func NewParallel(left operator.Operator, rights []Right, opts Options, workers int) (operator.Operator, error) {
	specs, err := validate(left.Schema(), rights, &opts)
	lkeys, rkeys := PartitionKeys(rights)
	if err != nil || workers < 2 || lkeys == nil {
		return New(left, rights, opts)
	}
	for _, sp := range specs {
		// ON conditions stay serial: a Cond is compiled over the whole
		// input's schema, and the partitions see only the columns they join.
		if sp.KeyMajor || sp.ord != ordNone || sp.Kind.outer() || sp.LeftCond != nil || sp.Cond != nil || sp.PairCond != nil {
			return New(left, rights, opts)
		}
	}
	ls := left.Schema()
	p := &Parallel{opts: opts, nLeft: ls.NumFields()}
	seed := maphash.MakeSeed()

	// The left columns the partitions need: on columns and by-keys.
	var lkeep []int
	for _, r := range rights {
		for _, c := range append([]int{r.LeftOn}, r.LeftKeys...) {
			if !slices.Contains(lkeep, c) {
				lkeep = append(lkeep, c)
			}
		}
	}
	// Every input is split by one encoding of the shared keys, so equal
	// keys land in the same partition: the left input's encoding must be
	// the same for every right (no right converts a key the others do
	// not, none compares a key NULL-safe that another compares with '='),
	// and each right's encodes equal keys to the same bytes as it.
	var enc keyEncoding
	rencs := make([]keyEncoding, len(rights))
	for i, r := range rights {
		var lenc keyEncoding
		if rencs[i], lenc, err = newKeyEncoding(ls, r.Input.Schema(), lkeys, rkeys[i], sharedNullSafe(r, lkeys), opts.LeftName, r.Name); err != nil {
			return New(left, rights, opts)
		}
		if i == 0 {
			enc = lenc
		} else if !slices.Equal(enc.cols, lenc.cols) || !slices.Equal(enc.nullSafe, lenc.nullSafe) || enc.u64 != lenc.u64 {
			return New(left, rights, opts)
		}
	}
	var lons []int
	for _, r := range rights {
		if !slices.Contains(lons, r.LeftOn) {
			lons = append(lons, r.LeftOn)
		}
	}

	fields := append([]arrow.Field(nil), ls.Fields()...)
	p.rights = make([]*splitter, len(rights))
	partRights := make([][]Right, workers)
	for i, r := range rights {
		r.Payload = specs[i].Payload // validate's: none for SEMI and ANTI
		rs := r.Input.Schema()
		for _, c := range r.Payload {
			f := rs.Field(c)
			f.Nullable = true
			fields = append(fields, f)
		}
		var keep []int
		for _, c := range append(append([]int{r.On}, r.Keys...), r.Payload...) {
			if !slices.Contains(keep, c) {
				keep = append(keep, c)
			}
		}
		p.rights[i] = newSplitter(r.Input, specs[i].Name, opts.Allocator, workers, seed, rencs[i], rkeys[i], []int{r.On}, keep, false)
		remap := func(c int) int { return slices.Index(keep, c) }
		lremap := func(c int) int { return slices.Index(lkeep, c) }
		for w := range partRights {
			pr := r
			pr.Input = &partSource{s: p.rights[i], part: w}
			pr.LeftOn, pr.On = lremap(r.LeftOn), remap(r.On)
			pr.LeftKeys, pr.Keys, pr.Payload = mapAll(r.LeftKeys, lremap), mapAll(r.Keys, remap), mapAll(r.Payload, remap)
			partRights[w] = append(partRights[w], pr)
		}
	}
	md := ls.Metadata()
	p.schema = arrow.NewSchema(fields, &md)
	p.left = newSplitter(left, opts.LeftName, opts.Allocator, workers, seed, enc, lkeys, lons, lkeep, true)
	p.idxCol = len(lkeep)
	p.payload = len(lkeep) + 1

	popts := opts
	popts.Serial = true // the workers are the parallelism
	for w := 0; w < workers; w++ {
		j, err := New(&partSource{s: p.left, part: w}, partRights[w], popts)
		if err != nil {
			// The partitions' schemas are the inputs' own columns, which
			// validate accepted; reaching this is a bug, reported.
			for _, done := range p.joins {
				done.Close()
			}
			p.closeSplitters()
			return nil, sqlerr.New(sqlerr.InternalError, "ASOF join partition: %v", err)
		}
		p.joins = append(p.joins, j)
	}
	return p, nil
}

// sharedNullSafe returns r's NullSafe flags of the keys paired with the
// left columns lkeys (nil when r has none).
func sharedNullSafe(r Right, lkeys []int) []bool {
	if r.NullSafe == nil {
		return nil
	}
	out := make([]bool, len(lkeys))
	for i, c := range lkeys {
		out[i] = r.NullSafe[slices.Index(r.LeftKeys, c)]
	}
	return out
}

func mapAll(cols []int, f func(int) int) []int {
	out := make([]int, len(cols))
	for i, c := range cols {
		out[i] = f(c)
	}
	return out
}

// Schema is the serial join's schema.
func (p *Parallel) Schema() *arrow.Schema { return p.schema }

// Workers is the number of partitions.
func (p *Parallel) Workers() int { return len(p.joins) }

// Open opens the inputs and starts one goroutine per partition. The
// goroutines keep ctx's values but not its cancellation, so that a cursor
// may read on under a later context: Next stops them when its own context
// ends, Close always.
func (p *Parallel) Open(ctx context.Context) error {
	if p.started {
		return nil
	}
	p.started = true
	if err := p.left.src.Open(ctx); err != nil {
		return err
	}
	for _, r := range p.rights {
		if err := r.src.Open(ctx); err != nil {
			return err
		}
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel = cancel
	for _, j := range p.joins {
		if err := j.Open(wctx); err != nil {
			return err
		}
	}
	p.outs = make([]chan partOut, len(p.joins))
	for w, j := range p.joins {
		out := make(chan partOut, outDepth)
		p.outs[w] = out
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for {
				b, err := j.Next(wctx)
				select {
				case out <- partOut{b: b, err: err}:
				case <-wctx.Done():
					if b != nil {
						b.Release()
					}
					return
				}
				if err != nil {
					return
				}
			}
		}()
	}
	return nil
}

// Next returns the join of the next left batch.
func (p *Parallel) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if p.err != nil {
		return nil, p.err
	}
	if !p.started {
		if err := p.Open(ctx); err != nil {
			p.err = err
			return nil, err
		}
	}
	rec, err := p.next(ctx)
	if err != nil {
		p.err = err
		if p.cancel != nil {
			p.cancel() // the query is over: stop the workers now, not at Close
		}
	}
	return rec, err
}

func (p *Parallel) next(ctx context.Context) (arrow.RecordBatch, error) {
	if p.outs == nil {
		return nil, p.err
	}
	// A cancelled query stops now, not when no partition has a batch
	// ready (select picks among ready cases at random).
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	parts := make([]arrow.RecordBatch, len(p.outs))
	defer func() {
		for _, b := range parts {
			if b != nil {
				b.Release()
			}
		}
	}()
	var firstErr error
	eof := 0
	for w, out := range p.outs {
		select {
		case r := <-out:
			parts[w] = r.b
			switch {
			case r.err == nil:
			case errors.Is(r.err, io.EOF):
				eof++
			case firstErr == nil:
				firstErr = r.err
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	if eof == len(p.outs) {
		return nil, io.EOF
	}
	if eof > 0 {
		return nil, sqlerr.New(sqlerr.InternalError, "ASOF join partitions ended at different left batches")
	}
	orig := p.left.popOriginal()
	if orig == nil {
		return nil, sqlerr.New(sqlerr.InternalError, "ASOF join partition output without its left batch")
	}
	defer orig.Release()
	return p.assemble(ctx, orig, parts)
}

// assemble puts the partitions' outputs for orig back in orig's row order:
// the left columns are orig's own (taken when INNER dropped rows), the
// payload columns gathered from the partitions.
func (p *Parallel) assemble(ctx context.Context, orig arrow.RecordBatch, parts []arrow.RecordBatch) (arrow.RecordBatch, error) {
	n := int(orig.NumRows())
	refs := make([]operator.Ref, n)
	total := 0
	for _, b := range parts {
		total += int(b.NumRows())
	}
	// Every left row comes back from at most one partition: a row twice,
	// or one beyond the batch, would be a wrong answer, so it is an error.
	present := make([]bool, n)
	for w, b := range parts {
		for r, i := range b.Column(p.idxCol).(*array.Int32).Int32Values() {
			if int(i) >= n || i < 0 || present[i] {
				return nil, sqlerr.New(sqlerr.InternalError,
					"ASOF join partitions returned left row %d of a %d-row batch twice or out of range", i, n)
			}
			refs[i] = operator.Ref{Src: int32(w), Row: int32(r)}
			present[i] = true
		}
	}
	mem := p.opts.Allocator
	cols := make([]arrow.Array, 0, p.schema.NumFields())
	release := func() {
		for _, c := range cols {
			c.Release()
		}
	}
	if total == n {
		for _, c := range orig.Columns() {
			c.Retain()
			cols = append(cols, c)
		}
	} else {
		kept := make([]int, 0, total)
		for i, ok := range present {
			if ok {
				kept = append(kept, i)
				refs[len(kept)-1] = refs[i]
			}
		}
		refs = refs[:total]
		for _, c := range orig.Columns() {
			t, err := operator.Take(ctx, mem, c, kept)
			if err != nil {
				release()
				return nil, err
			}
			cols = append(cols, t)
		}
	}
	srcs := make([]arrow.Array, len(parts))
	for c := p.nLeft; c < p.schema.NumFields(); c++ {
		pc := p.payload + c - p.nLeft
		for w, b := range parts {
			srcs[w] = b.Column(pc)
		}
		g, err := operator.Gather(ctx, mem, p.schema.Field(c).Type, srcs, refs)
		if err != nil {
			release()
			return nil, err
		}
		cols = append(cols, g)
	}
	rec := array.NewRecordBatch(p.schema, cols, int64(total))
	release()
	return rec, nil
}

// Close stops the workers, releases every batch in flight and closes all
// inputs. It is idempotent.
func (p *Parallel) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	if p.cancel != nil {
		p.cancel()
	}
	p.wg.Wait()
	for _, out := range p.outs {
		for len(out) > 0 {
			if r := <-out; r.b != nil {
				r.b.Release()
			}
		}
	}
	for _, j := range p.joins {
		j.Close()
	}
	return p.closeSplitters()
}

func (p *Parallel) closeSplitters() error {
	var first error
	for _, s := range append([]*splitter{p.left}, p.rights...) {
		if s == nil {
			continue
		}
		if err := s.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// splitter is one input shared by the partitions: it reads the input on
// demand, checks its order over the whole input, and queues each batch's
// rows of each partition.
type splitter struct {
	mu      sync.Mutex
	src     operator.Operator
	name    string
	mem     memory.Allocator
	seed    maphash.Seed
	enc     keyEncoding
	keys    []int
	ons     []int
	keep    []int
	withIdx bool // append each row's index in its batch (the left input)
	schema  *arrow.Schema

	kb      keyBatch
	on      onColumn
	last    []uint64
	hasLast []bool
	rows    int64
	part    []int32
	refs    [][]operator.Ref

	queues [][]arrow.RecordBatch
	orig   []arrow.RecordBatch // the left batches split, not yet assembled
	done   bool
	err    error
	closed bool
}

func newSplitter(src operator.Operator, name string, mem memory.Allocator, parts int, seed maphash.Seed,
	enc keyEncoding, keys, ons, keep []int, withIdx bool) *splitter {
	ss := src.Schema()
	fields := make([]arrow.Field, 0, len(keep)+1)
	for _, c := range keep {
		fields = append(fields, ss.Field(c))
	}
	if withIdx {
		fields = append(fields, arrow.Field{Name: "_row", Type: arrow.PrimitiveTypes.Int32})
	}
	return &splitter{src: src, name: name, mem: mem, seed: seed, enc: enc, keys: keys, ons: ons, keep: keep,
		withIdx: withIdx, schema: arrow.NewSchema(fields, nil),
		last: make([]uint64, len(ons)), hasLast: make([]bool, len(ons)),
		refs: make([][]operator.Ref, parts), queues: make([][]arrow.RecordBatch, parts)}
}

// next returns partition part's next batch, reading and splitting the
// input when none is queued.
func (s *splitter) next(ctx context.Context, part int) (arrow.RecordBatch, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.queues[part]) == 0 {
		switch {
		case s.err != nil:
			return nil, s.err
		case s.done || s.closed:
			return nil, io.EOF
		}
		if err := s.fill(ctx); err != nil {
			if errors.Is(err, io.EOF) {
				s.done = true
			} else {
				s.err = err
			}
		}
	}
	b := s.queues[part][0]
	s.queues[part][0] = nil
	s.queues[part] = s.queues[part][1:]
	return b, nil
}

func (s *splitter) fill(ctx context.Context) error {
	b, err := s.src.Next(ctx)
	if err != nil {
		return err
	}
	defer b.Release()
	if err := s.check(b); err != nil {
		return err
	}
	n := int(b.NumRows())
	if cap(s.part) < n {
		s.part = make([]int32, n)
	}
	part := s.part[:n]
	cols := make([]arrow.Array, len(s.keys))
	for i, c := range s.keys {
		cols[i] = b.Column(c)
	}
	s.enc.encode(cols, n, &s.kb)
	np := uint64(len(s.queues))
	for i := range part {
		var h uint64
		switch {
		case s.kb.anyNull && s.kb.null[i]:
			// A NULL key matches nothing: any partition will do.
		case s.enc.u64:
			h = mix64(s.kb.u64[i])
		default:
			h = maphash.Bytes(s.seed, s.kb.key(i))
		}
		hi, _ := bits.Mul64(h, np)
		part[i] = int32(hi)
	}
	for w := range s.refs {
		s.refs[w] = s.refs[w][:0]
	}
	for i, w := range part {
		s.refs[w] = append(s.refs[w], operator.Ref{Row: int32(i)})
	}
	for w, refs := range s.refs {
		sub, err := s.subBatch(ctx, b, refs)
		if err != nil {
			return err
		}
		s.queues[w] = append(s.queues[w], sub)
	}
	if s.withIdx {
		b.Retain()
		s.orig = append(s.orig, b)
	}
	return nil
}

// subBatch builds one partition's share of b: its kept columns at refs
// (b's own arrays when every row is the partition's), then the row index.
func (s *splitter) subBatch(ctx context.Context, b arrow.RecordBatch, refs []operator.Ref) (arrow.RecordBatch, error) {
	n := len(refs)
	all := int64(n) == b.NumRows()
	cols := make([]arrow.Array, 0, len(s.keep)+1)
	release := func() {
		for _, c := range cols {
			c.Release()
		}
	}
	for _, c := range s.keep {
		src := b.Column(c)
		if all {
			src.Retain()
			cols = append(cols, src)
			continue
		}
		g, err := operator.Gather(ctx, s.mem, src.DataType(), []arrow.Array{src}, refs)
		if err != nil {
			release()
			return nil, err
		}
		cols = append(cols, g)
	}
	if s.withIdx {
		ib := array.NewInt32Builder(s.mem)
		ib.Reserve(n)
		for _, r := range refs {
			ib.UnsafeAppend(r.Row)
		}
		cols = append(cols, ib.NewArray())
		ib.Release()
	}
	rec := array.NewRecordBatch(s.schema, cols, int64(n))
	release()
	return rec, nil
}

// check requires the on columns never to decrease over the whole input.
func (s *splitter) check(b arrow.RecordBatch) error {
	for i, c := range s.ons {
		arr := b.Column(c)
		if err := decodeOn(arr, &s.on, s.name); err != nil {
			return err
		}
		last, has := s.last[i], s.hasLast[i]
		for r, t := range s.on.t {
			if !s.on.ok(r) {
				continue
			}
			if has && t < last {
				return orderError(s.name, s.src.Schema().Field(c).Name, s.rows+int64(r)+1, arr.ValueStr(r))
			}
			last, has = t, true
		}
		s.last[i], s.hasLast[i] = last, has
	}
	s.rows += b.NumRows()
	return nil
}

// popOriginal hands the oldest split left batch to the consumer.
func (s *splitter) popOriginal() arrow.RecordBatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.orig) == 0 {
		return nil
	}
	b := s.orig[0]
	s.orig[0] = nil
	s.orig = s.orig[1:]
	return b
}

// close releases everything queued and closes the input; the workers
// have stopped.
func (s *splitter) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	for w, q := range s.queues {
		for _, b := range q {
			b.Release()
		}
		s.queues[w] = nil
	}
	for _, b := range s.orig {
		b.Release()
	}
	s.orig = nil
	s.kb.free()
	s.on.free()
	return s.src.Close()
}

// mix64 is SplitMix64's finalizer: integer keys that differ in any bit
// land in unrelated partitions.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// partSource is one partition's view of a splitter, the input of that
// partition's Join.
type partSource struct {
	s    *splitter
	part int
}

func (ps *partSource) Schema() *arrow.Schema      { return ps.s.schema }
func (ps *partSource) Open(context.Context) error { return nil }
func (ps *partSource) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return ps.s.next(ctx, ps.part)
}
func (ps *partSource) Close() error { return nil }
