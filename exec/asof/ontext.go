package asof

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/sqlerr"
)

// The comparison kernel. On columns that have no place on the uint64 number
// line of ontime.go — strings, binaries and booleans (compared bytewise, the
// C collation the catalog and exec.Sort order by) and decimals the number
// line cannot hold exactly (128-bit values, ondec.go) — are joined by ordRight: the same algorithm as
// rightState (a lazily read right input, per key the latest row at or
// before the backward edge plus the rows read ahead), written over a value
// type V and an ordOps that compares values and computes windows. Every
// spec rule holds here as there: NULL t never matches, ties go to the last
// row at or before the left row and to the first one after it, a
// decreasing non-NULL t is a 22000 error naming the input and the row, and
// key-major inputs work group by group.
//
// Retained right rows keep their t as a view into the on column of the
// batch they came from: the on column is kept in the row's slot next to
// the payload (the last column), so a view lives exactly as long as the
// row it belongs to, and compaction copies it with the payload.

// ordClass names the on-column types the comparison kernel handles.
type ordClass uint8

const (
	ordNone    ordClass = iota // on the number line (ontime.go)
	ordString                  // string, large_string
	ordBinary                  // binary, large_binary, fixed_size_binary
	ordBool                    // false < true
	ordDecimal                 // decimal128: ondec.go
)

func ordClassOf(dt arrow.DataType) ordClass {
	switch dt.(type) {
	case *arrow.StringType, *arrow.LargeStringType:
		return ordString
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.FixedSizeBinaryType:
		return ordBinary
	case *arrow.BooleanType:
		return ordBool
	case *arrow.Decimal128Type:
		return ordDecimal
	}
	return ordNone
}

// ordKernel is a comparison kernel behind a rightState.
type ordKernel interface {
	process(ctx context.Context, lb arrow.RecordBatch) ([]arrow.Array, []ref, error)
	close()
}

func newOrdKernel(sp spec, opts *Options, pool *operator.Pool, left *arrow.Schema) ordKernel {
	if sp.ord == ordDecimal {
		return newOrdRight[decimalValue](decOps{}, sp, opts, pool, left)
	}
	return newOrdRight[string](bytesOps{}, sp, opts, pool, left)
}

// ordCol is one batch's on column decoded for the comparison kernel.
type ordCol[V any] struct {
	v     []V
	valid []bool // nil when every value is valid
}

func (c *ordCol[V]) ok(i int) bool { return c.valid == nil || c.valid[i] }

// reset sizes c for arr and records its NULLs.
func (c *ordCol[V]) reset(arr arrow.Array) {
	n := arr.Len()
	if cap(c.v) < n {
		c.v = make([]V, n)
	}
	c.v = c.v[:n]
	if arr.NullN() == 0 {
		c.valid = nil
		return
	}
	if cap(c.valid) < n {
		c.valid = make([]bool, n)
	}
	c.valid = c.valid[:n]
	for i := range c.valid {
		c.valid[i] = arr.IsValid(i)
	}
}

// ordWindow is the eligible range of right t for one left row, and the
// backward edge b: rows at or before b (Δ <= 0, or below the range when it
// lies wholly before the left row) go to the latest-row state, where only
// the last one per key can win; rows after b are read ahead into the queue.
type ordWindow[V any] struct {
	lo, hi, b             V
	loOpen, hiOpen        bool // an unbounded side
	loExcl, hiExcl, bExcl bool // the edge value itself is outside
	empty                 bool
}

// ordOps is what the comparison kernel needs of one on-column type.
type ordOps[V any] interface {
	// decode reads arr into c (views into arr where V refers to memory).
	decode(arr arrow.Array, c *ordCol[V])
	// at returns row i of arr, as decode would.
	at(arr arrow.Array, i int) V
	cmp(a, b V) int
	// own returns a copy of v that does not refer to any batch.
	own(v V) V
	// window computes the window of left value l for the range [lo, hi].
	window(l V, lo, hi Bound) ordWindow[V]
	// preferBackward decides between the best row at or before l (b) and
	// the best row after it (f): by distance, then by the tie rule.
	preferBackward(l, b, f V, tie Tie) bool
}

// ordQueued is a right row read ahead of the left input.
type ordQueued[V any] struct {
	t    V
	key  int32
	r    ref
	next int64
}

// ordRight is the comparison kernel for one right input. Its fields mirror
// rightState's; see there for the invariants.
type ordRight[V any] struct {
	ops         ordOps[V]
	sp          spec
	mem         memory.Allocator
	pool        *operator.Pool
	name, tName string
	leftName    string
	trackLatest bool // rows at or before the left row can win
	forward     bool // rows after it can win
	onSlot      int  // index of the on column in a slot's columns

	keys *keyTable

	// Read cursor over the current right batch.
	cur     ordCol[V]
	curIDs  []int32
	curOn   arrow.Array // the batch's on column (held by its slot)
	curKeys []arrow.Array
	curSlot int32
	curPos  int
	curLen  int
	curBase int64
	eof     bool
	last    V // t of the last row read, when hasLast
	hasLast bool
	kb      keyBatch

	// Per key id.
	latest  []ref
	latestT []V
	head    []int64
	tail    []int64

	// Queue: ring buffer indexed by sequence number & mask.
	q      []ordQueued[V]
	qStart int64
	qLen   int64

	slots    []slot
	free     []int32
	retained int64
	live     int64
	pending  []int32
	slack    int64

	// Left side.
	lcol     ordCol[V]
	lkb      keyBatch
	lhash    []uint64
	lids     []int32
	refs     []ref
	leftSeen int64
	leftLast V // last non-NULL left t (within the key group when key-major)
	leftHas  bool

	// Key-major mode (as in keymajor.go).
	keyMajor    bool
	group       int32
	rgroups     groupCursor
	lgroups     groupCursor
	entered     int64
	leftKeys    string
	prevLeft    []byte
	prevNull    bool
	havePrev    bool
	okBuf       []byte
	okBuf2      []byte
	compactions int
	closed      bool
}

func newOrdRight[V any](ops ordOps[V], sp spec, opts *Options, pool *operator.Pool, left *arrow.Schema) *ordRight[V] {
	rs := sp.Input.Schema()
	r := &ordRight[V]{
		ops:      ops,
		sp:       sp,
		mem:      opts.Allocator,
		pool:     pool,
		name:     sp.Name,
		tName:    rs.Field(sp.On).Name,
		leftName: opts.LeftName,
		onSlot:   len(sp.Payload),
		curSlot:  -1,
		group:    -1,
		keys:     newKeyTable(sp.keyEnc.u64, opts),
		q:        make([]ordQueued[V], 16),
		slack:    defaultSlack,
		keyMajor: sp.KeyMajor,
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
	lo, hi := boundSign(sp.Lo), boundSign(sp.Hi)
	r.trackLatest = sp.Lo.Unbounded || lo < 0 || lo == 0 && !sp.Lo.Exclusive
	r.forward = sp.Hi.Unbounded || hi > 0
	return r
}

// boundSign is the sign of a bound's value (bounds of byte on columns are
// always zero).
func boundSign(b Bound) int {
	switch {
	case b.HasDec:
		return b.Dec.Sign()
	case b.Int < 0:
		return -1
	case b.Int > 0:
		return 1
	}
	return 0
}

func (r *ordRight[V]) atOrBeforeB(w *ordWindow[V], t V) bool {
	c := r.ops.cmp(t, w.b)
	return c < 0 || c == 0 && !w.bExcl
}

func (r *ordRight[V]) inLo(w *ordWindow[V], t V) bool {
	if w.loOpen {
		return true
	}
	c := r.ops.cmp(t, w.lo)
	return c > 0 || c == 0 && !w.loExcl
}

func (r *ordRight[V]) inHi(w *ordWindow[V], t V) bool {
	if w.hiOpen {
		return true
	}
	c := r.ops.cmp(t, w.hi)
	return c < 0 || c == 0 && !w.hiExcl
}

func (r *ordRight[V]) ref(s int32) { r.slots[s].refs++ }

func (r *ordRight[V]) unref(s int32) {
	r.slots[s].refs--
	if r.slots[s].refs == 0 {
		r.pending = append(r.pending, s)
	}
}

// freePending releases batches nothing points at any more (after the
// output of a left batch is gathered).
func (r *ordRight[V]) freePending() {
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

func (r *ordRight[V]) allocSlot(cols []arrow.Array, rows int) int32 {
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
func (r *ordRight[V]) loadBatch(ctx context.Context) error {
	if r.curSlot >= 0 {
		if r.hasLast {
			// last may be a view into the batch being left.
			r.last = r.ops.own(r.last)
		}
		r.unref(r.curSlot)
		r.curSlot = -1
	}
	r.curOn = nil
	for _, c := range r.curKeys {
		c.Release()
	}
	r.curKeys = r.curKeys[:0]
	r.curBase += int64(r.curLen)
	r.curPos, r.curLen = 0, 0
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
		on := b.Column(r.sp.On)
		r.ops.decode(on, &r.cur)
		keyCols := make([]arrow.Array, len(r.sp.Keys))
		for i, c := range r.sp.Keys {
			keyCols[i] = b.Column(c)
		}
		r.sp.keyEnc.encode(keyCols, n, &r.kb)
		if cap(r.curIDs) < n {
			r.curIDs = make([]int32, n)
		}
		r.curIDs = r.curIDs[:n]
		r.keys.intern(&r.kb, r.curIDs)
		r.growKeys()
		cols := make([]arrow.Array, len(r.sp.Payload)+1)
		for i, c := range r.sp.Payload {
			cols[i] = b.Column(c)
		}
		cols[r.onSlot] = on
		for _, c := range cols {
			c.Retain()
		}
		r.curOn = on
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

func (r *ordRight[V]) growKeys() {
	var zero V
	for n := r.keys.len(); len(r.latest) < n; {
		r.latest = append(r.latest, noMatch)
		r.latestT = append(r.latestT, zero)
		r.head = append(r.head, -1)
		r.tail = append(r.tail, -1)
	}
}

// peek returns the t of the next unread row with a non-NULL t, checking
// that it does not decrease; ok is false at the end of the input (or of the
// open key group).
func (r *ordRight[V]) peek(ctx context.Context) (t V, ok bool, err error) {
	for {
		for r.curPos < r.curLen {
			i := r.curPos
			if r.keyMajor && (r.group < 0 || r.curIDs[i] != r.group) {
				return t, false, nil
			}
			if !r.cur.ok(i) {
				r.curPos++
				continue
			}
			v := r.cur.v[i]
			if r.hasLast && r.ops.cmp(v, r.last) < 0 {
				return t, false, orderError(r.name, r.tName, r.curBase+int64(i)+1, r.curOn.ValueStr(i))
			}
			return v, true, nil
		}
		if r.eof {
			return t, false, nil
		}
		if err := r.loadBatch(ctx); err != nil {
			return t, false, err
		}
	}
}

// take consumes the row peek returned.
func (r *ordRight[V]) take() (key int32, rf ref, t V) {
	i := r.curPos
	r.curPos++
	t = r.cur.v[i]
	r.last, r.hasLast = t, true
	return r.curIDs[i], ref{Src: r.curSlot, Row: int32(i)}, t
}

func (r *ordRight[V]) setLatest(k int32, rf ref, t V) {
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
}

func (r *ordRight[V]) push(k int32, rf ref, t V) {
	if r.qLen == int64(len(r.q)) {
		grown := make([]ordQueued[V], 2*len(r.q))
		om, nm := int64(len(r.q)-1), int64(len(grown)-1)
		for s := r.qStart; s < r.qStart+r.qLen; s++ {
			grown[s&nm] = r.q[s&om]
		}
		r.q = grown
	}
	mask := int64(len(r.q) - 1)
	seq := r.qStart + r.qLen
	r.q[seq&mask] = ordQueued[V]{t: t, key: k, r: rf, next: -1}
	r.qLen++
	if tl := r.tail[k]; tl >= 0 {
		r.q[tl&mask].next = seq
	} else {
		r.head[k] = seq
	}
	r.tail[k] = seq
	r.ref(rf.Src)
}

func (r *ordRight[V]) pop() {
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
	r.q[seq&mask].t = zero // drop the view
	r.qStart++
	r.qLen--
}

// advanceTo makes latest[k] the last row at or before w.b for every key:
// first the queued rows (they precede every unread row), then unread ones.
func (r *ordRight[V]) advanceTo(ctx context.Context, w *ordWindow[V]) error {
	mask := int64(len(r.q) - 1)
	for r.qLen > 0 && r.atOrBeforeB(w, r.q[r.qStart&mask].t) {
		r.pop()
	}
	for {
		t, ok, err := r.peek(ctx)
		if err != nil || !ok || !r.atOrBeforeB(w, t) {
			return err
		}
		k, rf, t := r.take()
		if k >= 0 && r.trackLatest {
			r.setLatest(k, rf, t)
		}
	}
}

// firstAfter returns the first queued row of key k at or above the
// window's low edge, reading ahead (only as far as needed) when none is
// queued; in says whether it is inside the window. lookup re-resolves the
// left row's key after new right keys were interned.
func (r *ordRight[V]) firstAfter(ctx context.Context, k int32, w *ordWindow[V], lookup func() int32) (rf ref, t V, in bool, err error) {
	known := r.keys.len()
	for {
		if k < 0 && !r.keyMajor && r.keys.len() != known {
			k, known = lookup(), r.keys.len()
		}
		if k >= 0 {
			mask := int64(len(r.q) - 1)
			for s := r.head[k]; s >= 0; s = r.head[k] {
				e := &r.q[s&mask]
				if r.inLo(w, e.t) {
					return e.r, e.t, r.inHi(w, e.t), nil
				}
				// Below the window now, so below it for every later left
				// row too: drop it from the key's chain.
				r.head[k] = e.next
				if e.next < 0 {
					r.tail[k] = -1
				}
			}
		}
		v, ok, err := r.peek(ctx)
		if err != nil || !ok || !r.inHi(w, v) {
			return noMatch, t, false, err
		}
		rk, rr, v := r.take()
		if rk >= 0 {
			r.push(rk, rr, v)
		}
	}
}

// process matches one left batch and gathers this input's payload columns
// for it.
func (r *ordRight[V]) process(ctx context.Context, lb arrow.RecordBatch) ([]arrow.Array, []ref, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	n := int(lb.NumRows())
	larr := lb.Column(r.sp.LeftOn)
	r.ops.decode(larr, &r.lcol)
	lt := &r.lcol
	if !r.keyMajor {
		// The whole batch is checked before any row is matched, as the
		// number-line kernel's left decoding does.
		for i := 0; i < n; i++ {
			if !lt.ok(i) {
				continue
			}
			if r.leftHas && r.ops.cmp(lt.v[i], r.leftLast) < 0 {
				return nil, nil, orderError(r.leftName, r.sp.leftTName, r.leftSeen+int64(i)+1, larr.ValueStr(i))
			}
			r.leftLast, r.leftHas = lt.v[i], true
		}
	}
	keyCols := make([]arrow.Array, len(r.sp.LeftKeys))
	for i, c := range r.sp.LeftKeys {
		keyCols[i] = lb.Column(c)
	}
	r.sp.keyEnc.encode(keyCols, n, &r.lkb)
	r.lhash = r.keys.hashAll(&r.lkb, r.lhash)
	if cap(r.lids) < n {
		r.lids = make([]int32, n)
		r.refs = make([]ref, n)
	}
	lids, refs := r.lids[:n], r.refs[:n]
	known := r.keys.len()
	for i := range lids {
		lids[i] = r.keys.lookup(&r.lkb, r.lhash, i)
	}
	for i := 0; i < n; i++ {
		refs[i] = noMatch
		if r.keyMajor {
			if err := r.leftRow(ctx, keyCols, lt, i); err != nil {
				return nil, nil, err
			}
		}
		if !lt.ok(i) {
			continue
		}
		l := lt.v[i]
		w := r.ops.window(l, r.sp.Lo, r.sp.Hi)
		if w.empty {
			continue
		}
		if err := r.advanceTo(ctx, &w); err != nil {
			return nil, nil, err
		}
		k := lids[i]
		if r.keyMajor {
			if k = r.group; k < 0 {
				continue
			}
		} else if k < 0 {
			if r.lkb.null[i] {
				continue
			}
			if r.keys.len() != known {
				k = r.keys.lookup(&r.lkb, r.lhash, i)
				lids[i] = k
			}
		}
		var bRef, fRef ref
		var bT, fT V
		haveB, haveF := false, false
		if r.trackLatest && k >= 0 {
			if lr := r.latest[k]; lr.Src >= 0 && r.inLo(&w, r.latestT[k]) {
				bRef, bT, haveB = lr, r.latestT[k], true
			}
		}
		if r.forward && !(haveB && r.ops.cmp(bT, l) == 0) {
			row := i
			var err error
			fRef, fT, haveF, err = r.firstAfter(ctx, k, &w, func() int32 {
				id := r.keys.lookup(&r.lkb, r.lhash, row)
				lids[row] = id
				return id
			})
			if err != nil {
				return nil, nil, err
			}
		}
		switch {
		case haveB && haveF:
			if r.ops.preferBackward(l, bT, fT, r.sp.Tie) {
				refs[i] = bRef
			} else {
				refs[i] = fRef
			}
		case haveB:
			refs[i] = bRef
		case haveF:
			refs[i] = fRef
		}
	}
	r.leftSeen += int64(n)
	if r.leftHas {
		// leftLast may be a view into lb, which the join releases.
		r.leftLast = r.ops.own(r.leftLast)
	}
	rs := r.sp.Input.Schema()
	cols := make([]arrow.Array, len(r.sp.Payload))
	srcs := make([]arrow.Array, len(r.slots))
	for p, c := range r.sp.Payload {
		r.slotCols(p, srcs)
		col, err := operator.Gather(ctx, r.pool, rs.Field(c).Type, srcs, refs)
		if err != nil {
			for _, done := range cols[:p] {
				done.Release()
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

// slotCols fills srcs with column p of every slot (nil for free slots).
func (r *ordRight[V]) slotCols(p int, srcs []arrow.Array) {
	for s := range r.slots {
		srcs[s] = nil
		if r.slots[s].cols != nil {
			srcs[s] = r.slots[s].cols[p]
		}
	}
}

// maybeCompact bounds memory by the rows that can still win, as
// rightState.maybeCompact does; the on column is copied with the payload
// and the kept t values are pointed at the copy.
func (r *ordRight[V]) maybeCompact(ctx context.Context) error {
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
	cols := make([]arrow.Array, r.onSlot+1)
	srcs := make([]arrow.Array, len(r.slots))
	for p := range cols {
		c := r.sp.On
		if p < r.onSlot {
			c = r.sp.Payload[p]
		}
		r.slotCols(p, srcs)
		// Compacted rows live long: the caller's allocator, not the pool.
		col, err := operator.Gather(ctx, r.mem, rs.Field(c).Type, srcs, refs)
		if err != nil {
			for _, done := range cols[:p] {
				done.Release()
			}
			return err
		}
		cols[p] = col
	}
	on := cols[r.onSlot]
	ns := r.allocSlot(cols, len(refs))
	i := int32(0)
	for k, lr := range r.latest {
		if lr.Src >= 0 {
			r.unref(lr.Src)
			r.ref(ns)
			r.latest[k] = ref{Src: ns, Row: i}
			r.latestT[k] = r.ops.at(on, int(i))
			i++
		}
	}
	for s := r.qStart; s < r.qStart+r.qLen; s++ {
		e := &r.q[s&mask]
		r.unref(e.r.Src)
		r.ref(ns)
		e.r = ref{Src: ns, Row: i}
		e.t = r.ops.at(on, int(i))
		i++
	}
	r.compactions++
	r.freePending()
	return nil
}

func (r *ordRight[V]) close() {
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
	for _, c := range r.curKeys {
		c.Release()
	}
	r.curKeys = nil
	r.curOn = nil
}

// bytesOps compares strings, binaries and booleans bytewise. V is a string
// that views the array's bytes (no copy); booleans are "\x00" and "\x01".
type bytesOps struct{}

func bytesView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func (bytesOps) decode(arr arrow.Array, c *ordCol[string]) {
	c.reset(arr)
	v := c.v
	switch a := arr.(type) {
	case *array.String:
		for i := range v {
			v[i] = a.Value(i)
		}
	case *array.LargeString:
		for i := range v {
			v[i] = a.Value(i)
		}
	default:
		for i := range v {
			v[i] = bytesOps{}.at(arr, i)
		}
	}
}

func (bytesOps) at(arr arrow.Array, i int) string {
	switch a := arr.(type) {
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.Binary:
		return bytesView(a.Value(i))
	case *array.LargeBinary:
		return bytesView(a.Value(i))
	case *array.FixedSizeBinary:
		return bytesView(a.Value(i))
	case *array.Boolean:
		if a.Value(i) {
			return "\x01"
		}
		return "\x00"
	}
	panic("asof: unexpected on column " + arr.DataType().String())
}

func (bytesOps) cmp(a, b string) int { return strings.Compare(a, b) }

func (bytesOps) own(v string) string { return strings.Clone(v) }

// window: bounds of byte on columns are 0 or unbounded (validate checks),
// so every edge is l itself.
func (bytesOps) window(l string, lo, hi Bound) ordWindow[string] {
	return ordWindow[string]{
		lo: l, hi: l, b: l,
		loOpen: lo.Unbounded, hiOpen: hi.Unbounded,
		loExcl: lo.Exclusive, hiExcl: hi.Exclusive,
		bExcl: !hi.Unbounded && hi.Exclusive,
	}
}

// preferBackward is only reached with rows on both sides of l, which
// byte on columns never have (a window reaches one side of l at most); it
// follows the tie rule for completeness.
func (bytesOps) preferBackward(l, b, f string, tie Tie) bool { return tie == PreferEarlier }

// Key-major mode: the same group alignment as keymajor.go's, over the
// comparison kernel's state.

// leftRow handles the group bookkeeping for left row i: a new left key
// closes the open right group and positions the right cursor on the new
// key's group, if the right input has one.
func (r *ordRight[V]) leftRow(ctx context.Context, keyCols []arrow.Array, lt *ordCol[V], i int) error {
	kb := &r.lkb
	var same bool
	switch {
	case !r.havePrev:
	case kb.null[i]:
		r.okBuf = orderKey(r.okBuf[:0], keyCols, i)
		same = bytes.Equal(r.okBuf, r.lgroups.key)
	case r.prevNull:
	case r.sp.keyEnc.u64:
		same = binary.LittleEndian.Uint64(r.prevLeft) == kb.u64[i]
	default:
		same = bytes.Equal(r.prevLeft, kb.key(i))
	}
	if !same {
		r.havePrev, r.prevNull = true, kb.null[i]
		if r.sp.keyEnc.u64 {
			r.prevLeft = binary.LittleEndian.AppendUint64(r.prevLeft[:0], kb.u64[i])
		} else {
			r.prevLeft = append(r.prevLeft[:0], kb.key(i)...)
		}
		r.okBuf = orderKey(r.okBuf[:0], keyCols, i)
		if err := r.lgroups.enter(r.okBuf, r.leftName, r.leftKeys, r.leftSeen+int64(i)+1); err != nil {
			return err
		}
		r.leftHas = false
		if err := r.openGroup(ctx, r.okBuf, kb.null[i]); err != nil {
			return err
		}
	}
	if lt.ok(i) {
		t := lt.v[i]
		if r.leftHas && r.ops.cmp(t, r.leftLast) < 0 {
			return sqlerr.New(sqlerr.DataException,
				"ASOF input %s is not ordered by (%s): row %d has a lower %s than the row before it in its key group",
				r.leftName, r.leftKeys, r.leftSeen+int64(i)+1, r.sp.leftTName)
		}
		r.leftLast, r.leftHas = t, true
	}
	return nil
}

// closeGroup drops the open group's state and skips its unread rows.
func (r *ordRight[V]) closeGroup(ctx context.Context) error {
	if r.group < 0 {
		return nil
	}
	g := r.group
	if lr := r.latest[g]; lr.Src >= 0 {
		r.unref(lr.Src)
		r.latest[g] = noMatch
		var zero V
		r.latestT[g] = zero
		r.live--
	}
	mask := int64(len(r.q) - 1)
	var zero V
	for ; r.qLen > 0; r.qLen-- {
		r.unref(r.q[r.qStart&mask].r.Src)
		r.q[r.qStart&mask].t = zero
		r.qStart++
	}
	r.head[g], r.tail[g] = -1, -1
	for {
		if _, ok, err := r.peek(ctx); err != nil || !ok {
			r.group = -1
			return err
		}
		r.take()
	}
}

// openGroup positions the right cursor on the group whose order key equals
// lkey, skipping groups that sort before it.
func (r *ordRight[V]) openGroup(ctx context.Context, lkey []byte, null bool) error {
	if err := r.closeGroup(ctx); err != nil {
		return err
	}
	if null {
		return nil
	}
	for {
		if r.curPos >= r.curLen {
			if r.eof {
				return nil
			}
			if err := r.loadBatch(ctx); err != nil {
				return err
			}
			continue
		}
		i := r.curPos
		row := r.curBase + int64(i) + 1
		r.okBuf2 = orderKey(r.okBuf2[:0], r.curKeys, i)
		if r.entered != row {
			if err := r.rgroups.enter(r.okBuf2, r.name, r.leftKeys, row); err != nil {
				return err
			}
			r.entered = row
		}
		c := bytes.Compare(r.okBuf2, lkey)
		if c > 0 {
			return nil
		}
		r.group, r.hasLast = r.curIDs[i], false
		if r.group < 0 {
			for r.curPos < r.curLen && r.curIDs[r.curPos] < 0 {
				r.curPos++
			}
			continue
		}
		if c == 0 {
			return nil
		}
		if err := r.closeGroup(ctx); err != nil {
			return err
		}
	}
}
