package asof

import (
	"cmp"
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/exec/operator"
)

// lineRight is the kernel of a right input whose on column maps to the
// number line (numberline.go). It runs the backward kernel (backward.go)
// when every winner is a key's latest row and the payload fits the
// kernel's records, and the general path (processGeneral) otherwise: any
// range, rows read ahead, key-major inputs, payloads of any type. Its
// typed step is written for uint64 t, in the hot loops themselves.
type lineRight struct {
	core[uint64]
	float bool
}

var _ rightInput = (*lineRight)(nil)

func newLineRight(sp spec, opts *Options, pool *operator.Pool, left *arrow.Schema, dict *keyDict) *lineRight {
	r := &lineRight{float: sp.onKind.float}
	r.init(sp, opts, pool, left, dict, r)
	// For floats l+lo can round down to l even when lo > 0, making a row at
	// exactly l eligible (eligibility is computed in float64, docs/sql.md),
	// so the latest row is always tracked.
	r.trackLatest = sp.Lo.Unbounded || r.float || sp.Lo.Int <= 0
	r.forward = sp.Hi.Unbounded || (r.float && sp.Hi.Float > 0) || (!r.float && sp.Hi.Int > 0)
	if r.back = newBackState(r, opts); r.back == nil {
		r.initHot()
	}
	return r
}

// decode maps a right batch's on column to the number line; the backward
// kernel reads 64-bit values in place (viewOn).
func (r *lineRight) decode(arr arrow.Array, c *onColumn) error {
	if r.back != nil {
		return viewOn(arr, c, r.name)
	}
	return decodeOn(arr, c, r.name)
}

func (r *lineRight) cmp(a, b uint64) int { return cmp.Compare(a, b) }

func (r *lineRight) own(v uint64) uint64 { return v }

func (r *lineRight) process(ctx context.Context, lb arrow.RecordBatch, lt *onColumn, lk *leftKeys) ([]arrow.Array, []bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if r.back != nil {
		return r.processBackward(ctx, lb, lt, lk)
	}
	cols, refs, err := r.processGeneral(ctx, lb, lt, lk)
	return cols, matchedOf(refs, r.sp.Kind), err
}

// processGeneral is process for every input off the backward kernel.
func (r *lineRight) processGeneral(ctx context.Context, lb arrow.RecordBatch, lt *onColumn, lk *leftKeys) ([]arrow.Array, []ref, error) {
	n := int(lb.NumRows())
	o := r.beginOut(n)
	if err := r.matchGeneral(ctx, lb, lt, lk, o); err != nil {
		r.releaseOut(o)
		return nil, nil, err
	}
	r.leftSeen += int64(n)
	return r.finishOut(ctx, o)
}

// matchGeneral finds the winner of every row of the left batch lb (its on
// column lt, its keys lk) and records it in o. Per row the typed step is
// written out in the loop (as a call per row it cost S5 ~3%): the row's
// window, advancing to its edge, then the key's latest row against the
// first row after it.
func (r *lineRight) matchGeneral(ctx context.Context, lb arrow.RecordBatch, lt *onColumn, lk *leftKeys, o *batchOut) error {
	keyCols := r.leftKeyColumns(lb, lk)
	li := r.leftIDs(lk)
	lo, hi := r.sp.Lo, r.sp.Hi
	plain := r.plainBackward()
	for i := 0; i < o.n; i++ {
		if i-o.gathered == gatherChunk {
			r.flushOut(o, i)
		}
		o.refs[i-o.off] = noMatch
		if r.keyMajor {
			if err := r.leftRowLine(ctx, keyCols, lt, i); err != nil {
				return err
			}
		}
		if !lt.ok(i) {
			continue
		}
		l := lt.t[i]
		w := window{hi: l, b: l}
		if !plain {
			if w = windowFor(l, lo, hi, r.float); w.empty {
				continue
			}
		}
		// Most left rows find the next right row already past their edge
		// and nothing queued: then there is nothing to advance.
		if r.qLen > 0 || r.curPos >= r.curLen || r.cur.t[r.curPos] <= w.b || !r.cur.ok(r.curPos) || r.keyMajor {
			if err := r.advanceTo(ctx, w.b); err != nil {
				return err
			}
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
		var bT, fT uint64
		haveB, haveF := false, false
		if r.trackLatest {
			if bRef, bT, haveB = r.latestOf(k); haveB && bT < w.lo {
				haveB = false
			}
		}
		if r.forward && !(haveB && bT == l) {
			var err error
			if fRef, fT, haveF, err = r.firstAfter(ctx, k, w, &li, i); err != nil {
				return err
			}
		}
		switch {
		case haveB && (!haveF || r.preferBackward(l, bT, fT, r.sp.Tie)):
			r.setLatestWinner(o, i, k, bRef)
		case haveF:
			r.setForwardWinner(o, i, fRef)
		}
	}
	return nil
}

// leftRowLine is leftRow plus the check that left t ascends within its key
// group.
func (r *lineRight) leftRowLine(ctx context.Context, keyCols []arrow.Array, lt *onColumn, i int) error {
	if err := r.leftRow(ctx, keyCols, i); err != nil {
		return err
	}
	if lt.ok(i) {
		if t := lt.t[i]; r.leftHas && t < r.leftLast {
			return r.leftGroupOrderError(i)
		}
		r.leftLast, r.leftHas = lt.t[i], true
	}
	return nil
}

// peekLine is peek on the number line: the next unread row's t, checked
// against its predecessor (0, the line's bottom, before any).
func (r *lineRight) peekLine(ctx context.Context) (t uint64, ok bool, err error) {
	i := r.curPos
	if i >= r.curLen || !r.cur.ok(i) || r.keyMajor {
		if i, ok, err = r.nextRow(ctx); !ok {
			return 0, false, err
		}
	}
	if t = r.cur.t[i]; t < r.last {
		return 0, false, r.orderError(i)
	}
	return t, true, nil
}

// advanceTo makes latest[k] the last row with t <= b for every key: first
// the queued rows (they precede every unread row), then unread ones. The
// loop over the current batch is the general path's hot loop, written out
// inline.
func (r *lineRight) advanceTo(ctx context.Context, b uint64) error {
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
				return r.orderError(pos)
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

// advanceInGroup is advanceTo's loop for key-major mode: peekLine stops at
// the end of the open group.
func (r *lineRight) advanceInGroup(ctx context.Context, b uint64) error {
	for {
		t, ok, err := r.peekLine(ctx)
		if err != nil || !ok || t > b {
			return err
		}
		k, rf, t := r.take()
		if k >= 0 && r.trackLatest {
			r.setLatest(k, rf, t)
		}
	}
}

// firstAfter returns the first queued row of key k with t in [w.lo, w.hi],
// reading ahead (only as far as needed) when none is queued; in says
// whether it is inside the window. A left row whose key is absent is
// looked up again as reading ahead interns keys.
func (r *lineRight) firstAfter(ctx context.Context, k int32, w window, li *leftIDs, row int) (rf ref, t uint64, in bool, err error) {
	for {
		if k < 0 && !r.keyMajor {
			k = li.resolve(row)
		}
		if k >= 0 && int(k) < len(r.head) {
			mask := int64(len(r.q) - 1)
			for s := r.head[k]; s >= 0; s = r.head[k] {
				e := &r.q[s&mask]
				if e.t >= w.lo {
					return e.r, e.t, e.t <= w.hi, nil
				}
				r.dropFirst(k, e)
			}
		}
		t, ok, err := r.peekLine(ctx)
		if err != nil || !ok || t > w.hi {
			return noMatch, 0, false, err
		}
		rk, rf, t := r.take()
		if rk >= 0 {
			r.push(rk, rf, t)
		}
	}
}

// preferBackward decides between the best row at or before l (bT) and the
// best row after it (fT) by distance, then by the tie rule.
func (r *lineRight) preferBackward(l, bT, fT uint64, tie Tie) bool {
	if r.float {
		lf := keyToFloat(l)
		db, df := lf-keyToFloat(bT), keyToFloat(fT)-lf
		return db < df || (db == df && tie == PreferEarlier)
	}
	db, df := l-bT, fT-l
	return db < df || (db == df && tie == PreferEarlier)
}

// plainBackward reports the common backward form on a non-float column,
// t <= l with no lower bound: its window is [0, l] and its edge l, which
// the kernels use without windowFor's call and branches per row.
func (r *lineRight) plainBackward() bool {
	lo, hi := r.sp.Lo, r.sp.Hi
	return !r.float && lo.Unbounded && !hi.Unbounded && !hi.Exclusive && hi.Int == 0
}
