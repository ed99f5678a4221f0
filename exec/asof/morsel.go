package asof

import (
	"cmp"
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
// t (stored ordered tables). The left input is cut into contiguous
// morsels of MorselRows rows, one after the other, each by the first free
// worker (under a lock: the cuts are in order), which then joins it by a
// serial Join of its own against only the right rows that can match it:
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
//     over the morsels, a chain of primeCells: the morsel's worker, once
//     the previous morsel's prime is made, finds per key the last row of
//     the right rows between the previous morsel's slice and this one's
//     (walking their key ids backward), and replaces those keys' rows in
//     the previous prime: linear in the keys and the rows, no map. Each
//     worker makes its morsel's prime before its join, so the next
//     morsel's worker waits for a walk, not for a join.
//
// Each right batch's keys are interned once, into a key dictionary per
// right input that lives as long as the Morsel, by the first worker that
// needs them (rbuf.ensure): the worker of the morsel whose slice holds
// the rows, or of the one whose prime walks them. The ids go with the
// rows to the morsels' joins (idBatches), which use that same dictionary
// (Options.dicts) and skip their own encode, hash and lookup. So the
// right side's key work is the serial join's, done once and in parallel;
// the joins also share one output buffer pool (Options.pool). What the
// morsels add to the serial join's work: the chunk walks (an id read per
// right row), a prime per morsel (a row per key, gathered, and joined as a
// right row), the order checks of both inputs, and a join's setup per
// morsel. The cuts' part, the only serial one, is reading the inputs,
// their order checks and cutting the slices (in session 9 it also
// interned every right key and made the primes: a fifth of S4's CPU, on
// the critical path). Until session 11 a reader goroutine of its own made
// the cuts: with two workers on two cores it waited for a core to cut,
// Next waited for one to free a slot (the workers never block while they
// have morsels), so a 1M-row query ran in rounds of depth morsels with
// the cores idle between them. Now the worker that is free cuts the next
// morsel and joins it, and a worker that finds every slot taken blocks,
// which leaves its core to Next.
//
// It is a pipeline with no synchronous phase: while a worker joins, another
// reads and checks the next morsel's rows, and Next
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

	// The pipeline, started by the first Next: a free worker cuts the
	// next morsel (take), sends it to queue (Next, in order) and joins
	// it; a morsel holds a slot of slots from its cut until Next has
	// returned all its output. cancel stops the goroutines, wg waits for
	// them.
	cancel context.CancelFunc
	wg     sync.WaitGroup
	queue  chan *morsel
	slots  chan struct{}
	cur    *morsel      // the morsel whose output Next returns
	done   atomic.Int64 // the morsels Next is done with (their joins ended)

	// cutMu serializes the cuts; it guards what follows: cutDone (the
	// queue is closed), live (the workers not stopped), and the cut's
	// state (the fields below and the rights' buffers and primes).
	cutMu   sync.Mutex
	cutDone bool
	live    int

	// The cuts' state: the left batch the last morsel ended in and the
	// first row of it not yet taken.
	carry    arrow.RecordBatch
	carryT   []int64
	carryOff int
	leftDone bool
	seq      int64
}

var _ operator.Operator = (*Morsel)(nil)

// morselRight is one right input's buffered rows and prime; only the cuts
// (under Morsel.cutMu) touch it.
type morselRight struct {
	r     Right
	enc   keyEncoding
	check orderCheck
	bufs  []*rbuf
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
	// The walks of one input follow each other (each waits for the
	// previous morsel's prime), on whichever worker: they share these.
	stamp []int32
	epoch int32
	// rowsBuf and refsBuf are the walks' working arrays, kept across
	// them (the walks follow each other, as for stamp).
	rowsBuf []primeRow
	refsBuf []operator.Ref
	// last is the prime of the latest morsel cut (made or not yet), the
	// next one's previous prime.
	last *primeCell
	// low is the first row a later morsel may take (the rows before it
	// are in the primes).
	low int64
}

// primeCell is one morsel's prime for one right input: per key, the last
// right row before the morsel's slice, in input order, and their key ids.
// The morsel's worker makes it from the previous morsel's prime (prev) and
// the right rows between the two slices (chunk: rows [lo, hi) of the
// buffers chunk, which the cell holds a reference to), once prev is ready:
// the primes are a chain over the morsels, each link made by a worker, so
// the walk and the interning of the rows it needs are off the cuts.
//
// A cell holds a reference to b until the next morsel's worker has made
// its own prime from it (or Close, for the last one and any the workers
// never made): see makePrime and releaseCells.
type primeCell struct {
	prev   *primeCell
	chunk  []*rbuf
	lo, hi int64
	ready  chan struct{} // closed once b and ids, or err, are set
	b      arrow.RecordBatch
	ids    []int32
	err    error
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
	// The first worker that needs the ids interns them (ensure) under mu;
	// the others wait for it.
	mu       sync.Mutex
	interned bool
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
	err         error // the cut's error: no rows, the end of the output
	left        []arrow.RecordBatch
	has         bool // some row has a non-NULL t
	first, last int64
	// Per right: the join's input batches (the prime, then the rows of
	// its t range) and their rows' key ids. The worker takes them.
	in  [][]arrow.RecordBatch
	ids [][][]int32
	// Per right: the buffers of the slice (with a reference), whose keys
	// the worker interns (ensure) before the join, and the prime to make
	// (backward only).
	need  [][]*rbuf
	cells []*primeCell

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

// releaseNeed drops mo's references to the buffers of its slices.
func (mo *morsel) releaseNeed() {
	for _, need := range mo.need {
		for _, b := range need {
			b.b.Release()
		}
	}
	mo.need = nil
}

// release drops what mo holds.
func (mo *morsel) release() {
	mo.releaseNeed()
	releaseAll(mo.left)
	mo.left = nil
	releaseAll(mo.out)
	mo.out = nil
	for _, in := range mo.in {
		releaseAll(in)
	}
	mo.in = nil
}

// start starts the workers. They keep ctx's values but not its
// cancellation, so that a cursor may read on under a later context: Next
// stops them when its own context ends, Close always.
func (m *Morsel) start(ctx context.Context) {
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.cancel = cancel
	m.queue = make(chan *morsel, m.depth)
	m.slots = make(chan struct{}, m.depth)
	m.live = m.workers
	m.wg.Add(m.workers)
	for range m.workers {
		go m.work(wctx)
	}
}

// work cuts a morsel and joins it, until there are no more: for each, it
// interns the keys of the right rows the morsel takes, makes its primes
// (after the previous morsel's), and runs its join. A morsel whose join
// fails or is cancelled ends with its error; the cuts stop at the
// cancellation Next or Close then makes.
func (m *Morsel) work(ctx context.Context) {
	defer m.wg.Done()
	defer m.leave()
	var kb keyBatch
	defer kb.free()
	for {
		mo := m.take(ctx)
		if mo == nil {
			return
		}
		err := m.join(ctx, mo, &kb)
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

// take cuts the next morsel, in order, for the calling worker to join,
// once a slot is free: nil at the end of the left input, after a cut's
// error (queued for Next) or at the cancellation. The cuts are serial
// (cutMu) but run on whichever worker is free: there is no reader
// goroutine that must be scheduled between the joins, and a worker that
// finds every slot taken blocks, which leaves its core to Next.
func (m *Morsel) take(ctx context.Context) *morsel {
	select {
	case m.slots <- struct{}{}:
	case <-ctx.Done():
		return nil
	}
	m.cutMu.Lock()
	defer m.cutMu.Unlock()
	if m.cutDone {
		<-m.slots
		return nil
	}
	mo, err := m.cut(ctx)
	if err != nil {
		m.queue <- &morsel{err: err} // it keeps its slot: Next stops there
		m.endCuts()
		return nil
	}
	if mo == nil {
		<-m.slots
		m.endCuts()
		return nil
	}
	m.queue <- mo // never blocks: a slot per morsel queued
	return mo
}

// endCuts ends the queue; cutMu is held.
func (m *Morsel) endCuts() {
	if !m.cutDone {
		m.cutDone = true
		close(m.queue)
	}
}

// leave ends the queue when the last worker stops (at a cancellation,
// before the cuts reached the end).
func (m *Morsel) leave() {
	m.cutMu.Lock()
	defer m.cutMu.Unlock()
	if m.live--; m.live == 0 {
		m.endCuts()
	}
}

// join runs mo's serial join, handing each output batch to Next as it
// comes, once its right rows' keys are interned and its primes made.
func (m *Morsel) join(ctx context.Context, mo *morsel, kb *keyBatch) error {
	// The primes (made first: the next morsel's worker waits for them),
	// then the keys of the rows of the slices. Every prime is made, even
	// after an error, so that a later morsel's worker never waits on one.
	var err error
	for ri, r := range m.rights {
		if c := mo.cells[ri]; c != nil {
			// The prime's columns come from the joins' pool: the
			// previous primes' buffers, not fresh memory per morsel.
			b, ids, perr := r.makePrime(ctx, m.pool, c, kb)
			if perr != nil {
				err = cmp.Or(err, perr)
				continue
			}
			mo.in[ri] = slices.Insert(mo.in[ri], 0, b)
			mo.ids[ri] = slices.Insert(mo.ids[ri], 0, ids)
		}
	}
	if err == nil {
		for _, need := range mo.need {
			for _, b := range need {
				if err = ctx.Err(); err != nil {
					break
				}
				b.ensure(kb)
			}
		}
	}
	mo.releaseNeed()
	if err != nil {
		return err
	}
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
	popts.leftChecked = true // by the cuts (lcheck), with the rows counted over the whole input
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
	mo.need = make([][]*rbuf, len(m.rights))
	mo.cells = make([]*primeCell, len(m.rights))
	for ri, r := range m.rights {
		if err := m.cutRight(ctx, mo, ri, r); err != nil {
			mo.release()
			return nil, err
		}
	}
	return mo, nil
}

// cutRight reads the right rows mo needs from input ri and builds mo's
// input from it: the rows of mo's t range and, for a backward join, the
// prime its worker is to make.
func (m *Morsel) cutRight(ctx context.Context, mo *morsel, ri int, r *morselRight) error {
	sp := r.r
	end := satAdd(satAdd(mo.last, sp.Hi.Int), 1)
	if err := r.fill(ctx, m.opts.Allocator, end); err != nil {
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
		// The prime after the rows [low, from): the worker makes it.
		c := &primeCell{prev: r.last, lo: r.low, hi: from, ready: make(chan struct{})}
		if r.low < from {
			bi, _ := r.at(r.low)
			for ; bi < len(r.bufs) && r.bufs[bi].start < from; bi++ {
				r.bufs[bi].b.Retain()
				c.chunk = append(c.chunk, r.bufs[bi])
			}
		}
		r.last, mo.cells[ri] = c, c
	}
	if from < to {
		bi, row := r.at(from)
		for g := from; g < to; bi, row = bi+1, 0 {
			b := r.bufs[bi]
			n := int(min(int64(len(b.t)), int64(row)+to-g))
			mo.in[ri] = append(mo.in[ri], b.b.NewSlice(int64(row), int64(n)))
			mo.ids[ri] = append(mo.ids[ri], b.ids[row:n])
			b.b.Retain() // a later cut may trim b before the worker interns it
			mo.need[ri] = append(mo.need[ri], b)
			g += int64(n - row)
		}
	}
	r.low = from
	// The trimmed buffers' ids may be read by mo's prime (its chunk) as
	// well as by the joins of the morsels before it.
	r.trim(from, mo.seq+1, m.done.Load())
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
		r.bufs = append(r.bufs, &rbuf{b: b, t: t, start: r.next, r: r, ids: r.idBuf(len(t))})
		r.next += b.NumRows()
	}
	return nil
}

// search returns the global index of the first buffered row with t >= v
// (after: t > v).
func (r *morselRight) search(v int64, after bool) int64 {
	bi, _ := slices.BinarySearchFunc(r.bufs, v, func(b *rbuf, v int64) int {
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
	bi, _ := slices.BinarySearchFunc(r.bufs, g, func(b *rbuf, g int64) int {
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

// ensure interns b's keys unless done: the first caller interns them,
// any other at the same time waits for it.
func (b *rbuf) ensure(kb *keyBatch) {
	b.mu.Lock()
	if !b.interned {
		b.intern(kb)
		b.interned = true
	}
	b.mu.Unlock()
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

// lastRows returns, per key, the last of c's chunk rows [c.lo, c.hi), the
// latest first, and leaves r.stamp[id] == r.epoch for exactly their keys.
// It walks the rows' ids backward, so a key costs one entry however many
// rows it has, and stops once it has met every key of the dictionary: with
// many rows per key (S1: 1,000 keys, 128K rows) the walk is a few thousand
// rows long. Every row of the chunk is interned first: the early stop
// needs every key of the rows it skips in the dictionary. The chunk is
// mostly the previous morsel's slice, which that morsel's worker interns
// from its start: this one interns from the end, so that two workers
// share the buffers neither has interned yet rather than queue on them.
func (r *morselRight) lastRows(ctx context.Context, c *primeCell, kb *keyBatch) ([]primeRow, error) {
	for i := len(c.chunk) - 1; i >= 0; i-- {
		c.chunk[i].ensure(kb)
	}
	out := r.rowsBuf[:0]
	defer func() { r.rowsBuf = out[:0] }()
	keys := r.dict.len()
	if len(r.stamp) < keys {
		r.stamp = append(r.stamp, make([]int32, keys-len(r.stamp))...)
	}
	r.epoch++
	stamp, epoch := r.stamp, r.epoch
	for bi := len(c.chunk) - 1; bi >= 0; bi-- {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b := c.chunk[bi]
		// Rows [lo, hi) of this buffer are in the chunk.
		lo, hi := int(max(c.lo-b.start, 0)), int(min(c.hi-b.start, int64(len(b.t))))
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
	}
	return out, nil
}

// makePrime makes c once the previous prime is ready: per key, the last
// right row before c.hi, in input order. The chunk's rows all follow the
// previous prime's, so it is the previous prime's rows whose key the chunk
// lacks, then the chunk's last row per key, in input order. It returns the
// prime with a reference for the caller's join, and always closes c.ready.
// The previous prime's reference and the chunk's are dropped once used.
func (r *morselRight) makePrime(ctx context.Context, mem memory.Allocator, c *primeCell, kb *keyBatch) (arrow.RecordBatch, []int32, error) {
	defer close(c.ready)
	prev := c.prev
	var prime arrow.RecordBatch
	var primeIDs []int32
	if prev != nil {
		select {
		case <-prev.ready:
		case <-ctx.Done():
			c.err = ctx.Err()
			return nil, nil, c.err
		}
		if prev.err != nil {
			c.err = prev.err
			return nil, nil, c.err
		}
		prime, primeIDs = prev.b, prev.ids
	}
	if prime != nil && len(c.chunk) == 0 {
		// No rows between the slices: the previous prime, passed on.
		c.b, c.ids, prev.b, c.prev = prime, primeIDs, nil, nil
		c.b.Retain()
		return c.b, c.ids, nil
	}
	b, ids, err := r.nextPrime(ctx, mem, c, kb, prime, primeIDs)
	if err != nil {
		c.err = err
		return nil, nil, err
	}
	c.b, c.ids = b, ids
	if prev != nil {
		prev.b.Release()
		prev.b, c.prev = nil, nil
	}
	releaseChunk(c)
	c.b.Retain()
	return c.b, c.ids, nil
}

// nextPrime builds the prime after c's chunk from the previous one (prime,
// primeIDs; nil before the first morsel).
func (r *morselRight) nextPrime(ctx context.Context, mem memory.Allocator, c *primeCell, kb *keyBatch, prime arrow.RecordBatch, primeIDs []int32) (arrow.RecordBatch, []int32, error) {
	chunk, err := r.lastRows(ctx, c, kb)
	if err != nil {
		return nil, nil, err
	}
	refs := slices.Grow(r.refsBuf[:0], len(primeIDs)+len(chunk))
	defer func() { r.refsBuf = refs[:0] }()
	ids := make([]int32, 0, len(primeIDs)+len(chunk))
	for i, id := range primeIDs {
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
	srcs := make([]arrow.Array, len(c.chunk)+1)
	cols := make([]arrow.Array, schema.NumFields())
	for col := range cols {
		if prime != nil {
			srcs[0] = prime.Column(col)
		} else {
			srcs[0] = array.MakeArrayOfNull(mem, schema.Field(col).Type, 0)
			defer srcs[0].Release()
		}
		for i, b := range c.chunk {
			srcs[i+1] = b.b.Column(col)
		}
		if cols[col], err = operator.Gather(ctx, mem, schema.Field(col).Type, srcs, refs); err != nil {
			releaseArrays(cols[:col])
			return nil, nil, err
		}
		cols[col].NullN() // the joins read it at once (see fill)
	}
	b := array.NewRecordBatch(schema, cols, int64(len(refs)))
	releaseArrays(cols)
	return b, ids, nil
}

func releaseChunk(c *primeCell) {
	for _, b := range c.chunk {
		b.b.Release()
	}
	c.chunk = nil
}

// releaseCells drops what the primes of r still hold once the workers have
// stopped: walking back from the latest, the chunks of the ones never
// made, down to the latest made one's prime.
func (r *morselRight) releaseCells() {
	for c := r.last; c != nil; c = c.prev {
		releaseChunk(c)
		if c.b != nil {
			c.b.Release()
			c.b = nil
		}
	}
	r.last = nil
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

// Close stops the workers, releases everything held and
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
		r.releaseCells()
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
