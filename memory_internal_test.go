package asofsql

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

// openLimited opens an in-memory database under limit whose allocator
// the test checks at zero, and whose shared budget it checks at zero at
// the end (every query's account closed and emptied).
func openLimited(t *testing.T, limit int64) *DB {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	db, err := Open(":memory:", WithAllocator(mem), WithMemoryLimit(limit))
	require.NoError(t, err)
	t.Cleanup(func() {
		require.Zero(t, db.budget.Used(), "the server's budget is back at zero")
		require.NoError(t, db.Close())
		mem.AssertSize(t, 0)
	})
	return db
}

func requireOOM(t *testing.T, err error, detail string) {
	t.Helper()
	require.Error(t, err)
	e, ok := sqlerr.As(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, sqlerr.OutOfMemory, e.Code, err.Error())
	require.Equal(t, "out of memory", e.Message)
	require.Contains(t, e.Detail, detail)
}

// drainRows reads c to the end, counting rows.
func drainRows(c *Cursor) (int64, error) {
	defer c.Release()
	var n int64
	for c.Next() {
		n += c.RecordBatch().NumRows()
	}
	return n, c.Err()
}

// TestMemoryLpad: lpad to a billion characters under a small limit fails
// with 53200 before building the value (the reproduction reached
// 4.7 GB), and so does a result too large row by row.
func TestMemoryLpad(t *testing.T) {
	db := openLimited(t, 16<<20)
	s := db.Session()
	defer s.Close()
	ctx := context.Background()
	_, err := s.Exec(ctx, `SELECT length(lpad('x', 1000000000, 'y'))`)
	requireOOM(t, err, "lpad needs 1000000000B more")
	requireOOM(t, err, "memory_limit of 16MB")
	_, err = s.Exec(ctx, `SELECT length(rpad('x', 100000, 'é')) FROM generate_series(1, 1000)`)
	requireOOM(t, err, "memory_limit of 16MB")
	// Under the limit it works.
	c, err := s.Query(ctx, `SELECT length(lpad('x', 100000, 'y')) FROM generate_series(1, 10)`)
	require.NoError(t, err)
	n, err := drainRows(c)
	require.NoError(t, err)
	require.Equal(t, int64(10), n)
}

// TestMemoryRepeat: repeat to a billion characters under 256MB is 53200
// before the value is built; past PostgreSQL's 1 GB field limit it is
// 54000 "requested length too large", as there, whatever the limit.
func TestMemoryRepeat(t *testing.T) {
	db := openLimited(t, 256<<20)
	s := db.Session()
	defer s.Close()
	ctx := context.Background()
	_, err := s.Exec(ctx, `SELECT repeat('x', 1000000000)`)
	requireOOM(t, err, "repeat needs 1000000000B more")
	for _, q := range []string{`SELECT repeat('xx', 600000000)`, `SELECT repeat('x', 1073741820)`} {
		_, err = s.Exec(ctx, q)
		e, ok := sqlerr.As(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, sqlerr.ProgramLimitExceeded, e.Code, q)
		require.Equal(t, "requested length too large", e.Message)
	}
	c, err := s.Query(ctx, `SELECT length(repeat('ab', 100000)) FROM generate_series(1, 10)`)
	require.NoError(t, err)
	n, err := drainRows(c)
	require.NoError(t, err)
	require.Equal(t, int64(10), n)
}

// TestMemoryInList: a long IN list is charged for its syntax tree and
// plan before it is parsed; past the limit it is 53200 (the 60 MB
// statement drove the server past 8 GB).
func TestMemoryInList(t *testing.T) {
	db := openLimited(t, 8<<20)
	s := db.Session()
	defer s.Close()
	ctx := context.Background()
	var sb strings.Builder
	sb.WriteString("SELECT 7 IN (")
	for i := 0; i < 40000; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(strconv.Itoa(i * 3))
	}
	sb.WriteString(")")
	_, err := s.Exec(ctx, sb.String())
	requireOOM(t, err, "parsing the statement needs")
	_, err = s.Query(ctx, sb.String())
	requireOOM(t, err, "parsing the statement needs")
	_, err = s.Prepare(ctx, sb.String(), nil)
	requireOOM(t, err, "parsing the statement needs")
	// A short list runs.
	_, err = s.Exec(ctx, `SELECT 7 IN (1, 2, 7)`)
	require.NoError(t, err)
}

// TestMemoryCeiling: the server's limit is memory_limit's default and
// its ceiling: a session may lower it, not raise it nor set 0 (42501);
// without a server limit any value goes.
func TestMemoryCeiling(t *testing.T) {
	db := openLimited(t, 64<<20)
	s := db.Session()
	defer s.Close()
	ctx := context.Background()
	for _, v := range []string{"0", "'65MB'", "'1TB'"} {
		_, err := s.Exec(ctx, `SET memory_limit = `+v)
		require.Equal(t, sqlerr.InsufficientPrivilege, sqlerr.Code(err), v)
		e, _ := sqlerr.As(err)
		require.Contains(t, e.Message, `permission denied to set parameter "memory_limit"`)
		require.Contains(t, e.Detail, "The server's memory limit is 64MB")
	}
	v, _ := s.Setting("memory_limit")
	require.Equal(t, "64MB", v)
	require.Equal(t, sqlerr.InsufficientPrivilege, sqlerr.Code(s.Set("memory_limit", "0")), "nor as a startup parameter")
	_, err := s.Exec(ctx, `SET memory_limit = '64MB'; SET memory_limit = '64kB'`)
	require.NoError(t, err)
	c, err := s.Query(ctx, `SELECT g FROM generate_series(1, 200000) g ORDER BY g DESC`)
	require.NoError(t, err)
	_, err = drainRows(c)
	requireOOM(t, err, "memory_limit of 64kB (65536 bytes)")
	_, err = s.Exec(ctx, `RESET memory_limit`)
	require.NoError(t, err)
	v, _ = s.Setting("memory_limit")
	require.Equal(t, "64MB", v)

	free, err := Open(":memory:")
	require.NoError(t, err)
	defer free.Close()
	fs := free.Session()
	_, err = fs.Exec(ctx, `SET memory_limit = '1TB'; SET memory_limit = 0`)
	require.NoError(t, err)
}

// sortFitsOnce is a server limit that one sort of 100,000 BIGINTs fits in
// and two do not: a sort by one numeric key keeps its input and 24 bytes a
// row of sort entries (~2.8 MB in all) and needs 24 bytes a row of radix
// scratch more while it sorts (~5.3 MB at the peak); a second sort's peak
// beside the first one's held memory is ~8 MB.
const sortFitsOnce = 6 << 20

// TestMemoryBudgetSharedNewestFails: two sessions' queries share the
// server's limit. Past it, the newest query fails with 53200, whichever
// asks for the memory: the older completes.
func TestMemoryBudgetSharedNewestFails(t *testing.T) {
	const sortQ = `SELECT g FROM generate_series(1, 100000) g ORDER BY g DESC`
	db := openLimited(t, sortFitsOnce)
	ctx := context.Background()
	a, b := db.Session(), db.Session()
	defer a.Close()
	defer b.Close()

	// One sort alone fits.
	c, err := a.Query(ctx, sortQ)
	require.NoError(t, err)
	n, err := drainRows(c)
	require.NoError(t, err)
	require.Equal(t, int64(100000), n)

	// The newer asks: it fails, the older completes.
	older, err := a.Query(ctx, sortQ)
	require.NoError(t, err)
	require.True(t, older.Next()) // the sort holds its input now
	newer, err := b.Query(ctx, sortQ)
	require.NoError(t, err)
	_, err = drainRows(newer)
	requireOOM(t, err, "the newest query is cancelled")
	_, err = drainRows(older)
	require.NoError(t, err)
	require.Equal(t, int64(100000), older.Rows())

	// The older asks while the newer holds memory: the newer is cancelled
	// (its next read fails), the older completes.
	older, err = a.Query(ctx, sortQ)
	require.NoError(t, err)
	newer, err = b.Query(ctx, sortQ)
	require.NoError(t, err)
	require.True(t, newer.Next())
	_, err = drainRows(older)
	require.NoError(t, err)
	require.Equal(t, int64(100000), older.Rows())
	_, err = drainRows(newer)
	requireOOM(t, err, "the newest query is cancelled")

	// Both sessions go on.
	for _, s := range []*Session{a, b} {
		c, err := s.Query(ctx, sortQ)
		require.NoError(t, err)
		_, err = drainRows(c)
		require.NoError(t, err)
	}
}

// TestMemoryDoomedWhileIdle: a query the budget fails while nobody reads
// it (a slow client) is cancelled at once: its context carries the
// 53200.
func TestMemoryDoomedWhileIdle(t *testing.T) {
	const sortQ = `SELECT g FROM generate_series(1, 100000) g ORDER BY g DESC`
	db := openLimited(t, sortFitsOnce)
	ctx := context.Background()
	a, b := db.Session(), db.Session()
	defer a.Close()
	defer b.Close()
	older, err := a.Query(ctx, sortQ)
	require.NoError(t, err)
	newer, err := b.Query(ctx, sortQ)
	require.NoError(t, err)
	require.True(t, newer.Next())
	require.True(t, older.Next())
	select {
	case <-newer.ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the newer query was not cancelled")
	}
	_, err = drainRows(newer)
	requireOOM(t, err, "the newest query is cancelled")
	_, err = drainRows(older)
	require.NoError(t, err)
}

// TestMemoryInsertKeptByCatalog: rows an INSERT wrote stay in the
// catalog (an in-memory table keeps the batches the query built); they
// leave the budget with the query, so writes do not use it up.
func TestMemoryInsertKeptByCatalog(t *testing.T) {
	db := openLimited(t, 2<<20)
	s := db.Session()
	defer s.Close()
	ctx := context.Background()
	_, err := s.Exec(ctx, `CREATE TABLE t (x BIGINT)`)
	require.NoError(t, err)
	for i := 0; i < 6; i++ {
		_, err = s.Exec(ctx, `INSERT INTO t SELECT g FROM generate_series(1, 100000) g`)
		require.NoError(t, err, "insert %d", i)
		require.Zero(t, db.budget.Used())
	}
	c, err := s.Query(ctx, `SELECT count(*) FROM t`)
	require.NoError(t, err)
	_, err = drainRows(c)
	require.NoError(t, err)
}

// peakAllocator records the most bytes live at once.
type peakAllocator struct {
	memory.Allocator
	mu         sync.Mutex
	live, peak int64
}

func (p *peakAllocator) note(n int64) {
	p.mu.Lock()
	p.live += n
	p.peak = max(p.peak, p.live)
	p.mu.Unlock()
}

func (p *peakAllocator) Allocate(size int) []byte {
	b := p.Allocator.Allocate(size)
	p.note(int64(len(b)))
	return b
}

func (p *peakAllocator) Reallocate(size int, b []byte) []byte {
	old := len(b)
	nb := p.Allocator.Reallocate(size, b)
	p.note(int64(len(nb) - old))
	return nb
}

func (p *peakAllocator) Free(b []byte) {
	p.note(-int64(len(b)))
	p.Allocator.Free(b)
}

// TestMemoryOvershoot: string results and string_agg's state ask the
// account before they grow, so a query fails with 53200 at its limit, not a
// batch of long strings past it. Each statement below builds, in one
// batch, tens of MB beyond a 16 MB limit.
func TestMemoryOvershoot(t *testing.T) {
	const limit = 16 << 20
	peak := &peakAllocator{Allocator: memory.NewCheckedAllocator(memory.NewGoAllocator())}
	db, err := Open(":memory:", WithAllocator(peak), WithMemoryLimit(limit))
	require.NoError(t, err)
	defer func() {
		require.Zero(t, db.budget.Used())
		require.NoError(t, db.Close())
		peak.Allocator.(*memory.CheckedAllocator).AssertSize(t, 0)
	}()
	s := db.Session()
	defer s.Close()
	ctx := context.Background()
	_, err = s.Exec(ctx, `CREATE TABLE t (s text)`)
	require.NoError(t, err)
	// 100 rows of 40 kB (4 MB), written by the catalog, read by the queries.
	_, err = s.Exec(ctx, `INSERT INTO t SELECT repeat(g::text, 40000 / length(g::text)) FROM generate_series(1, 100) g`)
	require.NoError(t, err)
	for _, tc := range []struct{ sql, detail string }{
		{`SELECT length(s || s || s || s || s || s || s || s || s || s) FROM t`, "a string result needs"},
		{`SELECT length(concat(s, s, s, s, s, s, s, s, s, s)) FROM t`, "a string result needs"},
		{`SELECT length(upper(s || s || s || s || s || s || s || s)) FROM t`, "a string result needs"},
		{`SELECT length(string_agg(s || s, ',')) FROM t`, "string_agg needs"},
		{`SELECT length('` + strings.Repeat("z", 30000) + `') FROM generate_series(1, 1000)`, "a literal needs"},
	} {
		peak.mu.Lock()
		peak.peak = peak.live
		base := peak.live
		peak.mu.Unlock()
		_, err := s.Exec(ctx, tc.sql)
		requireOOM(t, err, tc.detail)
		requireOOM(t, err, "memory_limit of 16MB")
		// What remains past the limit is at most the buffers of one
		// batch whose size does not follow a value (offsets, validity).
		require.LessOrEqual(t, peak.peak-base, int64(limit+1<<20), tc.sql[:min(len(tc.sql), 60)])
	}
}

// TestMemoryAsofRightHeld: an ASOF RIGHT join holds every right row no
// later left row has decided yet (here each is its key's latest, until the
// left input ends); those rows count against memory_limit (53200), and
// the same join fits under a larger limit.
func TestMemoryAsofRightHeld(t *testing.T) {
	db := openLimited(t, 256<<20)
	s := db.Session()
	defer s.Close()
	ctx := context.Background()
	_, err := s.Exec(ctx, `CREATE TABLE r (t BIGINT, k BIGINT, v BIGINT) ORDER BY (t);
		CREATE TABLE l (t BIGINT, k BIGINT) ORDER BY (t);
		INSERT INTO r SELECT g, g, g FROM generate_series(1, 60000) g;
		INSERT INTO l VALUES (100000, 0)`)
	require.NoError(t, err)
	q := `SELECT r.t FROM l ASOF RIGHT JOIN r ON l.k = r.k AND l.t >= r.t AND r.v % 7 <> 0`
	_, err = s.Exec(ctx, `SET memory_limit = '1MB'`)
	require.NoError(t, err)
	c, err := s.Query(ctx, q)
	if err == nil {
		_, err = drainRows(c)
	}
	requireOOM(t, err, "memory_limit of 1MB")
	_, err = s.Exec(ctx, `SET memory_limit = '256MB'`)
	require.NoError(t, err)
	c, err = s.Query(ctx, q)
	require.NoError(t, err)
	n, err := drainRows(c)
	require.NoError(t, err)
	require.Equal(t, int64(60000), n, "every right row is unmatched")
}
