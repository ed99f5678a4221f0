package catalog

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/exec/operator"
)

// writerQueue is the number of batches a statement may hand its
// background writer ahead of what it has written: enough to ride out a
// segment's footer and the start of the next file, small enough to bound
// memory.
const writerQueue = 8

// runWriter writes a large statement's rows as segment files on a
// goroutine of its own, so that producing the rows (decoding COPY data,
// running INSERT's query) overlaps writing them. Rows that arrive in the
// table's order (any order, for an unordered table) stream into a segment
// of up to Options.RunRows rows, re-cut into batches of Options.BatchRows
// rows, without being copied or sorted. When a batch breaks the order, the
// segment so far ends and the rest of the statement is buffered in runs of
// RunRows rows, each stably sorted (unless it came in order) and written as
// one segment: an input out of order makes one segment per run, not a run
// and a short streamed segment in turn. Segments are listed in input order, which commit
// turns into their tie-breaking order, so equal keys keep their input
// order. A finished segment is fsynced on a goroutine of its own while the
// next one is written; wait returns once every one is durable.
//
// The statement's goroutine calls send, then wait or abort, once; the
// fields below "goroutine state" belong to the writer's goroutine.
type runWriter struct {
	c    *Catalog
	meta *tableMeta
	in   chan arrow.RecordBatch
	done chan struct{}
	// aborted discards everything instead of finishing; failed is set
	// with err, so the statement stops early.
	aborted, failed atomic.Bool
	closed          bool // in is closed (statement's goroutine)

	mu   sync.Mutex
	err  error      // the first error; under mu
	segs []*segment // in input order; complete once done is closed

	// goroutine state
	sw     *segWriter          // the segment rows stream into
	swRows int                 // rows sent to sw (written or in carry)
	last   arrow.RecordBatch   // the last batch streamed, for the order check
	carry  []arrow.RecordBatch // streamed rows not yet written: less than a batch
	carryN int
	buf    []arrow.RecordBatch // a run out of order, sorted when full
	bufN   int
	broken bool           // the order broke: the rest goes in runs
	bufIn  bool           // buf's rows are in order so far
	syncs  sync.WaitGroup // segments being fsynced
}

func newRunWriter(c *Catalog, meta *tableMeta) *runWriter {
	r := &runWriter{c: c, meta: meta, in: make(chan arrow.RecordBatch, writerQueue), done: make(chan struct{})}
	go r.loop()
	return r
}

// send hands rec (and its reference) to the writer, waiting while the
// queue is full. It returns the writer's error once there is one.
func (r *runWriter) send(rec arrow.RecordBatch) error {
	if r.failed.Load() {
		rec.Release()
		return r.error()
	}
	r.in <- rec
	return nil
}

func (r *runWriter) error() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *runWriter) setErr(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
	r.failed.Store(true)
}

// wait finishes the statement's rows and returns its durable segments,
// each holding a reference the caller owns. On error nothing is left.
func (r *runWriter) wait() ([]*segment, error) {
	if !r.closed {
		r.closed = true
		close(r.in)
	}
	<-r.done
	if err := r.error(); err != nil {
		return nil, err
	}
	segs := r.segs
	r.segs = nil
	return segs, nil
}

// abort discards everything written; the statement failed.
func (r *runWriter) abort() {
	r.aborted.Store(true)
	if !r.closed {
		r.closed = true
		close(r.in)
	}
	<-r.done
	discard(r.segs)
	r.segs = nil
}

func (r *runWriter) loop() {
	defer close(r.done)
	for rec := range r.in {
		if !r.failed.Load() && !r.aborted.Load() {
			if err := r.take(rec); err != nil {
				r.setErr(err)
			}
		}
		rec.Release()
	}
	if !r.failed.Load() && !r.aborted.Load() {
		if err := r.flush(); err != nil {
			r.setErr(err)
		}
	}
	r.syncs.Wait()
	if r.failed.Load() || r.aborted.Load() {
		r.cleanup()
	}
}

// take places one batch; the caller keeps its reference.
func (r *runWriter) take(rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	if !r.broken {
		if r.inOrder(r.last, rec) {
			return r.stream(rec)
		}
		// The order breaks: what streamed so far is a segment, and the
		// rest goes in runs.
		r.broken = true
		if err := r.endStream(); err != nil {
			return err
		}
	}
	if r.bufN == 0 {
		r.bufIn = r.inOrder(nil, rec)
	} else if r.bufIn {
		r.bufIn = r.inOrder(r.buf[len(r.buf)-1], rec)
	}
	rec.Retain()
	r.buf = append(r.buf, rec)
	r.bufN += n
	if r.bufN >= r.c.opts.RunRows {
		return r.sortRun()
	}
	return nil
}

// inOrder reports whether rec's rows are in the table's order and come at
// or after the last row of prev, if any.
func (r *runWriter) inOrder(prev, rec arrow.RecordBatch) bool {
	m := r.meta
	if !m.ordered() {
		return true
	}
	if prev != nil && m.cmpRows(prev, int(prev.NumRows())-1, rec, 0) > 0 {
		return false
	}
	for i := 1; i < int(rec.NumRows()); i++ {
		if m.cmpRows(rec, i-1, rec, i) > 0 {
			return false
		}
	}
	return true
}

// stream appends rec to the streaming segment, starting one if needed,
// and ends the segment once it holds RunRows rows.
func (r *runWriter) stream(rec arrow.RecordBatch) error {
	if r.sw == nil {
		sw, err := r.c.newSegWriter(r.meta)
		if err != nil {
			return err
		}
		r.sw = sw
	}
	rec.Retain()
	if r.last != nil {
		r.last.Release()
	}
	r.last = rec
	n := int(rec.NumRows())
	r.swRows += n
	step := r.c.opts.BatchRows
	if r.carryN == 0 {
		// Whole batches go to the file as they are (COPY's batches are
		// exactly this size); a remainder waits for the next rows.
		off := 0
		for ; off+step <= n; off += step {
			if err := r.writeSlice(rec, off, off+step); err != nil {
				return err
			}
		}
		if off < n {
			r.carry = append(r.carry, rec.NewSlice(int64(off), int64(n)))
			r.carryN = n - off
		}
	} else {
		rec.Retain()
		r.carry = append(r.carry, rec)
		r.carryN += n
		if r.carryN >= step {
			if err := r.writeCarry(false); err != nil {
				return err
			}
		}
	}
	if r.swRows >= r.c.opts.RunRows {
		return r.endStream()
	}
	return nil
}

func (r *runWriter) writeSlice(rec arrow.RecordBatch, from, to int) error {
	if from == 0 && to == int(rec.NumRows()) {
		return r.sw.write(rec)
	}
	part := rec.NewSlice(int64(from), int64(to))
	defer part.Release()
	return r.sw.write(part)
}

// writeCarry writes the carried rows in whole batches, all of them when
// final (the segment ends), keeping a remainder otherwise.
func (r *runWriter) writeCarry(final bool) error {
	if r.carryN == 0 {
		return nil
	}
	all := r.carry[0]
	if len(r.carry) == 1 {
		all.Retain()
	} else {
		all = concatBatches(r.c.mem, r.meta.schema, r.carry)
	}
	releaseAll(r.carry)
	r.carry, r.carryN = nil, 0
	defer all.Release()
	n, step := int(all.NumRows()), r.c.opts.BatchRows
	off := 0
	for ; off+step <= n || (final && off < n); off += step {
		if err := r.writeSlice(all, off, min(n, off+step)); err != nil {
			return err
		}
	}
	if off < n {
		r.carry = []arrow.RecordBatch{all.NewSlice(int64(off), int64(n))}
		r.carryN = n - off
	}
	return nil
}

// endStream ends the streaming segment, if any: its footer now, its fsync
// on a goroutine of its own.
func (r *runWriter) endStream() error {
	if r.last != nil {
		r.last.Release()
		r.last = nil
	}
	if r.sw == nil {
		return nil
	}
	if err := r.writeCarry(true); err != nil {
		return err
	}
	sw := r.sw
	r.sw, r.swRows = nil, 0
	return r.seal(sw)
}

// seal closes a complete segment writer, lists its segment and fsyncs it
// in the background.
func (r *runWriter) seal(sw *segWriter) error {
	if err := sw.close(); err != nil {
		sw.seg.obsolete.Store(true)
		sw.seg.release()
		return err
	}
	r.mu.Lock()
	r.segs = append(r.segs, sw.seg)
	r.mu.Unlock()
	r.syncs.Add(1)
	go func() {
		defer r.syncs.Done()
		if err := sw.sync(); err != nil {
			r.setErr(err)
		}
	}()
	return nil
}

// sortRun writes the buffered run stably sorted as one segment: batches
// already in order and of the segment's batch size as they are, others
// gathered in sorted order.
func (r *runWriter) sortRun() error {
	buf, n := r.buf, r.bufN
	r.buf, r.bufN = nil, 0
	defer releaseAll(buf)
	m := r.meta
	sw, err := r.c.newSegWriter(m)
	if err != nil {
		return err
	}
	step := r.c.opts.BatchRows
	if r.bufIn && uniformBatches(buf, step) {
		for _, rec := range buf {
			if err := sw.write(rec); err != nil {
				sw.abort()
				return err
			}
		}
		return r.seal(sw)
	}
	refs := make([]operator.Ref, 0, n)
	for b, rec := range buf {
		for i := range int(rec.NumRows()) {
			refs = append(refs, operator.Ref{Src: int32(b), Row: int32(i)})
		}
	}
	if !r.bufIn {
		sortRefs(m, buf, refs)
	}
	srcs := make([]arrow.Array, len(buf))
	for off := 0; off < len(refs); off += step {
		part := refs[off:min(len(refs), off+step)]
		cols := make([]arrow.Array, m.schema.NumFields())
		for i := range cols {
			for b, rec := range buf {
				srcs[b] = rec.Column(i)
			}
			a, err := operator.Gather(context.Background(), r.c.mem, m.schema.Field(i).Type, srcs, part)
			if err != nil {
				releaseArrays(cols)
				sw.abort()
				return err
			}
			cols[i] = a
		}
		rec := array.NewRecordBatch(m.schema, cols, int64(len(part)))
		releaseArrays(cols)
		err := sw.write(rec)
		rec.Release()
		if err != nil {
			sw.abort()
			return err
		}
	}
	return r.seal(sw)
}

// flush writes what is left at the end of the statement.
func (r *runWriter) flush() error {
	if r.bufN > 0 {
		return r.sortRun()
	}
	return r.endStream()
}

// cleanup drops what a failed or aborted statement left; the segments
// listed are discarded by abort (or wait's caller never sees them).
func (r *runWriter) cleanup() {
	if r.sw != nil {
		r.sw.abort()
		r.sw = nil
	}
	if r.last != nil {
		r.last.Release()
		r.last = nil
	}
	releaseAll(r.carry)
	releaseAll(r.buf)
	r.carry, r.carryN, r.buf, r.bufN = nil, 0, nil, 0
	if r.failed.Load() {
		discard(r.segs)
		r.segs = nil
	}
}

// uniformBatches reports whether every batch but the last has step rows and
// none more: the batches a segment is cut into.
func uniformBatches(buf []arrow.RecordBatch, step int) bool {
	for i, rec := range buf {
		if n := int(rec.NumRows()); n > step || (n < step && i < len(buf)-1) {
			return false
		}
	}
	return true
}

// sortRefs sorts refs, rows of buf, stably into the table's order: by a
// least-significant-digit radix sort when the table is ordered by one
// integer or timestamp column without NULLs in buf (COPY's usual case),
// else by comparing rows.
func sortRefs(m *tableMeta, buf []arrow.RecordBatch, refs []operator.Ref) {
	if keys := intKeys(m, buf, len(refs)); keys != nil {
		for i := range keys {
			keys[i].ref = refs[i]
		}
		keys = radixSort(keys, make([]keyRef, len(keys)))
		for i := range keys {
			refs[i] = keys[i].ref
		}
		return
	}
	slices.SortStableFunc(refs, func(x, y operator.Ref) int {
		return m.cmpRows(buf[x.Src], int(x.Row), buf[y.Src], int(y.Row))
	})
}

// keyRef is a row with its key mapped to an unsigned integer of the same
// order.
type keyRef struct {
	k   uint64
	ref operator.Ref
}

// intKeys returns the key of each row of buf, in row order, as order-
// preserving unsigned integers; nil when the table's order is not one
// integer-like column or a key is NULL.
func intKeys(m *tableMeta, buf []arrow.RecordBatch, n int) []keyRef {
	if len(m.keys) != 1 {
		return nil
	}
	keys := make([]keyRef, 0, n)
	const flip = 1 << 63 // signed to unsigned order
	for _, rec := range buf {
		a := rec.Column(m.keys[0])
		if a.NullN() > 0 {
			return nil
		}
		switch a := a.(type) {
		case *array.Timestamp:
			for _, v := range a.TimestampValues() {
				keys = append(keys, keyRef{k: uint64(v) ^ flip})
			}
		case *array.Int64:
			for _, v := range a.Int64Values() {
				keys = append(keys, keyRef{k: uint64(v) ^ flip})
			}
		case *array.Int32:
			for _, v := range a.Int32Values() {
				keys = append(keys, keyRef{k: uint64(int64(v)) ^ flip})
			}
		case *array.Int16:
			for _, v := range a.Int16Values() {
				keys = append(keys, keyRef{k: uint64(int64(v)) ^ flip})
			}
		case *array.Date32:
			for _, v := range a.Date32Values() {
				keys = append(keys, keyRef{k: uint64(int64(v)) ^ flip})
			}
		default:
			return nil
		}
	}
	return keys
}

// radixSort sorts a by k, stably, one byte a pass from the least
// significant, skipping bytes no two keys differ in; tmp is scratch of
// a's length. It returns the sorted slice (a or tmp).
func radixSort(a, tmp []keyRef) []keyRef {
	if len(a) == 0 {
		return a
	}
	or, and := uint64(0), ^uint64(0)
	for _, e := range a {
		or |= e.k
		and &= e.k
	}
	diff := or ^ and
	for shift := 0; shift < 64; shift += 8 {
		if byte(diff>>shift) == 0 {
			continue
		}
		var count [256]int
		for _, e := range a {
			count[byte(e.k>>shift)]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, e := range a {
			d := byte(e.k >> shift)
			tmp[count[d]] = e
			count[d]++
		}
		a, tmp = tmp, a
	}
	return a
}
