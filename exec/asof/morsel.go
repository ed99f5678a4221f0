package asof

import (
	"context"
	"errors"
	"io"
	"math"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/operator"
)

// The ASOF join split into morsels of the left input, for inputs ordered by
// t (stored ordered tables). The left input is read in rounds of
// RoundRows rows (at least MorselRows per worker), each round cut into one
// contiguous morsel per worker, and each morsel joined by a serial Join of
// its own against only the right rows that can match it:
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
//     over the morsels: each worker finds its chunk's last row per key in
//     parallel (walking its rows' key ids backward), then one pass per
//     morsel, linear in the keys, combines them.
//
// Each right batch's keys are interned once, by a worker, into a key
// dictionary per right input that lives as long as the Morsel; the ids go
// with the rows to the morsels' joins (idBatches), which use that same
// dictionary (Options.dicts) and skip their own encode, hash and lookup.
// So the right side's key work is the serial join's, done once, in
// parallel; the joins also share one output buffer pool (Options.pool).
// What the morsels add to the serial join's work: the chunk walks (an id
// read per right row), a prime per morsel (a row per key, gathered, and
// joined as a right row), the order checks of both inputs, and a join's
// setup per morsel.
//
// The output is the morsels' outputs concatenated in order, the serial
// join's rows with no reassembly. Only the rows of a round and the right
// rows from the oldest morsel's start are held, plus one prime per key, so
// memory does not grow with the inputs.
//
// A form the morsels cannot take falls back to NewParallel (split by key)
// or the serial join: an unbounded hi (its prime would be a suffix,
// unknown until the right input ends), RIGHT and FULL (unmatched right
// rows), ON conditions, key-major inputs, on columns that are not 64-bit
// integers of one type on both sides (int, date, timestamp of one unit),
// and calendar or decimal bounds.

// MorselRows is the fewest left rows one worker joins at a time, and
// RoundRows the left rows a round aims at over all workers: each morsel
// pays a fixed cost (its join's setup, its prime: a row per key), so
// fewer, larger morsels cost less CPU, while a round's rows (and their
// output, and the right rows of its t range) are what the join holds, so
// the round, not the morsel, is bounded. Measured at 2 workers: S1 took
// 31 CPU ns per left row in 128K-row morsels, 24 in 512K (serial: 19);
// but 1M-row rounds took the 100M x 100M stream to a 252 MiB heap peak,
// 512K-row rounds to 130 MiB (BenchmarkStream100M).
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

	// pool holds the output buffers of every morsel's join (Options.pool),
	// dicts the right inputs' key dictionaries (Options.dicts).
	pool  *operator.Pool
	dicts []*keyDict

	started, leftDone, closed bool
	err                       error
	out                       []arrow.RecordBatch
}

var _ operator.Operator = (*Morsel)(nil)

// morselRight is one right input's buffered rows and prime.
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
	// spareIDs are trimmed buffers' id arrays, for new buffers.
	spareIDs [][]int32
	// prime: per key, the last right row before the buffer's first row,
	// in input order; primeIDs[i] is the key id of its row i.
	prime    arrow.RecordBatch
	primeIDs []int32
	// low is the first row a later morsel may take (the rows before it
	// are in the prime).
	low int64
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
		last, has := c.last, c.has
		for i, v := range t {
			if v < last && (has || i > 0) {
				return orderError(c.name, c.col, c.rows+int64(i)+1, arr.ValueStr(i))
			}
			last = v
		}
		c.last, c.has = last, true
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
	return newMorsel(left, rights, opts, workers, max(MorselRows, RoundRows/max(workers, 1)))
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
	m := &Morsel{opts: opts, schema: schema, left: left, specs: rights, workers: workers, rows: max(rows, 1), pool: operator.NewPool(opts.Allocator),
		lcheck: orderCheck{name: opts.LeftName}}
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

// Next returns the next output batch, joining the next round of morsels
// when the last one's output is spent.
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
	for len(m.out) == 0 {
		if m.leftDone {
			return nil, io.EOF
		}
		if err := m.round(ctx); err != nil {
			m.err = err
			return nil, err
		}
	}
	b := m.out[0]
	m.out[0] = nil
	m.out = m.out[1:]
	return b, nil
}

// morsel is one worker's share of a round.
type morsel struct {
	left        []arrow.RecordBatch
	has         bool // some row has a non-NULL t
	first, last int64
	from, to    []int64 // per right: the slice of right rows [from, to)
	primeRefs   [][]operator.Ref
	primeIDs    [][]int32    // per right: the key id of each prime row
	chunk       [][]primeRow // per right: each key's last row of [prev from, from), last first
	out         []arrow.RecordBatch
	prime       []arrow.RecordBatch
}

func (m *Morsel) round(ctx context.Context) error {
	var batches []arrow.RecordBatch
	var ts [][]int64
	total := 0
	want := m.workers * m.rows
	for total < want {
		b, err := m.left.Next(ctx)
		if errors.Is(err, io.EOF) {
			m.leftDone = true
			break
		}
		if err != nil {
			releaseAll(batches)
			return err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		t := int64s(b.Column(m.specs[0].LeftOn))
		if err := m.lcheck.check(b.Column(m.specs[0].LeftOn), t); err != nil {
			b.Release()
			releaseAll(batches)
			return err
		}
		batches = append(batches, b)
		ts = append(ts, t)
		total += int(b.NumRows())
	}
	defer releaseAll(batches)
	if total == 0 {
		return nil
	}
	// Cut the round into one contiguous morsel per worker.
	nm := min(m.workers, total)
	ms := make([]*morsel, nm)
	bi, off := 0, 0
	for k := range ms {
		mo := &morsel{}
		ms[k] = mo
		n := total*(k+1)/nm - total*k/nm
		for n > 0 {
			b := batches[bi]
			take := min(n, int(b.NumRows())-off)
			mo.left = append(mo.left, b.NewSlice(int64(off), int64(off+take)))
			// The first and last t of the morsel: NULLs (last in an
			// ordered table) are skipped.
			on := b.Column(m.specs[0].LeftOn)
			for i := off; i < off+take && !mo.has; i++ {
				if on.IsValid(i) {
					mo.first, mo.has = ts[bi][i], true
				}
			}
			for i := off + take - 1; i >= off; i-- {
				if on.IsValid(i) {
					mo.last = ts[bi][i]
					break
				}
			}
			n -= take
			off += take
			if off == int(b.NumRows()) {
				bi, off = bi+1, 0
			}
		}
	}
	defer func() {
		for _, mo := range ms {
			releaseAll(mo.left)
			releaseAll(mo.prime)
			releaseAll(mo.out)
		}
	}()
	// Morsels with no t take no right rows; give them their neighbour's
	// edges so the slices stay monotone.
	for k, mo := range ms {
		if !mo.has {
			if k > 0 {
				mo.first, mo.last = ms[k-1].last, ms[k-1].last
			} else {
				mo.first, mo.last = math.MinInt64, math.MinInt64
			}
		}
	}
	for ri, r := range m.rights {
		sp := r.r
		hiEnd := int64(math.MinInt64)
		var ends []int64
		for _, mo := range ms {
			e := satAdd(satAdd(mo.last, sp.Hi.Int), 1)
			ends = append(ends, e)
			hiEnd = max(hiEnd, e)
		}
		if err := r.fill(ctx, m.opts.Allocator, hiEnd); err != nil {
			return err
		}
		for k, mo := range ms {
			var start int64
			if sp.Lo.Unbounded {
				start = satAdd(satAdd(mo.first, min(sp.Hi.Int, 0)), -1)
			} else {
				start = satAdd(satAdd(mo.first, sp.Lo.Int), -1)
			}
			from, to := r.search(start, false), r.search(ends[k], true)
			// Slices start in order, never before the rows the prime
			// already holds; a morsel of NULL t takes no rows.
			from = max(from, r.low)
			if k > 0 {
				from = max(from, ms[k-1].from[ri])
			}
			if !mo.has {
				to = from
			}
			to = max(to, from)
			mo.from = append(mo.from, from)
			mo.to = append(mo.to, to)
		}
	}
	// Phase A: the workers intern the keys of the right rows buffered
	// since the last round (each batch once: the morsels' joins take the
	// ids with the rows, see idBatches), then each finds, per key, the
	// last right row of its chunk.
	var fresh []*rbuf
	for _, r := range m.rights {
		for bi := range r.bufs {
			if b := &r.bufs[bi]; b.ids == nil {
				b.ids = r.idBuf(len(b.t))
				fresh = append(fresh, b)
			}
		}
	}
	err := m.parallel(ctx, ms, func(k int, mo *morsel) error {
		var kb keyBatch
		defer kb.free()
		var hashes []uint64
		for i := k; i < len(fresh); i += len(ms) {
			if err := ctx.Err(); err != nil {
				return err
			}
			hashes = fresh[i].intern(&kb, hashes)
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = m.parallel(ctx, ms, func(k int, mo *morsel) error {
		mo.chunk = make([][]primeRow, len(m.rights))
		for ri, r := range m.rights {
			if !r.r.Lo.Unbounded {
				continue
			}
			prev := r.low
			if k > 0 {
				prev = ms[k-1].from[ri]
			}
			c, err := r.lastRows(ctx, prev, mo.from[ri])
			if err != nil {
				return err
			}
			mo.chunk[ri] = c
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Phase B: the primes, a prefix over the morsels. A chunk's rows all
	// follow the rows of the primes before it, so a prime is the last
	// one's rows whose key the chunk does not have, then the chunk's, in
	// input order: linear in the keys, no sort.
	for ri, r := range m.rights {
		if !r.r.Lo.Unbounded {
			for _, mo := range ms {
				mo.primeRefs = append(mo.primeRefs, nil)
				mo.primeIDs = append(mo.primeIDs, nil)
			}
			continue
		}
		cur := make([]primeRow, len(r.primeIDs))
		for i, id := range r.primeIDs {
			cur[i] = primeRow{id: id, ref: operator.Ref{Src: 0, Row: int32(i)}}
		}
		stamp := make([]int32, r.dict.len())
		for k, mo := range ms {
			ch := mo.chunk[ri]
			for _, c := range ch {
				stamp[c.id] = int32(k + 1)
			}
			next := make([]primeRow, 0, len(cur)+len(ch))
			for _, e := range cur {
				if stamp[e.id] != int32(k+1) {
					next = append(next, e)
				}
			}
			for i := len(ch) - 1; i >= 0; i-- {
				next = append(next, ch[i])
			}
			cur = next
			refs := make([]operator.Ref, len(cur))
			ids := make([]int32, len(cur))
			for i, e := range cur {
				refs[i], ids[i] = e.ref, e.id
			}
			mo.primeRefs = append(mo.primeRefs, refs)
			mo.primeIDs = append(mo.primeIDs, ids)
		}
		// The last morsel's prime becomes the state for the next round:
		// its batch's row i is cur[i].
		r.primeIDs = ms[len(ms)-1].primeIDs[ri]
	}
	// Phase C: every morsel joined by its own worker.
	err = m.parallel(ctx, ms, func(k int, mo *morsel) error {
		rights := make([]Right, len(m.rights))
		mo.prime = make([]arrow.RecordBatch, len(m.rights))
		for ri, r := range m.rights {
			in, ids, prime, err := r.input(ctx, m.opts.Allocator, mo.primeRefs[ri], mo.primeIDs[ri], mo.from[ri], mo.to[ri])
			if err != nil {
				for _, built := range rights[:ri] {
					built.Input.Close()
				}
				return err
			}
			mo.prime[ri] = prime
			rights[ri] = r.r
			rights[ri].Input = &idBatches{Batches: operator.NewBatches(r.r.Input.Schema(), in), dict: r.dict, ids: ids}
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
			mo.out = append(mo.out, b)
		}
	})
	if err != nil {
		return err
	}
	for _, mo := range ms {
		m.out = append(m.out, mo.out...)
		mo.out = nil
	}
	// Keep the last morsel's prime for the next round; drop the right rows
	// no later morsel can need.
	for ri, r := range m.rights {
		last := ms[len(ms)-1]
		if r.r.Lo.Unbounded {
			if r.prime != nil {
				r.prime.Release()
			}
			r.prime = last.prime[ri]
			last.prime[ri] = nil
		}
		r.low = last.from[ri]
		r.trim(r.low)
	}
	return nil
}

// parallel runs f for every morsel on its own goroutine and returns the
// first error.
func (m *Morsel) parallel(ctx context.Context, ms []*morsel, f func(int, *morsel) error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(ms))
	for k, mo := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = f(k, mo)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(errs...)
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
func (b *rbuf) intern(kb *keyBatch, hashes []uint64) []uint64 {
	r := b.r
	cols := make([]arrow.Array, len(r.r.Keys))
	for i, c := range r.r.Keys {
		cols[i] = b.b.Column(c)
	}
	n := len(b.t)
	r.enc.encode(cols, n, kb)
	hashes = r.dict.hashAll(kb, hashes)
	r.dict.intern(kb, hashes, b.ids)
	return hashes
}

// lastRows returns, per key, the last of the buffered rows [from, to),
// the latest first. It walks the rows' ids backward, so a key costs one
// entry however many rows it has.
func (r *morselRight) lastRows(ctx context.Context, from, to int64) ([]primeRow, error) {
	var out []primeRow
	if from >= to {
		return out, nil
	}
	seen := make([]bool, r.dict.len())
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
			if id < 0 || seen[id] {
				continue
			}
			seen[id] = true
			out = append(out, primeRow{id: id, ref: operator.Ref{Src: int32(bi + 1), Row: int32(i)}})
		}
		g = b.start + int64(lo)
	}
	return out, nil
}

// input builds one morsel's right batches: the prime rows gathered at
// refs, then the buffered rows [from, to), sliced. It returns the prime's
// batch also on its own (retained), to keep as the next round's state.
func (r *morselRight) input(ctx context.Context, mem memory.Allocator, refs []operator.Ref, primeIDs []int32, from, to int64) ([]arrow.RecordBatch, [][]int32, arrow.RecordBatch, error) {
	var out []arrow.RecordBatch
	var ids [][]int32
	var prime arrow.RecordBatch
	if r.r.Lo.Unbounded {
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
			var err error
			if cols[c], err = operator.Gather(ctx, mem, schema.Field(c).Type, srcs, refs); err != nil {
				releaseArrays(cols[:c])
				return nil, nil, nil, err
			}
		}
		prime = array.NewRecordBatch(schema, cols, int64(len(refs)))
		for _, c := range cols {
			c.NullN() // the next round's workers all read it (see fill)
		}
		releaseArrays(cols)
		prime.Retain()
		out = append(out, prime)
		ids = append(ids, primeIDs)
	}
	if from < to {
		bi, row := r.at(from)
		for g := from; g < to; bi, row = bi+1, 0 {
			b := r.bufs[bi]
			n := int(min(int64(len(b.t)), int64(row)+to-g))
			out = append(out, b.b.NewSlice(int64(row), int64(n)))
			ids = append(ids, b.ids[row:n])
			g += int64(n - row)
		}
	}
	return out, ids, prime, nil
}

// trim releases the buffered batches wholly before global index g.
func (r *morselRight) trim(g int64) {
	i := 0
	for i < len(r.bufs) && r.bufs[i].start+int64(len(r.bufs[i].t)) <= g {
		r.bufs[i].b.Release()
		// The joins that read the ids have closed.
		r.spareIDs = append(r.spareIDs, r.bufs[i].ids)
		i++
	}
	r.bufs = slices.Delete(r.bufs, 0, i)
}

// Close releases everything held and closes the inputs. It is idempotent.
func (m *Morsel) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	releaseAll(m.out)
	m.out = nil
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
		r.bufs, r.spareIDs = nil, nil
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
