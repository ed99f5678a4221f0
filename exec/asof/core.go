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

// The right-input core: everything a kernel does with one right input that
// does not depend on the type of its on column t. Two kernels share it:
// the number line's (lineRight, general.go and backward.go: t mapped to a
// uint64) and the comparison kernel (ordRight, comparison.go: strings,
// binaries, booleans and wide decimals, compared through ordOps). The core
// is generic over t's Go type V only to store t values (the cursor's, each
// key's latest row's, the queued rows'); it never computes with them
// except through typedOn, on paths the number line does not take per row.
// What stays typed in each kernel is the step: the window of a left row,
// advancing to its edge, the first row after it, the nearer of two rows.
//
// Per right input the core keeps:
//   - the read cursor: the current right batch, its decoded t, its rows'
//     key ids, the position of the next unread row;
//   - slots: the retained right batches (their payload columns only, and
//     the on column when t values view it), with reference counts from the
//     per-key latest rows, the queued rows and the cursor;
//   - per key id: the latest row at or before the backward edge (ref and
//     t) and the chain of queued rows read ahead of it;
//   - the group cursors of key-major inputs (keymajor.go);
//   - the output of one left batch (output.go).

// ref points at one retained right row: row Row of slot Src. The slots are
// the sources of the payload gathers (operator.Gather), so a ref is the
// gather's own index; noMatch (Src < 0) is no row, gathered as NULL.
type ref = operator.Ref

var noMatch = operator.NullRef

// slot is one retained right batch: its payload columns (and, with keepOn,
// its on column after them). refs counts the latest-row entries, queue
// entries and the read cursor that point into it.
type slot struct {
	cols []arrow.Array
	rows int32
	refs int32
}

// queued is a right row read ahead of the left input (t after the
// backward edge), waiting in arrival order; next chains the rows of one key.
type queued[V any] struct {
	t    V
	key  int32
	r    ref
	next int64
}

// column is one batch's on column as a kernel reads it: row i's t is t[i]
// where valid.
type column[V any] struct {
	t     []V
	valid []bool // nil when every value is valid
	// view: t is an array's own memory, not owned scratch (viewOn); each
	// word is then the number line's value XOR xor.
	view bool
	xor  uint64
}

func (c *column[V]) ok(i int) bool { return c.valid == nil || c.valid[i] }

// onColumn is an on column mapped to the number line (numberline.go).
type onColumn = column[uint64]

// typedOn is what the core needs of a kernel's type: it is called once per
// right batch (decode) or on paths no kernel runs per row in its hot loop
// (cmp in the generic order checks, own when a view outlives its batch).
type typedOn[V any] interface {
	// decode reads a right batch's on column into c; it may view arr.
	decode(arr arrow.Array, c *column[V]) error
	cmp(a, b V) int
	// own returns a copy of v that refers to no batch.
	own(v V) V
}

// rightInput is one right input's kernel as the join drives it.
type rightInput interface {
	// process matches one left batch and gathers this input's payload
	// columns for it. lt is the batch's decoded left on column (number
	// line kernels only), lk its keys in this input's dictionary.
	// matched[i] says left row i found a winner; it is set only for an
	// input whose kind filters (INNER, SEMI, ANTI: the join drops rows by
	// it), in a slice of its own.
	process(ctx context.Context, lb arrow.RecordBatch, lt *onColumn, lk *leftKeys) (cols []arrow.Array, matched []bool, err error)
	close()
}

// core is the type-independent state of one right input's kernel (see
// above). The kernel embeds it and sets trackLatest and forward.
type core[V any] struct {
	sp          spec
	mem         memory.Allocator
	pool        *operator.Pool // output buffers
	typed       typedOn[V]
	name, tName string
	trackLatest bool // rows at or before the left row can win
	forward     bool // rows after it can win
	// keepOn: each slot keeps the on column after the payload, because t
	// values (latestT, the queue) view its memory.
	keepOn bool

	// dict is the key dictionary this input shares with the others that
	// match on the same left key columns.
	dict *keyDict

	// Read cursor over the current right batch.
	cur     column[V]
	curIDs  []int32
	curOn   arrow.Array
	curKeys []arrow.Array // key columns of the current batch (key-major only)
	curSlot int32
	curPos  int
	curLen  int
	curBase int64 // rows of this input before the current batch
	eof     bool
	// last is the t of the last row read, when hasLast (on the number
	// line 0, the line's bottom, works as "none" too).
	last    V
	hasLast bool
	kb      keyBatch

	// Per key id, for ids below nkeys.
	nkeys   int
	latest  []ref
	latestT []V
	head    []int64 // first queued entry (sequence number) or -1
	tail    []int64
	hot     []hotCol // per-key copies of the latest rows' narrow payloads
	// back, when set, is the backward kernel's per-key records
	// (backward.go): the input runs on that kernel, which keeps none of
	// latest, head, tail and hot.
	back *backState

	// Queue: ring buffer indexed by sequence number & mask.
	q      []queued[V]
	qStart int64
	qLen   int64

	slots []slot
	free  []int32
	// retained is the number of rows in live slots, live the number of
	// latest entries; together with qLen they decide when to compact.
	retained    int64
	live        int64
	pending     []int32 // slots whose refs reached zero; freed after gather
	slack       int64
	compactions int

	// Left side: scratch reused across batches, and the order checks.
	out      batchOut
	lids     []int32
	leftSeen int64
	leftLast V // last non-NULL left t in the key group (key-major)
	leftHas  bool

	// Key-major mode (keymajor.go): group is the right key id whose rows
	// the cursor may read, -1 when none is open.
	keyMajor bool
	group    int32
	rgroups  groupCursor
	lgroups  groupCursor
	entered  int64  // right row (1-based) whose group order was checked
	leftName string // the left input, for messages
	leftKeys string // "k1, k2, t" for messages
	lkb      *keyBatch
	prevLeft []byte // equality key of the previous left row
	prevNull bool
	havePrev bool
	okBuf    []byte
	okBuf2   []byte
	closed   bool
}

func (r *core[V]) init(sp spec, opts *Options, pool *operator.Pool, left *arrow.Schema, dict *keyDict, typed typedOn[V]) {
	*r = core[V]{
		sp:       sp,
		mem:      opts.Allocator,
		pool:     pool,
		typed:    typed,
		name:     sp.Name,
		tName:    sp.Input.Schema().Field(sp.On).Name,
		dict:     dict,
		curSlot:  -1,
		group:    -1,
		q:        make([]queued[V], 16),
		slack:    defaultSlack,
		keyMajor: sp.KeyMajor,
		leftName: opts.LeftName,
	}
	if sp.KeyMajor {
		var names []string
		for _, c := range sp.LeftKeys {
			names = append(names, left.Field(c).Name)
		}
		r.leftKeys = strings.Join(append(names, left.Field(sp.LeftOn).Name), ", ")
	}
	if opts.compactSlack != 0 {
		r.slack = max(0, opts.compactSlack)
	}
}

// initHot sets up the per-key payload copies, which pay off only when
// every winner is a key's latest row: with a forward side (nearest,
// forward ranges) the copies cost the walk as much as they save while
// queued winners are still gathered from their batches (S5 ran ~35%
// slower with them).
func (r *core[V]) initHot() {
	if !r.trackLatest || r.forward {
		return
	}
	rs := r.sp.Input.Schema()
	for p, c := range r.sp.Payload {
		if w := fixedWidth(rs.Field(c).Type); hotWidth(w) {
			r.hot = append(r.hot, hotCol{p: p, w: w})
		}
	}
}

func (r *core[V]) ref(s int32) { r.slots[s].refs++ }

func (r *core[V]) unref(s int32) {
	r.slots[s].refs--
	if r.slots[s].refs == 0 {
		r.pending = append(r.pending, s)
	}
}

// freePending releases batches nothing points at any more. It runs after
// the output of a left batch has been gathered, so rows matched earlier in
// the same left batch stay readable until then.
func (r *core[V]) freePending() {
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

func (r *core[V]) allocSlot(cols []arrow.Array, rows int) int32 {
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

// loadBatch moves the cursor to the next non-empty right batch. Every
// read-ahead loop reads through here, so checking the context before each
// read stops them within one batch even when the input never checks it
// (a reader ignoring ctx, or rows that all lie before the window).
func (r *core[V]) loadBatch(ctx context.Context) error {
	r.leaveBatch()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
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
		if err := r.typed.decode(b.Column(r.sp.On), &r.cur); err != nil {
			b.Release()
			return err
		}
		r.enterBatch(b, n)
		b.Release()
		return nil
	}
}

// leaveBatch drops the cursor's hold on the current batch.
func (r *core[V]) leaveBatch() {
	if r.curSlot >= 0 {
		if r.hasLast && r.keepOn {
			// last may be a view into the batch being left.
			r.last = r.typed.own(r.last)
		}
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
}

// enterBatch makes b (n rows, its t decoded) the cursor's batch: its keys
// interned, its payload retained in a new slot.
func (r *core[V]) enterBatch(b arrow.RecordBatch, n int) {
	keyCols := make([]arrow.Array, len(r.sp.Keys))
	for i, c := range r.sp.Keys {
		keyCols[i] = b.Column(c)
	}
	if cap(r.curIDs) < n {
		i32Scratch.put(r.curIDs)
		r.curIDs = i32Scratch.get(n)
	}
	r.curIDs = r.curIDs[:n]
	if ids := presetIDs(r.sp.Input, r.dict, n); ids != nil && r.sp.condCol <= 0 && !r.keyMajor {
		copy(r.curIDs, ids)
	} else {
		r.sp.keyEnc.encode(keyCols, n, &r.kb)
		if r.sp.condCol > 0 {
			// The tracker checked the column when the tee read the batch.
			_ = maskWith(b.Column(r.sp.condCol), &r.kb, nil)
		}
		r.dict.intern(&r.kb, r.curIDs)
	}
	r.growKeys(r.curIDs)
	cols := make([]arrow.Array, len(r.sp.Payload), len(r.sp.Payload)+1)
	for i, c := range r.sp.Payload {
		cols[i] = b.Column(c)
	}
	if r.keepOn {
		cols = append(cols, b.Column(r.sp.On))
	}
	for _, c := range cols {
		c.Retain()
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
	r.curSlot = r.allocSlot(cols, n)
	r.ref(r.curSlot)
	r.curLen = n
}

// growKeys sizes the per-key state for the ids of one right batch. The
// dictionary is shared, so ids above the largest this input has read
// belong to other inputs' keys: a left row with such an id has no state
// here, and the state need not cover them. (That bounds it by this input's
// largest id, not its number of keys: inputs with many distinct keys,
// disjoint from each other and interned in turn, each keep state for
// nearly all of them.)
func (r *core[V]) growKeys(ids []int32) {
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
	var zero V
	for len(r.latest) < r.nkeys {
		r.latest = append(r.latest, noMatch)
		r.latestT = append(r.latestT, zero)
		r.head = append(r.head, -1)
		r.tail = append(r.tail, -1)
	}
	for h := range r.hot {
		r.hot[h].grow(r.nkeys)
	}
}

// nextRow returns the position of the next unread row with a non-NULL t,
// reading batches as needed; ok is false at the end of the input (or of
// the open key group). Callers test the common case first (the cursor's
// row, valid, no key groups), which saves a call per row.
func (r *core[V]) nextRow(ctx context.Context) (i int, ok bool, err error) {
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
			return i, true, nil
		}
		if r.eof {
			return 0, false, nil
		}
		if err := r.loadBatch(ctx); err != nil {
			return 0, false, err
		}
	}
}

// peek returns the t of the next unread row with a non-NULL t, checking
// that it does not decrease; ok is false at the end of the input (or of
// the open key group). The number line's hot paths use peekLine instead.
func (r *core[V]) peek(ctx context.Context) (t V, ok bool, err error) {
	i := r.curPos
	if i >= r.curLen || !r.cur.ok(i) || r.keyMajor {
		if i, ok, err = r.nextRow(ctx); !ok {
			return t, false, err
		}
	}
	t = r.cur.t[i]
	if r.hasLast && r.typed.cmp(t, r.last) < 0 {
		return t, false, r.orderError(i)
	}
	return t, true, nil
}

// orderError reports row i of the current batch below its predecessor.
func (r *core[V]) orderError(i int) error {
	return orderError(r.name, r.tName, r.curBase+int64(i)+1, r.curOn.ValueStr(i))
}

func orderError(input, col string, row int64, val string) error {
	return sqlerr.New(sqlerr.DataException,
		"ASOF input %s is not ordered by %s: row %d has %s = %s, lower than the row before it",
		input, col, row, col, val)
}

// take consumes the row peek returned and returns its key id, reference
// and t.
func (r *core[V]) take() (key int32, rf ref, t V) {
	i := r.curPos
	r.curPos++
	t = r.cur.t[i]
	r.last, r.hasLast = t, true
	return r.curIDs[i], ref{Src: r.curSlot, Row: int32(i)}, t
}

// setLatest makes rf (with t) key k's latest row.
func (r *core[V]) setLatest(k int32, rf ref, t V) {
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
	for h := range r.hot {
		hc := &r.hot[h]
		switch {
		case rf.Src != r.curSlot:
			hc.fromArray(k, r.slots[rf.Src].cols[hc.p], int(rf.Row))
		case hc.cur64 != nil && hc.curV.bits == nil:
			// fromCur's common case, written out.
			hc.vals[k], hc.null[k] = hc.cur64[rf.Row], false
		default:
			hc.fromCur(k, int(rf.Row))
		}
	}
}

// push queues rf (with t) as key k's newest row read ahead.
func (r *core[V]) push(k int32, rf ref, t V) {
	if r.qLen == int64(len(r.q)) {
		grown := make([]queued[V], 2*len(r.q))
		om, nm := int64(len(r.q)-1), int64(len(grown)-1)
		for s := r.qStart; s < r.qStart+r.qLen; s++ {
			grown[s&nm] = r.q[s&om]
		}
		r.q = grown
	}
	mask := int64(len(r.q) - 1)
	seq := r.qStart + r.qLen
	r.q[seq&mask] = queued[V]{t: t, key: k, r: rf, next: -1}
	r.qLen++
	if tl := r.tail[k]; tl >= 0 {
		r.q[tl&mask].next = seq
	} else {
		r.head[k] = seq
	}
	r.tail[k] = seq
	r.ref(rf.Src)
}

// pop moves the oldest queued row to its key's latest (the backward edge
// has passed it).
func (r *core[V]) pop() {
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
	var zero V
	r.q[seq&mask].t = zero // drop a view
	r.qStart++
	r.qLen--
}

// dropFirst unlinks key k's first queued row from its chain: it lies below
// the window of a left row, so below the window of every later one too.
// (It stays in the ring until pop reaches it.)
func (r *core[V]) dropFirst(k int32, e *queued[V]) {
	r.head[k] = e.next
	if e.next < 0 {
		r.tail[k] = -1
	}
}

// maybeCompact bounds memory by the rows that can still win. A key's latest
// row pins its whole batch; when old batches hold far more rows than the
// latest and queued rows they are kept for, those rows are copied into one
// compact batch and the old batches are released. Each compaction at least
// halves what it copies from, so the copying is amortised O(1) a row. With
// keepOn the on column is copied too, and the kept t values are pointed at
// the copy.
func (r *core[V]) maybeCompact(ctx context.Context) error {
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
	rs := r.sp.Input.Schema()
	cols := make([]arrow.Array, len(r.sp.Payload), len(r.sp.Payload)+1)
	types := make([]arrow.DataType, 0, len(cols)+1)
	for _, c := range r.sp.Payload {
		types = append(types, rs.Field(c).Type)
	}
	if r.keepOn {
		cols = append(cols, nil)
		types = append(types, rs.Field(r.sp.On).Type)
	}
	var srcs []arrow.Array
	for p := range cols {
		srcs = r.slotColumns(p, srcs)
		// Compacted rows live long: use the caller's allocator, not the
		// output pool.
		col, err := operator.Gather(ctx, r.mem, types[p], srcs, refs)
		if err != nil {
			for _, done := range cols[:p] {
				done.Release()
			}
			return err
		}
		cols[p] = col
	}
	var on column[V]
	if r.keepOn {
		if err := r.typed.decode(cols[len(cols)-1], &on); err != nil {
			for _, c := range cols {
				c.Release()
			}
			return err
		}
	}
	ns := r.allocSlot(cols, len(refs))
	i := int32(0)
	for k, lr := range r.latest {
		if lr.Src >= 0 {
			r.unref(lr.Src)
			r.ref(ns)
			r.latest[k] = ref{Src: ns, Row: i}
			if r.keepOn {
				r.latestT[k] = on.t[i]
			}
			i++
		}
	}
	for s := r.qStart; s < r.qStart+r.qLen; s++ {
		e := &r.q[s&mask]
		r.unref(e.r.Src)
		r.ref(ns)
		e.r = ref{Src: ns, Row: i}
		if r.keepOn {
			e.t = on.t[i]
		}
		i++
	}
	r.compactions++
	r.freePending()
	return nil
}

// defaultSlack is how many pinned-but-dead rows are tolerated before
// compacting at all (a few batches' worth).
const defaultSlack = 256 * 1024

// slotColumns lists column p of every slot (nil for free slots).
func (r *core[V]) slotColumns(p int, srcs []arrow.Array) []arrow.Array {
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

func (r *core[V]) close() {
	if r.closed {
		return
	}
	r.closed = true
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
	dict    *keyDict
	lk      *leftKeys
	ids     []int32 // lk.ids, or the input's copy once a row was re-resolved
	known   int
	own     bool
	scratch *[]int32 // the input's buffer for the copy
}

func (r *core[V]) leftIDs(lk *leftKeys) leftIDs {
	return leftIDs{dict: r.dict, lk: lk, ids: lk.ids, known: lk.known, scratch: &r.lids}
}

// resolve returns row i's key id, -1 when NULL or still absent. Callers
// holding ids in a local refresh it afterwards (it may now be the copy).
func (l *leftIDs) resolve(i int) int32 {
	if l.ids[i] >= 0 || l.lk.kb.null[i] || l.dict.len() == l.known {
		return l.ids[i]
	}
	if !l.own {
		buf := *l.scratch
		if cap(buf) < len(l.ids) {
			i32Scratch.put(buf)
			buf = i32Scratch.get(len(l.ids))
		}
		buf = append(buf[:0], l.ids...)
		*l.scratch = buf
		l.ids, l.own = buf, true
	}
	l.known = l.dict.lookup(&l.lk.kb, l.ids, i)
	return l.ids[i]
}

// leftKey returns the key id whose state left row i reads when its id in
// li is absent or the input is key-major (the kernels read a present id
// themselves): the open group in key-major mode, else the id re-resolved.
// skip says the row can have no winner (a NULL key, or no group open).
func (r *core[V]) leftKey(li *leftIDs, i int) (k int32, skip bool) {
	if r.keyMajor {
		// The open group is this left row's key, or there is none.
		return r.group, r.group < 0
	}
	k = li.resolve(i)
	// An absent key may still be read ahead (forward rows).
	return k, k < 0 && li.lk.kb.null[i]
}

// latestOf returns key k's latest row, if it has one. An id beyond this
// input's state is another input's key: nothing of it was read here (see
// growKeys).
func (r *core[V]) latestOf(k int32) (ref, V, bool) {
	if k >= 0 && int(k) < len(r.latest) {
		if lr := r.latest[k]; lr.Src >= 0 {
			return lr, r.latestT[k], true
		}
	}
	var zero V
	return noMatch, zero, false
}
