package catalog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
)

// segment is a run of rows of one table, in one of three forms:
//
//   - a file segment: an immutable Arrow IPC file in a data directory,
//     sorted by the table's key (checkpoints, large statements, compaction);
//   - a sorted memory segment: immutable retained batches (the same, in an
//     in-memory catalog);
//   - an append segment (app != nil): the in-memory table of recent rows.
//     Commits append rows to it in commit order; a state sees a prefix of
//     it (segRef.n), so appends never disturb older snapshots. Its rows are
//     in insertion order and are sorted when a scan reads them. The log
//     makes them durable; a checkpoint writes them out as a file segment.
//
// Lifetime: every state that lists the segment holds one reference, as does
// the transaction or compaction that wrote it until it commits. When the last
// reference goes, memory batches are released; the file of a segment no
// commit ever published (obsolete) is deleted at once, the file of one a
// commit removed (retired) once a checkpoint has made its removal durable,
// because the log before that checkpoint may still name it.
type segment struct {
	c  *Catalog
	id uint64
	// order is the segment's position in insertion order, assigned at commit
	// (commits are serialized, so it increases with commit time). A scan
	// breaks ties between equal keys by (order, position), which is what
	// makes the k-way merge stable.
	order uint64
	// cols are the ids of the table columns the segment stores, in stored
	// order; columns added later are filled at scan time.
	cols []uint32
	// stats of an immutable segment (append segments keep theirs per
	// state, in segRef).
	stats    *segStats
	path     string              // file segment
	batches  []arrow.RecordBatch // sorted memory segment
	app      *appendBuf          // append segment
	refs     atomic.Int64
	obsolete atomic.Bool
	retired  atomic.Bool
	goneLSN  atomic.Uint64 // retired: the log position of the removing commit
}

// segStats are the statistics pruning and DELETE rely on.
type segStats struct {
	rows int64
	// min and max are canonical values (valueAt) of the first ordering
	// column over the segment's non-NULL keys; nil if there are none or the
	// table is unordered. Deletion masks never widen them.
	min, max any
	// keyNulls counts rows whose first ordering key is NULL; -1 unknown.
	keyNulls int64
	// bytes is the stored size: the file's size on disk, the summed
	// length of Arrow buffers in memory.
	bytes int64
}

// segRef is a segment as one state sees it: its first n rows, less the
// positions its deletion mask names.
type segRef struct {
	s   *segment
	n   int64
	del *delMask
	st  *segStats
}

func (r segRef) live() int64 { return r.n - r.del.countBelow(r.n) }

func refOf(s *segment) segRef { return segRef{s: s, n: s.stats.rows, st: s.stats} }

func segmentPath(dir string, id uint64) string {
	return filepath.Join(dir, fmt.Sprintf("seg-%016x.arrow", id))
}

func (s *segment) retain() { s.refs.Add(1) }

func (s *segment) release() {
	if s.refs.Add(-1) != 0 {
		return
	}
	for _, b := range s.batches {
		b.Release()
	}
	s.batches = nil
	if s.app != nil {
		s.app.free()
	}
	if s.path == "" {
		return
	}
	switch {
	case s.obsolete.Load():
		// A failure here only leaves an orphan, which Open collects.
		_ = os.Remove(s.path)
	case s.retired.Load():
		s.c.deferDelete(s)
	}
}

// appendBuf holds an append segment's rows: sealed batches plus a builder
// for the newest rows. Readers seal the builder when they need its rows.
type appendBuf struct {
	mu     sync.Mutex
	mem    memory.Allocator
	schema *arrow.Schema
	chunks []arrow.RecordBatch
	rows   int64 // rows in chunks
	b      *array.RecordBuilder
	bRows  int64
	// sealed: no more appends (a checkpoint took it, or a statement that
	// must follow it in insertion order wrote a segment of its own).
	sealed bool
	// view caches the last materialized read (see view).
	view *appendView
}

type appendView struct {
	n       int64
	del     *delMask
	ordered bool
	batches []arrow.RecordBatch
	pos     [][]int64
}

func (v *appendView) release() {
	for _, b := range v.batches {
		b.Release()
	}
}

func (a *appendBuf) free() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, b := range a.chunks {
		b.Release()
	}
	a.chunks = nil
	if a.b != nil {
		a.b.Release()
		a.b = nil
	}
	if a.view != nil {
		a.view.release()
		a.view = nil
	}
}

// newAppendSegment starts an append segment of a table with meta's columns.
func (c *Catalog) newAppendSegment(meta *tableMeta, id, order uint64) *segment {
	s := &segment{c: c, id: id, order: order, cols: meta.colIDs,
		app: &appendBuf{mem: c.mem, schema: meta.schema}}
	s.refs.Store(1)
	return s
}

// add appends rec (typed as the segment's columns) after the segment's
// rows; called with the commit lock held, so appends are in commit order.
func (a *appendBuf) add(rec arrow.RecordBatch) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.b == nil {
		a.b = array.NewRecordBuilder(a.mem, a.schema)
	}
	n := int(rec.NumRows())
	for i, col := range rec.Columns() {
		appendRange(a.b.Field(i), col, 0, n)
	}
	a.bRows += int64(n)
}

// prefix returns batches holding rows [0, n) in position order (new
// references). Sealing the builder and folding small chunks keeps the chunk
// list logarithmic in the rows.
func (a *appendBuf) prefix(n int64) []arrow.RecordBatch {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rows < n && a.bRows > 0 {
		rec := a.b.NewRecordBatch()
		for _, col := range rec.Columns() {
			col.NullN() // settle the lazily counted NULLs before sharing
		}
		a.chunks = append(a.chunks, rec)
		a.rows += a.bRows
		a.bRows = 0
		for k := len(a.chunks); k >= 2 && a.chunks[k-2].NumRows() <= 2*a.chunks[k-1].NumRows(); k-- {
			merged := concatBatches(a.mem, a.schema, a.chunks[k-2:])
			for _, b := range a.chunks[k-2:] {
				b.Release()
			}
			a.chunks = append(a.chunks[:k-2], merged)
		}
	}
	var out []arrow.RecordBatch
	var off int64
	for _, b := range a.chunks {
		if off >= n {
			break
		}
		m := b.NumRows()
		if off+m <= n {
			b.Retain()
			out = append(out, b)
		} else {
			out = append(out, b.NewSlice(0, n-off))
		}
		off += m
	}
	return out
}

// concatBatches concatenates batches of one schema into a new batch.
func concatBatches(mem memory.Allocator, schema *arrow.Schema, bs []arrow.RecordBatch) arrow.RecordBatch {
	var n int64
	for _, b := range bs {
		n += b.NumRows()
	}
	cols := make([]arrow.Array, schema.NumFields())
	for i := range cols {
		bld := array.NewBuilder(mem, schema.Field(i).Type)
		bld.Reserve(int(n))
		for _, b := range bs {
			appendRange(bld, b.Column(i), 0, int(b.NumRows()))
		}
		cols[i] = bld.NewArray()
		cols[i].NullN()
		bld.Release()
	}
	out := array.NewRecordBatch(schema, cols, n)
	for _, a := range cols {
		a.Release()
	}
	return out
}

// materialize reads a state's view of an append segment: rows [0, n)
// without the masked ones, sorted stably by meta's key when the table is
// ordered, in batches of batchRows, with each row's position. The result
// is cached: repeated scans of an unchanged table share it.
func (s *segment) materialize(ref segRef, meta *tableMeta, batchRows int) ([]arrow.RecordBatch, [][]int64) {
	a := s.app
	ordered := meta.ordered()
	a.mu.Lock()
	if v := a.view; v != nil && v.n == ref.n && v.del == ref.del && v.ordered == ordered {
		out := retainAll(v.batches)
		a.mu.Unlock()
		return out, v.pos
	}
	a.mu.Unlock()
	parts := a.prefix(ref.n)
	var all arrow.RecordBatch
	switch len(parts) {
	case 0:
		return nil, nil
	case 1:
		all = parts[0]
	default:
		all = concatBatches(a.mem, a.schema, parts)
		releaseAll(parts)
	}
	defer all.Release()
	n := int(all.NumRows())
	idx := make([]int32, 0, n)
	for p := 0; p < n; p++ {
		if !ref.del.has(int64(p)) {
			idx = append(idx, int32(p))
		}
	}
	if ordered {
		keys := storedKeys(meta, s.cols)
		slices.SortStableFunc(idx, func(x, y int32) int {
			for k, col := range keys {
				if c := meta.keyCmps[k](all.Column(col), all.Column(col), int(x), int(y)); c != 0 {
					return c
				}
			}
			return 0
		})
	}
	// Rows appended in order with none deleted (a feed's usual state)
	// need no copy: slices share the stored buffers.
	inPlace := len(idx) == n
	for i, p := range idx {
		if int(p) != i {
			inPlace = false
			break
		}
	}
	var batches []arrow.RecordBatch
	var pos [][]int64
	for off := 0; off < len(idx); off += batchRows {
		part := idx[off:min(len(idx), off+batchRows)]
		var rec arrow.RecordBatch
		if inPlace {
			rec = all.NewSlice(int64(off), int64(off+len(part)))
		} else {
			cols := make([]arrow.Array, all.NumCols())
			for i := range cols {
				cols[i] = gather(a.mem, all.Column(i), part)
			}
			rec = array.NewRecordBatch(a.schema, cols, int64(len(part)))
			releaseArrays(cols)
		}
		// Scans on many goroutines share the cached view: settle
		// arrow-go's lazy NULL counts before it is shared.
		for _, col := range rec.Columns() {
			col.NullN()
		}
		p := make([]int64, len(part))
		for i, x := range part {
			p[i] = int64(x)
		}
		batches = append(batches, rec)
		pos = append(pos, p)
	}
	a.mu.Lock()
	if a.view != nil {
		a.view.release()
	}
	a.view = &appendView{n: ref.n, del: ref.del, ordered: ordered, batches: retainAll(batches), pos: pos}
	a.mu.Unlock()
	return batches, pos
}

// storedKeys maps meta's ordering columns to stored column indices.
func storedKeys(meta *tableMeta, cols []uint32) []int {
	out := make([]int, len(meta.keys))
	for k, col := range meta.keys {
		out[k] = slices.Index(cols, meta.colIDs[col])
	}
	return out
}

func retainAll(bs []arrow.RecordBatch) []arrow.RecordBatch {
	for _, b := range bs {
		b.Retain()
	}
	return slices.Clone(bs)
}

func releaseAll(bs []arrow.RecordBatch) {
	for _, b := range bs {
		b.Release()
	}
}

func releaseArrays(as []arrow.Array) {
	for _, a := range as {
		if a != nil {
			a.Release()
		}
	}
}

// segWriter writes one sorted segment. Rows must arrive in the order they
// are to be stored (sorted, for an ordered table).
type segWriter struct {
	meta *tableMeta
	seg  *segment
	f    *os.File
	w    *ipc.FileWriter
	done bool
	// out counts the bytes written to f; written back is the prefix
	// whose writeback was started (see writebackEvery).
	out         countingWriter
	writtenBack int64
}

// writebackEvery is how many bytes of a segment file are written before
// their writeback to disk is started, so that the fsync at its end (the
// tail of a large COPY, before its commit) waits for little.
const writebackEvery = 8 << 20

// countingWriter counts the bytes written through it.
type countingWriter struct {
	f *os.File
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.f.Write(p)
	c.n += int64(n)
	return n, err
}

func (c *Catalog) newSegWriter(meta *tableMeta) (*segWriter, error) {
	seg := &segment{c: c, id: c.nextSegID.Add(1), cols: meta.colIDs, stats: &segStats{}}
	seg.refs.Store(1)
	sw := &segWriter{meta: meta, seg: seg}
	if c.dir == "" {
		return sw, nil
	}
	seg.path = segmentPath(c.dir, seg.id)
	f, err := os.OpenFile(seg.path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, sqlerr.Wrap(err, sqlerr.IOError, "could not create segment file: %v", err)
	}
	sw.out.f = f
	w, err := ipc.NewFileWriter(&sw.out, ipc.WithSchema(meta.schema), ipc.WithAllocator(c.mem))
	if err != nil {
		f.Close()
		os.Remove(seg.path)
		return nil, sqlerr.Wrap(err, sqlerr.IOError, "could not start segment file %s: %v", seg.path, err)
	}
	sw.f, sw.w = f, w
	return sw, nil
}

// write appends rec to the segment; the caller keeps its reference.
func (sw *segWriter) write(rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	st := sw.seg.stats
	if sw.meta.ordered() {
		k := rec.Column(sw.meta.keys[0])
		// The statistics outlive rec, whose buffers a COPY reuses
		// (copyPool): a text key is copied.
		if st.min == nil {
			if v, ok := valueAt(k, 0); ok {
				st.min = ownValue(v)
			}
		}
		// Sorted with NULLs last: the last non-NULL is the batch maximum.
		for i := n - 1; i >= 0; i-- {
			if v, ok := valueAt(k, i); ok {
				st.max = ownValue(v)
				break
			}
		}
		st.keyNulls += int64(k.NullN())
	}
	st.rows += int64(n)
	if sw.w == nil {
		rec.Retain()
		sw.seg.batches = append(sw.seg.batches, rec)
		for _, col := range rec.Columns() {
			st.bytes += dataBytes(col.Data())
			// Every scan of the segment shares these arrays, on any
			// goroutine (an ASOF join's right inputs run concurrently),
			// and arrow-go counts NULLs lazily, caching the count in
			// the array: settle it now, before the batch is shared.
			col.NullN()
		}
		return nil
	}
	if err := sw.w.Write(rec); err != nil {
		return sqlerr.Wrap(err, sqlerr.IOError, "could not write segment file %s: %v", sw.seg.path, err)
	}
	if n := sw.out.n - sw.writtenBack; n >= writebackEvery {
		startWriteback(sw.f, sw.writtenBack, n)
		sw.writtenBack = sw.out.n
	}
	return nil
}

// finish closes and fsyncs the file; the segment (holding one reference,
// owned by the caller) is then durable but not yet part of any state.
func (sw *segWriter) finish() (*segment, error) {
	if err := sw.close(); err != nil {
		return nil, err
	}
	if err := sw.sync(); err != nil {
		return nil, err
	}
	return sw.seg, nil
}

// close writes the file's footer: the first half of finish, after which
// the writer is done and sync makes the file durable (a statement's
// background writer syncs one segment while it writes the next).
func (sw *segWriter) close() error {
	sw.done = true
	if sw.w == nil {
		return nil
	}
	if err := sw.w.Close(); err != nil {
		sw.f.Close()
		os.Remove(sw.seg.path)
		return sqlerr.Wrap(err, sqlerr.IOError, "could not write segment file %s: %v", sw.seg.path, err)
	}
	return nil
}

// sync fsyncs and closes the file close finished and records its size.
// On error the file is removed; the segment is the caller's to discard.
func (sw *segWriter) sync() error {
	if sw.w == nil {
		return nil
	}
	err := sw.f.Sync()
	if cerr := sw.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(sw.seg.path); err == nil {
			sw.seg.stats.bytes = fi.Size()
		}
	}
	if err != nil {
		os.Remove(sw.seg.path)
		return sqlerr.Wrap(err, sqlerr.IOError, "could not write segment file %s: %v", sw.seg.path, err)
	}
	return nil
}

// dataBytes is the summed length of an array's buffers, its children's and
// its dictionary's included.
func dataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		n += dataBytes(d.Dictionary())
	}
	return n
}

// abort discards a segment that will never be committed.
func (sw *segWriter) abort() {
	if sw.done {
		return
	}
	sw.done = true
	if sw.w != nil {
		sw.w.Close()
		sw.f.Close()
	}
	sw.seg.obsolete.Store(true)
	sw.seg.release()
}

// segReader yields a state's view of a segment in scan order (sorted for
// an ordered table) as batches with the table's current columns, each with
// the stored position of its rows (pos nil: contiguous from base).
type segReader struct {
	ref       segRef
	meta      *tableMeta
	mem       memory.Allocator
	batchRows int
	f         *os.File
	r         *ipc.FileReader
	next      int
	off       int64
	// append segments: the materialized view
	view    []arrow.RecordBatch
	viewPos [][]int64
	// mapping[i] is the stored column of table column i, -1 to fill.
	mapping []int
}

func (ref segRef) open(mem memory.Allocator, meta *tableMeta, batchRows int) (*segReader, error) {
	s := ref.s
	sr := &segReader{ref: ref, meta: meta, mem: mem, batchRows: batchRows}
	if !slices.Equal(s.cols, meta.colIDs) {
		sr.mapping = make([]int, len(meta.colIDs))
		for i, id := range meta.colIDs {
			sr.mapping[i] = slices.Index(s.cols, id)
		}
	}
	if s.app == nil {
		s.c.segReads.Add(1)
	}
	switch {
	case s.app != nil:
		sr.view, sr.viewPos = s.materialize(ref, meta, batchRows)
		return sr, nil
	case s.path == "":
		return sr, nil
	}
	f, err := os.Open(s.path)
	if err != nil {
		return nil, sqlerr.Wrap(err, sqlerr.IOError, "could not open segment file: %v", err)
	}
	r, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
	if err != nil {
		f.Close()
		return nil, sqlerr.Wrap(err, sqlerr.DataCorrupted, "segment file %s is corrupt: %v", s.path, err)
	}
	sr.f, sr.r = f, r
	return sr, nil
}

// read returns the next non-empty batch (owned by the caller) with its
// positions, or io.EOF.
func (sr *segReader) read() (arrow.RecordBatch, []int64, int64, error) {
	for {
		b, pos, base, err := sr.readRaw()
		if err != nil {
			return nil, nil, 0, err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		if sr.mapping != nil {
			b = sr.remap(b)
		}
		return b, pos, base, nil
	}
}

func (sr *segReader) readRaw() (arrow.RecordBatch, []int64, int64, error) {
	s := sr.ref.s
	if s.app != nil {
		if sr.next >= len(sr.view) {
			return nil, nil, 0, io.EOF
		}
		b, p := sr.view[sr.next], sr.viewPos[sr.next]
		sr.view[sr.next] = nil
		sr.next++
		return b, p, 0, nil
	}
	var b arrow.RecordBatch
	if sr.r == nil {
		if sr.next >= len(s.batches) {
			return nil, nil, 0, io.EOF
		}
		b = s.batches[sr.next]
		b.Retain()
	} else {
		if sr.next >= sr.r.NumRecords() {
			return nil, nil, 0, io.EOF
		}
		var err error
		b, err = sr.r.RecordBatchAt(sr.next)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, nil, 0, sqlerr.Wrap(err, sqlerr.DataCorrupted, "segment file %s is corrupt: %v", s.path, err)
		}
	}
	sr.next++
	base := sr.off
	sr.off += b.NumRows()
	keep, masked := sr.ref.del.keep(base, base+b.NumRows())
	if !masked {
		return b, nil, base, nil
	}
	idx := make([]int32, len(keep))
	for i, p := range keep {
		idx[i] = int32(p - base)
	}
	out := gatherBatch(sr.mem, b, idx)
	b.Release()
	return out, keep, base, nil
}

// remap rebuilds b with the table's current columns: stored columns by id,
// added columns filled with their default.
func (sr *segReader) remap(b arrow.RecordBatch) arrow.RecordBatch {
	defer b.Release()
	n := b.NumRows()
	cols := make([]arrow.Array, len(sr.mapping))
	for i, from := range sr.mapping {
		if from >= 0 {
			cols[i] = b.Column(from)
			cols[i].Retain()
			continue
		}
		cols[i] = sr.meta.fill(sr.mem, i, int(n))
	}
	out := array.NewRecordBatch(sr.meta.schema, cols, n)
	releaseArrays(cols)
	return out
}

// gatherBatch copies rows idx of b into a new batch of b's schema.
func gatherBatch(mem memory.Allocator, b arrow.RecordBatch, idx []int32) arrow.RecordBatch {
	cols := make([]arrow.Array, b.NumCols())
	for i := range cols {
		cols[i] = gather(mem, b.Column(i), idx)
	}
	out := array.NewRecordBatch(b.Schema(), cols, int64(len(idx)))
	releaseArrays(cols)
	return out
}

func (sr *segReader) close() {
	if sr.r != nil {
		sr.r.Close()
		sr.f.Close()
		sr.r = nil
	}
	for _, b := range sr.view[min(sr.next, len(sr.view)):] {
		if b != nil {
			b.Release()
		}
	}
	sr.view = nil
}
