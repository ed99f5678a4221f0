package asof

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/asofsql/asofsql/exec/operator"
)

// hotCol keeps, for one payload column of width 1, 2, 4 or 8 bytes, the
// value of every key's latest row, copied when the row becomes the latest.
//
// Why: a backward winner is always its key's latest row, so its payload can
// be written straight from here. Gathering it from the retained batch
// instead reads the right rows in the order of the left rows: scattered
// over the last few thousand rows, each cache line touched for the first
// time there, so a miss to memory every few rows once the inputs outgrow the
// cache. That gather was the largest single cost of S1 and, with four right
// inputs competing for the shared cache, of S6. The walk reads the payload
// in order instead (the prefetcher streams it) and stores it in a per-key
// array that stays in L1. Forward winners (queued rows) are still gathered
// from their batches through refs.
type hotCol struct {
	p    int      // payload index
	w    int      // byte width
	vals []uint64 // per key id: the latest row's value (zero-extended)
	null []bool   // per key id: the latest row's value is NULL

	// The current right batch's values (cur64 when w == 8) and validity.
	cur   []byte
	cur64 []uint64
	curV  srcValidity

	// The output column being built by process.
	out   []byte
	out64 []uint64
	vb    []byte
}

// fixedWidth and fixedBytes: see operator.FixedWidth and FixedBytes.
func fixedWidth(dt arrow.DataType) int       { return operator.FixedWidth(dt) }
func fixedBytes(a arrow.Array, w int) []byte { return operator.FixedBytes(a, w) }

// srcValidity is a right batch's validity bitmap and offset, nil bits when
// the array has no NULLs (the common case, checked without a call).
type srcValidity struct {
	bits   []byte
	offset int
}

func validityOf(a arrow.Array) srcValidity {
	if a.NullN() == 0 {
		return srcValidity{}
	}
	return srcValidity{bits: a.NullBitmapBytes(), offset: a.Data().Offset()}
}

func (v srcValidity) null(row int32) bool {
	return v.bits != nil && !bitutil.BitIsSet(v.bits, v.offset+int(row))
}

// hotWidth reports whether a payload column of byte width w is cached.
func hotWidth(w int) bool { return w == 1 || w == 2 || w == 4 || w == 8 }

func loadW(b []byte, row, w int) uint64 {
	switch w {
	case 8:
		return binary.LittleEndian.Uint64(b[row*8:])
	case 4:
		return uint64(binary.LittleEndian.Uint32(b[row*4:]))
	case 2:
		return uint64(binary.LittleEndian.Uint16(b[row*2:]))
	}
	return uint64(b[row])
}

func storeW(b []byte, row, w int, v uint64) {
	switch w {
	case 8:
		binary.LittleEndian.PutUint64(b[row*8:], v)
	case 4:
		binary.LittleEndian.PutUint32(b[row*4:], uint32(v))
	case 2:
		binary.LittleEndian.PutUint16(b[row*2:], uint16(v))
	default:
		b[row] = byte(v)
	}
}

// setCur points the column at a newly loaded right batch.
func (h *hotCol) setCur(a arrow.Array) {
	h.cur = fixedBytes(a, h.w)
	h.cur64 = nil
	if h.w == 8 {
		h.cur64 = arrow.Uint64Traits.CastFromBytes(h.cur)
	}
	h.curV = validityOf(a)
}

// fromCur records row pos of the current batch as key k's latest.
func (h *hotCol) fromCur(k int32, pos int) {
	if h.curV.null(int32(pos)) {
		h.vals[k], h.null[k] = 0, true
		return
	}
	if h.cur64 != nil {
		h.vals[k] = h.cur64[pos]
	} else {
		h.vals[k] = loadW(h.cur, pos, h.w)
	}
	h.null[k] = false
}

// fromArray records row of a (any retained batch) as key k's latest.
func (h *hotCol) fromArray(k int32, a arrow.Array, row int) {
	if a.IsNull(row) {
		h.vals[k], h.null[k] = 0, true
		return
	}
	h.vals[k], h.null[k] = loadW(fixedBytes(a, h.w), row, h.w), false
}

// begin points the column at its output buffers for one left batch. The
// validity bits start clear; the values are not cleared here (that would
// write the whole buffer twice): process zeroes rows without a winner as
// it flushes each chunk, so the output is byte-identical however computed.
func (h *hotCol) begin(g *operator.FixedColumn) {
	h.out = g.Values()
	h.out64 = nil
	if h.w == 8 {
		h.out64 = arrow.Uint64Traits.CastFromBytes(h.out)
	}
	h.vb = g.Validity()
}

// put writes key k's latest value as output row i.
// (A NULL value is stored as zero: vals holds zero for it.)
func (h *hotCol) put(i int, k int32) {
	if h.out64 != nil {
		h.out64[i] = h.vals[k]
	} else {
		storeW(h.out, i, h.w, h.vals[k])
	}
	if !h.null[k] {
		h.vb[i>>3] |= 1 << (i & 7)
	}
}

func (h *hotCol) grow(n int) {
	for len(h.vals) < n {
		h.vals = append(h.vals, 0)
		h.null = append(h.null, false)
	}
}

// zeroUnmatched zeroes the output values of rows at+j whose refs[j] is
// no winner.
func (h *hotCol) zeroUnmatched(refs []ref, at int) {
	for j, r := range refs {
		if i := at + j; r.Src < 0 {
			if h.out64 != nil {
				h.out64[i] = 0
			} else {
				storeW(h.out, i, h.w, 0)
			}
		}
	}
}
