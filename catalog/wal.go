package catalog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/asofsql/asofsql/sqlerr"
)

// The write-ahead log. A commit appends one record holding everything it
// changed (rows, deletions, definitions) and is durable once the record is
// on disk. Records are framed as
//
//	u32 payload length | u32 CRC-32C of payload | payload (u64 LSN, ops...)
//
// in files wal-<first LSN, 16 hex>.log that start with walMagic. LSNs are
// consecutive record numbers. A checkpoint starts a new file, and deletes
// the older ones once the manifest covers them. Recovery reads the files in
// LSN order and stops at the first record whose frame, checksum or LSN is
// wrong: that can only be the torn tail of the last file (writes are
// appends and a later file is only started after the earlier is fsynced),
// and only commits that were never acknowledged can be in it.
const (
	walMagic  = "ASOFWAL1"
	walPrefix = "wal-"
	walSuffix = ".log"
	walFrame  = 8
	// walMaxRecord bounds one record; a larger length field is a torn or
	// corrupt frame, never an allocation.
	walMaxRecord = 1 << 30
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func walPath(dir string, first uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%s%016x%s", walPrefix, first, walSuffix))
}

// walLog appends records and makes them durable with group commit: the
// first committer to find no flush under way writes and fsyncs everything
// buffered so far, for itself and every commit that queued behind it.
type walLog struct {
	dir   string
	chunk int64 // Options.LogPreallocate

	mu       sync.Mutex
	cond     *sync.Cond
	f        *os.File
	first    uint64 // first LSN of the current file
	pos      int64  // where the next record goes in f
	alloc    int64  // bytes of f allocated (zero-filled)
	buf      []byte // framed records not yet written
	spare    []byte
	next     uint64 // LSN of the next record
	flushed  uint64 // every record <= flushed is durable
	flushing bool
	err      error // sticky: after a failed write or fsync nothing is acknowledged
	size     int64 // bytes written since the last checkpoint
	// published is called (without mu) with the flushed LSN after each
	// flush, so the catalog makes the covered commits visible.
	published func(lsn uint64)
	// stats
	flushes, records uint64
	// write writes records at an offset of f and returns once they are
	// durable: walWrite (tests slow it down to see commits group, and
	// record what it made durable).
	write func(f *os.File, b []byte, off int64) error
	// kick wakes the flusher for an asynchronous commit (asyncAppended).
	kick chan struct{}
}

// openWAL starts a new log file whose first record will be next.
func openWAL(dir string, next uint64, chunk int64, published func(uint64)) (*walLog, error) {
	w := &walLog{dir: dir, chunk: chunk, next: next, flushed: next - 1, published: published, write: walWrite,
		kick: make(chan struct{}, 1)}
	w.cond = sync.NewCond(&w.mu)
	if err := w.startFile(); err != nil {
		return nil, err
	}
	return w, nil
}

// startFile opens wal-<next>.log; called with everything before flushed.
// The file is written (header and zeros), fsynced and its directory entry
// fsynced through one descriptor, then reopened with walSyncFlag for the
// records, so the zero-fill is not written synchronously block by block.
func (w *walLog) startFile() error {
	path := walPath(w.dir, w.next)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err == nil {
		_, err = f.Write([]byte(walMagic))
		if err == nil {
			err = zeroFill(f, int64(len(walMagic)), w.chunk)
		}
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = syncDir(w.dir)
		}
		if err == nil {
			f, err = os.OpenFile(path, os.O_WRONLY|walSyncFlag, 0)
		}
	}
	if err != nil {
		return sqlerr.Wrap(err, sqlerr.IOError, "could not start log file %s: %v", path, err)
	}
	if w.f != nil {
		w.f.Close()
	}
	w.f, w.first = f, w.next
	w.pos, w.alloc = int64(len(walMagic)), w.chunk
	return nil
}

// zeroFill writes zeros to [from, to) of f.
func zeroFill(f *os.File, from, to int64) error {
	zeros := make([]byte, 1<<20)
	for off := from; off < to; off += int64(len(zeros)) {
		n := min(int64(len(zeros)), to-off)
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			return err
		}
	}
	return nil
}

// append frames one record, encoded by enc after the LSN, and returns its
// LSN. Callers hold the catalog's commit lock, so LSN order is commit order.
func (w *walLog) append(enc func([]byte) []byte) (uint64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, w.err
	}
	lsn := w.next
	start := len(w.buf)
	w.buf = append(w.buf, make([]byte, walFrame)...)
	w.buf = binary.LittleEndian.AppendUint64(w.buf, lsn)
	w.buf = enc(w.buf)
	payload := w.buf[start+walFrame:]
	if len(payload) > walMaxRecord {
		w.buf = w.buf[:start]
		return 0, sqlerr.New(codeProgramLimit, "commit record of %d bytes exceeds the log's limit", len(payload))
	}
	binary.LittleEndian.PutUint32(w.buf[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(w.buf[start+4:], crc32.Checksum(payload, crcTable))
	w.next++
	w.records++
	return lsn, nil
}

// last is the LSN of the newest appended record.
func (w *walLog) last() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.next - 1
}

// flush returns once every record up to lsn is durable. One caller at a
// time writes and fsyncs; the others wait and are usually covered by its
// flush (group commit).
func (w *walLog) flush(lsn uint64) error {
	w.mu.Lock()
	for w.flushed < lsn && w.err == nil {
		if w.flushing {
			w.cond.Wait()
			continue
		}
		w.flushing = true
		buf, upto := w.buf, w.next-1
		w.buf, w.spare = w.spare[:0], nil
		f, pos, alloc := w.f, w.pos, w.alloc
		w.mu.Unlock()
		var err error
		if end := pos + int64(len(buf)); end > alloc {
			// Rare: grow by whole chunks, durable before the records
			// (written through f: on Linux each write is synchronous).
			grow := (end - alloc + w.chunk - 1) / w.chunk * w.chunk
			err = zeroFill(f, alloc, alloc+grow)
			if err == nil && walSyncFlag == 0 {
				err = f.Sync()
			}
			alloc += grow
		}
		if err == nil {
			// One system call on Linux: the write returns once the
			// records are on disk (walSyncFlag).
			err = w.write(f, buf, pos)
		}
		if err == nil && w.published != nil {
			// Visible before flushed advances, so a committer that finds
			// its record flushed also finds its commit published.
			w.published(upto)
		}
		w.mu.Lock()
		w.flushing = false
		w.spare = buf[:0]
		w.alloc = alloc
		if err == nil {
			w.pos = pos + int64(len(buf))
		}
		if err != nil {
			w.err = sqlerr.Wrap(err, sqlerr.IOError, "could not write the log; the catalog must be reopened: %v", err)
		} else {
			w.flushed = upto
			w.size += int64(len(buf))
			w.flushes++
		}
		w.cond.Broadcast()
	}
	err := w.err
	w.mu.Unlock()
	return err
}

// rotate flushes and starts a new file; the records before it are all in
// older files. Returns the first LSN of the new file.
func (w *walLog) rotate() (uint64, error) {
	if err := w.flush(w.last()); err != nil {
		return 0, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.flushing {
		w.cond.Wait()
	}
	if len(w.buf) > 0 {
		return 0, sqlerr.New(sqlerr.InternalError, "log rotation with unflushed records")
	}
	if err := w.startFile(); err != nil {
		w.err = err
		return 0, err
	}
	w.size = 0
	return w.first, nil
}

// removeBefore deletes log files whose records all precede first.
func (w *walLog) removeBefore(first uint64) {
	files, _ := listWAL(w.dir)
	for _, lf := range files {
		if lf.first < first {
			_ = os.Remove(lf.path)
		}
	}
}

func (w *walLog) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
	if w.err == nil {
		w.err = errClosed()
	}
}

// asyncAppended tells the flusher that a synchronous_commit = off commit
// appended a record it must make durable. The flusher sleeps until told:
// a ticker that woke it every interval cost an idle server, and a server
// of synchronous commits, a thread wake-up each time.
func (w *walLog) asyncAppended() {
	select {
	case w.kick <- struct{}{}:
	default: // already told; its flush covers this record too
	}
}

// flusher runs for synchronous_commit = off: an interval after the first
// asynchronous commit it was told of, it flushes everything appended by
// then, so each such commit is durable within about an interval.
func (w *walLog) flusher(stop <-chan struct{}, done chan<- struct{}, interval time.Duration) {
	defer close(done)
	t := time.NewTimer(interval)
	t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-w.kick:
		}
		t.Reset(interval)
		select {
		case <-stop:
			t.Stop()
			return
		case <-t.C:
		}
		w.mu.Lock()
		pending := w.next-1 > w.flushed && w.err == nil
		lsn := w.next - 1
		w.mu.Unlock()
		if pending {
			_ = w.flush(lsn)
		}
	}
}

type walFile struct {
	path  string
	first uint64
}

func listWAL(dir string) ([]walFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, sqlerr.Wrap(err, sqlerr.IOError, "could not list data directory: %v", err)
	}
	var out []walFile
	for _, e := range entries {
		name := e.Name()
		hex, ok := strings.CutPrefix(name, walPrefix)
		if !ok || !strings.HasSuffix(hex, walSuffix) {
			continue
		}
		first, err := strconv.ParseUint(strings.TrimSuffix(hex, walSuffix), 16, 64)
		if err != nil {
			continue
		}
		out = append(out, walFile{filepath.Join(dir, name), first})
	}
	slices.SortFunc(out, func(a, b walFile) int { return int(a.first - b.first) })
	return out, nil
}

// readWAL calls fn for each intact record after the checkpoint (LSN >
// after), in order, and returns the next LSN. A torn tail of the last file
// is cut off so that new files never follow garbage.
func readWAL(dir string, after uint64, fn func(lsn uint64, payload []byte) error) (uint64, error) {
	files, err := listWAL(dir)
	if err != nil {
		return 0, err
	}
	next := after + 1
	for i, lf := range files {
		data, err := os.ReadFile(lf.path)
		if err != nil {
			return 0, sqlerr.Wrap(err, sqlerr.IOError, "could not read log file %s: %v", lf.path, err)
		}
		lastFile := i == len(files)-1
		off := len(walMagic)
		torn := func(why string) error {
			if !lastFile {
				return sqlerr.New(sqlerr.DataCorrupted, "log file %s is corrupt at byte %d: %s", lf.path, off, why)
			}
			if err := truncateFile(lf.path, int64(off)); err != nil {
				return err
			}
			return io.EOF
		}
		if len(data) < off || string(data[:off]) != walMagic {
			if lastFile {
				// Created but not yet synced: a crash while starting it,
				// before any commit could use it.
				if err := os.Remove(lf.path); err != nil {
					return 0, sqlerr.Wrap(err, sqlerr.IOError, "could not remove log file %s: %v", lf.path, err)
				}
				break
			}
			return 0, sqlerr.New(sqlerr.DataCorrupted, "log file %s has no log header", lf.path)
		}
		stop := false
		for off < len(data) {
			if len(data)-off < walFrame+8 {
				err = torn("incomplete frame")
				stop = true
				break
			}
			n := int(binary.LittleEndian.Uint32(data[off:]))
			sum := binary.LittleEndian.Uint32(data[off+4:])
			if n == 0 && sum == 0 {
				break // the zero-filled rest of the file
			}
			if n < 8 || n > walMaxRecord || len(data)-off-walFrame < n {
				err = torn("incomplete record")
				stop = true
				break
			}
			payload := data[off+walFrame : off+walFrame+n]
			if crc32.Checksum(payload, crcTable) != sum {
				err = torn("checksum mismatch")
				stop = true
				break
			}
			lsn := binary.LittleEndian.Uint64(payload)
			if lsn > after {
				if lsn != next {
					err = torn(fmt.Sprintf("record %d where %d was expected", lsn, next))
					stop = true
					break
				}
				if err := fn(lsn, payload[8:]); err != nil {
					return 0, err
				}
				next = lsn + 1
			} else if lsn+1 > next {
				next = lsn + 1
			}
			off += walFrame + n
		}
		if stop {
			if errors.Is(err, io.EOF) {
				break
			}
			return 0, err
		}
	}
	return next, nil
}

func truncateFile(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err == nil {
		err = f.Truncate(size)
		if err == nil {
			err = f.Sync()
		}
		f.Close()
	}
	if err != nil {
		return sqlerr.Wrap(err, sqlerr.IOError, "could not cut the torn tail of log file %s: %v", path, err)
	}
	return nil
}
