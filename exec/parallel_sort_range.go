package exec

import (
	"context"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"

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
//  1. splitters are sampled from the input, in the total order (keys,
//     input position), that cut it into one range per worker;
//  2. each worker writes the sort entries of its share of the input (the
//     parts, or morsels, it drained) at their input positions in a
//     scratch array, and counts, for every part, how many of its rows
//     fall in each range;
//  3. the counts, in morsel order, give every (part, range) its place in
//     the array of entries, and each worker moves its parts' entries
//     there from the scratch: each range's entries end up contiguous and
//     in input order (with one range, step 2 writes the entries in place
//     and there is no step 3);
//  4. each worker radix-sorts one range (stably: ties keep input order),
//     with the scratch as the radix sort's second buffer;
//  5. the output, the ranges one after the other, is gathered from the
//     parts in parallel, batch by batch, as the merge path does.
//
// The entries and the scratch come from a pool of buffers outside the Go
// heap that outlives the query (entryBuf), and the output batches'
// buffers are reused once the consumer releases them (recycler): a sort
// writes no fresh page after the first, and on virtual machines a fresh
// page costs a fault of ~20 µs.
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
}

// newRangeSort returns the range path over p's drained parts, taking
// them, or nil when it does not apply (p keeps its parts).
func (p *ParallelSort) newRangeSort() *rangeSort {
	if !p.fast || len(p.keys) > 2 || len(p.keys) == 0 {
		return nil
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

// fill writes the entries of part i's rows into es (len(es) its rows),
// with keys[0] and keys[1] as the normalized keys' scratch.
func (rs *rangeSort) fill(p *ParallelSort, i int, es []sortEntry, keys *[2][]uint64) {
	b := rs.parts[i]
	n := int(b.NumRows())
	base := int32(i) << rs.shift
	for l := 0; l < rs.m; l++ {
		if cap(keys[l]) < n {
			keys[l] = make([]uint64, n)
		}
		k := p.keys[l]
		normalizeExact(keys[l][:n], b.Column(k.Col), p.types[l], k.Desc)
	}
	k0 := keys[0][:n]
	if rs.m > 1 {
		k1 := keys[1][:n]
		for r := range es {
			es[r] = sortEntry{k0: k0[r], k1: k1[r], row: base | int32(r)}
		}
		return
	}
	for r := range es {
		es[r] = sortEntry{k0: k0[r], row: base | int32(r)}
	}
}

// splitters samples the input at evenly spaced positions and returns up
// to ranges-1 entries that cut it into ranges of about equal size.
func (rs *rangeSort) splitters(p *ParallelSort, ranges int) []sortEntry {
	total := rs.starts[len(rs.parts)]
	if ranges < 2 || total < 2 {
		return nil
	}
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
	var out []sortEntry
	for j := 1; j < ranges; j++ {
		s := sample[len(sample)*j/ranges]
		if len(out) > 0 && !entryBefore(&out[len(out)-1], &s) {
			continue
		}
		out = append(out, s)
	}
	return out
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
	splitters := rs.splitters(p, workers)
	ranges := len(splitters) + 1
	rs.ebuf, rs.sbuf = getEntries(total), getEntries(total)
	rs.entries, rs.scratch = rs.ebuf.es[:total], rs.sbuf.es[:total]
	// First pass: each worker writes its parts' entries, in input order,
	// at their input positions: into entries when there is one range
	// (they are in place then), else into scratch, counting each part's
	// rows in each range: counts[i*ranges+j] for part i and range j.
	first := rs.entries
	if ranges > 1 {
		first = rs.scratch
	}
	counts := make([]int, len(rs.parts)*ranges)
	scratch := make([][2][]uint64, workers)
	// lossy[w*m+l]: worker w saw a value of key l that its normalized
	// form does not give back (a float -0 or NaN).
	lossy := make([]bool, workers*rs.m)
	err := runWorkers(ctx, workers, func(ctx context.Context, w int) error {
		for i := share[w]; i < share[w+1]; i++ {
			for l := range rs.m {
				if !lossy[w*rs.m+l] && !decodable(rs.parts[i].Column(p.keys[l].Col), p.types[l]) {
					lossy[w*rs.m+l] = true
				}
			}
			es := first[rs.starts[i]:rs.starts[i+1]]
			rs.fill(p, i, es, &scratch[w])
			c := counts[i*ranges : (i+1)*ranges]
			if ranges == 1 {
				c[0] = len(es)
			} else {
				for k := range es {
					c[rangeOf(&es[k], splitters)]++
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
	scratch = nil
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
	// Each range starts after the rows of the ones before; within it the
	// parts come in morsel order.
	bounds := make([]int, ranges+1)
	for j := range ranges {
		at := bounds[j]
		for i := range rs.parts {
			c := counts[i*ranges+j]
			counts[i*ranges+j] = at
			at += c
		}
		bounds[j+1] = at
	}
	if ranges > 1 {
		// Second pass: each worker moves its parts' entries from scratch
		// to their range in entries, so that each range's entries are
		// contiguous and in input order.
		err = runWorkers(ctx, workers, func(ctx context.Context, w int) error {
			for i := share[w]; i < share[w+1]; i++ {
				at := counts[i*ranges : (i+1)*ranges]
				for _, e := range rs.scratch[rs.starts[i]:rs.starts[i+1]] {
					j := rangeOf(&e, splitters)
					rs.entries[at[j]] = e
					at[j]++
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
	}
	err = runWorkers(ctx, ranges, func(ctx context.Context, j int) error {
		lo, hi := bounds[j], bounds[j+1]
		radixSortWith(rs.entries[lo:hi], rs.scratch[lo:hi], rs.m)
		return ctx.Err()
	})
	putEntries(rs.sbuf)
	rs.sbuf, rs.scratch = nil, nil
	for w := range workers {
		if err := p.budgets[w].grow(-24 * int64(rs.starts[share[w+1]]-rs.starts[share[w]])); err != nil {
			return err
		}
	}
	rs.refs = make([][]operator.Ref, workers)
	return err
}

// gather builds output rows [lo, hi) of the sorted order, as worker w.
func (rs *rangeSort) gather(ctx context.Context, p *ParallelSort, lo, hi, w int) (arrow.RecordBatch, error) {
	mem, schema := p.out, p.Schema()
	es := rs.entries[lo:hi]
	n := len(es)
	mask := int32(1)<<rs.shift - 1
	rs.refs[w] = slices.Grow(rs.refs[w][:0], n)[:n]
	refs := rs.refs[w]
	for k := range es {
		refs[k] = operator.Ref{Src: es[k].row >> rs.shift, Row: es[k].row & mask}
	}
	cols := make([]arrow.Array, len(rs.cols))
	for c := range rs.cols {
		col := &rs.cols[c]
		dt := schema.Field(c).Type
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
