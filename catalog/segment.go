package catalog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
)

// segment is an immutable run of rows of one table: an Arrow IPC file in a
// data directory, or retained record batches in memory mode. Rows of an
// ordered table's segment are sorted by the table's key (stable).
//
// Lifetime: every state that lists the segment holds one reference, as does
// the transaction or compaction that wrote it until it commits. When the last
// reference goes, memory batches are released, and the file is deleted if a
// commit removed the segment from the catalog (obsolete); files of live
// segments outlive Close, of course.
type segment struct {
	id uint64
	// order is the segment's position in insertion order, assigned at commit
	// (commits are serialized, so it increases with commit time). A scan
	// breaks ties between equal keys by (order, row), which is what makes the
	// k-way merge stable.
	order uint64
	rows  int64
	// min and max are canonical values (valueAt) of the first ordering
	// column over the segment's non-NULL keys; nil if there are none or the
	// table is unordered.
	min, max any
	// bytes is the segment's stored size: the file's size on disk in
	// data-directory mode, the summed length of its batches' Arrow buffers
	// in memory mode.
	bytes    int64
	path     string              // data-directory mode
	batches  []arrow.RecordBatch // memory mode
	refs     atomic.Int64
	obsolete atomic.Bool
}

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
	if s.path != "" && s.obsolete.Load() {
		// A failure here only leaves an orphan, which Open collects.
		_ = os.Remove(s.path)
	}
}

// segWriter writes one segment. Rows must arrive in the order they are to be
// stored (sorted, for an ordered table).
type segWriter struct {
	meta *tableMeta
	seg  *segment
	f    *os.File
	w    *ipc.FileWriter
	done bool
}

func (c *Catalog) newSegWriter(meta *tableMeta) (*segWriter, error) {
	seg := &segment{id: c.nextSegID.Add(1)}
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
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(meta.schema), ipc.WithAllocator(c.mem))
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
	if sw.meta.ordered() {
		k := rec.Column(sw.meta.keys[0])
		if sw.seg.min == nil {
			if v, ok := valueAt(k, 0); ok {
				sw.seg.min = v
			}
		}
		// Sorted with NULLs last: the last non-NULL is the batch maximum.
		for i := n - 1; i >= 0; i-- {
			if v, ok := valueAt(k, i); ok {
				sw.seg.max = v
				break
			}
		}
	}
	sw.seg.rows += int64(n)
	if sw.w == nil {
		rec.Retain()
		sw.seg.batches = append(sw.seg.batches, rec)
		for _, col := range rec.Columns() {
			sw.seg.bytes += dataBytes(col.Data())
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
	return nil
}

// finish closes and fsyncs the file; the segment (holding one reference,
// owned by the caller) is then durable but not yet part of any manifest.
func (sw *segWriter) finish() (*segment, error) {
	sw.done = true
	if sw.w == nil {
		return sw.seg, nil
	}
	err := sw.w.Close()
	if err == nil {
		err = sw.f.Sync()
	}
	if cerr := sw.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(sw.seg.path); err == nil {
			sw.seg.bytes = fi.Size()
		}
	}
	if err != nil {
		os.Remove(sw.seg.path)
		return nil, sqlerr.Wrap(err, sqlerr.IOError, "could not write segment file %s: %v", sw.seg.path, err)
	}
	return sw.seg, nil
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

// segReader yields a segment's batches in stored order, one at a time.
type segReader struct {
	seg  *segment
	f    *os.File
	r    *ipc.FileReader
	next int
}

func (s *segment) open(mem memory.Allocator) (*segReader, error) {
	sr := &segReader{seg: s}
	if s.path == "" {
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

// read returns the next batch, owned by the caller, or io.EOF.
func (sr *segReader) read() (arrow.RecordBatch, error) {
	if sr.r == nil {
		if sr.next >= len(sr.seg.batches) {
			return nil, io.EOF
		}
		b := sr.seg.batches[sr.next]
		sr.next++
		b.Retain()
		return b, nil
	}
	if sr.next >= sr.r.NumRecords() {
		return nil, io.EOF
	}
	b, err := sr.r.RecordBatchAt(sr.next)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, sqlerr.Wrap(err, sqlerr.DataCorrupted, "segment file %s is corrupt: %v", sr.seg.path, err)
	}
	sr.next++
	return b, nil
}

func (sr *segReader) close() {
	if sr.r != nil {
		sr.r.Close()
		sr.f.Close()
		sr.r = nil
	}
}
