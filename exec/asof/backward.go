package asof

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/exec/operator"
)

// The backward kernel: the join's most common shape (prevailing quote,
// last reading: a range whose upper edge is at or below zero) when every
// payload column is fixed-width and at most eight bytes wide.
//
// Then every winner is its key's latest row, and the kernel keeps, per key,
// that row's t and payload values in one record (backState). Nothing else
// of a right row is ever read again, so it keeps no references to right
// rows at all: no per-key refs, no reference counts, no queue and no
// compaction, and a right batch is released as soon as the cursor leaves
// it. What is left is one merge walk over the left and the right rows, with
// the cursor, the per-key records and the output in locals. The general
// path (process) paid a call, a dozen field reloads and the slot
// bookkeeping per row, which cost more than the walk itself: S1 went from
// ~40 to ~27 ns per left row with the kernel alone, ~18 with the changes
// that followed it (docs/benchmarks.md, "What changed (session 4)").
//
// A payload column that is the on column itself (the matched t, the most
// common payload of all) is not copied: the record's t is that value, and
// mapping it back from the number line is one XOR for the 64-bit types.

// maxBackValues bounds the payload values a key's record holds (their NULL
// flags share a uint16 with the record's "has a row" bit).
const maxBackValues = 15

// backState is the backward kernel's per-key state.
type backState struct {
	// stride is the words per key record: [t, value 0, value 1, ...].
	stride int
	recs   []uint64
	// flags per key: bit 0 the key has a latest row, bit 1+v its value v
	// is NULL.
	flags []uint16
	vals  []backValue
	outs  []backOut // one per payload column, in payload order
	// fast8: every value column of the current batch is 8 bytes wide with
	// no NULLs, read through src64.
	fast8 bool
	src64 [][]uint64
}

// backValue is a payload column copied into the records.
type backValue struct {
	p    int // payload index
	w    int
	cur  []byte // the current right batch's values
	curV srcValidity
}

// backOut is how one payload column's output is written from a record:
// word slot of the record, XORed with xor (the number line's sign flip for
// the on column), NULL when the flags have nullBit.
type backOut struct {
	slot    int
	xor     uint64
	nullBit uint16
	w       int
	// The output column being built for the current left batch.
	out64 []uint64
	out   []byte
	vb    []byte
}

// newBackState returns the kernel's state for r, or nil when r cannot run
// on it. It is decided once, at construction, because the kernel keeps less
// state than the general path (no refs), so an input cannot switch.
func newBackState(r *lineRight, opts *Options) *backState {
	if opts.generalOnly || r.keyMajor || !r.trackLatest || r.forward {
		return nil
	}
	rs := r.sp.Input.Schema()
	onID := rs.Field(r.sp.On).Type.ID()
	bs := &backState{}
	for p, c := range r.sp.Payload {
		if c == r.sp.On {
			// The matched t: the record's t word, mapped back.
			switch onID {
			case arrow.INT64, arrow.TIMESTAMP, arrow.DATE64, arrow.TIME64:
				bs.outs = append(bs.outs, backOut{slot: 0, xor: signBit, w: 8})
				continue
			case arrow.UINT64:
				bs.outs = append(bs.outs, backOut{slot: 0, w: 8})
				continue
			}
		}
		w := fixedWidth(rs.Field(c).Type)
		if !hotWidth(w) || len(bs.vals) == maxBackValues {
			return nil
		}
		v := len(bs.vals)
		bs.vals = append(bs.vals, backValue{p: p, w: w})
		bs.outs = append(bs.outs, backOut{slot: 1 + v, nullBit: 2 << v, w: w})
	}
	bs.stride = 1 + len(bs.vals)
	bs.src64 = make([][]uint64, len(bs.vals))
	return bs
}

// grow sizes the records for n keys.
func (bs *backState) grow(n int) {
	if n <= len(bs.flags) {
		return
	}
	flags := make([]uint16, n)
	copy(flags, bs.flags)
	recs := make([]uint64, n*bs.stride)
	copy(recs, bs.recs)
	bs.flags, bs.recs = flags, recs
}

// setCur points the value columns at a newly loaded right batch's payload.
func (bs *backState) setCur(cols []arrow.Array) {
	bs.fast8 = true
	for v := range bs.vals {
		bv := &bs.vals[v]
		a := cols[bv.p]
		bv.cur = fixedBytes(a, bv.w)
		bv.curV = validityOf(a)
		bs.src64[v] = nil
		if bv.w == 8 && bv.curV.bits == nil {
			bs.src64[v] = arrow.Uint64Traits.CastFromBytes(bv.cur)
		} else {
			bs.fast8 = false
		}
	}
}

// clearCur forgets the current batch (the cursor left it).
func (bs *backState) clearCur() {
	for v := range bs.vals {
		bs.vals[v].cur, bs.vals[v].curV = nil, srcValidity{}
		bs.src64[v] = nil
	}
	bs.fast8 = false
}

// record copies row pos of the current batch into the record at base
// (key k's) and returns its flags; the slow path of the walk.
func (bs *backState) record(base, pos int) uint16 {
	fl := uint16(1)
	for v := range bs.vals {
		bv := &bs.vals[v]
		if bv.curV.null(int32(pos)) {
			bs.recs[base+1+v] = 0
			fl |= 2 << v
			continue
		}
		bs.recs[base+1+v] = loadW(bv.cur, pos, bv.w)
	}
	return fl
}

// beginOut sets up the output columns of an n-row left batch: one per
// payload column, each row written by the walk (zero and NULL when it has
// no winner).
func (bs *backState) beginOut(pool *operator.Pool, rs *arrow.Schema, payload []int, n int) []*operator.FixedColumn {
	fixed := make([]*operator.FixedColumn, len(payload))
	for p, c := range payload {
		g := operator.NewFixedColumn(pool, rs.Field(c).Type, n)
		fixed[p] = g
		o := &bs.outs[p]
		o.out = g.Values()
		o.out64 = nil
		if o.w == 8 {
			o.out64 = arrow.Uint64Traits.CastFromBytes(o.out)
		}
		o.vb = g.Validity()
	}
	return fixed
}

// finishOut returns the columns beginOut set up, now written.
func (bs *backState) finishOut(fixed []*operator.FixedColumn) []arrow.Array {
	cols := make([]arrow.Array, len(fixed))
	for p, g := range fixed {
		cols[p] = g.Finish()
	}
	for c := range bs.outs {
		bs.outs[c].out, bs.outs[c].out64, bs.outs[c].vb = nil, nil, nil
	}
	return cols
}

// processBackward is process for an input on the backward kernel. Its
// output is byte-identical to the general path's (TestBackwardKernel).
func (r *lineRight) processBackward(ctx context.Context, lb arrow.RecordBatch, lt *onColumn, lk *leftKeys) ([]arrow.Array, []bool, error) {
	n := int(lb.NumRows())
	fixed := r.back.beginOut(r.pool, r.sp.Input.Schema(), r.sp.Payload, n)
	var matched []bool
	if r.sp.Kind.filters() {
		matched = make([]bool, n)
	}
	if err := r.walkBackward(ctx, lt, lk, n, matched); err != nil {
		for _, g := range fixed {
			g.Release()
		}
		return nil, nil, err
	}
	r.leftSeen += int64(n)
	cols := r.back.finishOut(fixed)
	// Batches the cursor has left: nothing points into them any more.
	r.freePending()
	return cols, matched, nil
}

// walkBackward is the backward kernel's merge walk over one left batch of
// n rows: per left row, it walks the right rows up to the row's edge (each
// becomes its key's latest), then writes the row's key's record, if any
// and inside the window, as the output row. The cursor, the records and
// the output columns live in locals: a call per row or a field reload per
// row costs as much as the work.
func (r *lineRight) walkBackward(ctx context.Context, lt *onColumn, lk *leftKeys, n int, matched []bool) error {
	bs := r.back
	outs := bs.outs
	li := r.leftIDs(lk)
	lids := li.ids

	lo, hi := r.sp.Lo, r.sp.Hi
	plain := r.plainBackward()
	iw, intWin := newIntWindow(lo, hi, r.float)
	ltv, lvalid := lt.t[:n], lt.valid
	stride := bs.stride

	// The cursor and the per-key records, in locals; written back before
	// anything that reads them through r (loadBatch, errors, the end).
	rt, rvalid, rids, rx := r.cur.t, r.cur.valid, r.curIDs, r.cur.xor
	pos, end, last := r.curPos, r.curLen, r.last
	recs, flags := bs.recs, bs.flags
	fast8, src64 := bs.fast8, bs.src64
	var one []uint64
	if fast8 && len(src64) == 1 {
		one = src64[0]
	}
	// Two 8-byte outputs (S1's matched t and price) are the common case:
	// their columns in locals, not read through outs per row.
	pair := len(outs) == 2 && outs[0].out64 != nil && outs[1].out64 != nil
	var o0, o1 []uint64
	var v0, v1 []byte
	var s0, s1 int
	var x0, x1 uint64
	var n0, n1 uint16
	if pair {
		o0, o1 = outs[0].out64[:n], outs[1].out64[:n]
		v0, v1 = outs[0].vb, outs[1].vb
		s0, s1, x0, x1 = outs[0].slot, outs[1].slot, outs[0].xor, outs[1].xor
		n0, n1 = outs[0].nullBit, outs[1].nullBit
	}
	// The pair's validity bits gather in a0 and a1, a byte stored every
	// eight rows instead of a read-modify-write per row.
	var a0, a1 byte
	for i := 0; i < n; i++ {
		if pair && i&7 == 0 && i > 0 {
			v0[(i>>3)-1], v1[(i>>3)-1] = a0, a1
			a0, a1 = 0, 0
		}
		base := -1
		var fl uint16
		if lvalid != nil && !lvalid[i] {
			goto out
		}
		{
			l := ltv[i]
			b, wlo := l, uint64(0)
			if !plain && intWin {
				wl, wb, empty := iw.at(l)
				if empty {
					goto out
				}
				b, wlo = wb, wl
			} else if !plain {
				w := windowFor(l, lo, hi, r.float)
				if w.empty {
					goto out
				}
				b, wlo = w.b, w.lo
			}
			// Walk the right rows up to the edge b: each becomes its
			// key's latest.
			for {
				for ; pos < end; pos++ {
					if rvalid != nil && !rvalid[pos] {
						continue
					}
					v := rt[pos] ^ rx
					if v > b {
						goto walked
					}
					if v < last {
						r.curPos, r.last = pos, last
						return r.orderError(pos)
					}
					last = v
					rk := int(rids[pos])
					if rk < 0 {
						continue
					}
					rb := rk * stride
					recs[rb] = v
					switch {
					case one != nil:
						recs[rb+1] = one[pos]
						flags[rk] = 1
					case fast8:
						for c, src := range src64 {
							recs[rb+1+c] = src[pos]
						}
						flags[rk] = 1
					default:
						flags[rk] = bs.record(rb, pos)
					}
				}
				if r.eof {
					break
				}
				r.curPos, r.last = pos, last
				if err := r.loadBatch(ctx); err != nil {
					return err
				}
				rt, rvalid, rids, rx = r.cur.t, r.cur.valid, r.curIDs, r.cur.xor
				pos, end = r.curPos, r.curLen
				recs, flags = bs.recs, bs.flags
				fast8, src64, one = bs.fast8, bs.src64, nil
				if fast8 && len(src64) == 1 {
					one = src64[0]
				}
			}
		walked:
			k := lids[i]
			if k < 0 {
				k = li.resolve(i)
				if lids = li.ids; k < 0 {
					goto out
				}
			}
			// An id beyond this input's state is another input's key:
			// nothing of it was read here (see growKeys).
			if int(k) < len(flags) {
				if fl = flags[k]; fl&1 != 0 && recs[int(k)*stride] >= wlo {
					base = int(k) * stride
				}
			}
		}
	out:
		if base >= 0 && pair {
			o0[i], o1[i] = recs[base+s0]^x0, recs[base+s1]^x1
			bit := byte(1) << (i & 7)
			if fl&n0 == 0 {
				a0 |= bit
			}
			if fl&n1 == 0 {
				a1 |= bit
			}
			if matched != nil {
				matched[i] = true
			}
			continue
		}
		if base >= 0 {
			for c := range outs {
				o := &outs[c]
				v := recs[base+o.slot] ^ o.xor
				if o.out64 != nil {
					o.out64[i] = v
				} else {
					storeW(o.out, i, o.w, v)
				}
				if fl&o.nullBit == 0 {
					o.vb[i>>3] |= 1 << (i & 7)
				}
			}
			if matched != nil {
				matched[i] = true
			}
			continue
		}
		if pair {
			o0[i], o1[i] = 0, 0
			continue
		}
		for c := range outs {
			if o := &outs[c]; o.out64 != nil {
				o.out64[i] = 0
			} else {
				storeW(o.out, i, o.w, 0)
			}
		}
	}
	if pair && n > 0 {
		v0[(n-1)>>3], v1[(n-1)>>3] = a0, a1
	}
	r.curPos, r.last = pos, last
	return nil
}
