package asofsql

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/lower"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// DB is an open database.
type DB struct {
	cat  *catalog.Catalog
	opts options
}

type options struct {
	mem         memory.Allocator
	memoryLimit int64
}

// Option configures Open.
type Option func(*options)

// WithAllocator makes every Arrow buffer come from mem (tests pass a
// memory.CheckedAllocator).
func WithAllocator(mem memory.Allocator) Option { return func(o *options) { o.mem = mem } }

// WithMemoryLimit bounds each materializing operator (sort, hash build,
// aggregate) of a query, in bytes; beyond it the query fails with 53200.
func WithMemoryLimit(bytes int64) Option { return func(o *options) { o.memoryLimit = bytes } }

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
	return &DB{cat: cat, opts: o}, nil
}

// Close releases the database; results still being read fail afterwards.
func (db *DB) Close() error { return db.cat.Close() }

// Result is what Exec reports of the last statement it ran.
type Result struct {
	// Tag is the Postgres command tag: "CREATE TABLE", "INSERT 0 3",
	// "SELECT 2", ...
	Tag string
	// RowsAffected counts the rows inserted or returned.
	RowsAffected int64
}

// Query runs one row-returning statement and streams its result.
func (db *DB) Query(ctx context.Context, sql string, args ...any) (array.RecordReader, error) {
	st, err := parser.ParseOne(sql)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "empty query")
	}
	snap, err := db.cat.Snapshot()
	if err != nil {
		return nil, err
	}
	p, err := planner.Build(snap, st, nil)
	if err != nil {
		snap.Release()
		return nil, err
	}
	q, ok := p.(*planner.Query)
	if !ok {
		snap.Release()
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "Query runs statements that return rows; use Exec for %s", tagOf(p))
	}
	op, err := db.lowerQuery(ctx, snap, q, args)
	if err != nil {
		snap.Release()
		return nil, err
	}
	if err := op.Open(ctx); err != nil {
		op.Close()
		snap.Release()
		return nil, err
	}
	return exec.ToReader(ctx, &releasing{Operator: op, snap: snap}), nil
}

func (db *DB) lowerQuery(ctx context.Context, snap *catalog.Snapshot, q *planner.Query, args []any) (exec.Operator, error) {
	params, err := lower.Bind(q.Params, args, nil)
	if err != nil {
		return nil, err
	}
	return lower.Query(ctx, snap, q.Root, lower.Env{
		Mem: db.opts.mem, Params: params, MemoryLimit: db.opts.memoryLimit,
		Eval: eval.Env{Mem: db.opts.mem, Options: sqltypes.DefaultOptions()},
	})
}

// releasing closes the query's operators, then releases its snapshot.
type releasing struct {
	exec.Operator
	snap *catalog.Snapshot
	done bool
}

func (r *releasing) Close() error {
	err := r.Operator.Close()
	if !r.done {
		r.done = true
		r.snap.Release()
	}
	return err
}

// Exec runs every statement in sql in order, each committing on its own,
// and stops at the first error. It reports the last statement's result.
func (db *DB) Exec(ctx context.Context, sql string, args ...any) (Result, error) {
	stmts, err := parser.Parse(sql)
	if err != nil {
		return Result{}, err
	}
	if len(stmts) > 1 && len(args) > 0 {
		return Result{}, sqlerr.New(sqlerr.SyntaxError, "cannot insert multiple commands into a prepared statement")
	}
	var res Result
	for _, st := range stmts {
		if res, err = db.execOne(ctx, st, args); err != nil {
			return res, err
		}
	}
	return res, nil
}

func (db *DB) execOne(ctx context.Context, st *parser.Statement, args []any) (Result, error) {
	snap, err := db.cat.Snapshot()
	if err != nil {
		return Result{}, err
	}
	defer snap.Release()
	p, err := planner.Build(snap, st, nil)
	if err != nil {
		return Result{}, err
	}
	switch p := p.(type) {
	case *planner.Query:
		op, err := db.lowerQuery(ctx, snap, p, args)
		if err != nil {
			return Result{}, err
		}
		var n int64
		err = exec.Drain(ctx, op, func(b arrow.RecordBatch) error { n += b.NumRows(); return nil })
		return Result{Tag: fmt.Sprintf("SELECT %d", n), RowsAffected: n}, err
	case *planner.CreateTable:
		return db.write(ctx, "CREATE TABLE", func(tx *catalog.Tx) (int64, error) {
			return 0, tx.CreateTable(ctx, p.Def, p.IfNotExists)
		})
	case *planner.DropTable:
		return db.write(ctx, "DROP TABLE", func(tx *catalog.Tx) (int64, error) {
			for _, name := range p.Names {
				if err := tx.DropTable(ctx, name, p.IfExists); err != nil {
					return 0, err
				}
			}
			return 0, nil
		})
	case *planner.Insert:
		params, err := lower.Bind(p.Params, args, nil)
		if err != nil {
			return Result{}, err
		}
		op, err := lower.Query(ctx, snap, p.Input, lower.Env{
			Mem: db.opts.mem, Params: params, MemoryLimit: db.opts.memoryLimit,
			Eval: eval.Env{Mem: db.opts.mem, Options: sqltypes.DefaultOptions()},
		})
		if err != nil {
			return Result{}, err
		}
		if err := op.Open(ctx); err != nil {
			op.Close()
			return Result{}, err
		}
		rdr := exec.ToReader(ctx, op)
		defer rdr.Release()
		res, err := db.write(ctx, "INSERT", func(tx *catalog.Tx) (int64, error) {
			return tx.Insert(ctx, p.Table.Name, rdr)
		})
		res.Tag = fmt.Sprintf("INSERT 0 %d", res.RowsAffected)
		return res, err
	case *planner.Explain:
		return Result{Tag: "EXPLAIN"}, nil
	}
	return Result{}, sqlerr.New(sqlerr.FeatureNotSupported, "%s is not supported by the embedded API yet", tagOf(p))
}

// write runs one autocommit write statement.
func (db *DB) write(ctx context.Context, tag string, do func(*catalog.Tx) (int64, error)) (Result, error) {
	tx := db.cat.Begin()
	n, err := do(tx)
	if err != nil {
		tx.Rollback()
		return Result{}, err
	}
	if err := tx.Commit(ctx); err != nil {
		return Result{}, err
	}
	return Result{Tag: tag, RowsAffected: n}, nil
}

// Explain plans one statement and returns its EXPLAIN text: one node a
// line, each with its ordering.
func (db *DB) Explain(ctx context.Context, sql string) (string, error) {
	st, err := parser.ParseOne(sql)
	if err != nil {
		return "", err
	}
	if st == nil {
		return "", sqlerr.New(sqlerr.SyntaxError, "empty query")
	}
	snap, err := db.cat.Snapshot()
	if err != nil {
		return "", err
	}
	defer snap.Release()
	p, err := planner.Build(snap, st, nil)
	if err != nil {
		return "", err
	}
	if e, ok := p.(*planner.Explain); ok {
		p = e.Stmt
	}
	return planner.ExplainText(p), nil
}

func tagOf(p planner.Plan) string {
	switch p.(type) {
	case *planner.CreateTable:
		return "CREATE TABLE"
	case *planner.DropTable:
		return "DROP TABLE"
	case *planner.Insert:
		return "INSERT"
	case *planner.Copy:
		return "COPY"
	case *planner.Set:
		return "SET"
	case *planner.Show:
		return "SHOW"
	case *planner.Transaction:
		return "a transaction statement"
	case *planner.Explain:
		return "EXPLAIN"
	}
	return "SELECT"
}
