package asof

import (
	"context"
	"errors"
	"io"
	"slices"
	"sort"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/sqlerr"
)

// Conditions on both inputs (spec §2.5): a right row is eligible for a
// left row only when Right.PairCond holds for the pair, and the winner is
// the closest eligible row. The nearest row in the window may fail, so
// the join cannot keep one latest row per key: it keeps every right row
// of a key that a later left row may still select, and walks a left row's
// candidates from the closest outward (the same order the tie rules give:
// at equal distance PREFER decides, among equal t the last at or before
// the left row first, the first after it first) until one passes.
//
// The walk is vectorised in rounds: each round takes the next few
// candidates of every left row still searching, evaluates the condition
// once over all those pairs (a batch of the condition's left columns
// taken from the left batch and its right columns gathered from the kept
// right batches), and settles the rows whose candidate passed. The number
// of candidates per row grows each round, so a row whose nearest rows
// keep failing costs a few evaluations, not one per candidate.
//
// Memory: with a bounded lower side the rows below the window of the last
// left row read are dropped (no later left row reaches them); with an
// unbounded one (l.t >= r.t) a key's whole history is kept. Either way
// the kept rows are charged to the query's memory account (53200 past
// memory_limit). An unbounded upper side reads ahead only as far as a
// left row's walk needs.

// pairRow is one kept right row, in the right input's order.
type pairRow struct {
	t    uint64
	slot int32
	row  int32
	key  int32 // -1: eligible for nobody (NULL t or key, failing Cond)
	won  bool
}

// pairSlot is one kept right batch; live counts its rows in seq (and
// unmatched rows not yet output).
type pairSlot struct {
	b    arrow.RecordBatch
	live int32
}

// pairCost is the Go memory one kept row takes (its seq entry and its
// index in its key's list).
const pairCost = int64(unsafe.Sizeof(pairRow{})) + 8

// maxPairs caps the candidate pairs evaluated in one round.
const maxPairs = 8192

type pairState struct {
	sp      *spec
	mem     memory.Allocator
	acct    accountant
	what    string
	charged int64
	float   bool
	dict    *keyDict
	outer   bool
	leftW   int // the left input's own columns (output width)
	schema  *arrow.Schema

	slots []pairSlot
	free  []int32
	// seq holds the kept rows in the right input's order (so t ascends
	// among rows with a key); seq[0] is row number base of all rows kept.
	seq  []pairRow
	base int64
	// byKey lists each key's kept rows by their number, ascending; numbers
	// below base are dropped rows, trimmed lazily.
	byKey [][]int64
	dead  int // rows dropped since byKey was last trimmed

	eof     bool
	last    uint64
	hasLast bool
	read    int64
	rt      onColumn
	kb      keyBatch
	ids     []int32

	// unmatched are dropped rows that won nothing (RIGHT, FULL), waiting
	// to be output; their slots stay live until then.
	unmatched []ref
	ready     []arrow.RecordBatch
	leftDone  bool
}

func newPairState(sp *spec, mem memory.Allocator, dict *keyDict, leftW int, schema *arrow.Schema) *pairState {
	p := &pairState{sp: sp, mem: mem, float: sp.onKind.float, dict: dict, outer: sp.Kind.outer(), leftW: leftW, schema: schema}
	p.acct, _ = mem.(accountant)
	p.what = "ASOF JOIN with " + sp.Name + " (right rows kept for a condition on both inputs)"
	return p
}

func (p *pairState) tAt(n int64) uint64 { return p.seq[n-p.base].t }

// charge records n more (or, negative, fewer) kept rows.
func (p *pairState) charge(rows int) error {
	if p.acct == nil || rows == 0 {
		return nil
	}
	n := int64(rows) * pairCost
	if n < 0 {
		p.acct.Shrink(-n)
		p.charged += n
		return nil
	}
	if err := p.acct.Grow(p.what, n); err != nil {
		return err
	}
	p.charged += n
	return p.acct.Check(p.what)
}

// readBatch reads the next non-empty right batch into seq.
func (p *pairState) readBatch(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := p.sp.Input.Next(ctx)
		if errors.Is(err, io.EOF) {
			p.eof = true
			return nil
		}
		if err != nil {
			return err
		}
		n := int(b.NumRows())
		if n == 0 {
			b.Release()
			continue
		}
		err = p.keep(ctx, b, n)
		b.Release()
		return err
	}
}

func (p *pairState) keep(ctx context.Context, b arrow.RecordBatch, n int) error {
	on := b.Column(p.sp.On)
	if err := decodeOn(on, &p.rt, p.sp.Name); err != nil {
		return err
	}
	cols := make([]arrow.Array, len(p.sp.Keys))
	for i, c := range p.sp.Keys {
		cols[i] = b.Column(c)
	}
	p.sp.keyEnc.encode(cols, n, &p.kb)
	if p.sp.Cond != nil {
		if err := maskRows(ctx, p.sp.Cond, b, &p.kb, nil); err != nil {
			return err
		}
	}
	if cap(p.ids) < n {
		p.ids = make([]int32, n)
	}
	p.ids = p.ids[:n]
	p.dict.intern(&p.kb, p.ids)
	p.seq = slices.Grow(p.seq, n)
	var s int32
	if k := len(p.free); k > 0 {
		s, p.free = p.free[k-1], p.free[:k-1]
	} else {
		s = int32(len(p.slots))
		p.slots = append(p.slots, pairSlot{})
	}
	added := 0
	for i := 0; i < n; i++ {
		k := p.ids[i]
		if p.rt.ok(i) {
			t := p.rt.t[i]
			if p.hasLast && t < p.last {
				return orderError(p.sp.Name, p.sp.Input.Schema().Field(p.sp.On).Name, p.read+int64(i)+1, on.ValueStr(i))
			}
			p.last, p.hasLast = t, true
		} else {
			k = -1
		}
		if k < 0 && !p.outer {
			continue
		}
		num := p.base + int64(len(p.seq))
		p.seq = append(p.seq, pairRow{t: p.rt.t[i], slot: s, row: int32(i), key: k})
		if k >= 0 {
			for int(k) >= len(p.byKey) {
				p.byKey = append(p.byKey, nil)
			}
			p.byKey[k] = append(p.byKey[k], num)
		}
		added++
	}
	p.read += int64(n)
	if added == 0 {
		p.free = append(p.free, s)
		return nil
	}
	b.Retain()
	p.slots[s] = pairSlot{b: b, live: int32(added)}
	return p.charge(added)
}

func (p *pairState) unref(s int32) {
	sl := &p.slots[s]
	if sl.live--; sl.live == 0 {
		sl.b.Release()
		sl.b = nil
		p.free = append(p.free, s)
	}
}

// drop removes the kept rows before the first one with a key and t >=
// edge (all of them when all is set): no later left row can select them.
// RIGHT and FULL queue those that won nothing for output.
func (p *pairState) drop(edge uint64, all bool) error {
	n := 0
	for ; n < len(p.seq); n++ {
		r := &p.seq[n]
		if !all && r.key >= 0 && r.t >= edge {
			break
		}
		if p.outer && !r.won {
			p.unmatched = append(p.unmatched, ref{Src: r.slot, Row: r.row})
			continue
		}
		p.unref(r.slot)
	}
	if n == 0 {
		return nil
	}
	p.seq = p.seq[n:]
	p.base += int64(n)
	if p.dead += n; p.dead > max(len(p.seq), len(p.byKey))+4096 {
		// Keys no left row asks for keep their dropped rows' numbers
		// until trimmed here; the threshold makes that O(1) a drop.
		for k, l := range p.byKey {
			if t := p.trimmed(l); t == len(l) {
				p.byKey[k] = nil
			} else if t > 0 {
				p.byKey[k] = append([]int64(nil), l[t:]...)
			}
		}
		p.dead = 0
	}
	return p.charge(-n)
}

// trimmed is the index of the first kept row of a key's list.
func (p *pairState) trimmed(l []int64) int {
	return sort.Search(len(l), func(i int) bool { return l[i] >= p.base })
}

// flush builds the unmatched rows dropped so far into an output batch:
// NULL left columns, then the right payload.
func (p *pairState) flush(ctx context.Context) error {
	if len(p.unmatched) == 0 {
		return nil
	}
	refs := p.unmatched
	p.unmatched = nil
	defer func() {
		for _, r := range refs {
			p.unref(r.Src)
		}
	}()
	n := len(refs)
	cols := make([]arrow.Array, 0, p.schema.NumFields())
	release := func() {
		for _, c := range cols {
			c.Release()
		}
	}
	for i := 0; i < p.leftW; i++ {
		cols = append(cols, array.MakeArrayOfNull(p.mem, p.schema.Field(i).Type, n))
	}
	pay, err := p.gather(ctx, p.sp.Payload, refs)
	if err != nil {
		release()
		return err
	}
	cols = append(cols, pay...)
	p.ready = append(p.ready, array.NewRecordBatch(p.schema, cols, int64(n)))
	release()
	return nil
}

// gather builds the right columns cols at refs.
func (p *pairState) gather(ctx context.Context, cols []int, refs []ref) ([]arrow.Array, error) {
	srcs := make([]arrow.Array, len(p.slots))
	out := make([]arrow.Array, 0, len(cols))
	rs := p.sp.Input.Schema()
	for _, c := range cols {
		for s := range p.slots {
			srcs[s] = nil
			if b := p.slots[s].b; b != nil {
				srcs[s] = b.Column(c)
			}
		}
		a, err := operator.Gather(ctx, p.mem, rs.Field(c).Type, srcs, refs)
		if err != nil {
			releaseArrays(out)
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// walk is one left row's search among its key's kept rows: backward from
// bi down to bStop (t <= w.b, nearest first), forward from fi up (t >
// w.b, only when the window reaches past the left t).
type walk struct {
	row       int
	l         uint64
	k         int32
	w         window
	bi, bStop int
	fi        int
	fwd       bool
	done      bool
	win       int64
}

// next returns the walk's next candidate, reading the right input ahead
// when the forward side needs rows not read yet.
func (p *pairState) next(ctx context.Context, w *walk) (int64, bool, error) {
	haveB := w.bi >= w.bStop
	haveF := false
	var tf uint64
	if w.fwd {
		for w.fi >= len(p.byKey[w.k]) && !p.eof && (!p.hasLast || p.last <= w.w.hi) {
			if err := p.readBatch(ctx); err != nil {
				return 0, false, err
			}
		}
		if l := p.byKey[w.k]; w.fi < len(l) {
			tf = p.tAt(l[w.fi])
			haveF = tf <= w.w.hi
		}
	}
	l := p.byKey[w.k]
	switch {
	case !haveB && !haveF:
		return 0, false, nil
	case haveB && (!haveF || p.preferBackward(w.l, p.tAt(l[w.bi]), tf)):
		w.bi--
		return l[w.bi+1], true, nil
	}
	w.fi++
	return l[w.fi-1], true, nil
}

func (p *pairState) preferBackward(l, bT, fT uint64) bool {
	tie := p.sp.Tie
	if p.float {
		lf := keyToFloat(l)
		db, df := lf-keyToFloat(bT), keyToFloat(fT)-lf
		return db < df || (db == df && tie == PreferEarlier)
	}
	db, df := l-bT, fT-l
	return db < df || (db == df && tie == PreferEarlier)
}

// match finds the winner of every row of the left batch lb, as kept-row
// numbers (-1: none).
func (p *pairState) match(ctx context.Context, lb arrow.RecordBatch, lt *onColumn, lk *leftKeys) ([]int64, error) {
	n := int(lb.NumRows())
	win := make([]int64, n)
	for i := range win {
		win[i] = -1
	}
	sp := p.sp
	// Read every row at or before the last left row's backward edge.
	need, haveNeed := uint64(0), false
	for i := n - 1; i >= 0; i-- {
		if lt.ok(i) {
			if w := windowFor(lt.t[i], sp.Lo, sp.Hi, p.float); !w.empty {
				need, haveNeed = max(need, w.b), true
			}
		}
	}
	for haveNeed && !p.eof && (!p.hasLast || p.last <= need) {
		if err := p.readBatch(ctx); err != nil {
			return nil, err
		}
	}
	walks := make([]walk, 0, n)
	for i := 0; i < n; i++ {
		if !lt.ok(i) || lk.kb.null[i] {
			continue
		}
		l := lt.t[i]
		w := windowFor(l, sp.Lo, sp.Hi, p.float)
		if w.empty {
			continue
		}
		k, err := p.leftKey(ctx, lk, i, w)
		if err != nil {
			return nil, err
		}
		if k < 0 {
			continue
		}
		list := p.byKey[k]
		if len(list) > 0 && list[0] < p.base {
			list = list[p.trimmed(list):]
			p.byKey[k] = list
		}
		stop := sort.Search(len(list), func(j int) bool { return p.tAt(list[j]) >= w.lo })
		end := sort.Search(len(list), func(j int) bool { return p.tAt(list[j]) > w.b })
		walks = append(walks, walk{row: i, l: l, k: k, w: w, bi: end - 1, bStop: stop, fi: max(end, stop), fwd: w.hi > w.b, win: -1})
	}
	active := make([]int, len(walks))
	for i := range active {
		active[i] = i
	}
	quota := 1
	size := min(len(walks), maxPairs)
	lrows, refs, nums, owner := make([]int, 0, size), make([]ref, 0, size), make([]int64, 0, size), make([]int, 0, size)
	for len(active) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		q := quota
		if len(active)*q > maxPairs {
			q = max(1, maxPairs/len(active))
		}
		lrows, refs, nums, owner = lrows[:0], refs[:0], nums[:0], owner[:0]
		for _, a := range active {
			w := &walks[a]
			for c := 0; c < q; c++ {
				num, ok, err := p.next(ctx, w)
				if err != nil {
					return nil, err
				}
				if !ok {
					w.done = true
					break
				}
				r := p.seq[num-p.base]
				lrows = append(lrows, w.row)
				refs = append(refs, ref{Src: r.slot, Row: r.row})
				nums = append(nums, num)
				owner = append(owner, a)
			}
		}
		if len(nums) == 0 {
			break
		}
		ok, err := p.eval(ctx, lb, lrows, refs)
		if err != nil {
			return nil, err
		}
		for i, a := range owner {
			if w := &walks[a]; w.win < 0 && ok[i] {
				w.win = nums[i]
			}
		}
		next := active[:0]
		for _, a := range active {
			if w := &walks[a]; w.win < 0 && !w.done {
				next = append(next, a)
			}
		}
		active = next
		quota = min(quota*4, 256)
	}
	for _, w := range walks {
		if w.win >= 0 {
			win[w.row] = w.win
			p.seq[w.win-p.base].won = true
		}
	}
	return win, nil
}

// leftKey is left row i's key id, or -1 when no kept row has its key. A
// row whose window reaches past its t may find its key in rows not read
// yet: those are read (only as far as its window).
func (p *pairState) leftKey(ctx context.Context, lk *leftKeys, i int, w window) (int32, error) {
	for {
		if lk.ids[i] < 0 {
			p.dict.lookup(&lk.kb, lk.ids[:i+1], i)
		}
		if k := lk.ids[i]; k >= 0 && int(k) < len(p.byKey) {
			return k, nil
		}
		if w.hi <= w.b || p.eof || p.hasLast && p.last > w.hi {
			return -1, nil
		}
		if err := p.readBatch(ctx); err != nil {
			return -1, err
		}
	}
}

// eval evaluates PairCond over the pairs (left row lrows[i], right row
// refs[i]); a NULL result is false.
func (p *pairState) eval(ctx context.Context, lb arrow.RecordBatch, lrows []int, refs []ref) ([]bool, error) {
	sp := p.sp
	var cols []arrow.Array
	defer func() { releaseArrays(cols) }()
	var fields []arrow.Field
	for _, c := range sp.PairLeft {
		a, err := operator.Take(ctx, p.mem, lb.Column(c), lrows)
		if err != nil {
			return nil, err
		}
		cols = append(cols, a)
		fields = append(fields, lb.Schema().Field(c))
	}
	rc, err := p.gather(ctx, sp.PairRight, refs)
	if err != nil {
		return nil, err
	}
	cols = append(cols, rc...)
	for _, c := range sp.PairRight {
		fields = append(fields, sp.Input.Schema().Field(c))
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(len(refs)))
	defer rec.Release()
	m, err := sp.PairCond.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer m.Release()
	ba, isBool := m.(*array.Boolean)
	if !isBool || ba.Len() != len(refs) {
		return nil, sqlerr.New(sqlerr.InternalError, "ASOF join condition gave %s of %d rows for %d pairs", m.DataType(), m.Len(), len(refs))
	}
	ok := make([]bool, len(refs))
	for i := range ok {
		ok[i] = ba.IsValid(i) && ba.Value(i)
	}
	return ok, nil
}

// process joins one left batch: the payload of each row's winner, and
// (for the kinds that filter) which rows have one. It then drops the
// rows no later left row can select.
func (p *pairState) process(ctx context.Context, lb arrow.RecordBatch, lt *onColumn, lk *leftKeys) (result, error) {
	win, err := p.match(ctx, lb, lt, lk)
	if err != nil {
		return result{}, err
	}
	refs := make([]ref, len(win))
	var matched []bool
	if p.sp.Kind.filters() {
		matched = make([]bool, len(win))
	}
	for i, num := range win {
		refs[i] = noMatch
		if num >= 0 {
			r := p.seq[num-p.base]
			refs[i] = ref{Src: r.slot, Row: r.row}
			if matched != nil {
				matched[i] = true
			}
		}
	}
	cols, err := p.gather(ctx, p.sp.Payload, refs)
	if err != nil {
		return result{}, err
	}
	if !p.sp.Lo.Unbounded {
		// Left t ascends, and so does l + lo: the last left row's lower
		// edge is below every later row's.
		for i := int(lb.NumRows()) - 1; i >= 0; i-- {
			if !lt.ok(i) {
				continue
			}
			if w := windowFor(lt.t[i], p.sp.Lo, Unbounded, p.float); !w.empty {
				if err := p.drop(w.lo, false); err != nil {
					releaseArrays(cols)
					return result{}, err
				}
			}
			break
		}
	}
	if err := p.flush(ctx); err != nil {
		releaseArrays(cols)
		return result{}, err
	}
	return result{cols: cols, matched: matched}, nil
}

// finish is the end of the left input for RIGHT and FULL: every kept row
// and every row still unread is decided; each call outputs one batch's
// worth.
func (p *pairState) finish(ctx context.Context) error {
	for len(p.ready) == 0 {
		if err := p.drop(0, true); err != nil {
			return err
		}
		if err := p.flush(ctx); err != nil {
			return err
		}
		if len(p.ready) > 0 || p.eof {
			return nil
		}
		if err := p.readBatch(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (p *pairState) close() {
	for _, b := range p.ready {
		b.Release()
	}
	p.ready = nil
	for i := range p.slots {
		if b := p.slots[i].b; b != nil {
			b.Release()
			p.slots[i].b = nil
		}
	}
	p.seq, p.byKey, p.unmatched = nil, nil, nil
	if p.acct != nil && p.charged > 0 {
		p.acct.Shrink(p.charged)
	}
	p.charged = 0
	p.rt.free()
	p.kb.free()
	p.sp.Input.Close()
}

// nextPair is next for a join whose right input has a condition on both
// inputs (one right input, serial).
func (j *Join) nextPair(ctx context.Context) (arrow.RecordBatch, error) {
	p := j.pair
	for {
		if k := len(p.ready); k > 0 {
			b := p.ready[0]
			p.ready = p.ready[1:]
			return b, nil
		}
		if p.leftDone {
			if !p.outer {
				return nil, io.EOF
			}
			if err := p.finish(ctx); err != nil {
				return nil, err
			}
			if len(p.ready) == 0 {
				return nil, io.EOF
			}
			continue
		}
		lb, err := j.left.Next(ctx)
		if errors.Is(err, io.EOF) {
			p.leftDone = true
			continue
		}
		if err != nil {
			return nil, err
		}
		rec, err := j.pairBatch(ctx, lb)
		lb.Release()
		return rec, err
	}
}

func (j *Join) pairBatch(ctx context.Context, lb arrow.RecordBatch) (arrow.RecordBatch, error) {
	dec := j.serial
	if err := j.decodeLeft(ctx, lb, dec); err != nil {
		return nil, err
	}
	res, err := j.pair.process(ctx, lb, &dec.decoded[j.onOf[0]], &dec.keys[j.keysOf[0]])
	if err != nil {
		return nil, err
	}
	return j.assemble(ctx, lb, []result{res})
}
