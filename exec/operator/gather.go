package operator

import (
	"context"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Ref names one row to gather: row Row of source array Src. Src < 0 makes
// the output row NULL.
type Ref struct{ Src, Row int32 }

// NullRef is the Ref of a NULL output row.
var NullRef = Ref{Src: -1}

// Gather builds a column of type dt with len(refs) rows: row i is the value
// at refs[i] (NULL for a NullRef or a NULL source value). srcs may hold nil
// entries that no ref names. Fixed-width types, booleans and (large)
// strings and binaries are copied by typed loops that allocate each buffer
// once; every other type (nested, dictionary, ...) goes through arrow-go's
// take kernel. One index may address many arrays at once: the ASOF join
// gathers from every right batch it retains, the storage engine and the
// relational operators from one (Take).
//
// The typed loops write every byte of their buffers, so mem may be a Pool
// (which does not zero what it hands out); the take kernel then allocates
// from the pool's inner allocator.
func Gather(ctx context.Context, mem memory.Allocator, dt arrow.DataType, srcs []arrow.Array, refs []Ref) (arrow.Array, error) {
	switch dt.(type) {
	case *arrow.BooleanType:
		return gatherBool(mem, dt, srcs, refs), nil
	case *arrow.StringType, *arrow.BinaryType:
		return gatherVar[int32](mem, dt, srcs, refs), nil
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		return gatherVar[int64](mem, dt, srcs, refs), nil
	}
	if FixedWidth(dt) > 0 {
		c := NewFixedColumn(mem, dt, len(refs))
		c.Fill(srcs, refs, 0)
		return c.Finish(), nil
	}
	if p, ok := mem.(*Pool); ok {
		mem = p.inner
	}
	return gatherTake(ctx, mem, dt, srcs, refs)
}

// Take is Gather from one array: row i of the result is a[idx[i]], NULL
// where idx[i] < 0.
func Take(ctx context.Context, mem memory.Allocator, a arrow.Array, idx []int) (arrow.Array, error) {
	return Gather(ctx, mem, a.DataType(), []arrow.Array{a}, Refs(idx))
}

// Refs turns row indexes into one source into Refs (a negative index is a
// NULL row), for several Gathers over one index.
func Refs(idx []int) []Ref {
	refs := make([]Ref, len(idx))
	for i, j := range idx {
		if j < 0 {
			refs[i] = NullRef
		} else {
			refs[i] = Ref{Row: int32(j)}
		}
	}
	return refs
}

// FixedWidth returns the byte width of the types a FixedColumn builds
// (fixed-width, a whole number of bytes, not boolean, dictionary or
// extension), or 0.
func FixedWidth(dt arrow.DataType) int {
	if d, ok := dt.(arrow.FixedWidthDataType); ok && dt.ID() != arrow.BOOL && dt.ID() != arrow.DICTIONARY &&
		dt.ID() != arrow.EXTENSION && d.BitWidth()%8 == 0 && d.BitWidth() > 0 {
		return d.BitWidth() / 8
	}
	return 0
}

// FixedBytes returns the value bytes of an array of a FixedWidth type of
// width w, from its first row (nil when empty).
func FixedBytes(a arrow.Array, w int) []byte {
	if a == nil || a.Len() == 0 {
		return nil
	}
	d := a.Data()
	return d.Buffers()[1].Bytes()[d.Offset()*w : (d.Offset()+d.Len())*w]
}

// newValidity returns a zeroed validity bitmap for n rows.
func newValidity(mem memory.Allocator, n int) *memory.Buffer {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	clear(buf.Bytes())
	return buf
}

// validity is a source array's validity bitmap and offset, nil bits when
// the array has no NULLs (the common case, checked without a call).
type validity struct {
	bits   []byte
	offset int
}

func validities(srcs []arrow.Array) []validity {
	v := make([]validity, len(srcs))
	for s, a := range srcs {
		if a != nil && a.NullN() > 0 {
			v[s] = validity{bits: a.NullBitmapBytes(), offset: a.Data().Offset()}
		}
	}
	return v
}

func (v validity) null(row int32) bool {
	return v.bits != nil && !bitutil.BitIsSet(v.bits, v.offset+int(row))
}

// FixedColumn builds one column of a FixedWidth type in pieces: an operator
// may fill a chunk of rows right after computing their refs, while the
// source rows are still in cache, or write rows into Values and Validity
// itself. Rows it writes itself must have every value byte written (zero
// under a NULL) and their validity bit set when valid.
type FixedColumn struct {
	dt     arrow.DataType
	w, n   int
	valid  *memory.Buffer
	values *memory.Buffer
}

// NewFixedColumn returns an n-row column of dt, a FixedWidth type, with
// every validity bit clear and the values uninitialised.
func NewFixedColumn(mem memory.Allocator, dt arrow.DataType, n int) *FixedColumn {
	w := FixedWidth(dt)
	c := &FixedColumn{dt: dt, w: w, n: n, valid: newValidity(mem, n), values: memory.NewResizableBuffer(mem)}
	c.values.Resize(n * w)
	return c
}

// Width is the byte width of a value.
func (c *FixedColumn) Width() int { return c.w }

// Values is the value bytes of all n rows (n × Width).
func (c *FixedColumn) Values() []byte { return c.values.Bytes()[:c.n*c.w] }

// Validity is the validity bitmap of all n rows.
func (c *FixedColumn) Validity() []byte { return c.valid.Bytes() }

// Fill writes rows [at, at+len(refs)) from refs.
func (c *FixedColumn) Fill(srcs []arrow.Array, refs []Ref, at int) {
	w := c.w
	vb, out := c.valid.Bytes(), c.values.Bytes()
	src, vals := fixedSources(srcs, w)
	if w == 8 {
		out64 := arrow.Uint64Traits.CastFromBytes(out)[at : at+len(refs)]
		src64 := make([][]uint64, len(src))
		for s, b := range src {
			src64[s] = arrow.Uint64Traits.CastFromBytes(b)
		}
		for j, r := range refs {
			if r.Src < 0 || vals[r.Src].null(r.Row) {
				out64[j] = 0
				continue
			}
			out64[j] = src64[r.Src][r.Row]
			i := at + j
			vb[i>>3] |= 1 << (i & 7)
		}
		return
	}
	for j, r := range refs {
		i := at + j
		o := out[i*w : (i+1)*w]
		if r.Src < 0 || vals[r.Src].null(r.Row) {
			clear(o)
			continue
		}
		copy(o, src[r.Src][int(r.Row)*w:])
		vb[i>>3] |= 1 << (i & 7)
	}
}

// FillRows writes only output rows rows[j], from refs[rows[j]-off]; the
// other rows are left as they are.
func (c *FixedColumn) FillRows(srcs []arrow.Array, refs []Ref, rows []int32, off int) {
	w := c.w
	vb, out := c.valid.Bytes(), c.values.Bytes()
	src, vals := fixedSources(srcs, w)
	for _, i := range rows {
		r := refs[int(i)-off]
		o := out[int(i)*w : int(i+1)*w]
		if r.Src < 0 || vals[r.Src].null(r.Row) {
			clear(o)
			continue
		}
		copy(o, src[r.Src][int(r.Row)*w:])
		vb[i>>3] |= 1 << (i & 7)
	}
}

// fixedSources returns the value bytes and validity of every source.
func fixedSources(srcs []arrow.Array, w int) ([][]byte, []validity) {
	src := make([][]byte, len(srcs))
	for s, a := range srcs {
		src[s] = FixedBytes(a, w)
	}
	return src, validities(srcs)
}

// Finish returns the column; its NULL count is read off the bitmap. The
// FixedColumn must not be used afterwards.
func (c *FixedColumn) Finish() arrow.Array {
	nulls := c.n - bitutil.CountSetBits(c.valid.Bytes(), 0, c.n)
	data := array.NewData(c.dt, c.n, []*memory.Buffer{c.valid, c.values}, nil, nulls, 0)
	c.valid.Release()
	c.values.Release()
	defer data.Release()
	return array.MakeFromData(data)
}

// Release gives up an unfinished column's buffers.
func (c *FixedColumn) Release() {
	c.valid.Release()
	c.values.Release()
}

func gatherBool(mem memory.Allocator, dt arrow.DataType, srcs []arrow.Array, refs []Ref) arrow.Array {
	n := len(refs)
	valid := newValidity(mem, n)
	values := newValidity(mem, n)
	vb, ob := valid.Bytes(), values.Bytes()
	nulls := 0
	for i, r := range refs {
		if r.Src < 0 || srcs[r.Src].IsNull(int(r.Row)) {
			nulls++
			continue
		}
		bitutil.SetBit(vb, i)
		if srcs[r.Src].(*array.Boolean).Value(int(r.Row)) {
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

// gatherVar builds a string/binary column (O: the offset width) in two
// passes: total size first, so the data buffer is allocated once.
func gatherVar[O int32 | int64](mem memory.Allocator, dt arrow.DataType, srcs []arrow.Array, refs []Ref) arrow.Array {
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
	vals := validities(srcs)
	total := 0
	for _, r := range refs {
		if r.Src >= 0 && !vals[r.Src].null(r.Row) {
			o := srcs[r.Src].(varWidth[O]).ValueOffsets()
			total += int(o[r.Row+1] - o[r.Row])
		}
	}
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Resize(total)
	out := dataBuf.Bytes()
	pos, nulls := 0, 0
	for i, r := range refs {
		offs[i] = O(pos)
		if r.Src < 0 || vals[r.Src].null(r.Row) {
			nulls++
			continue
		}
		a := srcs[r.Src].(varWidth[O])
		o := a.ValueOffsets()
		// ValueBytes starts at the slice's first offset.
		base := o[0]
		pos += copy(out[pos:], a.ValueBytes()[o[r.Row]-base:o[r.Row+1]-base])
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
func gatherTake(ctx context.Context, mem memory.Allocator, dt arrow.DataType, srcs []arrow.Array, refs []Ref) (arrow.Array, error) {
	used := make([]bool, len(srcs))
	for _, r := range refs {
		if r.Src >= 0 {
			used[r.Src] = true
		}
	}
	base := make([]int64, len(srcs))
	var parts []arrow.Array
	var pos int64
	for s, a := range srcs {
		if a != nil && used[s] {
			base[s] = pos
			pos += int64(a.Len())
			parts = append(parts, a)
		}
	}
	if len(parts) == 0 {
		// Every row is NULL. (A builder's empty dictionary array would
		// break later concatenation; an all-NULL array does not.)
		return array.MakeArrayOfNull(mem, dt, len(refs)), nil
	}
	values := parts[0]
	if len(parts) > 1 {
		var err error
		if values, err = array.Concatenate(parts, mem); err != nil {
			return nil, err
		}
		defer values.Release()
	}
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	ib.Reserve(len(refs))
	for _, r := range refs {
		if r.Src < 0 {
			ib.AppendNull()
			continue
		}
		ib.Append(base[r.Src] + int64(r.Row))
	}
	idx := ib.NewArray()
	defer idx.Release()
	return compute.TakeArray(compute.WithAllocator(ctx, mem), values, idx)
}
