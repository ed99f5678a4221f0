package asofsql

import (
	"context"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/exec/memacct"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
)

// DB is an open database.
type DB struct {
	cat  *catalog.Catalog
	opts options
	// budget is the memory all queries share (WithMemoryLimit); nil
	// without a limit.
	budget *memacct.Budget
}

type options struct {
	mem         memory.Allocator
	memoryLimit int64
	fileDir     string
	workers     int
	minParallel *int64 // WithMinParallelTableScanSize (parallel_settings.go)
}

// Option configures Open.
type Option func(*options)

// WithAllocator makes every Arrow buffer come from mem (tests pass a
// memory.CheckedAllocator).
func WithAllocator(mem memory.Allocator) Option { return func(o *options) { o.mem = mem } }

// WithMemoryLimit bounds the memory of queries, in bytes: it is the
// default of each session's memory_limit (what one query may hold), the
// ceiling a session may lower but not raise (SET above it, or to 0, is
// 42501), and the budget all running queries share (past it the newest
// fails with 53200). Without it (or with 0) there is no ceiling and no
// shared budget, and memory_limit defaults to 0, no limit.
func WithMemoryLimit(bytes int64) Option { return func(o *options) { o.memoryLimit = bytes } }

// WithWorkers sets the database's default degree of parallelism per query
// (max_parallel_workers_per_gather: the most workers a gather gets; every
// core, AllCores(), when not given; 1 for serial plans). SET changes it for
// a session and RESET returns to it.
func WithWorkers(n int) Option { return func(o *options) { o.workers = n } }

// Open opens the database at dsn: ":memory:" for a private in-memory
// database, or a directory path (optionally prefixed "file:"), created if
// missing.
func Open(dsn string, opts ...Option) (*DB, error) {
	o := options{mem: memory.DefaultAllocator}
	for _, f := range opts {
		f(&o)
	}
	dir := strings.TrimPrefix(dsn, "file:")
	if dir == "" {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "empty data source name: use %q or a directory", catalog.Memory)
	}
	cat, err := catalog.Open(context.Background(), dir, catalog.Options{Allocator: o.mem})
	if err != nil {
		return nil, err
	}
	db := &DB{cat: cat, opts: o}
	if o.memoryLimit > 0 {
		db.budget = memacct.NewBudget(o.memoryLimit)
	}
	return db, nil
}

// workers is the database's default degree of parallelism.
func (db *DB) workers() int {
	if db.opts.workers > 0 {
		return db.opts.workers
	}
	// Every core, as the issue asks: the planner gives each gather the
	// degree its input pays for (min_parallel_table_scan_size), so small
	// statements still get serial plans.
	return AllCores()
}

// Close releases the database; results still being read fail afterwards.
func (db *DB) Close() error { return db.cat.Close() }

// Table describes a table as last committed: its columns, their types and
// its declared ordering. A missing table is 42P01.
func (db *DB) Table(name string) (*catalog.TableInfo, error) { return db.cat.Table(name) }

// Stats are the storage's counters since Open: segments read, checkpoints,
// and the log's records (commits) and flushes (fdatasyncs), whose ratio
// shows how well concurrent commits share flushes.
func (db *DB) Stats() catalog.Stats { return db.cat.Stats() }

// Result is what Exec reports of the last statement it ran.
type Result struct {
	// Tag is the Postgres command tag: "CREATE TABLE", "INSERT 0 3",
	// "SELECT 2", ...
	Tag string
	// RowsAffected counts the rows inserted or returned.
	RowsAffected int64
}

// Query runs one row-returning statement (SELECT, EXPLAIN, SHOW) in a
// fresh session and streams its result. The reader is a *Cursor.
func (db *DB) Query(ctx context.Context, sql string, args ...any) (array.RecordReader, error) {
	c, err := db.Session().Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Exec runs every statement in sql in order in a fresh session, each
// committing on its own unless the string holds BEGIN ... COMMIT, and
// stops at the first error. It reports the last statement's result.
func (db *DB) Exec(ctx context.Context, sql string, args ...any) (Result, error) {
	s := db.Session()
	defer s.Close() // rolls back a block the string left open
	return s.Exec(ctx, sql, args...)
}

// Explain plans one statement and returns its EXPLAIN text: one node a
// line, each with its ordering, at the database's default degree of
// parallelism (WithWorkers).
func (db *DB) Explain(ctx context.Context, sql string) (string, error) {
	st, err := parseSingle(ctx, sql)
	if err != nil {
		return "", err
	}
	snap, err := db.cat.Snapshot()
	if err != nil {
		return "", err
	}
	defer snap.Release()
	p, err := planner.BuildContext(ctx, snap, st, &planner.Options{Workers: db.workers(), MinParallelBytes: db.minParallel()})
	if err != nil {
		return "", err
	}
	if e, ok := p.(*planner.Explain); ok {
		p = e.Stmt
	}
	return planner.ExplainText(p), nil
}
