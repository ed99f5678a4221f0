package asof

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/sqlerr"
)

// slot is one retained right batch: only its payload columns are kept (t and
// the key live in the kernel's own arrays). refs counts the latest-row
// entries, queue entries and the read cursor that point into it.
type slot struct {
	cols []arrow.Array
	rows int32
	refs int32
}

// queued is a right row read ahead of the left input (t > the backward
// edge), waiting in arrival order; next chains the rows of one key.
type queued struct {
	t    uint64
	key  int32
	r    ref
	next int64
}

// rightState is the kernel for one right input. It reads its input lazily,
// only as far as the current left row's window needs, and keeps per key the
// latest row at or before the backward edge plus the rows queued ahead.
type rightState struct {
	sp          spec
	mem         memory.Allocator
	pool        *operator.Pool // output buffers
	name, tName string
	float       bool
	trackLatest bool // rows with Δ <= 0 can win (lo <= 0)
	forward     bool // rows with Δ > 0 can win (hi > 0)

	// dict is the key dictionary this input shares with the others that
	// match on the same left key columns; rhash is scratch for hashes.
	dict  *keyDict
	rhash []uint64

	// Read cursor over the current right batch. (On the backward kernel,
	// cur may view the batch's values: each t is cur.t[i] ^ curXor.)
	cur     onColumn
	curXor  uint64
	curIDs  []int32
	curOn   arrow.Array
	curKeys []arrow.Array // key columns of the current batch (key-major only)
	curSlot int32
	curPos  int
	curLen  int
	curBase int64 // rows of this input before the current batch
	eof     bool
	last    uint64 // t of the last row read; 0 (the line's bottom) before any
	kb      keyBatch

	// Per key id, for ids below nkeys.
	nkeys   int
	latest  []ref
	latestT []uint64
	head    []int64 // first queued entry (sequence number) or -1
	tail    []int64
	hot     []hotCol // per-key copies of the latest rows' narrow payloads

	// Queue: ring buffer indexed by sequence number & mask.
	q      []queued
	qStart int64
	qLen   int64

	slots []slot
	free  []int32
	// retained is the number of rows in live slots, live the number of
	// latest entries; together with qLen they decide when to compact.
	retained int64
	live     int64
	pending  []int32 // slots whose refs reached zero; freed after gather

	// Left-side: the current left batch's keys (the join's, shared with
	// the other inputs of the dictionary) and scratch reused across batches.
	lkb    *keyBatch
	lids   []int32
	refs   []ref
	fwd    []int32
	closed bool
	slack  int64

	// Key-major mode (see keymajor.go): group is the right key id whose
	// rows the cursor may read, -1 when none is open.
	keyMajor    bool
	group       int32
	rgroups     groupCursor
	lgroups     groupCursor
	entered     int64 // right row (1-based) whose group order was checked
	leftName    string
	leftKeys    string // "k1, k2, t" for messages
	leftSeen    int64
	leftLast    uint64
	prevLeft    []byte // equality key of the previous left row
	prevNull    bool
	havePrev    bool
	okBuf       []byte
	okBuf2      []byte
	compactions int

	// ord, when set, is the comparison kernel (ontext.go) that does all
	// the work for an on column off the number line.
	ord ordKernel
	// back, when set, is the backward kernel's state (backward.go): the
	// input runs on that kernel.
	back *backState
}

func newRightState(sp spec, opts *Options, pool *operator.Pool, left *arrow.Schema, dict *keyDict) *rightState {
	if sp.ord != ordNone {
		return &rightState{sp: sp, ord: newOrdKernel(sp, opts, pool, left)}
	}
	rs := sp.Input.Schema()
	r := &rightState{
		sp:      sp,
		mem:     opts.Allocator,
		pool:    pool,
		name:    sp.Name,
		tName:   rs.Field(sp.On).Name,
		float:   sp.onKind.float,
		curSlot: -1,
		group:   -1,
		dict:    dict,
		q:       make([]queued, 16),
		slack:   defaultSlack,
	}
	if sp.KeyMajor {
		r.keyMajor, r.leftName = true, opts.LeftName
		var names []string
		for _, c := range sp.LeftKeys {
			names = append(names, left.Field(c).Name)
		}
		r.leftKeys = strings.Join(append(names, left.Field(sp.LeftOn).Name), ", ")
	}
	if opts.compactSlack != 0 {
		r.slack = max(0, opts.compactSlack)
	}
	// For floats l+lo can round down to l even when lo > 0, making a row at
	// exactly l eligible (spec §3 defines eligibility in float64), so the
	// latest row is always tracked.
	r.trackLatest = sp.Lo.Unbounded || r.float || sp.Lo.Int <= 0
	r.forward = sp.Hi.Unbounded || (r.float && sp.Hi.Float > 0) || (!r.float && sp.Hi.Int > 0)
	// Per-key payload copies pay off only when every winner is a key's
	// latest row: with a forward side (nearest, forward ranges) the copies
	// cost the walk as much as before while queued winners are still
	// gathered from their batches (S5 ran ~35% slower with them).
	if r.trackLatest && !r.forward {
		for p, c := range sp.Payload {
			if w := fixedWidth(rs.Field(c).Type); hotWidth(w) {
				r.hot = append(r.hot, hotCol{p: p, w: w})
			}
		}
	}
	if r.back = newBackState(r, opts); r.back != nil {
		r.hot = nil
	}
	return r
}

func (r *rightState) ref(s int32) { r.slots[s].refs++ }

func (r *rightState) unref(s int32) {
	r.slots[s].refs--
	if r.slots[s].refs == 0 {
		r.pending = append(r.pending, s)
	}
}

// freePending releases batches nothing points at any more. It runs after
// the output of a left batch has been gathered, so rows matched earlier in
// the same left batch stay readable until then.
func (r *rightState) freePending() {
	for _, s := range r.pending {
		if r.slots[s].refs == 0 && r.slots[s].cols != nil {
			for _, c := range r.slots[s].cols {
				c.Release()
			}
			r.retained -= int64(r.slots[s].rows)
			r.slots[s].cols = nil
			r.free = append(r.free, s)
		}
	}
	r.pending = r.pending[:0]
}

func (r *rightState) allocSlot(cols []arrow.Array, rows int) int32 {
	var s int32
	if n := len(r.free); n > 0 {
		s = r.free[n-1]
		r.free = r.free[:n-1]
	} else {
		s = int32(len(r.slots))
		r.slots = append(r.slots, slot{})
	}
	r.slots[s] = slot{cols: cols, rows: int32(rows)}
	r.retained += int64(rows)
	return s
}

// loadBatch moves the cursor to the next non-empty right batch.
func (r *rightState) loadBatch(ctx context.Context) error {
	if r.curSlot >= 0 {
		r.unref(r.curSlot)
		r.curSlot = -1
	}
	if r.curOn != nil {
		r.curOn.Release()
		r.curOn = nil
	}
	for _, c := range r.curKeys {
		c.Release()
	}
	r.curKeys = r.curKeys[:0]
	r.curBase += int64(r.curLen)
	r.curPos, r.curLen = 0, 0
	for h := range r.hot {
		r.hot[h].cur, r.hot[h].cur64 = nil, nil
	}
	if r.back != nil {
		r.back.clearCur()
	}
	for {
		b, err := r.sp.Input.Next(ctx)
		if errors.Is(err, io.EOF) {
			r.eof = true
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
		if r.back != nil {
			// The kernel reads 64-bit t in place (r.curXor maps it).
			r.curXor, err = viewOn(b.Column(r.sp.On), &r.cur, r.name)
		} else {
			err = decodeOn(b.Column(r.sp.On), &r.cur, r.name)
		}
		if err != nil {
			b.Release()
			return err
		}
		keyCols := make([]arrow.Array, len(r.sp.Keys))
		for i, c := range r.sp.Keys {
			keyCols[i] = b.Column(c)
		}
		r.sp.keyEnc.encode(keyCols, n, &r.kb)
		if cap(r.curIDs) < n {
			i32Scratch.put(r.curIDs)
			r.curIDs = i32Scratch.get(n)
		}
		r.curIDs = r.curIDs[:n]
		r.rhash = r.dict.hashAll(&r.kb, r.rhash)
		r.dict.intern(&r.kb, r.rhash, r.curIDs)
		r.growKeys(r.curIDs)
		cols := make([]arrow.Array, len(r.sp.Payload))
		for i, c := range r.sp.Payload {
			cols[i] = b.Column(c)
			cols[i].Retain()
		}
		for h := range r.hot {
			r.hot[h].setCur(cols[r.hot[h].p])
		}
		if r.back != nil {
			r.back.setCur(cols)
		}
		r.curOn = b.Column(r.sp.On)
		r.curOn.Retain()
		if r.keyMajor {
			for _, c := range keyCols {
				c.Retain()
				r.curKeys = append(r.curKeys, c)
			}
		}
		b.Release()
		r.curSlot = r.allocSlot(cols, n)
		r.ref(r.curSlot)
		r.curLen = n
		return nil
	}
}

// growKeys sizes the per-key state for the ids of one right batch. The
// dictionary is shared, so ids above the largest this input has read
// belong to other inputs' keys: a left row with such an id has no state
// here, and the state need not cover them. (That bounds it by this input's
// largest id, not its number of keys: inputs with many distinct keys,
// disjoint from each other and interned in turn, each keep state for
// nearly all of them.)
func (r *rightState) growKeys(ids []int32) {
	if r.nkeys >= r.dict.len() {
		// Every id the dictionary has handed out is covered (the usual
		// case once the keys have all been seen): no need to look.
		return
	}
	n := int32(-1)
	for _, id := range ids {
		n = max(n, id)
	}
	if int(n) < r.nkeys {
		return
	}
	// Grow to the dictionary's size at least, at once: the keys of the
	// first batches arrive a few at a time.
	r.nkeys = max(int(n)+1, min(r.dict.len(), 2*r.nkeys))
	if r.back != nil {
		// The backward kernel keeps its own records only.
		r.back.grow(r.nkeys)
		return
	}
	for len(r.latest) < r.nkeys {
		r.latest = append(r.latest, noMatch)
		r.latestT = append(r.latestT, 0)
		r.head = append(r.head, -1)
		r.tail = append(r.tail, -1)
	}
	for h := range r.hot {
		r.hot[h].grow(r.nkeys)
	}
}

// peek returns the t of the next unread row with a non-NULL t, checking that
// it does not decrease; ok is false at the end of the input.
func (r *rightState) peek(ctx context.Context) (t uint64, ok bool, err error) {
	for {
		for r.curPos < r.curLen {
			i := r.curPos
			if r.keyMajor && (r.group < 0 || r.curIDs[i] != r.group) {
				// The open group ends here (or none is open).
				return 0, false, nil
			}
			if !r.cur.ok(i) {
				r.curPos++
				continue
			}
			t := r.cur.t[i]
			if t < r.last {
				return 0, false, orderError(r.name, r.tName, r.curBase+int64(i)+1, r.curOn.ValueStr(i))
			}
			return t, true, nil
		}
		if r.eof {
			return 0, false, nil
		}
		if err := r.loadBatch(ctx); err != nil {
			return 0, false, err
		}
	}
}

func orderError(input, col string, row int64, val string) error {
	return sqlerr.New(sqlerr.DataException,
		"ASOF input %s is not ordered by %s: row %d has %s = %s, lower than the row before it",
		input, col, row, col, val)
}

// take consumes the row peek returned and returns its key id and reference.
func (r *rightState) take() (key int32, rf ref, t uint64) {
	i := r.curPos
	r.curPos++
	t = r.cur.t[i]
	r.last = t
	return r.curIDs[i], ref{Src: r.curSlot, Row: int32(i)}, t
}

func (r *rightState) setLatest(k int32, rf ref, t uint64) {
	if old := r.latest[k].Src; old != rf.Src {
		if old >= 0 {
			r.unref(old)
		} else {
			r.live++
		}
		r.ref(rf.Src)
	}
	r.latest[k] = rf
	r.latestT[k] = t
	r.setHotLatest(k, rf)
}

func (r *rightState) push(k int32, rf ref, t uint64) {
	if r.qLen == int64(len(r.q)) {
		grown := make([]queued, 2*len(r.q))
		om, nm := int64(len(r.q)-1), int64(len(grown)-1)
		for s := r.qStart; s < r.qStart+r.qLen; s++ {
			grown[s&nm] = r.q[s&om]
		}
		r.q = grown
	}
	mask := int64(len(r.q) - 1)
	seq := r.qStart + r.qLen
	r.q[seq&mask] = queued{t: t, key: k, r: rf, next: -1}
	r.qLen++
	if tl := r.tail[k]; tl >= 0 {
		r.q[tl&mask].next = seq
	} else {
		r.head[k] = seq
	}
	r.tail[k] = seq
	r.ref(rf.Src)
}

func (r *rightState) pop() {
	mask := int64(len(r.q) - 1)
	seq := r.qStart
	e := r.q[seq&mask]
	if r.head[e.key] == seq {
		r.head[e.key] = e.next
		if e.next < 0 {
			r.tail[e.key] = -1
		}
	}
	if r.trackLatest {
		r.setLatest(e.key, e.r, e.t)
	}
	r.unref(e.r.Src)
	r.qStart++
	r.qLen--
}

// advanceTo makes latest[k] the last row with t <= b for every key: first
// the queued rows (they precede every unread row), then unread ones. The
// loop over the current batch is the join's hot path, written out inline.
func (r *rightState) advanceTo(ctx context.Context, b uint64) error {
	mask := int64(len(r.q) - 1)
	for r.qLen > 0 && r.q[r.qStart&mask].t <= b {
		r.pop()
	}
	if r.keyMajor {
		return r.advanceInGroup(ctx, b)
	}
	for {
		ts, valid, ids, slot := r.cur.t, r.cur.valid, r.curIDs, r.curSlot
		pos, last := r.curPos, r.last
		for ; pos < r.curLen; pos++ {
			if valid != nil && !valid[pos] {
				continue
			}
			v := ts[pos]
			if v > b {
				r.curPos, r.last = pos, last
				return nil
			}
			// last starts at 0, the bottom of the number line, so the
			// first row always passes.
			if v < last {
				r.curPos = pos
				return orderError(r.name, r.tName, r.curBase+int64(pos)+1, r.curOn.ValueStr(pos))
			}
			last = v
			if k := ids[pos]; k >= 0 && r.trackLatest {
				if old := r.latest[k].Src; old != slot {
					if old >= 0 {
						r.unref(old)
					} else {
						r.live++
					}
					r.ref(slot)
				}
				r.latest[k] = ref{Src: slot, Row: int32(pos)}
				r.latestT[k] = v
				for h := range r.hot {
					// fromCur, with its common case written out (a
					// call per row and column costs as much as the copy).
					if hc := &r.hot[h]; hc.cur64 != nil && hc.curV.bits == nil {
						hc.vals[k], hc.null[k] = hc.cur64[pos], false
					} else {
						hc.fromCur(k, pos)
					}
				}
			}
		}
		r.curPos, r.last = pos, last
		if r.eof {
			return nil
		}
		if err := r.loadBatch(ctx); err != nil {
			return err
		}
	}
}

// firstAfter returns the first queued row of key k with t in [lo, hi],
// reading ahead (only as far as needed) when none is queued. resolve
// re-resolves the left row's absent key if the dictionary grew since it
// was looked up (reading ahead may intern it).
func (r *rightState) firstAfter(ctx context.Context, k int32, w window, resolve func() int32) (ref, uint64, bool, error) {
	for {
		if k < 0 && !r.keyMajor {
			k = resolve()
		}
		if k >= 0 && int(k) < len(r.head) {
			mask := int64(len(r.q) - 1)
			for s := r.head[k]; s >= 0; s = r.head[k] {
				e := &r.q[s&mask]
				if e.t >= w.lo {
					return e.r, e.t, e.t <= w.hi, nil
				}
				// Below the window now, so below it for every later left
				// row too: drop it from the key's chain.
				r.head[k] = e.next
				if e.next < 0 {
					r.tail[k] = -1
				}
			}
		}
		t, ok, err := r.peek(ctx)
		if err != nil || !ok || t > w.hi {
			return noMatch, 0, false, err
		}
		rk, rf, t := r.take()
		if rk >= 0 {
			r.push(rk, rf, t)
		}
	}
}

// process matches one left batch and gathers this input's payload columns
// for it. lt is the batch's decoded left on column, lk its keys (unused by
// the comparison kernel, which keys its own state).
//
// matched[i] says left row i found a winner; it is set only for an INNER
// input (the join drops the other rows), in a slice of its own.
func (r *rightState) process(ctx context.Context, lb arrow.RecordBatch, lt *onColumn, lk *leftKeys) ([]arrow.Array, []bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if r.ord != nil {
		cols, refs, err := r.ord.process(ctx, lb)
		return cols, matchedOf(refs, r.sp.Kind), err
	}
	if r.back != nil {
		return r.processBackward(ctx, lb, lt, lk)
	}
	cols, refs, err := r.processGeneral(ctx, lb, lt, lk)
	return cols, matchedOf(refs, r.sp.Kind), err
}

// processGeneral is process for every input off the backward kernel: any
// range, queued forward rows, key-major inputs, payloads of any type.
func (r *rightState) processGeneral(ctx context.Context, lb arrow.RecordBatch, lt *onColumn, lk *leftKeys) ([]arrow.Array, []ref, error) {
	n := int(lb.NumRows())
	rs := r.sp.Input.Schema()
	var keyCols []arrow.Array
	if r.keyMajor {
		// leftRow builds order keys from the columns themselves.
		keyCols = make([]arrow.Array, len(r.sp.LeftKeys))
		for i, c := range r.sp.LeftKeys {
			keyCols[i] = lb.Column(c)
		}
	}
	r.lkb = &lk.kb
	// refs[i-off] is left row i's winner. The whole batch's refs are needed
	// only by an INNER input (which rows to keep) or a payload column that
	// is not fixed-width (gathered at the end); otherwise they live only
	// until their chunk is gathered, and one chunk's worth, reused, stays in
	// L1 instead of streaming 8 bytes a row through the cache and back.
	chunked := r.sp.Kind != Inner
	for _, c := range r.sp.Payload {
		chunked = chunked && fixedWidth(rs.Field(c).Type) > 0
	}
	size := n
	if chunked {
		size = min(n, gatherChunk)
	}
	if cap(r.refs) < size {
		r.refs = make([]ref, size)
	}
	refs, off := r.refs[:size], 0
	li := r.leftIDs(lk)
	lids := li.ids
	lo, hi, tie := r.sp.Lo, r.sp.Hi, r.sp.Tie
	plainBackward := r.plainBackward()
	// Fixed-width payload columns are gathered chunk by chunk, right after
	// matching, while the right rows they read are still in cache.
	fixed := make([]*operator.FixedColumn, len(r.sp.Payload))
	defer func() {
		for _, g := range fixed {
			if g != nil {
				g.Release()
			}
		}
	}()
	for p, c := range r.sp.Payload {
		if fixedWidth(rs.Field(c).Type) > 0 {
			fixed[p] = operator.NewFixedColumn(r.pool, rs.Field(c).Type, n)
		}
	}
	isHot := make([]bool, len(r.sp.Payload))
	hotOf := make([]int, len(r.sp.Payload))
	for h := range r.hot {
		r.hot[h].begin(fixed[r.hot[h].p])
		isHot[r.hot[h].p], hotOf[r.hot[h].p] = true, h
	}
	hot := r.hot
	// Rows whose winner is a forward (queued) row: their hot columns are
	// gathered through refs like any other column.
	fwd := r.fwd[:0]
	srcs := make([]arrow.Array, 0, 8)
	gathered := 0
	flush := func(upto int) {
		for p, g := range fixed {
			if g == nil {
				continue
			}
			if isHot[p] {
				r.hot[hotOf[p]].zeroUnmatched(refs[gathered-off:upto-off], gathered)
				if len(fwd) > 0 {
					srcs = r.payloadSources(p, srcs)
					g.FillRows(srcs, refs, fwd, off)
				}
				continue
			}
			srcs = r.payloadSources(p, srcs)
			g.Fill(srcs, refs[gathered-off:upto-off], gathered)
		}
		fwd = fwd[:0]
		gathered = upto
		if chunked {
			off = upto
		}
	}
	for i := 0; i < n; i++ {
		if i-gathered == gatherChunk {
			flush(i)
		}
		refs[i-off] = noMatch
		if r.keyMajor {
			if err := r.leftRow(ctx, keyCols, lt, i); err != nil {
				return nil, nil, err
			}
		}
		if !lt.ok(i) {
			continue
		}
		l := lt.t[i]
		var w window
		if plainBackward {
			w = window{hi: l, b: l}
		} else {
			w = windowFor(l, lo, hi, r.float)
		}
		if w.empty {
			continue
		}
		// Most left rows find the next right row already past their edge
		// and nothing queued: then there is nothing to advance.
		if r.qLen > 0 || r.curPos >= r.curLen || r.cur.t[r.curPos] <= w.b || !r.cur.ok(r.curPos) || r.keyMajor {
			if err := r.advanceTo(ctx, w.b); err != nil {
				return nil, nil, err
			}
		}
		k := lids[i]
		if r.keyMajor {
			// The open group is this left row's key, or there is none.
			if k = r.group; k < 0 {
				continue
			}
		} else if k < 0 {
			k = li.resolve(i)
			if lids = li.ids; k < 0 && lk.kb.null[i] {
				continue
			}
		}
		var bRef, fRef ref
		var bT, fT uint64
		haveB, haveF := false, false
		// An id beyond this input's state is another input's key: nothing
		// of it was read here (see growKeys).
		if r.trackLatest && k >= 0 && int(k) < len(r.latest) {
			if lr := r.latest[k]; lr.Src >= 0 && r.latestT[k] >= w.lo {
				bRef, bT, haveB = lr, r.latestT[k], true
			}
		}
		if r.forward && !(haveB && bT == l) {
			row := i
			var err error
			fRef, fT, haveF, err = r.firstAfter(ctx, k, w, func() int32 {
				id := li.resolve(row)
				lids = li.ids
				return id
			})
			if err != nil {
				return nil, nil, err
			}
		}
		if haveB && (!haveF || r.preferBackward(l, bT, fT, tie)) {
			// The winner is key k's latest row.
			refs[i-off] = bRef
			for h := range hot {
				// put, with its common case written out.
				if hc := &hot[h]; hc.out64 != nil {
					hc.out64[i] = hc.vals[k]
					if !hc.null[k] {
						hc.vb[i>>3] |= 1 << (i & 7)
					}
				} else {
					hc.put(i, k)
				}
			}
		} else if haveF {
			refs[i-off] = fRef
			fwd = append(fwd, int32(i))
		}
	}
	flush(n)
	r.fwd = fwd
	if chunked {
		// Every column was gathered chunk by chunk; a LEFT input's refs
		// are not needed by the join.
		refs = nil
	}
	r.leftSeen += int64(n)
	cols := make([]arrow.Array, len(r.sp.Payload))
	for p, c := range r.sp.Payload {
		if fixed[p] != nil {
			cols[p] = fixed[p].Finish()
			fixed[p] = nil
			continue
		}
		srcs = r.payloadSources(p, srcs)
		col, err := operator.Gather(ctx, r.pool, rs.Field(c).Type, srcs, refs)
		if err != nil {
			for _, done := range cols {
				if done != nil {
					done.Release()
				}
			}
			return nil, nil, err
		}
		cols[p] = col
	}
	r.freePending()
	if err := r.maybeCompact(ctx); err != nil {
		for _, c := range cols {
			c.Release()
		}
		return nil, nil, err
	}
	return cols, refs, nil
}

// gatherChunk is how many left rows are matched before their fixed-width
// payloads are gathered: small enough that the right rows they reference
// are still in L1/L2.
const gatherChunk = 2048

// payloadSources lists payload column p of every slot (nil for free slots).
func (r *rightState) payloadSources(p int, srcs []arrow.Array) []arrow.Array {
	srcs = srcs[:0]
	for s := range r.slots {
		var a arrow.Array
		if r.slots[s].cols != nil {
			a = r.slots[s].cols[p]
		}
		srcs = append(srcs, a)
	}
	return srcs
}

// maybeCompact bounds memory by the rows that can still win. A key's latest
// row pins its whole batch; when old batches hold far more rows than the
// latest and queued rows they are kept for, those rows are copied into one
// compact batch and the old batches are released. Each compaction at least
// halves what it copies from, so the copying is amortised O(1) a row.
func (r *rightState) maybeCompact(ctx context.Context) error {
	needed := r.live + r.qLen
	old := r.retained - int64(r.curLen)
	if old <= 2*needed+r.slack {
		return nil
	}
	refs := make([]ref, 0, needed)
	for _, lr := range r.latest {
		if lr.Src >= 0 {
			refs = append(refs, lr)
		}
	}
	mask := int64(len(r.q) - 1)
	for s := r.qStart; s < r.qStart+r.qLen; s++ {
		refs = append(refs, r.q[s&mask].r)
	}
	cols := make([]arrow.Array, len(r.sp.Payload))
	srcs := make([]arrow.Array, len(r.slots))
	rs := r.sp.Input.Schema()
	for p, c := range r.sp.Payload {
		for s := range r.slots {
			srcs[s] = nil
			if r.slots[s].cols != nil {
				srcs[s] = r.slots[s].cols[p]
			}
		}
		// Compacted rows live long: use the caller's allocator, not the
		// output pool.
		col, err := operator.Gather(ctx, r.mem, rs.Field(c).Type, srcs, refs)
		if err != nil {
			for _, done := range cols[:p] {
				done.Release()
			}
			return err
		}
		cols[p] = col
	}
	ns := r.allocSlot(cols, len(refs))
	i := int32(0)
	for k, lr := range r.latest {
		if lr.Src >= 0 {
			r.unref(lr.Src)
			r.ref(ns)
			r.latest[k] = ref{Src: ns, Row: i}
			i++
		}
	}
	for s := r.qStart; s < r.qStart+r.qLen; s++ {
		e := &r.q[s&mask]
		r.unref(e.r.Src)
		r.ref(ns)
		e.r = ref{Src: ns, Row: i}
		i++
	}
	r.compactions++
	r.freePending()
	return nil
}

// defaultSlack is how many pinned-but-dead rows are tolerated before
// compacting at all (a few batches' worth).
const defaultSlack = 256 * 1024

// preferBackward decides between the best row at or before l (bT) and the
// best row after it (fT) by distance, then by the tie rule.
func (r *rightState) preferBackward(l, bT, fT uint64, tie Tie) bool {
	if r.float {
		lf := keyToFloat(l)
		db, df := lf-keyToFloat(bT), keyToFloat(fT)-lf
		return db < df || (db == df && tie == PreferEarlier)
	}
	db, df := l-bT, fT-l
	return db < df || (db == df && tie == PreferEarlier)
}

func (r *rightState) close() {
	if r.closed {
		return
	}
	r.closed = true
	if r.ord != nil {
		r.ord.close()
	}
	for s := range r.slots {
		for _, c := range r.slots[s].cols {
			c.Release()
		}
		r.slots[s].cols = nil
	}
	if r.curOn != nil {
		r.curOn.Release()
		r.curOn = nil
	}
	for _, c := range r.curKeys {
		c.Release()
	}
	r.curKeys = nil
	r.cur.free()
	r.kb.free()
	i32Scratch.put(r.curIDs)
	i32Scratch.put(r.lids)
	r.curIDs, r.lids = nil, nil
	r.sp.Input.Close()
}

// leftIDs is one input's view of a left batch's key ids. The join looked
// them up when the dictionary had its first known ids; a key absent then
// may have been interned since, by this input (reading ahead) or another.
// resolve looks such a row up again, only when the dictionary has grown,
// and in a private copy: lk.ids is read by the other inputs too.
type leftIDs struct {
	r     *rightState
	lk    *leftKeys
	ids   []int32 // lk.ids, or the input's copy once a row was re-resolved
	known int
	own   bool
}

func (r *rightState) leftIDs(lk *leftKeys) leftIDs {
	return leftIDs{r: r, lk: lk, ids: lk.ids, known: lk.known}
}

// resolve returns row i's key id, -1 when NULL or still absent. Callers
// holding ids in a local refresh it afterwards (it may now be the copy).
func (l *leftIDs) resolve(i int) int32 {
	if l.ids[i] >= 0 || l.lk.kb.null[i] || l.r.dict.len() == l.known {
		return l.ids[i]
	}
	if !l.own {
		r := l.r
		if cap(r.lids) < len(l.ids) {
			i32Scratch.put(r.lids)
			r.lids = i32Scratch.get(len(l.ids))
		}
		r.lids = append(r.lids[:0], l.ids...)
		l.ids, l.own = r.lids, true
	}
	l.known = l.r.dict.lookup(&l.lk.kb, l.lk.hashes, l.ids, i)
	return l.ids[i]
}

// plainBackward reports the common backward form on a non-float column,
// t <= l with no lower bound: its window is [0, l] and its edge l, which
// the kernels use without windowFor's call and branches per row.
func (r *rightState) plainBackward() bool {
	lo, hi := r.sp.Lo, r.sp.Hi
	return !r.float && lo.Unbounded && !hi.Unbounded && !hi.Exclusive && hi.Int == 0
}
