package catalog

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
)

// Memory is the Open path of a catalog that keeps everything in memory.
const Memory = ":memory:"

// defaultLogPreallocate is Options.LogPreallocate's default (tests, which
// open many small catalogs, use less).
var defaultLogPreallocate int64 = 8 << 20

// Options tunes a catalog. The zero value is ready to use.
type Options struct {
	// Allocator allocates every Arrow buffer the catalog creates (default
	// memory.DefaultAllocator).
	Allocator memory.Allocator
	// RunRows bounds the rows a statement keeps in memory: a larger one
	// writes sorted runs of RunRows rows as segment files of its own as it
	// goes, so a load's memory stays bounded (default 1<<20).
	RunRows int
	// LogRows: a statement of at most this many rows commits them through
	// the log into the table's in-memory rows; a larger one writes them as
	// segment files of its own, which is cheaper for bulk loads than
	// logging and later checkpointing them (default 1<<16).
	LogRows int
	// BatchRows is the size of the batches stored in segments and the
	// default scan batch size (default 8192).
	BatchRows int
	// CompactRows: segments with fewer rows are "small" and get merged by
	// compaction (default 1<<16).
	CompactRows int
	// AutoCompact is the number of small segments in a table that makes a
	// commit schedule a background compaction of it (default 8); negative
	// disables background compaction (Compact still works).
	AutoCompact int
	// CheckpointBytes: once the log has grown this much since the last
	// checkpoint, a background checkpoint writes the in-memory rows out
	// as segments and truncates the log (default 64 MiB).
	CheckpointBytes int64
	// CheckpointRows: so many rows held in memory also trigger one
	// (default 1<<20). Negative disables background checkpoints
	// (Checkpoint and Close still run them).
	CheckpointRows int
	// LogPreallocate: log files are filled with zeros this far ahead of
	// the records (default 8 MiB), so the durable write of a commit flushes
	// its data only, not a grown file size (one journal commit less per
	// flush; PostgreSQL zero-fills its WAL segments for the same reason).
	// A zero length field ends a file's records.
	LogPreallocate int64
	// FlushInterval is how often the log is flushed for commits that did
	// not wait for it (synchronous_commit = off; default 10ms).
	FlushInterval time.Duration

	// inspect (tests) recovers without the end-of-recovery checkpoint, so
	// a look at a crashed directory changes nothing but the log file it
	// starts.
	inspect bool
	// afterLogAppend (tests) runs in a commit between the append of its
	// log record and its state joining the pending ones: a flush there is
	// the flusher's tick (or another committer's flush) landing in that
	// window.
	afterLogAppend func()
}

func (o *Options) fill() {
	if o.Allocator == nil {
		o.Allocator = memory.DefaultAllocator
	}
	if o.RunRows <= 0 {
		o.RunRows = 1 << 20
	}
	if o.LogRows <= 0 {
		o.LogRows = 1 << 16
	}
	if o.BatchRows <= 0 {
		o.BatchRows = 8192
	}
	if o.CompactRows <= 0 {
		o.CompactRows = 1 << 16
	}
	if o.AutoCompact == 0 {
		o.AutoCompact = 8
	}
	if o.CheckpointBytes <= 0 {
		o.CheckpointBytes = 64 << 20
	}
	if o.CheckpointRows == 0 {
		o.CheckpointRows = 1 << 20
	}
	if o.LogPreallocate <= 0 {
		o.LogPreallocate = defaultLogPreallocate
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = 10 * time.Millisecond
	}
}

// Catalog is a set of tables, in memory or in a data directory. All methods
// are safe for concurrent use.
type Catalog struct {
	dir  string // "" in memory mode
	mem  memory.Allocator
	opts Options
	temp bool // a session's temporary catalog (NewTemp)

	// commitMu serializes commits: head, the log's record order and
	// broken change only while it is held. mu guards cur, pending and
	// closed and is held only for pointer swaps, so taking a snapshot
	// never waits for a commit or a log flush.
	commitMu sync.Mutex
	head     *state // the newest committed state (its record may not be durable yet)
	mu       sync.Mutex
	cur      *state   // the published state snapshots see
	pending  []*state // committed after cur, waiting for their log flush
	closed   bool
	broken   error

	wal *walLog
	// dmlMu: statements that remove or rewrite rows (DELETE, UPDATE,
	// TRUNCATE, ALTER) hold it shared from their first statement to the
	// end of their transaction; checkpoints and compactions take it
	// exclusively (trying, never waiting), so segment positions a
	// transaction recorded stay valid until it commits.
	dmlMu sync.RWMutex

	nextSegID, nextOrder, nextTable atomic.Uint64

	lock *os.File

	maintMu  sync.Mutex // one compaction or checkpoint at a time
	bgCh     chan string
	ckptCh   chan struct{}
	bgCancel context.CancelFunc
	bgDone   chan struct{}
	flStop   chan struct{}
	flDone   chan struct{}

	defMu    sync.Mutex
	deferred []*segment // retired file segments waiting for a checkpoint
	ckptLSN  atomic.Uint64
	memRows  atomic.Int64 // rows appended to append segments since the last checkpoint
	// stats for tests and benchmarks (Stats)
	checkpoints atomic.Int64
	segReads    atomic.Int64
	segsDropped atomic.Int64
	replayed    bool // Open replayed log records
}

// state is one committed version of the catalog: immutable once built.
// It holds a reference on each of its segments; snapshots hold references on
// the state.
type state struct {
	refs   atomic.Int64
	tables map[string]*tableState
	views  map[string]*ViewDef
	lsn    uint64 // the log record that produced it (0: none)
}

// tableState is one table in one state; segs are in insertion order
// (ascending segment order).
type tableState struct {
	meta *tableMeta
	segs []segRef
	// open is the append segment that takes the table's next small
	// commit (the last of segs), nil to start a new one.
	open *segment
}

func newState(tables map[string]*tableState, views map[string]*ViewDef) *state {
	st := &state{tables: tables, views: views}
	st.refs.Store(1)
	for _, ts := range tables {
		for _, s := range ts.segs {
			s.s.retain()
		}
	}
	return st
}

func (st *state) retain() { st.refs.Add(1) }

func (st *state) release() {
	if st.refs.Add(-1) != 0 {
		return
	}
	for _, ts := range st.tables {
		for _, s := range ts.segs {
			s.s.release()
		}
	}
}

func (st *state) names() []string {
	return slices.Sorted(maps.Keys(st.tables))
}

// Open opens the catalog at dir (created if absent), or an empty in-memory
// catalog when dir is Memory. A data directory is locked against a second
// opener; its log is replayed after the last checkpoint, and files a crash
// left behind are deleted.
func Open(ctx context.Context, dir string, opts Options) (*Catalog, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	opts.fill()
	c := &Catalog{mem: opts.Allocator, opts: opts}
	st := newState(map[string]*tableState{}, map[string]*ViewDef{})
	if dir != Memory {
		if dir == "" {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "catalog directory must not be empty (use %q for an in-memory catalog)", Memory)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, sqlerr.Wrap(err, sqlerr.IOError, "bad data directory %q: %v", dir, err)
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return nil, sqlerr.Wrap(err, sqlerr.IOError, "could not create data directory: %v", err)
		}
		c.dir = abs
		if c.lock, err = lockDir(abs); err != nil {
			return nil, err
		}
		st, err = c.recover()
		if err != nil {
			unlockDir(c.lock)
			return nil, err
		}
	}
	c.head = st
	st.retain()
	c.cur = st
	if c.replayed && !opts.inspect {
		// End-of-recovery checkpoint: the manifest then holds everything
		// replayed, so files no longer named anywhere can go.
		err := c.checkpoint(ctx, true)
		if err == nil {
			err = collectGarbage(c.dir, c.head.tables)
		}
		if err != nil {
			c.wal.close()
			c.cur.release()
			c.head.release()
			unlockDir(c.lock)
			return nil, err
		}
	}
	bgCtx, cancel := context.WithCancel(context.Background())
	c.bgCh = make(chan string, 64)
	c.ckptCh = make(chan struct{}, 1)
	c.bgCancel = cancel
	c.bgDone = make(chan struct{})
	go c.backgroundLoop(bgCtx)
	if c.wal != nil {
		c.flStop, c.flDone = make(chan struct{}), make(chan struct{})
		go c.wal.flusher(c.flStop, c.flDone, opts.FlushInterval)
	}
	return c, nil
}

// Close flushes the log, checkpoints (so the next Open replays nothing),
// stops background work and releases the catalog's reference on its data.
// Snapshots and readers still open stay valid until released. Close is
// idempotent.
func (c *Catalog) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	var err error
	if c.wal != nil {
		// A clean shutdown leaves nothing to replay (unless a transaction
		// that deletes rows is still open: then the log stays).
		if err = c.checkpoint(context.Background(), true); err == errBusy {
			err = nil
		}
	}
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.bgCancel()
	<-c.bgDone
	if c.flStop != nil {
		close(c.flStop)
		<-c.flDone
	}
	// Wait for a commit already past its closed check, then drop the state.
	c.commitMu.Lock()
	if c.wal != nil {
		if ferr := c.wal.flush(c.wal.last()); err == nil && ferr != nil {
			err = ferr
		}
		c.wal.close()
	}
	c.mu.Lock()
	for _, p := range c.pending {
		p.release()
	}
	c.pending = nil
	c.cur.release()
	c.cur = nil
	c.mu.Unlock()
	c.head.release()
	c.head = nil
	c.commitMu.Unlock()
	if c.lock != nil {
		unlockDir(c.lock)
	}
	return err
}

func errClosed() error {
	return sqlerr.New(sqlerr.InvalidParameterValue, "catalog is closed")
}

// Snapshot returns a consistent read view of the current committed state.
// It must be released.
func (c *Catalog) Snapshot() (*Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.cur == nil {
		return nil, errClosed()
	}
	c.cur.retain()
	return &Snapshot{c: c, st: c.cur}, nil
}

// Table describes a table as currently committed; 42P01 if it does not
// exist.
func (c *Catalog) Table(name string) (*TableInfo, error) {
	s, err := c.Snapshot()
	if err != nil {
		return nil, err
	}
	defer s.Release()
	return s.Table(name)
}

// Tables lists the committed tables' names, sorted.
func (c *Catalog) Tables() []string {
	s, err := c.Snapshot()
	if err != nil {
		return nil
	}
	defer s.Release()
	return s.Tables()
}

// builder is the state a commit is building: copies of head's maps, the
// log record being encoded, and segments whose creator reference goes
// once the state is built.
type builder struct {
	c       *Catalog
	tables  map[string]*tableState
	views   map[string]*ViewDef
	rec     []byte
	logged  bool
	created []*segment
	appends []pendingAppend
	replay  bool
}

// byID finds a table of the state being built by id.
func (b *builder) byID(id uint64) (string, *tableState) {
	for name, ts := range b.tables {
		if ts.meta.id == id {
			return name, ts
		}
	}
	return "", nil
}

// commit runs apply on a copy of head under the commit lock, logs the
// record it encoded and publishes the result: at once in memory, after
// ordering the log record when wait is false (synchronous_commit = off),
// else once the record is durable, sharing the flush with concurrent
// commits. apply may replace map entries but must not mutate tableStates.
func (c *Catalog) commit(apply func(b *builder) error, wait bool) error {
	c.commitMu.Lock()
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed || c.head == nil {
		c.commitMu.Unlock()
		return errClosed()
	}
	if c.broken != nil {
		c.commitMu.Unlock()
		return c.broken
	}
	b := &builder{c: c, tables: maps.Clone(c.head.tables), views: maps.Clone(c.head.views)}
	if err := apply(b); err != nil {
		c.commitMu.Unlock()
		b.dropAppends()
		b.releaseCreated()
		return err
	}
	b.runAppends()
	next := newState(b.tables, b.views)
	b.releaseCreated()
	next.lsn = c.head.lsn
	logged := c.wal != nil && b.logged
	if logged {
		lsn, err := c.wal.append(func(dst []byte) []byte { return append(dst, b.rec...) })
		if err != nil {
			c.broken = err
			c.commitMu.Unlock()
			next.release()
			return err
		}
		next.lsn = lsn
		if !wait {
			c.wal.asyncAppended()
		}
		if c.opts.afterLogAppend != nil {
			c.opts.afterLogAppend()
		}
	}
	old := c.head
	c.head = next
	c.retire(old, next)
	next.retain() // for cur or pending
	c.mu.Lock()
	if !logged || !wait {
		for _, p := range c.pending {
			p.release()
		}
		c.pending = c.pending[:0]
		c.cur.release()
		c.cur = next
	} else {
		c.pending = append(c.pending, next)
	}
	c.mu.Unlock()
	c.commitMu.Unlock()
	old.release()
	c.schedule(old, next)
	if logged && wait {
		if err := c.wal.flush(next.lsn); err != nil {
			return err
		}
		// The record may have been flushed (by the flusher or another
		// committer) before next joined pending above: that flush's
		// publish missed next, and flush returns at once since the record
		// is durable. Publish it here, so a commit is always visible when
		// it returns (a no-op when the flush already did).
		c.publish(next.lsn)
	}
	return nil
}

func (b *builder) releaseCreated() {
	for _, s := range b.created {
		s.release()
	}
	b.created = nil
}

// publish makes the newest pending state whose record is durable (LSN <=
// lsn) the one snapshots see; called by the log after each flush.
func (c *Catalog) publish(lsn uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := 0
	for k < len(c.pending) && c.pending[k].lsn <= lsn {
		k++
	}
	if k == 0 {
		return
	}
	for _, p := range c.pending[:k-1] {
		p.release()
	}
	c.cur.release()
	c.cur = c.pending[k-1]
	c.pending = append(c.pending[:0], c.pending[k:]...)
}

// retire marks the segments a commit removed: a never-logged one's memory
// and files go with its last reference; a file the log may still name on
// replay stays until a checkpoint has made its removal durable.
func (c *Catalog) retire(old, next *state) {
	live := map[*segment]bool{}
	for _, ts := range next.tables {
		for _, s := range ts.segs {
			live[s.s] = true
		}
	}
	for _, ts := range old.tables {
		for _, s := range ts.segs {
			if live[s.s] {
				continue
			}
			if c.wal != nil {
				s.s.goneLSN.Store(next.lsn)
				s.s.retired.Store(true)
			} else {
				s.s.obsolete.Store(true)
			}
		}
	}
}

// deferDelete queues a retired file until a checkpoint covers its removal.
func (c *Catalog) deferDelete(s *segment) {
	if s.goneLSN.Load() <= c.ckptLSN.Load() {
		_ = os.Remove(s.path)
		return
	}
	c.defMu.Lock()
	c.deferred = append(c.deferred, s)
	c.defMu.Unlock()
}

// schedule queues background compaction and checkpoints after a commit.
func (c *Catalog) schedule(old, next *state) {
	if c.opts.AutoCompact > 0 {
		for name, ts := range next.tables {
			if old.tables[name] != ts && c.smallSegments(ts) >= c.opts.AutoCompact {
				select {
				case c.bgCh <- name:
				default: // a compaction is already queued; it will catch up
				}
			}
		}
	}
	if c.wal != nil && c.opts.CheckpointRows > 0 && c.needCheckpoint() {
		select {
		case c.ckptCh <- struct{}{}:
		default:
		}
	}
}

func (c *Catalog) needCheckpoint() bool {
	c.wal.mu.Lock()
	size := c.wal.size + int64(len(c.wal.buf))
	c.wal.mu.Unlock()
	return size >= c.opts.CheckpointBytes || c.memRows.Load() >= int64(c.opts.CheckpointRows)
}

// smallSegments counts the file (or sorted memory) segments compaction
// would merge.
func (c *Catalog) smallSegments(ts *tableState) int {
	n := 0
	for _, s := range ts.segs {
		if s.s.app == nil && s.n < int64(c.opts.CompactRows) {
			n++
		}
	}
	return n
}

func (c *Catalog) backgroundLoop(ctx context.Context) {
	defer close(c.bgDone)
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case name := <-c.bgCh:
			// Errors are not fatal: the table may be gone, and a failed
			// compaction leaves the table as it was.
			_ = c.Compact(ctx, name)
		case <-c.ckptCh:
			if err := c.checkpoint(ctx, false); err == errBusy {
				retry.Reset(50 * time.Millisecond)
			}
		case <-retry.C:
			if c.needCheckpoint() {
				if err := c.checkpoint(ctx, false); err == errBusy {
					retry.Reset(50 * time.Millisecond)
				}
			}
		}
	}
}

// Snapshot is a consistent, immutable view of the catalog. Scans from it see
// exactly the statements committed before it was taken. Safe for
// concurrent use; Release once done (readers it opened stay valid).
type Snapshot struct {
	c        *Catalog
	st       *state
	released atomic.Bool
}

// Release drops the snapshot's hold on its segments. Idempotent.
func (s *Snapshot) Release() {
	if s.released.CompareAndSwap(false, true) {
		s.st.release()
	}
}

// Clone returns another hold on the same view, released on its own (a
// transaction that reads one snapshot hands each statement a clone).
func (s *Snapshot) Clone() (*Snapshot, error) {
	if s.released.Load() {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "snapshot already released")
	}
	s.st.retain()
	return &Snapshot{c: s.c, st: s.st}, nil
}

// Table describes a table in the snapshot; 42P01 if absent.
func (s *Snapshot) Table(name string) (*TableInfo, error) {
	ts, err := s.table(name)
	if err != nil {
		return nil, err
	}
	return ts.meta.info(ts.segs), nil
}

// Tables lists the snapshot's table names, sorted.
func (s *Snapshot) Tables() []string { return s.st.names() }

func (s *Snapshot) table(name string) (*tableState, error) {
	if s.released.Load() {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "snapshot already released")
	}
	ts := s.st.tables[name]
	if ts == nil {
		return nil, errNoTable(name)
	}
	return ts, nil
}

func errNoTable(name string) error {
	return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
}

// Stats are counters of the catalog's work since Open, for tests and
// monitoring.
type Stats struct {
	// SegmentReads counts the opening of immutable segments (file or
	// memory) to read their rows: scans, DELETE and UPDATE, compaction.
	// The in-memory append segments of recent rows are not counted.
	SegmentReads int64
	// SegmentsDeletedUnread counts the immutable segments a DELETE removed
	// whole by their statistics, without reading them (retention); a
	// DELETE that rolls back still counts them.
	SegmentsDeletedUnread int64
	// Checkpoints counts completed checkpoints.
	Checkpoints int64
	// LogRecords counts the commits written to the log (one record each)
	// and LogFlushes the write-and-fdatasync rounds that made them
	// durable: group commit makes the second far smaller than the first
	// when commits run concurrently. Both are 0 without a data directory.
	LogRecords, LogFlushes int64
}

// Stats returns the catalog's counters.
func (c *Catalog) Stats() Stats {
	st := Stats{SegmentReads: c.segReads.Load(), SegmentsDeletedUnread: c.segsDropped.Load(),
		Checkpoints: c.checkpoints.Load()}
	if w := c.wal; w != nil {
		w.mu.Lock()
		st.LogRecords, st.LogFlushes = int64(w.records), int64(w.flushes)
		w.mu.Unlock()
	}
	return st
}
