package asof

import (
	"context"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/exec/operator"
)

// The comparison kernel. On columns that have no place on the uint64 number
// line of numberline.go — strings, binaries and booleans (compared
// bytewise, the C collation the catalog and exec.Sort order by) and
// decimals the number line cannot hold exactly (128-bit values,
// decimal.go) — are joined by ordRight: the right-input core (core.go)
// with a typed step over a value type V, whose values are compared and
// whose windows are computed by an ordOps. Every spec rule holds here as
// on the number line: NULL t never matches, ties go to the last row at or
// before the left row and to the first one after it, a decreasing
// non-NULL t is a 22000 error naming the input and the row, and key-major
// inputs work group by group.
//
// Strings and binaries keep their t as a view into the on column of the
// batch they came from: the core then keeps the on column in the row's
// slot next to the payload (keepOn), so a view lives exactly as long as
// the row it belongs to, and compaction copies it with the payload.

// ordClass names the on-column types the comparison kernel handles.
type ordClass uint8

const (
	ordNone    ordClass = iota // on the number line (numberline.go)
	ordString                  // string, large_string
	ordBinary                  // binary, large_binary, fixed_size_binary
	ordBool                    // false < true
	ordDecimal                 // decimal128: decimal.go
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

// reset sizes c for arr and records its NULLs.
func (c *column[V]) reset(arr arrow.Array) {
	n := arr.Len()
	if cap(c.t) < n {
		c.t = make([]V, n)
	}
	c.t = c.t[:n]
	c.decodeValid(arr)
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

// ordOps is what the comparison kernel needs of one on-column type: the
// core's typedOn (decode views arr's memory where V refers to memory),
// and the typed step's window and distance.
type ordOps[V any] interface {
	typedOn[V]
	// window computes the window of left value l for the range [lo, hi].
	window(l V, lo, hi Bound) ordWindow[V]
	// preferBackward decides between the best row at or before l (b) and
	// the best row after it (f): by distance, then by the tie rule.
	preferBackward(l, b, f V, tie Tie) bool
}

// ordRight is the comparison kernel for one right input.
type ordRight[V any] struct {
	core[V]
	ops  ordOps[V]
	lcol column[V] // the left batch's on column, decoded
}

var (
	_ rightInput = (*ordRight[string])(nil)
	_ rightInput = (*ordRight[decimalValue])(nil)
)

func newOrdRight[V any](ops ordOps[V], sp spec, opts *Options, pool *operator.Pool, left *arrow.Schema, dict *keyDict) *ordRight[V] {
	r := &ordRight[V]{ops: ops}
	r.init(sp, opts, pool, left, dict, ops)
	// Decimal values are copies; the other classes' t views its batch.
	r.keepOn = sp.ord != ordDecimal
	lo, hi := boundSign(sp.Lo), boundSign(sp.Hi)
	r.trackLatest = sp.Lo.Unbounded || lo < 0 || lo == 0 && !sp.Lo.Exclusive
	r.forward = sp.Hi.Unbounded || hi > 0
	r.initHot()
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

func (r *ordRight[V]) process(ctx context.Context, lb arrow.RecordBatch, _ *onColumn, lk *leftKeys) ([]arrow.Array, []bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if err := r.decodeLeft(lb); err != nil {
		return nil, nil, err
	}
	n := int(lb.NumRows())
	o := r.beginOut(n)
	if err := r.match(ctx, lb, lk, o); err != nil {
		r.releaseOut(o)
		return nil, nil, err
	}
	r.leftSeen += int64(n)
	if r.leftHas {
		// leftLast may be a view into lb, which the join releases.
		r.leftLast = r.ops.own(r.leftLast)
	}
	cols, refs, err := r.finishOut(ctx, o)
	return cols, matchedOf(refs, r.sp.Kind), err
}

// match finds the winner of every row of the left batch lb (its keys lk,
// its on column decoded in r.lcol) and records it in o: per row the typed
// step, as lineRight.matchGeneral does it on the number line.
func (r *ordRight[V]) match(ctx context.Context, lb arrow.RecordBatch, lk *leftKeys, o *batchOut) error {
	lt := &r.lcol
	keyCols := r.leftKeyColumns(lb, lk)
	li := r.leftIDs(lk)
	for i := 0; i < o.n; i++ {
		if i-o.gathered == gatherChunk {
			r.flushOut(o, i)
		}
		o.refs[i-o.off] = noMatch
		if r.keyMajor {
			if err := r.leftRowOrd(ctx, keyCols, i); err != nil {
				return err
			}
		}
		if !lt.ok(i) {
			continue
		}
		l := lt.t[i]
		w := r.ops.window(l, r.sp.Lo, r.sp.Hi)
		if w.empty {
			continue
		}
		if err := r.advanceTo(ctx, &w); err != nil {
			return err
		}
		k := li.ids[i]
		if k < 0 || r.keyMajor {
			// Absent, or key-major: the slow path.
			var skip bool
			if k, skip = r.leftKey(&li, i); skip {
				continue
			}
		}
		var bRef, fRef ref
		var bT, fT V
		haveB, haveF := false, false
		if r.trackLatest {
			if bRef, bT, haveB = r.latestOf(k); haveB && !r.inLo(&w, bT) {
				haveB = false
			}
		}
		if r.forward && !(haveB && r.ops.cmp(bT, l) == 0) {
			var err error
			if fRef, fT, haveF, err = r.firstAfter(ctx, k, &w, &li, i); err != nil {
				return err
			}
		}
		switch {
		case haveB && (!haveF || r.ops.preferBackward(l, bT, fT, r.sp.Tie)):
			r.setLatestWinner(o, i, k, bRef)
		case haveF:
			r.setForwardWinner(o, i, fRef)
		}
	}
	return nil
}

// decodeLeft decodes the left batch's on column. Unless key-major, the
// whole batch is checked for order before any row is matched, as the
// join's decoding does for the number line.
func (r *ordRight[V]) decodeLeft(lb arrow.RecordBatch) error {
	larr := lb.Column(r.sp.LeftOn)
	if err := r.ops.decode(larr, &r.lcol); err != nil {
		return err
	}
	if r.keyMajor {
		return nil
	}
	lt := &r.lcol
	for i := range lt.t {
		if !lt.ok(i) {
			continue
		}
		if r.leftHas && r.ops.cmp(lt.t[i], r.leftLast) < 0 {
			return orderError(r.leftName, r.sp.leftTName, r.leftSeen+int64(i)+1, larr.ValueStr(i))
		}
		r.leftLast, r.leftHas = lt.t[i], true
	}
	return nil
}

// leftRowOrd is leftRow plus the check that left t ascends within its key
// group.
func (r *ordRight[V]) leftRowOrd(ctx context.Context, keyCols []arrow.Array, i int) error {
	if err := r.leftRow(ctx, keyCols, i); err != nil {
		return err
	}
	if lt := &r.lcol; lt.ok(i) {
		if r.leftHas && r.ops.cmp(lt.t[i], r.leftLast) < 0 {
			return r.leftGroupOrderError(i)
		}
		r.leftLast, r.leftHas = lt.t[i], true
	}
	return nil
}

// advanceTo makes latest[k] the last row at or before w.b for every key:
// first the queued rows (they precede every unread row), then unread ones
// (in key-major mode, of the open group only).
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
// queued; in says whether it is inside the window. A left row whose key is
// absent is looked up again as reading ahead interns keys.
func (r *ordRight[V]) firstAfter(ctx context.Context, k int32, w *ordWindow[V], li *leftIDs, row int) (rf ref, t V, in bool, err error) {
	for {
		if k < 0 && !r.keyMajor {
			k = li.resolve(row)
		}
		if k >= 0 && int(k) < len(r.head) {
			mask := int64(len(r.q) - 1)
			for s := r.head[k]; s >= 0; s = r.head[k] {
				e := &r.q[s&mask]
				if r.inLo(w, e.t) {
					return e.r, e.t, r.inHi(w, e.t), nil
				}
				r.dropFirst(k, e)
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

// bytesOps compares strings, binaries and booleans bytewise. V is a string
// that views the array's bytes (no copy); booleans are "\x00" and "\x01".
type bytesOps struct{}

func bytesView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func (bytesOps) decode(arr arrow.Array, c *column[string]) error {
	c.reset(arr)
	v := c.t
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
	return nil
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
