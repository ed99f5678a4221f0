package exec

import (
	"context"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/sqltypes"
)

// rangeSort is ParallelSort's range path, taken when every key is a
// number, date or timestamp without NULLs and there are at most two keys
// (so the normalized keys alone decide the order, across workers too):
// no run is merged and no input is concatenated. After the workers drain
// their pipelines:
//
//  1. a sample of the input, in the total order (keys, input position),
//     gives splitters that cut it into one range per worker, and each
//     range is cut into buckets of about rangeBucketRows rows by the key
//     bits below those its bounds share (bucketFn);
//  2. each worker computes the bucket of every row of its share of the
//     input (the parts, or morsels, it drained, in input order) and
//     counts its rows in each bucket; it also copies the fixed-width
//     columns without NULLs that are not keys into flat buffers;
//  3. the counts give every (worker, bucket) its place in the array of
//     entries, and each worker writes its rows' entries there: each
//     bucket's entries are contiguous, in input order;
//  4. the workers sort the buckets (radix sort, stable: ties keep input
//     order), each taking the next bucket not taken, with the scratch as
//     the radix sort's second buffer; a bucket fits a core's cache;
//  5. the output, the buckets one after the other, is gathered in
//     parallel, batch by batch, as the merge path does: the keys decoded
//     from the entries, the flat columns read at the rows' input
//     positions, the other columns from the parts.
//
// Steps 2 and 3 each read the key columns (a worker normalizes each part
// twice, in its cache) rather than writing the entries in input order
// and moving them: the entries are written once, straight to their
// buckets, and no pass over all the entries by a radix digit is left.
//
// The entries, the scratch and the flat columns come from a pool of
// buffers outside the Go heap that outlives the query (entryBuf), and
// the output batches' buffers are reused once the consumer releases them
// (recycler): a sort writes no fresh page after the first, and on
// virtual machines a fresh page costs a fault of ~20 µs.
//
// An entry's row is its part's index in morsel order shifted left by
// shift, or'ed with the row in the part: it orders entries by input
// position and finds the row for the gather.
type rangeSort struct {
	parts  []arrow.RecordBatch // every worker's parts, in morsel order
	starts []int               // starts[i] is part i's first row in the input; starts[len(parts)] the rows
	shift  uint
	m      int // normalized keys in an entry: len(keys)
	// entries is the sorted order (range after range); scratch the radix
	// sort's second buffer, given back after the sort. Both are
	// entryBufs' (ebuf, sbuf), from and back to the pool.
	entries    []sortEntry
	scratch    []sortEntry
	ebuf, sbuf *entryBuf
	cols       []rangeCol // per output column, its value in every part
	// decode[c] is the key whose normalized form in the entries gives
	// output column c (-1: gathered from the parts instead). The gather
	// reads the parts at random rows, a cache miss a column and row;
	// a key column decoded from the entry costs none.
	decode []int
	refs   [][]operator.Ref // per gathering worker, reused
	pos    [][]int          // per gathering worker, reused
	// flat holds the copies of the gathered fixed-width columns (see
	// copyCols), from and back to the entry pool.
	flat []*entryBuf
}

// rangeCol is one column of every part: the value bytes and NULL bitmaps
// (nil without NULLs) for a fixed-width type, else the arrays.
type rangeCol struct {
	width    int
	values   [][]byte
	values64 [][]uint64 // values as words, for width 8
	valid    [][]byte
	offset   []int
	arrays   []arrow.Array
	// flat: the values of every part, one after the other (row g of the
	// input at g*width), for a fixed-width column without NULLs that is
	// not a key (see copyCols); flat64 the same as words for width 8.
	flat   []byte
	flat64 []uint64
}

// newRangeSort returns the range path over p's drained parts, taking
// them, or nil when it does not apply (p keeps its parts).
func (p *ParallelSort) newRangeSort() *rangeSort {
	if !p.fast || len(p.keys) > 2 || len(p.keys) == 0 || len(p.inputs) > rangeBucketsMax {
		return nil // (bucket numbers are uint16s: at most 1<<16 ranges)
	}
	type part struct {
		b   arrow.RecordBatch
		seq int64
	}
	var parts []part
	maxRows := 1
	for w := range p.parts {
		for i, b := range p.parts[w] {
			for _, k := range p.keys {
				if b.Column(k.Col).NullN() > 0 {
					return nil
				}
			}
			parts = append(parts, part{b, p.seqs[w][i]})
			maxRows = max(maxRows, int(b.NumRows()))
		}
	}
	shift := uint(bits.Len(uint(maxRows - 1)))
	if uint64(len(parts))<<shift > 1<<31 {
		return nil // entries' rows would not fit in an int32
	}
	// Stable: a pipeline's parts of one morsel (same sequence) stay in the
	// order it emitted them.
	slices.SortStableFunc(parts, func(a, b part) int { return int(a.seq - b.seq) })
	rs := &rangeSort{shift: shift, m: len(p.keys), starts: make([]int, len(parts)+1)}
	for i, pt := range parts {
		rs.parts = append(rs.parts, pt.b)
		rs.starts[i+1] = rs.starts[i] + int(pt.b.NumRows())
	}
	for w := range p.parts {
		p.parts[w], p.seqs[w] = nil, nil
	}
	for c, f := range p.Schema().Fields() {
		col := rangeCol{width: operator.FixedWidth(f.Type)}
		for _, b := range rs.parts {
			a := b.Column(c)
			if col.width > 0 {
				col.values = append(col.values, operator.FixedBytes(a, col.width))
				if col.width == 8 {
					col.values64 = append(col.values64, arrow.Uint64Traits.CastFromBytes(col.values[len(col.values)-1]))
				}
				var valid []byte
				if a.NullN() > 0 {
					valid = a.NullBitmapBytes()
				}
				col.valid = append(col.valid, valid)
				col.offset = append(col.offset, a.Data().Offset())
			} else {
				col.arrays = append(col.arrays, a)
			}
		}
		rs.cols = append(rs.cols, col)
	}
	return rs
}

// entryBefore orders entries by keys, then by input position (row).
func entryBefore(x, y *sortEntry) bool {
	if x.k0 != y.k0 {
		return x.k0 < y.k0
	}
	if x.k1 != y.k1 {
		return x.k1 < y.k1
	}
	return x.row < y.row
}

// rangeOf is the range of e: the number of splitters at or before it
// (the splitters are in order). Without branches: e against a splitter
// is a coin toss that a branch would mispredict half the time.
func rangeOf(e *sortEntry, splitters []sortEntry) int {
	j := 0
	for k := range splitters {
		s := &splitters[k]
		j += b2i(e.k0 > s.k0) | b2i(e.k0 == s.k0)&(b2i(e.k1 > s.k1)|b2i(e.k1 == s.k1)&b2i(e.row >= s.row))
	}
	return j
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// normalize writes the normalized keys of part i's rows into keys[l][:n]
// (n its rows), growing them as needed, and returns them (k1 nil with one
// key).
func (rs *rangeSort) normalize(p *ParallelSort, i int, keys *[2][]uint64) (k0, k1 []uint64) {
	b := rs.parts[i]
	n := int(b.NumRows())
	for l := 0; l < rs.m; l++ {
		if cap(keys[l]) < n {
			keys[l] = make([]uint64, n)
		}
		k := p.keys[l]
		normalizeExact(keys[l][:n], b.Column(k.Col), p.types[l], k.Desc)
	}
	if rs.m > 1 {
		return keys[0][:n], keys[1][:n]
	}
	return keys[0][:n], nil
}

// cut samples the input at evenly spaced positions and returns up to
// ranges-1 splitters that cut it into ranges of about equal size, and
// the bucket function of each range (len(splitters)+1 of them), with at
// most 1<<nb buckets each.
func (rs *rangeSort) cut(p *ParallelSort, ranges int, nb uint) ([]sortEntry, []bucketFn) {
	total := rs.starts[len(rs.parts)]
	samples := min(total, 1024*ranges)
	sample := make([]sortEntry, samples)
	var key [2]uint64
	for s := range sample {
		g := int(int64(s) * int64(total) / int64(samples))
		i, found := slices.BinarySearch(rs.starts, g)
		if !found {
			i--
		}
		r := g - rs.starts[i]
		for l := 0; l < rs.m; l++ {
			k := p.keys[l]
			a := array.NewSlice(rs.parts[i].Column(k.Col), int64(r), int64(r+1))
			normalizeExact(key[l:l+1], a, p.types[l], k.Desc)
			a.Release()
		}
		sample[s] = sortEntry{k0: key[0], k1: key[1], row: int32(i)<<rs.shift | int32(r)}
	}
	slices.SortFunc(sample, func(x, y sortEntry) int {
		switch {
		case entryBefore(&x, &y):
			return -1
		case entryBefore(&y, &x):
			return 1
		}
		return 0
	})
	var splitters []sortEntry
	for j := 1; j < ranges; j++ {
		s := sample[len(sample)*j/ranges]
		if len(splitters) > 0 && !entryBefore(&splitters[len(splitters)-1], &s) {
			continue
		}
		splitters = append(splitters, s)
	}
	// Range j holds the keys in (splitters[j-1], splitters[j]]; the first
	// and the last are bounded by the sample's least and greatest.
	fns := make([]bucketFn, len(splitters)+1)
	start := 0
	for j := range fns {
		lo, hi := &sample[0], &sample[len(sample)-1]
		if j > 0 {
			lo = &splitters[j-1]
		}
		if j < len(splitters) {
			hi = &splitters[j]
		}
		fns[j] = newBucketFn(lo, hi, nb, start)
		start += int(fns[j].top) + 1
	}
	return splitters, fns
}

// copyCols returns, for every fixed-width column that is not a key, a
// buffer of the entry pool to copy its values into, at the rows' input
// positions (nil for the other columns), charged to the workers by their
// shares (w bytes a row, until Close). The gather reads these columns at
// random rows: from the parts (the Go heap's 4 KiB pages, a TLB miss
// and a page walk for almost every read on a virtual machine, through a
// slice per part) a 10M-row sort's gather took ~3x the CPU it takes from
// one huge-page buffer indexed by input position.
func (rs *rangeSort) copyCols(p *ParallelSort, share []int, total int) ([][]byte, error) {
	flat := make([][]byte, len(rs.cols))
	isKey := func(c int) bool {
		for _, k := range p.keys {
			if k.Col == c {
				return true
			}
		}
		return false
	}
	for c := range rs.cols {
		col := &rs.cols[c]
		w := col.width
		if w == 0 || isKey(c) || slices.ContainsFunc(col.valid, func(v []byte) bool { return v != nil }) {
			continue
		}
		for s := range len(share) - 1 {
			if err := p.budgets[s].grow(int64(w) * int64(rs.starts[share[s+1]]-rs.starts[share[s]])); err != nil {
				return nil, err
			}
		}
		size := int(unsafe.Sizeof(sortEntry{}))
		b := getEntries((total*w + size - 1) / size)
		rs.flat = append(rs.flat, b)
		flat[c] = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.es))), total*w)
		col.flat = flat[c]
		if w == 8 {
			col.flat64 = arrow.Uint64Traits.CastFromBytes(col.flat)
		}
	}
	return flat, nil
}

// loadRanges sorts by the range path (see rangeSort).
func (p *ParallelSort) loadRanges(ctx context.Context) error {
	rs := p.rs
	total := rs.starts[len(rs.parts)]
	if total == 0 {
		return nil
	}
	workers := len(p.inputs)
	// Worker w takes parts [share[w], share[w+1]): about equal rows.
	share := make([]int, workers+1)
	for w := 1; w <= workers; w++ {
		share[w] = share[w-1]
		for share[w] < len(rs.parts) && (w == workers || rs.starts[share[w]] < total*w/workers) {
			share[w]++
		}
	}
	// The entries and the radix sort's scratch: 48 bytes a row (off the
	// Go heap, see entryBuf), charged to the workers by their shares
	// (the scratch is given back after the sort).
	for w := range workers {
		if err := p.budgets[w].grow(48 * int64(rs.starts[share[w+1]]-rs.starts[share[w]])); err != nil {
			return err
		}
	}
	splitters, fns := rs.cut(p, workers, bucketBits(total, workers))
	last := &fns[len(fns)-1]
	buckets := last.start + int(last.top) + 1
	rs.ebuf, rs.sbuf = getEntries(total), getEntries(total)
	rs.entries, rs.scratch = rs.ebuf.es[:total], rs.sbuf.es[:total]
	// ids[g] is input row g's bucket, in the scratch until the sort
	// needs it (2 of its 24 bytes a row).
	ids := unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(rs.scratch))), total)
	flat, err := rs.copyCols(p, share, total)
	if err != nil {
		return err
	}
	// First pass: each worker computes the bucket of each row of its
	// parts and counts its rows in each bucket: counts[w*buckets+b].
	counts := make([]int, workers*buckets)
	keys := make([][2][]uint64, workers)
	// lossy[w*m+l]: worker w saw a value of key l that its normalized
	// form does not give back (a float -0 or NaN).
	lossy := make([]bool, workers*rs.m)
	err = runWorkers(ctx, workers, func(ctx context.Context, w int) error {
		c := counts[w*buckets : (w+1)*buckets]
		for i := share[w]; i < share[w+1]; i++ {
			for c, f := range flat {
				if f == nil {
					continue
				}
				w := rs.cols[c].width
				copy(f[rs.starts[i]*w:rs.starts[i+1]*w], rs.cols[c].values[i])
			}
			for l := range rs.m {
				if !lossy[w*rs.m+l] && !decodable(rs.parts[i].Column(p.keys[l].Col), p.types[l]) {
					lossy[w*rs.m+l] = true
				}
			}
			k0, k1 := rs.normalize(p, i, &keys[w])
			id := ids[rs.starts[i]:rs.starts[i+1]]
			switch {
			case len(splitters) > 0:
				base := int32(i) << rs.shift
				var e sortEntry
				for r := range id {
					e.k0, e.row = k0[r], base|int32(r)
					if k1 != nil {
						e.k1 = k1[r]
					}
					b := fns[rangeOf(&e, splitters)].of(e.k0, e.k1)
					id[r] = uint16(b)
					c[b]++
				}
			case k1 != nil:
				f := &fns[0]
				for r := range id {
					b := f.of(k0[r], k1[r])
					id[r] = uint16(b)
					c[b]++
				}
			default:
				f := &fns[0]
				for r := range id {
					b := f.of(k0[r], 0)
					id[r] = uint16(b)
					c[b]++
				}
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	rs.decode = make([]int, len(rs.cols))
	for c := range rs.decode {
		rs.decode[c] = -1
		for l := range rs.m {
			if p.keys[l].Col != c || rs.cols[c].width == 0 {
				continue
			}
			ok := true
			for w := range workers {
				ok = ok && !lossy[w*rs.m+l]
			}
			if ok {
				rs.decode[c] = l
				break
			}
		}
	}
	// Bucket b's entries are entries[bounds[b]:bounds[b+1]]; within it,
	// worker w's come after those of the workers before it (whose parts
	// come first in the input): counts becomes each worker's next place
	// in each bucket.
	bounds := make([]int, buckets+1)
	at := 0
	for b := range buckets {
		bounds[b] = at
		for w := range workers {
			n := counts[w*buckets+b]
			counts[w*buckets+b] = at
			at += n
		}
	}
	bounds[buckets] = at
	// Second pass: each worker writes the entries of its parts' rows,
	// in input order, at their places in their buckets.
	err = runWorkers(ctx, workers, func(ctx context.Context, w int) error {
		at := counts[w*buckets : (w+1)*buckets]
		for i := share[w]; i < share[w+1]; i++ {
			k0, k1 := rs.normalize(p, i, &keys[w])
			id := ids[rs.starts[i]:rs.starts[i+1]]
			base := int32(i) << rs.shift
			if k1 != nil {
				for r, b := range id {
					rs.entries[at[b]] = sortEntry{k0: k0[r], k1: k1[r], row: base | int32(r)}
					at[b]++
				}
			} else {
				for r, b := range id {
					rs.entries[at[b]] = sortEntry{k0: k0[r], row: base | int32(r)}
					at[b]++
				}
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	keys = nil
	// Third pass: the workers sort the buckets, each taking the next one
	// not taken, with the scratch as the radix sort's second buffer.
	var next atomic.Int64
	err = runWorkers(ctx, min(workers, buckets), func(ctx context.Context, w int) error {
		for {
			b := int(next.Add(1) - 1)
			if b >= buckets {
				return nil
			}
			lo, hi := bounds[b], bounds[b+1]
			radixSortWith(rs.entries[lo:hi], rs.scratch[lo:hi], rs.m)
			if b%64 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
		}
	})
	putEntries(rs.sbuf)
	rs.sbuf, rs.scratch = nil, nil
	for w := range workers {
		if err := p.budgets[w].grow(-24 * int64(rs.starts[share[w+1]]-rs.starts[share[w]])); err != nil {
			return err
		}
	}
	rs.refs = make([][]operator.Ref, workers)
	rs.pos = make([][]int, workers)
	return err
}

// gather builds output rows [lo, hi) of the sorted order, as worker w.
func (rs *rangeSort) gather(ctx context.Context, p *ParallelSort, lo, hi, w int) (arrow.RecordBatch, error) {
	mem, schema := p.out, p.Schema()
	es := rs.entries[lo:hi]
	n := len(es)
	mask := int32(1)<<rs.shift - 1
	// refs: each row's part and row in it, for the columns gathered from
	// the parts; pos: its input position, for the flat columns.
	var refs []operator.Ref
	var pos []int
	for c := range rs.cols {
		if col := &rs.cols[c]; rs.decode[c] >= 0 || col.flat != nil {
			continue
		}
		rs.refs[w] = slices.Grow(rs.refs[w][:0], n)[:n]
		refs = rs.refs[w]
		for k := range es {
			refs[k] = operator.Ref{Src: es[k].row >> rs.shift, Row: es[k].row & mask}
		}
		break
	}
	cols := make([]arrow.Array, len(rs.cols))
	for c := range rs.cols {
		col := &rs.cols[c]
		dt := schema.Field(c).Type
		if col.flat != nil && rs.decode[c] < 0 {
			if pos == nil {
				rs.pos[w] = slices.Grow(rs.pos[w][:0], n)[:n]
				pos = rs.pos[w]
				for k := range es {
					pos[k] = rs.starts[es[k].row>>rs.shift] + int(es[k].row&mask)
				}
			}
			fc := operator.NewFixedColumn(mem, dt, n)
			col.fillFlat(fc, pos)
			cols[c] = fc.Finish()
			continue
		}
		if col.width == 0 {
			a, err := operator.Gather(ctx, mem, dt, col.arrays, refs)
			if err != nil {
				releaseArrays(cols[:c])
				return nil, err
			}
			cols[c] = a
			continue
		}
		fc := operator.NewFixedColumn(mem, dt, n)
		if l := rs.decode[c]; l >= 0 {
			rs.decodeKey(fc, es, l, p.keys[l].Desc, p.types[l])
		} else {
			col.fill(fc, refs)
		}
		cols[c] = fc.Finish()
	}
	out := array.NewRecordBatch(schema, cols, int64(n))
	releaseArrays(cols)
	return out, nil
}

// fillFlat writes the input rows pos of col, from its flat copy, into fc
// (a column of len(pos) rows, none NULL).
func (col *rangeCol) fillFlat(fc *operator.FixedColumn, pos []int) {
	vb, out := fc.Validity(), fc.Values()
	n := len(pos)
	for i := range n / 8 {
		vb[i] = 0xff
	}
	for i := n &^ 7; i < n; i++ {
		vb[i>>3] |= 1 << (i & 7)
	}
	if col.flat64 != nil {
		out64 := arrow.Uint64Traits.CastFromBytes(out)[:n]
		for i, g := range pos {
			out64[i] = col.flat64[g]
		}
		return
	}
	w := col.width
	for i, g := range pos {
		copy(out[i*w:(i+1)*w], col.flat[g*w:(g+1)*w])
	}
}

// fill writes the rows refs of col into fc (a column of len(refs) rows).
func (col *rangeCol) fill(fc *operator.FixedColumn, refs []operator.Ref) {
	w := col.width
	vb, out := fc.Validity(), fc.Values()
	var out64 []uint64
	if w == 8 {
		out64 = arrow.Uint64Traits.CastFromBytes(out)
	}
	for i, r := range refs {
		if v := col.valid[r.Src]; v != nil {
			if bit := col.offset[r.Src] + int(r.Row); v[bit>>3]&(1<<(bit&7)) == 0 {
				clear(out[i*w : (i+1)*w])
				continue
			}
		}
		vb[i>>3] |= 1 << (i & 7)
		if w == 8 {
			out64[i] = col.values64[r.Src][r.Row]
			continue
		}
		copy(out[i*w:(i+1)*w], col.values[r.Src][int(r.Row)*w:])
	}
}

// decodable reports whether every value of a key column of type t comes
// back from its normalized key: always for integers, dates and
// timestamps; for floats, unless a value is -0 (normalized as 0) or NaN
// (all NaNs normalize alike).
func decodable(a arrow.Array, t sqltypes.Type) bool {
	switch t.Kind {
	case sqltypes.Int2, sqltypes.Int4, sqltypes.Date, sqltypes.Int8, sqltypes.Timestamp, sqltypes.TimestampTZ:
		return true
	case sqltypes.Float8:
		for _, f := range eval.FixedValues[float64](a) {
			if f != f || f == 0 && math.Signbit(f) {
				return false
			}
		}
		return true
	}
	return false
}

// decodeKey writes the values of key l, of type t, from the entries'
// normalized keys into fc (len(es) rows, none NULL): the inverse of
// normalizeExact for the values decodable accepts.
func (rs *rangeSort) decodeKey(fc *operator.FixedColumn, es []sortEntry, l int, desc bool, t sqltypes.Type) {
	const sign = uint64(1) << 63
	vb, out := fc.Validity(), fc.Values()
	n := len(es)
	for i := range n / 8 {
		vb[i] = 0xff
	}
	for i := n &^ 7; i < n; i++ {
		vb[i>>3] |= 1 << (i & 7)
	}
	var flip uint64
	if desc {
		flip = ^uint64(0)
	}
	key := func(e *sortEntry) uint64 {
		if l == 0 {
			return e.k0 ^ flip
		}
		return e.k1 ^ flip
	}
	switch t.Kind {
	case sqltypes.Int2:
		for i := range es {
			binary.LittleEndian.PutUint16(out[2*i:], uint16(key(&es[i])^sign))
		}
	case sqltypes.Int4, sqltypes.Date:
		for i := range es {
			binary.LittleEndian.PutUint32(out[4*i:], uint32(key(&es[i])^sign))
		}
	case sqltypes.Int8, sqltypes.Timestamp, sqltypes.TimestampTZ:
		out64 := arrow.Uint64Traits.CastFromBytes(out)
		for i := range es {
			out64[i] = key(&es[i]) ^ sign
		}
	case sqltypes.Float8:
		out64 := arrow.Uint64Traits.CastFromBytes(out)
		for i := range es {
			k := key(&es[i])
			if k&sign != 0 {
				out64[i] = k &^ sign
			} else {
				out64[i] = ^k
			}
		}
	}
}
