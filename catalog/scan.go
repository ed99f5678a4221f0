package catalog

import (
	"container/heap"
	"context"
	"errors"
	"io"
	"sort"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
)

// ScanOptions shape a scan.
type ScanOptions struct {
	// Columns projects the output to these column indices, in this order;
	// nil means all columns.
	Columns []int
	// Range restricts an ordered table's scan to rows whose first ordering
	// column lies in the range; segments entirely outside it are skipped
	// without being opened. NULL keys are never in a range.
	Range *Range
	// BatchSize is the most rows per output batch (default
	// Options.BatchRows).
	BatchSize int
	// Allocator allocates what the scan reads and builds (a query's
	// memory account); nil means the catalog's. Nothing it allocates
	// outlives the scan's batches.
	Allocator memory.Allocator
}

// Range bounds the first ordering column. A nil bound is unbounded. Bound
// values are Go values of the column's type as keyValue documents (int64
// microseconds or time.Time for TIMESTAMP, string for TEXT, ...).
type Range struct {
	Lo, Hi                   any
	LoExclusive, HiExclusive bool
}

// Scan streams a table's rows as record batches owned by the caller of
// RecordBatch (retain to keep past the next call to Next). An ordered table's
// rows come ascending by its ordering columns, NULLs last, equal keys in
// insertion order; an unordered table's in insertion order. Memory is one
// batch per segment being merged plus one output batch. Read errors and
// cancellation of ctx are reported by Err once Next returns false.
func (s *Snapshot) Scan(ctx context.Context, name string, opts ScanOptions) (array.RecordReader, error) {
	ts, err := s.table(name)
	if err != nil {
		return nil, err
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = s.c.opts.BatchRows
	}
	mem := s.c.mem
	if opts.Allocator != nil {
		mem = opts.Allocator
	}
	r, err := newScanReader(ctx, mem, ts.meta, ts.segs, opts)
	if err != nil {
		return nil, err
	}
	s.st.retain()
	r.onRelease = s.st.release
	return r, nil
}

type cursor struct {
	sr    *segReader
	ref   int // index of the segment in the scan's list
	order uint64
	b     arrow.RecordBatch
	bpos  []int64 // stored positions of b's rows; nil: contiguous from bbase
	bbase int64
	pos   int
	end   int
	// last is set once the range's upper bound was reached in b: the rest
	// of the segment is out of range.
	last bool
}

type scanReader struct {
	refs      atomic.Int64
	ctx       context.Context
	mem       memory.Allocator
	meta      *tableMeta
	schema    *arrow.Schema
	proj      []int
	batchSize int

	lo, hi     any
	loEx, hiEx bool
	ranged     bool
	segs       []segRef // not yet opened (unordered: in order)
	segIdx     []int    // their indices in the scan's list
	wantIDs    bool     // DML: report each output row's segment and position
	ids        []rowID
	heap       cursorHeap // ordered: open cursors
	seq        *cursor    // unordered: the open cursor
	cur        arrow.RecordBatch
	err        error
	done       bool
	onRelease  func()
}

// rowID names a stored row: the scan's segment index and the position in
// that segment.
type rowID struct {
	seg int32
	pos int64
}

func newScanReader(ctx context.Context, mem memory.Allocator, meta *tableMeta, segs []segRef, opts ScanOptions) (*scanReader, error) {
	r := &scanReader{ctx: ctx, mem: mem, meta: meta, batchSize: opts.BatchSize}
	r.refs.Store(1)
	if opts.Columns == nil {
		for i := range meta.def.Columns {
			r.proj = append(r.proj, i)
		}
	} else {
		for _, c := range opts.Columns {
			if c < 0 || c >= len(meta.def.Columns) {
				return nil, sqlerr.New(sqlerr.UndefinedColumn, "column index %d out of range for relation %q (%d columns)", c, meta.def.Name, len(meta.def.Columns))
			}
		}
		r.proj = append([]int(nil), opts.Columns...)
	}
	fields := make([]arrow.Field, len(r.proj))
	for i, c := range r.proj {
		fields[i] = meta.schema.Field(c)
	}
	r.schema = arrow.NewSchema(fields, nil)
	if opts.Range != nil {
		if !meta.ordered() {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "range scan of relation %q needs an ordered table", meta.def.Name)
		}
		t := meta.def.Columns[meta.keys[0]].Type
		var err error
		r.ranged = true
		r.loEx, r.hiEx = opts.Range.LoExclusive, opts.Range.HiExclusive
		if opts.Range.Lo != nil {
			if r.lo, err = keyValue(t, opts.Range.Lo); err != nil {
				return nil, err
			}
		}
		if opts.Range.Hi != nil {
			if r.hi, err = keyValue(t, opts.Range.Hi); err != nil {
				return nil, err
			}
		}
	}
	for i, s := range segs {
		if s.live() == 0 || (r.ranged && !r.overlaps(s.st)) {
			continue
		}
		r.segs = append(r.segs, s)
		r.segIdx = append(r.segIdx, i)
	}
	return r, nil
}

// overlaps reports whether segment s may hold keys in the range.
func (r *scanReader) overlaps(s *segStats) bool {
	if s.min == nil {
		return false // only NULL keys
	}
	if r.lo != nil {
		c := compareValues(s.max, r.lo)
		if c < 0 || (c == 0 && r.loEx) {
			return false
		}
	}
	if r.hi != nil {
		c := compareValues(s.min, r.hi)
		if c > 0 || (c == 0 && r.hiEx) {
			return false
		}
	}
	return true
}

func (r *scanReader) Retain()                        { r.refs.Add(1) }
func (r *scanReader) Schema() *arrow.Schema          { return r.schema }
func (r *scanReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *scanReader) Err() error                     { return r.err }

// Record is the deprecated spelling of RecordBatch, kept for the interface.
func (r *scanReader) Record() arrow.RecordBatch { return r.cur }

func (r *scanReader) Release() {
	if r.refs.Add(-1) != 0 {
		return
	}
	r.finish()
	if r.onRelease != nil {
		r.onRelease()
		r.onRelease = nil
	}
}

func (r *scanReader) finish() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	for _, c := range r.heap.cs {
		c.close()
	}
	r.heap.cs = nil
	if r.seq != nil {
		r.seq.close()
		r.seq = nil
	}
	r.segs = nil
	r.done = true
}

func (c *cursor) close() {
	if c.b != nil {
		c.b.Release()
		c.b = nil
	}
	c.sr.close()
}

// openCursor opens a segment and positions it on its first in-range row;
// it returns nil when the segment has none.
func (r *scanReader) openCursor(s segRef, idx int) (*cursor, error) {
	sr, err := s.open(r.mem, r.meta, r.batchSize)
	if err != nil {
		return nil, err
	}
	c := &cursor{sr: sr, ref: idx, order: s.s.order}
	ok, err := r.advance(c)
	if err != nil || !ok {
		c.close()
		return nil, err
	}
	return c, nil
}

// advance loads c's next batch with in-range rows; false at the end.
func (r *scanReader) advance(c *cursor) (bool, error) {
	for {
		if c.b != nil {
			c.b.Release()
			c.b = nil
		}
		if c.last {
			return false, nil
		}
		b, bpos, base, err := c.sr.read()
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		c.b, c.pos, c.end = b, 0, int(b.NumRows())
		c.bpos, c.bbase = bpos, base
		if r.ranged {
			r.trim(c)
		}
		if c.pos < c.end {
			return true, nil
		}
	}
}

// trim narrows c's batch to the range. The batch is sorted on the first key
// with NULLs last, so both ends are binary searches.
func (r *scanReader) trim(c *cursor) {
	k := c.b.Column(r.meta.keys[0])
	n := c.end
	// Rows past the last in-range key (and all NULLs) end the segment.
	c.end = sort.Search(n, func(i int) bool {
		if k.IsNull(i) {
			return true
		}
		if r.hi == nil {
			return false
		}
		cmp := compareAt(k, i, r.hi)
		return cmp > 0 || (cmp == 0 && r.hiEx)
	})
	if c.end < n {
		c.last = true
	}
	if r.lo != nil {
		c.pos = sort.Search(c.end, func(i int) bool {
			cmp := compareAt(k, i, r.lo)
			return cmp > 0 || (cmp == 0 && !r.loEx)
		})
	}
}

// precedes reports whether a's current row comes before b's: key order,
// then insertion order (segment order; rows within a segment are already
// in order).
func (r *scanReader) precedes(a *cursor, ai int, b *cursor) bool {
	c := r.meta.cmpRows(a.b, ai, b.b, b.pos)
	return c < 0 || (c == 0 && a.order < b.order)
}

type cursorHeap struct {
	r  *scanReader
	cs []*cursor
}

func (h *cursorHeap) Len() int           { return len(h.cs) }
func (h *cursorHeap) Less(i, j int) bool { return h.r.precedes(h.cs[i], h.cs[i].pos, h.cs[j]) }
func (h *cursorHeap) Swap(i, j int)      { h.cs[i], h.cs[j] = h.cs[j], h.cs[i] }
func (h *cursorHeap) Push(x any)         { h.cs = append(h.cs, x.(*cursor)) }
func (h *cursorHeap) Pop() any {
	c := h.cs[len(h.cs)-1]
	h.cs = h.cs[:len(h.cs)-1]
	return c
}

// piece is rows [from, to) of a batch destined for the output.
type piece struct {
	b        arrow.RecordBatch
	from, to int
	c        *cursor // for row ids: c.bpos/c.bbase describe b
	bpos     []int64
	bbase    int64
}

func (r *scanReader) pieceOf(c *cursor, from, to int) piece {
	c.b.Retain()
	p := piece{b: c.b, from: from, to: to}
	if r.wantIDs {
		p.c, p.bpos, p.bbase = c, c.bpos, c.bbase
	}
	return p
}

func (r *scanReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.done {
		return false
	}
	if err := r.ctx.Err(); err != nil {
		r.err = err
		r.finish()
		return false
	}
	var pieces []piece
	var err error
	if r.meta.ordered() {
		pieces, err = r.nextMerged()
	} else {
		pieces, err = r.nextSequential()
	}
	if err == nil && len(pieces) > 0 {
		r.cur = r.assemble(pieces)
		if r.wantIDs {
			r.ids = r.ids[:0]
			for _, p := range pieces {
				for i := p.from; i < p.to; i++ {
					pos := p.bbase + int64(i)
					if p.bpos != nil {
						pos = p.bpos[i]
					}
					r.ids = append(r.ids, rowID{seg: int32(p.c.ref), pos: pos})
				}
			}
		}
	}
	for _, p := range pieces {
		p.b.Release()
	}
	if err != nil {
		r.err = err
	}
	if r.cur == nil {
		r.finish()
		return false
	}
	return true
}

// nextSequential returns up to batchSize rows of an unordered table,
// coalescing small stored batches (single-row INSERTs) into one output.
func (r *scanReader) nextSequential() ([]piece, error) {
	var pieces []piece
	total := 0
	for total < r.batchSize {
		if r.seq == nil {
			if len(r.segs) == 0 {
				break
			}
			c, err := r.openCursor(r.segs[0], r.segIdx[0])
			r.segs, r.segIdx = r.segs[1:], r.segIdx[1:]
			if err != nil {
				return pieces, err
			}
			if c == nil {
				continue
			}
			r.seq = c
		}
		c := r.seq
		to := min(c.end, c.pos+r.batchSize-total)
		pieces = append(pieces, r.pieceOf(c, c.pos, to))
		total += to - c.pos
		c.pos = to
		if c.pos == c.end {
			ok, err := r.advance(c)
			if err != nil {
				return pieces, err
			}
			if !ok {
				c.close()
				r.seq = nil
			}
		}
	}
	return pieces, nil
}

// nextMerged returns up to batchSize rows of the k-way merge. It takes
// whole runs from the leading cursor: every row that precedes the runner-up's
// head, found by binary search in the (sorted) batch, so non-overlapping
// segments stream through as zero-copy slices.
func (r *scanReader) nextMerged() ([]piece, error) {
	if r.heap.r == nil {
		r.heap.r = r
		for i, s := range r.segs {
			c, err := r.openCursor(s, r.segIdx[i])
			if err != nil {
				return nil, err
			}
			if c != nil {
				r.heap.cs = append(r.heap.cs, c)
			}
		}
		r.segs = nil
		heap.Init(&r.heap)
	}
	var pieces []piece
	total := 0
	for total < r.batchSize && r.heap.Len() > 0 {
		c := r.heap.cs[0]
		limit := c.end
		if n := r.heap.Len(); n > 1 {
			o := r.heap.cs[1]
			if n > 2 && r.heap.Less(2, 1) {
				o = r.heap.cs[2]
			}
			// c is the minimum, so its head goes first; gallop from there
			// so interleaved segments cost a comparison or two per row and
			// long runs a binary search.
			limit = gallop(c.pos, c.end, func(i int) bool { return r.precedes(c, i, o) })
		}
		limit = min(limit, c.pos+r.batchSize-total)
		pieces = append(pieces, r.pieceOf(c, c.pos, limit))
		total += limit - c.pos
		c.pos = limit
		if c.pos == c.end {
			ok, err := r.advance(c)
			if err != nil {
				return pieces, err
			}
			if !ok {
				c.close()
				heap.Pop(&r.heap)
				continue
			}
		}
		heap.Fix(&r.heap, 0)
	}
	return pieces, nil
}

// gallop returns the first i in (lo, hi] where pred fails, pred being true
// at lo and monotone (true then false); hi when it never fails.
func gallop(lo, hi int, pred func(int) bool) int {
	prev, step := lo, 1
	for prev+step < hi && pred(prev+step) {
		prev += step
		step *= 2
	}
	upper := min(prev+step, hi)
	return prev + 1 + sort.Search(upper-prev-1, func(k int) bool { return !pred(prev + 1 + k) })
}

// assemble builds the output batch: a zero-copy slice for a single piece,
// typed range copies otherwise.
func (r *scanReader) assemble(pieces []piece) arrow.RecordBatch {
	n := 0
	for _, p := range pieces {
		n += p.to - p.from
	}
	cols := make([]arrow.Array, len(r.proj))
	if len(pieces) == 1 {
		p := pieces[0]
		for i, c := range r.proj {
			cols[i] = array.NewSlice(p.b.Column(c), int64(p.from), int64(p.to))
		}
	} else {
		for i, c := range r.proj {
			b := array.NewBuilder(r.mem, r.schema.Field(i).Type)
			b.Reserve(n)
			for _, p := range pieces {
				appendRange(b, p.b.Column(c), p.from, p.to)
			}
			cols[i] = b.NewArray()
			b.Release()
		}
	}
	out := array.NewRecordBatch(r.schema, cols, int64(n))
	for _, a := range cols {
		a.Release()
	}
	return out
}
