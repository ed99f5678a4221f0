package asof

import (
	"context"
	"errors"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/operator"
)

// The ASOF join split into morsels of the left input, for inputs ordered by
// t (stored ordered tables). A reader goroutine cuts the left input into
// contiguous morsels of MorselRows rows, one after the other, and hands
// each to the first free of the workers, which joins it by a serial Join
// of its own against only the right rows that can match it:
//
//   - with a bounded range [lo, hi], the right rows with t in
//     [t_first+lo, t_last+hi] (found by binary search: the right input is
//     ordered);
//   - with lo unbounded (the common backward join), the right rows from
//     min(t_first+hi, t_first) on, after a prime: for each key, the last
//     right row before that point. Every row there is eligible for every
//     left row of the morsel and lies before all of them (Δ < 0), so per
//     key only the greatest t can win, and of its duplicates the last in
//     input order (spec: at equal t the last wins when Δ <= 0): the
//     key's last row. The serial Join then picks among the prime and the
//     slice exactly as it would among all rows. The primes are a prefix
//     over the morsels: the reader finds, per key, the last row of the
//     right rows between the previous morsel's start and this one's
//     (walking their key ids backward), and replaces those keys' rows in
//     the previous prime: linear in the keys and the rows, no map.
//
// The reader interns each right batch's keys once, into a key dictionary
// per right input that lives as long as the Morsel; the ids go with the
// rows to the morsels' joins (idBatches), which use that same dictionary
// (Options.dicts) and skip their own encode, hash and lookup. So the
// right side's key work is the serial join's, done once; the joins also
// share one output buffer pool (Options.pool). What the morsels add to the
// serial join's work: the chunk walks (an id read per right row), a prime
// per morsel (a row per key, gathered, and joined as a right row), the
// order checks of both inputs, and a join's setup per morsel.
//
// It is a pipeline with no synchronous phase: while the workers join, the
// reader reads, checks and interns the next morsels' rows, and Next
// returns a morsel's output batches as its worker makes them, in morsel
// order, so the output is the serial join's rows with no reassembly. At
// most depth morsels are in flight (cut but not yet returned in full):
// only their rows, their output and the right rows from the oldest one's
// start are held, plus one prime per key, so memory does not grow with
// the inputs.
//
// A form the morsels cannot take falls back to NewParallel (split by key)
// or the serial join: an unbounded hi (its prime would be a suffix,
// unknown until the right input ends), RIGHT and FULL (unmatched right
// rows), ON conditions, key-major inputs, on columns that are not 64-bit
// integers of one type on both sides (int, date, timestamp of one unit),
// and calendar or decimal bounds.

// MorselRows is the left rows of a morsel, and RoundRows the left rows in
// flight the depth aims at (at least one morsel per worker and one more,
// at most four per worker). Each morsel pays a fixed cost (its join's
// setup, its prime: a row per key), so larger morsels cost less CPU; the
// rows in flight (and their output, and the right rows of their t range)
// are what the join holds. The 100M x 100M stream peaked at 130 MiB of
// heap with 512K rows in flight, at 252 MiB with 1M (BenchmarkStream100M).
const (
	MorselRows = 1 << 17
	RoundRows  = 1 << 19
)

// Morsel is the ASOF join run by workers over morsels of the left input.
type Morsel struct {
	opts    Options
	schema  *arrow.Schema
	left    operator.Operator
	lcheck  orderCheck
	rights  []*morselRight
	specs   []Right
	workers int
	rows    int // left rows per morsel
	depth   int // most morsels in flight

	// pool holds the output buffers of every morsel's join (Options.pool),
	// dicts the right inputs' key dictionaries (Options.dicts).
	pool  *operator.Pool
	dicts []*keyDict

	started, closed bool
	err             error

	// The pipeline, started by the first Next: the reader sends each
	// morsel to queue (Next, in order) and to jobs (the workers); a morsel
	// holds a slot of slots from its cut until Next has returned all its
	// output. cancel stops the goroutines, wg waits for them.
	cancel context.CancelFunc
	wg     sync.WaitGroup
	queue  chan *morsel
	jobs   chan *morsel
	slots  chan struct{}
	cur    *morsel      // the morsel whose output Next returns
	done   atomic.Int64 // the morsels Next is done with (their joins ended)
	// interns offers the workers right batches to intern (see
	// internFresh); iwg counts the offered ones not yet interned.
	interns chan *rbuf
	iwg     sync.WaitGroup

	// The reader's own state: the left batch the last morsel ended in and
	// the first row of it not yet taken, and its scratch for interning.
	carry    arrow.RecordBatch
	carryT   []int64
	carryOff int
	leftDone bool
	seq      int64
	kb       keyBatch
}

var _ operator.Operator = (*Morsel)(nil)

// morselRight is one right input's buffered rows and prime; only the
// reader touches it.
type morselRight struct {
	r     Right
	enc   keyEncoding
	check orderCheck
	bufs  []rbuf
	next  int64 // global index of the row after the buffered ones
	done  bool
	// dict gives the right keys dense ids; the workers share it (it is
	// safe for concurrent use) and it lives as long as the join.
	dict *keyDict
	// spareIDs are trimmed buffers' id arrays, for new buffers; pending
	// the trimmed ones a join may still read (see trim).
	spareIDs [][]int32
	pending  []pendingIDs
	// stamp[id] == epoch marks the keys lastRows met in its last walk.
	stamp []int32
	epoch int32
	// prime: per key, the last right row before the buffer's first row,
	// in input order; primeIDs[i] is the key id of its row i.
	prime    arrow.RecordBatch
	primeIDs []int32
	// low is the first row a later morsel may take (the rows before it
	// are in the prime).
	low int64
}

// pendingIDs is a trimmed buffer's id array, which the joins of morsels
// before seq may read still.
type pendingIDs struct {
	ids []int32
	seq int64
}

type rbuf struct {
	b     arrow.RecordBatch
	t     []int64
	start int64   // global index of row 0
	ids   []int32 // its rows' key ids in r.dict (-1: a NULL key), once interned
	r     *morselRight
}

// primeRow is one row of a prime: its key's id and where the row is (Src
// 0 the previous prime's batch, 1 + i buffer i).
type primeRow struct {
	id  int32
	ref operator.Ref
}

// orderCheck requires an on column never to decrease over a whole input.
type orderCheck struct {
	name, col string
	last      int64
	has       bool
	rows      int64
}

func (c *orderCheck) check(arr arrow.Array, t []int64) error {
	if arr.NullN() == 0 && len(t) > 0 {
		if c.has && t[0] < c.last {
			return orderError(c.name, c.col, c.rows+1, arr.ValueStr(0))
		}
		for i := 1; i < len(t); i++ {
			if t[i] < t[i-1] {
				return orderError(c.name, c.col, c.rows+int64(i)+1, arr.ValueStr(i))
			}
		}
		c.last, c.has = t[len(t)-1], true
		c.rows += int64(len(t))
		return nil
	}
	for i, v := range t {
		if arr.IsNull(i) {
			continue
		}
		if c.has && v < c.last {
			return orderError(c.name, c.col, c.rows+int64(i)+1, arr.ValueStr(i))
		}
		c.last, c.has = v, true
	}
	c.rows += int64(len(t))
	return nil
}

// morselable says whether the morsels can take the join (see above).
func morselable(left *arrow.Schema, specs []spec) bool {
	for _, sp := range specs {
		if sp.KeyMajor || sp.ord != ordNone || sp.Kind.outer() || sp.LeftCond != nil || sp.Cond != nil || sp.PairCond != nil ||
			sp.Hi.Unbounded || sp.Lo.Cal != nil || sp.Hi.Cal != nil || sp.Lo.HasDec || sp.Hi.HasDec {
			return false
		}
		if sp.LeftOn != specs[0].LeftOn {
			// One left t cuts the morsels and places every right's slice.
			return false
		}
		lt, rt := left.Field(sp.LeftOn).Type, sp.Input.Schema().Field(sp.On).Type
		if !arrow.TypeEqual(lt, rt) || !int64On(lt) {
			return false
		}
	}
	return len(specs) > 0
}

func int64On(dt arrow.DataType) bool {
	switch dt.(type) {
	case *arrow.Int64Type, *arrow.Int32Type, *arrow.Int16Type, *arrow.Int8Type,
		*arrow.Date32Type, *arrow.Date64Type, *arrow.TimestampType:
		return true
	}
	return false
}

// int64s reads an on column as int64 (NULL rows hold anything): the
// array's own values when they are 64-bit (never write into them), else a
// new slice.
func int64s(arr arrow.Array) []int64 {
	if w, signed, ok := words64(arr); ok && signed {
		return arrow.Int64Traits.CastFromBytes(arrow.Uint64Traits.CastToBytes(w))
	}
	n := arr.Len()
	dst := make([]int64, n)
	switch a := arr.(type) {
	case *array.Int32:
		for i, v := range a.Int32Values() {
			dst[i] = int64(v)
		}
	case *array.Int16:
		for i, v := range a.Int16Values() {
			dst[i] = int64(v)
		}
	case *array.Int8:
		for i, v := range a.Int8Values() {
			dst[i] = int64(v)
		}
	case *array.Date32:
		for i, v := range a.Date32Values() {
			dst[i] = int64(v)
		}
	}
	return dst
}

// NewMorsel builds the join run by workers over morsels of the left input
// (see above); a join the morsels cannot take is NewParallel's. Like New
// it takes ownership of every input.
func NewMorsel(left operator.Operator, rights []Right, opts Options, workers int) (operator.Operator, error) {
	return newMorsel(left, rights, opts, workers, MorselRows)
}

func newMorsel(left operator.Operator, rights []Right, opts Options, workers, rows int) (operator.Operator, error) {
	specs, err := validate(left.Schema(), rights, &opts)
	if err != nil || workers < 2 || !morselable(left.Schema(), specs) {
		return NewParallel(left, rights, opts, workers)
	}
	// The serial join's schema, from a join over no rows.
	probe := make([]Right, len(rights))
	for i, r := range rights {
		probe[i] = r
		probe[i].Input = operator.NewBatches(r.Input.Schema(), nil)
	}
	pj, err := New(operator.NewBatches(left.Schema(), nil), probe, opts)
	if err != nil {
		return NewParallel(left, rights, opts, workers)
	}
	schema := pj.Schema()
	pj.Close()
	rows = max(rows, 1)
	m := &Morsel{opts: opts, schema: schema, left: left, specs: rights, workers: workers, rows: rows, pool: operator.NewPool(opts.Allocator),
		depth: min(max(RoundRows/rows, workers+1), 4*workers), lcheck: orderCheck{name: opts.LeftName}}
	for i, r := range rights {
		enc, _, err := newKeyEncoding(left.Schema(), r.Input.Schema(), r.LeftKeys, r.Keys, r.NullSafe, opts.LeftName, r.Name)
		if err != nil {
			m.closeInputs()
			return nil, err
		}
		// One dictionary per group of inputs the join would give one
		// (New: same left key columns and encoding), so that the ids a
		// morsel hands its join are in the dictionary the join uses.
		d := newKeyDict(enc.u64, &opts)
		for g := range i {
			if slices.Equal(specs[g].LeftKeys, specs[i].LeftKeys) && slices.Equal(specs[g].leftEnc.nullSafe, specs[i].leftEnc.nullSafe) &&
				slices.Equal(specs[g].leftEnc.cols, specs[i].leftEnc.cols) {
				d = m.dicts[g]
				break
			}
		}
		m.dicts = append(m.dicts, d)
		m.rights = append(m.rights, &morselRight{r: r, enc: enc, dict: m.dicts[i],
			check: orderCheck{name: specs[i].Name, col: r.Input.Schema().Field(r.On).Name}})
	}
	m.lcheck.col = left.Schema().Field(rights[0].LeftOn).Name
	return m, nil
}

// Schema is the serial join's schema.
func (m *Morsel) Schema() *arrow.Schema { return m.schema }

// Workers is the number of morsels joined at once.
func (m *Morsel) Workers() int { return m.workers }

// Open opens the inputs.
func (m *Morsel) Open(ctx context.Context) error {
	if m.started {
		return nil
	}
	m.started = true
	if err := m.left.Open(ctx); err != nil {
		return err
	}
	for _, r := range m.rights {
		if err := r.r.Input.Open(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Next returns the next output batch: the current morsel's next one, as
// its worker makes them, then the next morsel's.
func (m *Morsel) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if m.err != nil {
		return nil, m.err
	}
	if !m.started {
		if err := m.Open(ctx); err != nil {
			m.err = err
			return nil, err
		}
	}
	if m.queue == nil {
		m.start(ctx)
	}
	b, err := m.next(ctx)
	if err != nil {
		m.err = err
		m.cancel() // the query is over: stop the goroutines now, not at Close
	}
	return b, err
}

// morsel is a run of left rows, what its join needs, and its output.
type morsel struct {
	seq         int64
	err         error // the reader's error: no rows, the end of the output
	left        []arrow.RecordBatch
	has         bool // some row has a non-NULL t
	first, last int64
	// Per right: the join's input batches (the prime, then the rows of
	// its t range) and their rows' key ids. The worker takes them.
	in  [][]arrow.RecordBatch
	ids [][][]int32

	mu     sync.Mutex
	out    []arrow.RecordBatch // made by the worker, not yet returned
	joined bool                // the join has ended, with jerr
	jerr   error
	wake   chan struct{} // capacity 1: out grew or the join ended
}

func (mo *morsel) signal() {
	select {
	case mo.wake <- struct{}{}:
	default:
	}
}

// release drops what mo holds.
func (mo *morsel) release() {
	releaseAll(mo.left)
	mo.left = nil
	releaseAll(mo.out)
	mo.out = nil
	for _, in := range mo.in {
		releaseAll(in)
	}
	mo.in = nil
}

// start starts the reader and the workers. They keep ctx's values but not
// its cancellation, so that a cursor may read on under a later context:
// Next stops them when its own context ends, Close always.
func (m *Morsel) start(ctx context.Context) {
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.cancel = cancel
	m.queue = make(chan *morsel, m.depth)
	m.jobs = make(chan *morsel, m.depth)
	m.slots = make(chan struct{}, m.depth)
	m.interns = make(chan *rbuf, 64)
	m.wg.Add(1 + m.workers)
	go m.read(wctx)
	for range m.workers {
		go m.work(wctx)
	}
}

// read cuts the morsels, in order, until the left input ends or fails.
func (m *Morsel) read(ctx context.Context) {
	defer m.wg.Done()
	defer close(m.jobs)
	defer close(m.queue)
	for {
		select {
		case m.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		mo, err := m.cut(ctx)
		if err != nil {
			m.queue <- &morsel{err: err}
			return
		}
		if mo == nil {
			return
		}
		m.queue <- mo
		m.jobs <- mo
	}
}

// internFresh gives the newly buffered right batches of r their key ids.
// The reader offers them to the workers (interns) and interns them itself
// too, taking them back from the same queue, then waits for the ones a
// worker took: a worker takes one only between two joins, so the workers
// share the interning when they would otherwise wait for the reader (text
// keys: the reader's critical path), and leave it to the reader when busy.
func (m *Morsel) internFresh(ctx context.Context, r *morselRight) error {
	for bi := range r.bufs {
		if b := &r.bufs[bi]; b.ids == nil {
			b.ids = r.idBuf(len(b.t))
			m.iwg.Add(1)
			select {
			case m.interns <- b:
			default:
				b.intern(&m.kb)
				m.iwg.Done()
			}
		}
	}
	for {
		select {
		case b := <-m.interns:
			b.intern(&m.kb)
			m.iwg.Done()
			continue
		default:
		}
		break
	}
	// The buffers are not touched again until every one is interned.
	m.iwg.Wait()
	return ctx.Err()
}

// work joins morsels until there are no more, and interns right batches
// the reader offers between two joins (see internFresh). A morsel whose
// join fails or is cancelled ends with its error; the reader stops at the
// cancellation Next or Close then makes.
func (m *Morsel) work(ctx context.Context) {
	defer m.wg.Done()
	var kb keyBatch
	defer kb.free()
	for {
		var mo *morsel
		select {
		case b := <-m.interns:
			b.intern(&kb)
			m.iwg.Done()
			continue
		default:
		}
		select {
		case b := <-m.interns:
			b.intern(&kb)
			m.iwg.Done()
			continue
		case j, ok := <-m.jobs:
			if !ok {
				return
			}
			mo = j
		}
		err := ctx.Err()
		if err == nil {
			err = m.join(ctx, mo)
		}
		mo.mu.Lock()
		mo.joined, mo.jerr = true, err
		for _, in := range mo.in {
			releaseAll(in)
		}
		mo.in = nil
		mo.mu.Unlock()
		mo.signal()
	}
}

// join runs mo's serial join, handing each output batch to Next as it
// comes.
func (m *Morsel) join(ctx context.Context, mo *morsel) error {
	rights := make([]Right, len(m.rights))
	for ri, r := range m.rights {
		rights[ri] = r.r
		rights[ri].Input = &idBatches{Batches: operator.NewBatches(r.r.Input.Schema(), mo.in[ri]), dict: r.dict, ids: mo.ids[ri]}
		mo.in[ri] = nil // the join owns them
	}
	left := make([]arrow.RecordBatch, len(mo.left))
	for i, b := range mo.left {
		b.Retain()
		left[i] = b
	}
	popts := m.opts
	popts.Serial = true
	popts.pool = m.pool
	popts.dicts = m.dicts
	j, err := New(operator.NewBatches(m.left.Schema(), left), rights, popts)
	if err != nil {
		return err
	}
	defer j.Close()
	for {
		b, err := j.Next(ctx)
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
		mo.mu.Lock()
		mo.out = append(mo.out, b)
		mo.mu.Unlock()
		mo.signal()
	}
}

// next returns the current morsel's next output batch, waiting for its
// worker, or moves on to the next morsel.
func (m *Morsel) next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for {
		if m.cur == nil {
			select {
			case mo, ok := <-m.queue:
				if !ok {
					return nil, io.EOF
				}
				if mo.err != nil {
					return nil, mo.err
				}
				m.cur = mo
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		mo := m.cur
		mo.mu.Lock()
		if len(mo.out) > 0 {
			b := mo.out[0]
			mo.out[0] = nil
			mo.out = mo.out[1:]
			mo.mu.Unlock()
			return b, nil
		}
		joined, err := mo.joined, mo.jerr
		mo.mu.Unlock()
		if joined {
			if err != nil {
				return nil, err
			}
			mo.release()
			m.cur = nil
			m.done.Store(mo.seq + 1)
			<-m.slots
			continue
		}
		select {
		case <-mo.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// cut reads the next morsel's left rows and the right rows they need, and
// builds its joins' inputs; nil at the end of the left input.
func (m *Morsel) cut(ctx context.Context) (*morsel, error) {
	mo := &morsel{seq: m.seq, wake: make(chan struct{}, 1)}
	on := m.specs[0].LeftOn
	n := 0
	for n < m.rows {
		if m.carry == nil {
			if m.leftDone {
				break
			}
			b, err := m.left.Next(ctx)
			if errors.Is(err, io.EOF) {
				m.leftDone = true
				break
			}
			if err != nil {
				mo.release()
				return nil, err
			}
			if b.NumRows() == 0 {
				b.Release()
				continue
			}
			t := int64s(b.Column(on))
			if err := m.lcheck.check(b.Column(on), t); err != nil {
				b.Release()
				mo.release()
				return nil, err
			}
			m.carry, m.carryT, m.carryOff = b, t, 0
		}
		b, off := m.carry, m.carryOff
		take := min(m.rows-n, int(b.NumRows())-off)
		if off == 0 && take == int(b.NumRows()) {
			b.Retain()
			mo.left = append(mo.left, b)
		} else {
			mo.left = append(mo.left, b.NewSlice(int64(off), int64(off+take)))
		}
		// The first and last t of the morsel: NULLs (last in an ordered
		// table) are skipped.
		col := b.Column(on)
		for i := off; i < off+take && !mo.has; i++ {
			if col.IsValid(i) {
				mo.first, mo.has = m.carryT[i], true
			}
		}
		for i := off + take - 1; i >= off; i-- {
			if col.IsValid(i) {
				mo.last = m.carryT[i]
				break
			}
		}
		n += take
		if m.carryOff += take; m.carryOff == int(b.NumRows()) {
			b.Release()
			m.carry, m.carryT = nil, nil
		}
	}
	if n == 0 {
		return nil, nil
	}
	m.seq++
	if !mo.has {
		// A morsel of NULL t takes no right rows (and keeps the prime).
		mo.first, mo.last = math.MinInt64, math.MinInt64
	}
	mo.in = make([][]arrow.RecordBatch, len(m.rights))
	mo.ids = make([][][]int32, len(m.rights))
	for ri, r := range m.rights {
		if err := m.cutRight(ctx, mo, ri, r); err != nil {
			mo.release()
			return nil, err
		}
	}
	return mo, nil
}

// cutRight reads the right rows mo needs from input ri, interns their
// keys, and builds mo's input from it: the prime, then the rows of mo's t
// range.
func (m *Morsel) cutRight(ctx context.Context, mo *morsel, ri int, r *morselRight) error {
	sp := r.r
	end := satAdd(satAdd(mo.last, sp.Hi.Int), 1)
	if err := r.fill(ctx, m.opts.Allocator, end); err != nil {
		return err
	}
	if err := m.internFresh(ctx, r); err != nil {
		return err
	}
	var start int64
	if sp.Lo.Unbounded {
		start = satAdd(satAdd(mo.first, min(sp.Hi.Int, 0)), -1)
	} else {
		start = satAdd(satAdd(mo.first, sp.Lo.Int), -1)
	}
	// Slices start in order, never before the rows the prime already
	// holds; a morsel of NULL t takes no rows.
	from := max(r.search(start, false), r.low)
	to := max(r.search(end, true), from)
	if !mo.has {
		to = from
	}
	if sp.Lo.Unbounded {
		if err := r.advancePrime(ctx, m.opts.Allocator, from); err != nil {
			return err
		}
		r.prime.Retain()
		mo.in[ri] = append(mo.in[ri], r.prime)
		mo.ids[ri] = append(mo.ids[ri], r.primeIDs)
	}
	if from < to {
		bi, row := r.at(from)
		for g := from; g < to; bi, row = bi+1, 0 {
			b := r.bufs[bi]
			n := int(min(int64(len(b.t)), int64(row)+to-g))
			mo.in[ri] = append(mo.in[ri], b.b.NewSlice(int64(row), int64(n)))
			mo.ids[ri] = append(mo.ids[ri], b.ids[row:n])
			g += int64(n - row)
		}
	}
	r.low = from
	r.trim(from, mo.seq, m.done.Load())
	return nil
}

func releaseAll(bs []arrow.RecordBatch) {
	for _, b := range bs {
		if b != nil {
			b.Release()
		}
	}
}

func satAdd(a, b int64) int64 {
	s := a + b
	if (s > a) != (b > 0) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

// fill reads the right input until a row's t is beyond end or it ends.
// Rows with a NULL t are eligible for nobody: they are not kept.
func (r *morselRight) fill(ctx context.Context, mem memory.Allocator, end int64) error {
	for !r.done {
		if n := len(r.bufs); n > 0 {
			if t := r.bufs[n-1].t; len(t) > 0 && t[len(t)-1] > end {
				return nil
			}
		}
		b, err := r.r.Input.Next(ctx)
		if errors.Is(err, io.EOF) {
			r.done = true
			return nil
		}
		if err != nil {
			return err
		}
		on := b.Column(r.r.On)
		t := int64s(on)
		if err := r.check.check(on, t); err != nil {
			b.Release()
			return err
		}
		if on.NullN() > 0 {
			var keep []int
			for i := range t {
				if on.IsValid(i) {
					keep = append(keep, i)
				}
			}
			cols := make([]arrow.Array, b.NumCols())
			for c := range cols {
				if cols[c], err = operator.Take(ctx, mem, b.Column(c), keep); err != nil {
					releaseArrays(cols[:c])
					b.Release()
					return err
				}
			}
			nb := array.NewRecordBatch(b.Schema(), cols, int64(len(keep)))
			releaseArrays(cols)
			b.Release()
			b = nb
			t = int64s(b.Column(r.r.On))
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		// Arrays count their NULLs lazily, writing the count: count
		// them here, before the workers read the batch at once.
		for _, c := range b.Columns() {
			c.NullN()
		}
		r.bufs = append(r.bufs, rbuf{b: b, t: t, start: r.next, r: r})
		r.next += b.NumRows()
	}
	return nil
}

// search returns the global index of the first buffered row with t >= v
// (after: t > v).
func (r *morselRight) search(v int64, after bool) int64 {
	bi, _ := slices.BinarySearchFunc(r.bufs, v, func(b rbuf, v int64) int {
		last := b.t[len(b.t)-1]
		if last < v || after && last == v {
			return -1
		}
		return 1
	})
	if bi == len(r.bufs) {
		return r.next
	}
	b := r.bufs[bi]
	var i int
	if after {
		i, _ = slices.BinarySearchFunc(b.t, v, func(x, v int64) int {
			if x <= v {
				return -1
			}
			return 1
		})
	} else {
		i, _ = slices.BinarySearch(b.t, v)
	}
	return b.start + int64(i)
}

// at returns the buffer and row of global index g.
func (r *morselRight) at(g int64) (int, int) {
	bi, _ := slices.BinarySearchFunc(r.bufs, g, func(b rbuf, g int64) int {
		if b.start+int64(len(b.t)) <= g {
			return -1
		}
		return 1
	})
	return bi, int(g - r.bufs[bi].start)
}

// idBuf returns an array for n key ids, reusing a trimmed buffer's or the
// process's scratch (given back at Close): new ones each round would be
// fresh pages, and a page fault per 1K rows cost S1 ~9 ns per row.
func (r *morselRight) idBuf(n int) []int32 {
	for i := len(r.spareIDs) - 1; i >= 0; i-- {
		if b := r.spareIDs[i]; cap(b) >= n {
			r.spareIDs = slices.Delete(r.spareIDs, i, i+1)
			return b[:n]
		}
	}
	return i32Scratch.get(n)
}

// intern gives the rows of b their key ids in r.dict (into b.ids).
func (b *rbuf) intern(kb *keyBatch) {
	r := b.r
	cols := make([]arrow.Array, len(r.r.Keys))
	for i, c := range r.r.Keys {
		cols[i] = b.b.Column(c)
	}
	n := len(b.t)
	r.enc.encode(cols, n, kb)
	r.dict.intern(kb, b.ids)
}

// lastRows returns, per key, the last of the buffered rows [from, to),
// the latest first, and leaves r.stamp[id] == r.epoch for exactly their
// keys. It walks the rows' ids backward, so a key costs one entry however
// many rows it has, and stops once it has met every key of the dictionary:
// with many rows per key (S1: 1,000 keys, 128K rows) the walk is a few
// thousand rows long.
func (r *morselRight) lastRows(ctx context.Context, from, to int64) ([]primeRow, error) {
	var out []primeRow
	keys := r.dict.len()
	if len(r.stamp) < keys {
		r.stamp = append(r.stamp, make([]int32, keys-len(r.stamp))...)
	}
	r.epoch++
	if from >= to {
		return out, nil
	}
	stamp, epoch := r.stamp, r.epoch
	bi, _ := r.at(to - 1)
	for g := to; g > from; bi-- {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b := r.bufs[bi]
		// Rows [lo, hi) of this buffer are in the range.
		lo, hi := int(max(from-b.start, 0)), int(min(g-b.start, int64(len(b.t))))
		ids := b.ids[:hi]
		for i := hi - 1; i >= lo; i-- {
			id := ids[i]
			if id < 0 || stamp[id] == epoch {
				continue
			}
			stamp[id] = epoch
			out = append(out, primeRow{id: id, ref: operator.Ref{Src: int32(bi + 1), Row: int32(i)}})
			if len(out) == keys {
				return out, nil
			}
		}
		g = b.start + int64(lo)
	}
	return out, nil
}

// advancePrime moves the prime to row from: per key, the last right row
// before from, in input order. The rows [low, from) all follow the
// prime's, so the new prime is the old one's rows whose key they lack,
// then their last row per key, in input order.
func (r *morselRight) advancePrime(ctx context.Context, mem memory.Allocator, from int64) error {
	if r.prime != nil && from == r.low {
		return nil
	}
	chunk, err := r.lastRows(ctx, r.low, from)
	if err != nil {
		return err
	}
	refs := make([]operator.Ref, 0, len(r.primeIDs)+len(chunk))
	ids := make([]int32, 0, len(r.primeIDs)+len(chunk))
	for i, id := range r.primeIDs {
		if r.stamp[id] != r.epoch { // not a key of the chunk
			refs = append(refs, operator.Ref{Src: 0, Row: int32(i)})
			ids = append(ids, id)
		}
	}
	for i := len(chunk) - 1; i >= 0; i-- {
		refs = append(refs, chunk[i].ref)
		ids = append(ids, chunk[i].id)
	}
	schema := r.r.Input.Schema()
	srcs := make([]arrow.Array, len(r.bufs)+1)
	cols := make([]arrow.Array, schema.NumFields())
	for c := range cols {
		if r.prime != nil {
			srcs[0] = r.prime.Column(c)
		} else {
			srcs[0] = array.MakeArrayOfNull(mem, schema.Field(c).Type, 0)
			defer srcs[0].Release()
		}
		for i, b := range r.bufs {
			srcs[i+1] = b.b.Column(c)
		}
		if cols[c], err = operator.Gather(ctx, mem, schema.Field(c).Type, srcs, refs); err != nil {
			releaseArrays(cols[:c])
			return err
		}
		cols[c].NullN() // the joins read it at once (see fill)
	}
	prime := array.NewRecordBatch(schema, cols, int64(len(refs)))
	releaseArrays(cols)
	if r.prime != nil {
		r.prime.Release()
	}
	// The joins of earlier morsels may still read the old ids: they are
	// replaced, never written.
	r.prime, r.primeIDs = prime, ids
	return nil
}

// trim releases the buffered batches wholly before global index g. Their
// id arrays may still be read by the joins of morsels before seq: they are
// reused once done (the morsels Next is done with) reaches seq.
func (r *morselRight) trim(g, seq, done int64) {
	i := 0
	for i < len(r.bufs) && r.bufs[i].start+int64(len(r.bufs[i].t)) <= g {
		r.bufs[i].b.Release()
		r.pending = append(r.pending, pendingIDs{ids: r.bufs[i].ids, seq: seq})
		i++
	}
	r.bufs = slices.Delete(r.bufs, 0, i)
	k := 0
	for k < len(r.pending) && r.pending[k].seq <= done {
		r.spareIDs = append(r.spareIDs, r.pending[k].ids)
		k++
	}
	r.pending = slices.Delete(r.pending, 0, k)
}

// Close stops the reader and the workers, releases everything held and
// closes the inputs. It is idempotent.
func (m *Morsel) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	if m.cancel != nil {
		m.cancel()
		m.wg.Wait()
		if m.cur != nil {
			m.cur.release()
			m.cur = nil
		}
		for mo := range m.queue {
			mo.release()
		}
	}
	if m.carry != nil {
		m.carry.Release()
		m.carry = nil
	}
	m.kb.free()
	m.pool.Close()
	return m.closeInputs()
}

func (m *Morsel) closeInputs() error {
	first := m.left.Close()
	for _, r := range m.rights {
		for _, b := range r.bufs {
			b.b.Release()
			i32Scratch.put(b.ids)
		}
		for _, ids := range r.spareIDs {
			i32Scratch.put(ids)
		}
		for _, p := range r.pending {
			i32Scratch.put(p.ids)
		}
		r.bufs, r.spareIDs, r.pending = nil, nil, nil
		if r.prime != nil {
			r.prime.Release()
			r.prime = nil
		}
	}
	for _, r := range m.specs {
		if err := r.Input.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// idBatches is a morsel's right input: its batches with their rows' key
// ids, interned in the join's dictionary (Options.dicts) when the morsels
// looked for the primes. The join's kernel takes them (presetIDs) instead
// of encoding, hashing and looking up every key a second time.
type idBatches struct {
	*operator.Batches
	dict *keyDict // the dictionary the ids are in
	ids  [][]int32
	next int
	cur  []int32
}

func (b *idBatches) Next(ctx context.Context) (arrow.RecordBatch, error) {
	rec, err := b.Batches.Next(ctx)
	b.cur = nil
	if err == nil {
		b.cur = b.ids[b.next]
		b.next++
	}
	return rec, err
}

// presetIDs returns the key ids in d of the batch the input last
// returned, when it is an idBatches over d, else nil.
func presetIDs(in operator.Operator, d *keyDict, n int) []int32 {
	if b, ok := in.(*idBatches); ok && b.dict == d && len(b.cur) == n {
		return b.cur
	}
	return nil
}
