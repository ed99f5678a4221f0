package asof

import (
	"context"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ref points at one retained right row; slot < 0 means "no match".
type ref struct{ slot, row int32 }

var noMatch = ref{slot: -1}

// gather builds an output column of len(refs) rows: row i is the value at
// refs[i] in srcs[refs[i].slot], or NULL for no match. Fixed-width, boolean
// and (large) string/binary columns are copied by typed loops; every other
// type (nested, dictionary, ...) goes through Arrow's take kernel.
//
// The typed loops write every byte of their buffers, so they may take them
// from pool (which does not zero); the take kernel gets mem.
func gather(ctx context.Context, pool, mem memory.Allocator, dt arrow.DataType, srcs []arrow.Array, refs []ref) (arrow.Array, error) {
	switch d := dt.(type) {
	case *arrow.BooleanType:
		return gatherBool(pool, dt, srcs, refs), nil
	case *arrow.StringType, *arrow.BinaryType:
		return gatherVar[int32](pool, dt, srcs, refs), nil
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		return gatherVar[int64](pool, dt, srcs, refs), nil
	default:
		if w := fixedWidth(d); w > 0 {
			return gatherFixed(pool, dt, w, srcs, refs), nil
		}
	}
	return gatherTake(ctx, mem, dt, srcs, refs)
}

func newValidity(mem memory.Allocator, n int) *memory.Buffer {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	b := buf.Bytes()
	for i := range b {
		b[i] = 0
	}
	return buf
}

// srcValidity is a source array's validity bitmap and offset, nil bits when
// the array has no NULLs (the common case, checked without a call).
type srcValidity struct {
	bits   []byte
	offset int
}

func validities(srcs []arrow.Array) []srcValidity {
	v := make([]srcValidity, len(srcs))
	for s, a := range srcs {
		if a != nil && a.NullN() > 0 {
			v[s] = srcValidity{bits: a.NullBitmapBytes(), offset: a.Data().Offset()}
		}
	}
	return v
}

func (v srcValidity) null(row int32) bool {
	return v.bits != nil && !bitutil.BitIsSet(v.bits, v.offset+int(row))
}

func gatherFixed(mem memory.Allocator, dt arrow.DataType, w int, srcs []arrow.Array, refs []ref) arrow.Array {
	g := newFixedGather(mem, dt, w, len(refs))
	g.fill(srcs, refs, 0)
	return g.finish()
}

// fixedGather builds one fixed-width output column in pieces: the join
// fills each chunk of left rows right after matching it, while the right
// rows it references are still in cache.
type fixedGather struct {
	dt     arrow.DataType
	w      int
	n      int
	valid  *memory.Buffer
	values *memory.Buffer
	nulls  int
	// countNulls says some rows were written outside fill (hot columns):
	// finish counts the NULLs from the validity bitmap instead.
	countNulls bool
}

func newFixedGather(mem memory.Allocator, dt arrow.DataType, w, n int) *fixedGather {
	g := &fixedGather{dt: dt, w: w, n: n, valid: newValidity(mem, n), values: memory.NewResizableBuffer(mem)}
	g.values.Resize(n * w)
	return g
}

// fill writes output rows [at, at+len(refs)).
func (g *fixedGather) fill(srcs []arrow.Array, refs []ref, at int) {
	w := g.w
	vb, out := g.valid.Bytes(), g.values.Bytes()
	src := make([][]byte, len(srcs))
	for s, a := range srcs {
		if a != nil && a.Len() > 0 {
			d := a.Data()
			src[s] = d.Buffers()[1].Bytes()[d.Offset()*w : (d.Offset()+d.Len())*w]
		}
	}
	vals := validities(srcs)
	nulls := 0
	if w == 8 {
		out64 := arrow.Uint64Traits.CastFromBytes(out)[at : at+len(refs)]
		src64 := make([][]uint64, len(src))
		for s, b := range src {
			src64[s] = arrow.Uint64Traits.CastFromBytes(b)
		}
		for j, r := range refs {
			if r.slot < 0 || vals[r.slot].null(r.row) {
				out64[j] = 0
				nulls++
				continue
			}
			out64[j] = src64[r.slot][r.row]
			i := at + j
			vb[i>>3] |= 1 << (i & 7)
		}
	} else {
		for j, r := range refs {
			i := at + j
			o := out[i*w : (i+1)*w]
			if r.slot < 0 || vals[r.slot].null(r.row) {
				clear(o)
				nulls++
				continue
			}
			copy(o, src[r.slot][int(r.row)*w:])
			vb[i>>3] |= 1 << (i & 7)
		}
	}
	g.nulls += nulls
}

// fillRows writes output rows rows[j] from refs[rows[j]-off], leaving the
// others alone (their values are written elsewhere).
func (g *fixedGather) fillRows(srcs []arrow.Array, refs []ref, rows []int32, off int) {
	w := g.w
	vb, out := g.valid.Bytes(), g.values.Bytes()
	src := make([][]byte, len(srcs))
	for s, a := range srcs {
		src[s] = fixedBytes(a, w)
	}
	vals := validities(srcs)
	for _, i := range rows {
		r := refs[int(i)-off]
		o := out[int(i)*w : int(i+1)*w]
		if r.slot < 0 || vals[r.slot].null(r.row) {
			clear(o)
			g.nulls++
			continue
		}
		copy(o, src[r.slot][int(r.row)*w:])
		vb[i>>3] |= 1 << (i & 7)
	}
}

func (g *fixedGather) finish() arrow.Array {
	if g.countNulls {
		g.nulls = g.n - countValid(g.valid.Bytes(), g.n)
	}
	data := array.NewData(g.dt, g.n, []*memory.Buffer{g.valid, g.values}, nil, g.nulls, 0)
	g.valid.Release()
	g.values.Release()
	defer data.Release()
	return array.MakeFromData(data)
}

// fixedWidth returns the byte width of types gathered by fixedGather, or 0.
func fixedWidth(dt arrow.DataType) int {
	if d, ok := dt.(arrow.FixedWidthDataType); ok && dt.ID() != arrow.BOOL && dt.ID() != arrow.DICTIONARY &&
		dt.ID() != arrow.EXTENSION && d.BitWidth()%8 == 0 && d.BitWidth() > 0 {
		return d.BitWidth() / 8
	}
	return 0
}

func gatherBool(mem memory.Allocator, dt arrow.DataType, srcs []arrow.Array, refs []ref) arrow.Array {
	n := len(refs)
	valid := newValidity(mem, n)
	values := newValidity(mem, n)
	vb, ob := valid.Bytes(), values.Bytes()
	nulls := 0
	for i, r := range refs {
		if r.slot < 0 || srcs[r.slot].IsNull(int(r.row)) {
			nulls++
			continue
		}
		bitutil.SetBit(vb, i)
		if srcs[r.slot].(*array.Boolean).Value(int(r.row)) {
			bitutil.SetBit(ob, i)
		}
	}
	data := array.NewData(dt, n, []*memory.Buffer{valid, values}, nil, nulls, 0)
	valid.Release()
	values.Release()
	defer data.Release()
	return array.MakeFromData(data)
}

// varWidth is a string or binary array with O-sized offsets.
type varWidth[O int32 | int64] interface {
	ValueOffsets() []O
	ValueBytes() []byte
}

type offsets32 = varWidth[int32]

// gatherVar builds a string/binary column (O: the offset width) in two
// passes: total size first, so the data buffer is allocated once.
func gatherVar[O int32 | int64](mem memory.Allocator, dt arrow.DataType, srcs []arrow.Array, refs []ref) arrow.Array {
	n := len(refs)
	valid := newValidity(mem, n)
	vb := valid.Bytes()
	var zero O
	w := int(unsafe.Sizeof(zero))
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize((n + 1) * w)
	var offs []O
	if w == 4 {
		offs = any(arrow.Int32Traits.CastFromBytes(offBuf.Bytes())).([]O)
	} else {
		offs = any(arrow.Int64Traits.CastFromBytes(offBuf.Bytes())).([]O)
	}
	total := 0
	for _, r := range refs {
		if r.slot >= 0 {
			o := srcs[r.slot].(varWidth[O]).ValueOffsets()
			total += int(o[r.row+1] - o[r.row])
		}
	}
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Resize(total)
	out := dataBuf.Bytes()
	vals := validities(srcs)
	pos, nulls := 0, 0
	for i, r := range refs {
		offs[i] = O(pos)
		if r.slot < 0 || vals[r.slot].null(r.row) {
			nulls++
			continue
		}
		a := srcs[r.slot].(varWidth[O])
		o := a.ValueOffsets()
		// ValueBytes starts at the slice's first offset.
		base := o[0]
		pos += copy(out[pos:], a.ValueBytes()[o[r.row]-base:o[r.row+1]-base])
		bitutil.SetBit(vb, i)
	}
	offs[n] = O(pos)
	dataBuf.Resize(pos)
	data := array.NewData(dt, n, []*memory.Buffer{valid, offBuf, dataBuf}, nil, nulls, 0)
	valid.Release()
	offBuf.Release()
	dataBuf.Release()
	defer data.Release()
	return array.MakeFromData(data)
}

// gatherTake concatenates the referenced source arrays and takes from them;
// a NULL index yields a NULL value.
func gatherTake(ctx context.Context, mem memory.Allocator, dt arrow.DataType, srcs []arrow.Array, refs []ref) (arrow.Array, error) {
	base := make([]int64, len(srcs))
	var parts []arrow.Array
	used := make([]bool, len(srcs))
	for _, r := range refs {
		if r.slot >= 0 {
			used[r.slot] = true
		}
	}
	var pos int64
	for s, a := range srcs {
		if a == nil {
			continue
		}
		if used[s] {
			base[s] = pos
			pos += int64(a.Len())
			parts = append(parts, a)
		}
	}
	if len(parts) == 0 {
		// Every row is unmatched. (A builder's empty dictionary array
		// would break later concatenation; an all-NULL array does not.)
		return array.MakeArrayOfNull(mem, dt, len(refs)), nil
	}
	values, err := array.Concatenate(parts, mem)
	if err != nil {
		return nil, err
	}
	defer values.Release()
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	ib.Reserve(len(refs))
	for _, r := range refs {
		if r.slot < 0 {
			ib.AppendNull()
			continue
		}
		ib.Append(base[r.slot] + int64(r.row))
	}
	idx := ib.NewArray()
	defer idx.Release()
	return compute.TakeArray(compute.WithAllocator(ctx, mem), values, idx)
}
