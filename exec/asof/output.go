package asof

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/exec/operator"
)

// batchOut is the output one right input builds for one left batch: per
// left row a ref to its winner, turned into the input's payload columns.
// Both the number line's general path and the comparison kernel fill it
// the same way (the backward kernel writes its columns itself):
//
//	o := r.beginOut(n)
//	for i := range n {
//		if i-o.gathered == gatherChunk {
//			r.flushOut(o, i) // a chunk is full: gather it
//		}
//		o.refs[i-o.off] = noMatch
//		...                  // the kernel's typed step finds the winner
//		r.setLatestWinner(o, i, k, rf) // or setForwardWinner(o, i, rf)
//	}
//	cols, refs, err := r.finishOut(ctx, o)
//
// Fixed-width payload columns are gathered chunk by chunk, right after
// matching, while the right rows they read are still in cache. A column
// with per-key copies (hot) is written as each latest winner is decided;
// only its forward winners are gathered through refs.
type batchOut struct {
	n     int
	fixed []*operator.FixedColumn // per payload column; nil when not fixed-width
	hotOf []int                   // per payload column: its hot column, -1 for none
	// refs[i-off] is left row i's winner. The whole batch's refs are
	// needed only by an input whose kind filters (INNER, SEMI, ANTI) (which rows to keep) or a payload
	// column that is not fixed-width (gathered at the end); otherwise
	// (chunked) they live only until their chunk is gathered, and one
	// chunk's worth, reused, stays in L1 instead of streaming 8 bytes a row
	// through the cache and back.
	refs     []ref
	off      int
	chunked  bool
	gathered int     // rows [0, gathered) are written
	fwd      []int32 // rows since gathered whose winner is a forward row
	srcs     []arrow.Array
}

// gatherChunk is how many left rows are matched before their fixed-width
// payloads are gathered: small enough that the right rows they reference
// are still in L1/L2.
const gatherChunk = 2048

// beginOut sets up the output of an n-row left batch.
func (r *core[V]) beginOut(n int) *batchOut {
	o := &r.out
	rs := r.sp.Input.Schema()
	o.n, o.off, o.gathered, o.fwd = n, 0, 0, o.fwd[:0]
	o.chunked = !r.sp.Kind.filters()
	o.fixed = o.fixed[:0]
	o.hotOf = o.hotOf[:0]
	for _, c := range r.sp.Payload {
		dt := rs.Field(c).Type
		var g *operator.FixedColumn
		if fixedWidth(dt) > 0 {
			g = operator.NewFixedColumn(r.pool, dt, n)
		} else {
			o.chunked = false
		}
		o.fixed = append(o.fixed, g)
		o.hotOf = append(o.hotOf, -1)
	}
	for h := range r.hot {
		p := r.hot[h].p
		r.hot[h].begin(o.fixed[p])
		o.hotOf[p] = h
	}
	size := n
	if o.chunked {
		size = min(n, gatherChunk)
	}
	if cap(o.refs) < size {
		o.refs = make([]ref, size)
	}
	o.refs = o.refs[:size]
	return o
}

// setLatestWinner makes rf, key k's latest row, row i's winner: its
// per-key copies are written at once.
func (r *core[V]) setLatestWinner(o *batchOut, i int, k int32, rf ref) {
	o.refs[i-o.off] = rf
	for h := range r.hot {
		// put, with its common case written out.
		if hc := &r.hot[h]; hc.out64 != nil {
			hc.out64[i] = hc.vals[k]
			if !hc.null[k] {
				hc.vb[i>>3] |= 1 << (i & 7)
			}
		} else {
			hc.put(i, k)
		}
	}
}

// setForwardWinner makes rf, a queued row, row i's winner.
func (r *core[V]) setForwardWinner(o *batchOut, i int, rf ref) {
	o.refs[i-o.off] = rf
	o.fwd = append(o.fwd, int32(i))
}

// flushOut writes the fixed-width columns of rows [o.gathered, upto).
func (r *core[V]) flushOut(o *batchOut, upto int) {
	refs := o.refs[o.gathered-o.off : upto-o.off]
	for p, g := range o.fixed {
		if g == nil {
			continue
		}
		if h := o.hotOf[p]; h >= 0 {
			r.hot[h].zeroUnmatched(refs, o.gathered)
			if len(o.fwd) > 0 {
				o.srcs = r.slotColumns(p, o.srcs)
				g.FillRows(o.srcs, o.refs, o.fwd, o.off)
			}
			continue
		}
		o.srcs = r.slotColumns(p, o.srcs)
		g.Fill(o.srcs, refs, o.gathered)
	}
	o.fwd = o.fwd[:0]
	o.gathered = upto
	if o.chunked {
		o.off = upto
	}
}

// finishOut writes the rest of the batch's columns and returns them, with
// the whole batch's refs unless chunked (a LEFT input's refs are not
// needed by the join). Then batches nothing points at are released, and
// the retained rows compacted if they are mostly dead.
func (r *core[V]) finishOut(ctx context.Context, o *batchOut) ([]arrow.Array, []ref, error) {
	r.flushOut(o, o.n)
	refs := o.refs
	if o.chunked {
		refs = nil
	}
	rs := r.sp.Input.Schema()
	cols := make([]arrow.Array, len(r.sp.Payload))
	for p, c := range r.sp.Payload {
		if g := o.fixed[p]; g != nil {
			cols[p] = g.Finish()
			o.fixed[p] = nil
			continue
		}
		o.srcs = r.slotColumns(p, o.srcs)
		col, err := operator.Gather(ctx, r.pool, rs.Field(c).Type, o.srcs, refs)
		if err != nil {
			releaseArrays(cols)
			r.releaseOut(o)
			return nil, nil, err
		}
		cols[p] = col
	}
	r.freePending()
	if err := r.maybeCompact(ctx); err != nil {
		releaseArrays(cols)
		return nil, nil, err
	}
	return cols, refs, nil
}

// releaseOut gives up the columns of a batch that failed.
func (r *core[V]) releaseOut(o *batchOut) {
	for p, g := range o.fixed {
		if g != nil {
			g.Release()
			o.fixed[p] = nil
		}
	}
}

func releaseArrays(cols []arrow.Array) {
	for _, c := range cols {
		if c != nil {
			c.Release()
		}
	}
}
