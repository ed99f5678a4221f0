package catalog

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
)

// Memory is the Open path of a catalog that keeps everything in memory.
const Memory = ":memory:"

// Options tunes a catalog. The zero value is ready to use.
type Options struct {
	// Allocator allocates every Arrow buffer the catalog creates (default
	// memory.DefaultAllocator).
	Allocator memory.Allocator
	// RunRows bounds the rows an ordered-table write sorts in memory before
	// it writes them as one sorted segment; it bounds a load's memory
	// (default 1<<20). Unordered tables roll segments at the same size.
	RunRows int
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
}

func (o *Options) fill() {
	if o.Allocator == nil {
		o.Allocator = memory.DefaultAllocator
	}
	if o.RunRows <= 0 {
		o.RunRows = 1 << 20
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
}

// Catalog is a set of tables, in memory or in a data directory. All methods
// are safe for concurrent use.
type Catalog struct {
	dir  string // "" in memory mode
	mem  memory.Allocator
	opts Options

	// commitMu serializes commits (manifest write and fsyncs included) and
	// guards broken; cur changes only while it is held. mu guards cur and
	// closed and is held only for pointer swaps and reference counts, so
	// taking a snapshot never waits for a commit's fsyncs.
	commitMu sync.Mutex
	mu       sync.Mutex
	cur      *state
	closed   bool
	// broken is set when a manifest rename happened but its directory
	// fsync failed: the durable state is unknown, so nothing more commits.
	broken error

	nextSegID, nextOrder, nextTable atomic.Uint64

	lock *os.File

	compactMu sync.Mutex // one compaction at a time
	bgCh      chan string
	bgCancel  context.CancelFunc
	bgDone    chan struct{}
}

// state is one committed version of the catalog: immutable once published.
// It holds a reference on each of its segments; snapshots hold references on
// the state.
type state struct {
	refs   atomic.Int64
	tables map[string]*tableState
}

// tableState is one table in one state; segs are in insertion order.
type tableState struct {
	meta *tableMeta
	segs []*segment
}

func newState(tables map[string]*tableState) *state {
	st := &state{tables: tables}
	st.refs.Store(1)
	for _, ts := range tables {
		for _, s := range ts.segs {
			s.retain()
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
			s.release()
		}
	}
}

func (st *state) names() []string {
	return slices.Sorted(maps.Keys(st.tables))
}

// Open opens the catalog at dir (created if absent), or an empty in-memory
// catalog when dir is Memory. A data directory is locked against a second
// opener; files a crash left behind are deleted.
func Open(ctx context.Context, dir string, opts Options) (*Catalog, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	opts.fill()
	c := &Catalog{mem: opts.Allocator, opts: opts}
	tables := map[string]*tableState{}
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
		m, err := readManifest(abs)
		if err == nil {
			tables, err = fromManifest(abs, m)
		}
		if err == nil {
			err = collectGarbage(abs, tables)
		}
		if err != nil {
			unlockDir(c.lock)
			return nil, err
		}
		c.nextSegID.Store(m.NextSegment)
		c.nextOrder.Store(m.NextOrder)
		c.nextTable.Store(m.NextTable)
	}
	c.cur = newState(tables)
	if opts.AutoCompact > 0 {
		bgCtx, cancel := context.WithCancel(context.Background())
		c.bgCh = make(chan string, 64)
		c.bgCancel = cancel
		c.bgDone = make(chan struct{})
		go c.compactLoop(bgCtx)
	}
	return c, nil
}

// Close stops background compaction and releases the catalog's reference on
// its data. Snapshots and readers still open stay valid until released.
// Close is idempotent.
func (c *Catalog) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	if c.bgCancel != nil {
		c.bgCancel()
		<-c.bgDone
	}
	// Wait for a commit already past its closed check, then drop the state.
	c.commitMu.Lock()
	c.mu.Lock()
	c.cur.release()
	c.cur = nil
	c.mu.Unlock()
	c.commitMu.Unlock()
	if c.lock != nil {
		unlockDir(c.lock)
	}
	return nil
}

func errClosed() error {
	return sqlerr.New(sqlerr.InvalidParameterValue, "catalog is closed")
}

// Snapshot returns a consistent read view of the current committed state.
// It must be released.
func (c *Catalog) Snapshot() (*Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
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

// commit runs apply on a copy of the current tables under the commit lock
// and, if it succeeds, publishes the result: in a data directory by writing
// the manifest (the commit point), then by swapping the in-memory state.
// apply may replace entries of the map but must not mutate tableStates.
func (c *Catalog) commit(apply func(tables map[string]*tableState) error) error {
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return errClosed()
	}
	if c.broken != nil {
		return c.broken
	}
	tables := maps.Clone(c.cur.tables)
	if err := apply(tables); err != nil {
		return err
	}
	next := newState(tables)
	if c.dir != "" {
		// New segment files must be durable in the directory before the
		// manifest names them.
		err := syncDir(c.dir)
		if err == nil {
			err = writeManifest(c.dir, c.toManifest(next))
		}
		if err != nil {
			next.release()
			return err
		}
		if err := syncDir(c.dir); err != nil {
			c.broken = sqlerr.Wrap(err, sqlerr.IOError, "catalog stopped after a failed directory sync; reopen it: %v", err)
			next.release()
			return c.broken
		}
	}
	c.mu.Lock()
	old := c.cur
	c.cur = next
	c.mu.Unlock()
	live := map[*segment]bool{}
	for _, ts := range next.tables {
		for _, s := range ts.segs {
			live[s] = true
		}
	}
	for _, ts := range old.tables {
		for _, s := range ts.segs {
			if !live[s] {
				s.obsolete.Store(true)
			}
		}
	}
	old.release()
	if c.bgCh != nil {
		for name, ts := range next.tables {
			if old.tables[name] != ts && c.smallSegments(ts) >= c.opts.AutoCompact {
				select {
				case c.bgCh <- name:
				default: // a compaction is already queued; it will catch up
				}
			}
		}
	}
	return nil
}

func (c *Catalog) smallSegments(ts *tableState) int {
	n := 0
	for _, s := range ts.segs {
		if s.rows < int64(c.opts.CompactRows) {
			n++
		}
	}
	return n
}

func (c *Catalog) compactLoop(ctx context.Context) {
	defer close(c.bgDone)
	for {
		select {
		case <-ctx.Done():
			return
		case name := <-c.bgCh:
			// Errors are not fatal: the table may be gone, and a failed
			// compaction leaves the table as it was.
			_ = c.Compact(ctx, name)
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
