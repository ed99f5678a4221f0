package catalog

import (
	"context"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sqlerr"
)

// Tx groups statements that commit together with one log record. Small
// statements keep their rows in memory until Commit; a statement writing
// more than Options.LogRows rows writes sorted segment files of its own as
// it runs. Nothing is visible to snapshots until Commit, but to the
// transaction's own statements through View. A statement that
// fails leaves nothing behind and aborts the transaction (as in PostgreSQL:
// later statements and Commit return 25P02). A Tx is used by one goroutine
// at a time.
type Tx struct {
	c     *Catalog
	ops   []txOp
	view  map[string]*tableMeta // tables created or altered (meta) or dropped (nil) in this tx
	vdefs map[string]*ViewDef   // views created (def) or dropped (nil) in this tx
	err   error                 // the first failed statement
	done  bool
	async bool
	dml   bool        // holds c.dmlMu shared
	snaps []*Snapshot // what DML statements read; released at the end
	// priv are the private segments of the transaction's views, by the
	// index of the first opAppend of their run (txview.go).
	priv map[int]*pendingSeg
	// built is the last view's build, continued by the next (txview.go).
	built *viewBuild
}

type opKind uint8

const (
	opCreate opKind = iota
	opDrop
	opAppend   // rows: a small statement's rows
	opAttach   // segs: a large statement's sorted segment files
	opDelete   // dels/removes: positions of segments of the statement's snapshot
	opTruncate // every row committed before the transaction commits
	opAlter    // meta becomes next (columns, name)
	opView     // define or replace a view
	opDropView
)

type txOp struct {
	kind    opKind
	meta    *tableMeta // the table as the statement saw it
	rows    []arrow.RecordBatch
	nrows   int64
	segs    []*segment
	dels    map[*segment]*delMask
	removes []*segment
	next    *tableMeta
	vdef    *ViewDef
	name    string
}

func (op *txOp) release() {
	releaseAll(op.rows)
	op.rows = nil
	discard(op.segs)
	op.segs = nil
}

// Begin starts a transaction.
func (c *Catalog) Begin() *Tx {
	return &Tx{c: c, view: map[string]*tableMeta{}, vdefs: map[string]*ViewDef{}}
}

// SetSynchronousCommit chooses how Commit waits (PostgreSQL's
// synchronous_commit): on (the default) returns once the commit's log
// record is on disk; off returns once it is ordered in the log and
// visible, and a background flush makes it durable within about
// Options.FlushInterval. A crash in that window loses the commit (never
// part of one, and never a commit the log orders before a durable one).
func (tx *Tx) SetSynchronousCommit(on bool) { tx.async = !on }

// lookup resolves a table name as this transaction sees it; nil if the
// table does not exist.
func (tx *Tx) lookup(name string) (*tableMeta, error) {
	if m, ok := tx.view[name]; ok {
		return m, nil
	}
	tx.c.mu.Lock()
	defer tx.c.mu.Unlock()
	if tx.c.closed || tx.c.cur == nil {
		return nil, errClosed()
	}
	if ts := tx.c.cur.tables[name]; ts != nil {
		return ts.meta, nil
	}
	return nil, nil
}

// viewExists reports whether name is a view as this transaction sees it.
func (tx *Tx) viewExists(name string) bool {
	if v, ok := tx.vdefs[name]; ok {
		return v != nil
	}
	tx.c.mu.Lock()
	defer tx.c.mu.Unlock()
	return tx.c.cur != nil && tx.c.cur.views[name] != nil
}

// target resolves the table a statement writes: 42P01 if it does not exist.
func (tx *Tx) target(name string) (*tableMeta, error) {
	meta, err := tx.lookup(name)
	if err == nil && meta == nil {
		if tx.viewExists(name) {
			return nil, sqlerr.New(codeWrongObjectType, "%q is a view", name).
				WithDetail("Views cannot be written to.")
		}
		err = errNoTable(name)
	}
	return meta, err
}

func (tx *Tx) check() error {
	if tx.done {
		return sqlerr.New(sqlerr.NoActiveSQLTransaction, "transaction is already finished")
	}
	if tx.err != nil {
		return sqlerr.New(sqlerr.InFailedSQLTransaction, "current transaction is aborted, commands ignored until end of transaction block").
			WithDetail("The failed statement: %v", tx.err)
	}
	return nil
}

// begin checks the transaction and the context before a statement.
func (tx *Tx) begin(ctx context.Context) error {
	if err := tx.check(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return tx.fail(err)
	}
	return nil
}

// fail records a statement's error; the transaction can only roll back.
func (tx *Tx) fail(err error) error {
	if tx.err == nil {
		tx.err = err
	}
	return err
}

// holdDML takes the catalog's DML lock shared for the rest of the
// transaction: positions it records stay valid until it ends.
func (tx *Tx) holdDML() {
	if !tx.dml {
		tx.c.dmlMu.RLock()
		tx.dml = true
	}
}

// CreateTable adds a table; 42P07 if the name is taken (a no-op with
// ifNotExists).
func (tx *Tx) CreateTable(ctx context.Context, def TableDef, ifNotExists bool) error {
	if err := tx.begin(ctx); err != nil {
		return err
	}
	existing, err := tx.lookup(def.Name)
	if err != nil {
		return tx.fail(err)
	}
	if existing != nil || tx.viewExists(def.Name) {
		if ifNotExists {
			return nil
		}
		return tx.fail(errDupTable(def.Name))
	}
	meta, err := newTableMeta(tx.c.nextTable.Add(1), def)
	if err != nil {
		return tx.fail(err)
	}
	meta.temp = tx.c.temp
	tx.view[def.Name] = meta
	tx.ops = append(tx.ops, txOp{kind: opCreate, meta: meta})
	return nil
}

func errDupTable(name string) error {
	return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", name)
}

// DropTable removes a table; 42P01 if absent (a no-op with ifExists).
func (tx *Tx) DropTable(ctx context.Context, name string, ifExists bool) error {
	if err := tx.begin(ctx); err != nil {
		return err
	}
	meta, err := tx.lookup(name)
	if err != nil {
		return tx.fail(err)
	}
	if meta == nil {
		if tx.viewExists(name) {
			return tx.fail(sqlerr.New(codeWrongObjectType, "%q is not a table", name).WithHint("Use DROP VIEW to remove a view."))
		}
		if ifExists {
			return nil
		}
		return tx.fail(errNoTable(name))
	}
	if deps := tx.dependents(name, ""); len(deps) > 0 {
		return tx.fail(errDependents("table "+name, deps))
	}
	tx.holdDML()
	tx.view[name] = nil
	tx.ops = append(tx.ops, txOp{kind: opDrop, meta: meta})
	return nil
}

// Insert appends the rows of src (typed exactly as the table's schema, by
// position) to the table and returns how many it read. src is consumed but
// not released.
func (tx *Tx) Insert(ctx context.Context, name string, src array.RecordReader) (int64, error) {
	if err := tx.check(); err != nil {
		return 0, err
	}
	meta, err := tx.target(name)
	if err != nil {
		return 0, tx.fail(err)
	}
	return tx.insertInto(ctx, meta, name, src)
}

// insertInto is Insert into the table meta, which name resolved to.
func (tx *Tx) insertInto(ctx context.Context, meta *tableMeta, name string, src array.RecordReader) (int64, error) {
	if src == nil {
		return 0, tx.fail(sqlerr.New(sqlerr.InternalError, "INSERT into %q without a row source", name))
	}
	w := tx.c.newTableWriter(meta)
	err := func() error {
		for src.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			rec := src.RecordBatch()
			if err := w.checkShape(rec); err != nil {
				return err
			}
			if err := w.add(rec); err != nil {
				return err
			}
		}
		return src.Err()
	}()
	return tx.endWrite(meta, w, err)
}

// endWrite finishes a statement's writer and records its rows or segments.
func (tx *Tx) endWrite(meta *tableMeta, w *tableWriter, err error) (int64, error) {
	var rows []arrow.RecordBatch
	var segs []*segment
	if err == nil {
		rows, segs, err = w.finish()
	}
	if err != nil {
		w.abort()
		return 0, tx.fail(err)
	}
	switch {
	case len(segs) > 0:
		tx.ops = append(tx.ops, txOp{kind: opAttach, meta: meta, segs: segs})
	case len(rows) > 0:
		tx.ops = append(tx.ops, txOp{kind: opAppend, meta: meta, rows: rows, nrows: w.rows})
	}
	return w.rows, nil
}

// CreateTableAs creates a table and fills it from src in one statement:
// CREATE TABLE ... AS. Rows of an ordered table are sorted stably in runs of
// Options.RunRows; an input already in order is detected run by run and
// written without a permutation, so an ordered query result costs no sort.
func (tx *Tx) CreateTableAs(ctx context.Context, def TableDef, src array.RecordReader) (int64, error) {
	if err := tx.CreateTable(ctx, def, false); err != nil {
		return 0, err
	}
	return tx.Insert(ctx, def.Name, src)
}

// Commit makes every statement of the transaction visible and durable at
// once (see SetSynchronousCommit). A conflict with a transaction that
// committed first fails it with nothing applied: 40001 when both changed
// the same rows, the same table's definition, or a table this one wrote
// was re-created; 42P01 when it was dropped.
func (tx *Tx) Commit(ctx context.Context) error {
	if err := tx.check(); err != nil {
		tx.Rollback()
		return err
	}
	if err := ctx.Err(); err != nil {
		tx.Rollback()
		return err
	}
	if len(tx.ops) == 0 {
		tx.finish()
		return nil
	}
	c := tx.c
	err := c.commit(func(b *builder) error {
		for i := range tx.ops {
			if err := b.applyOp(&tx.ops[i]); err != nil {
				return err
			}
		}
		return nil
	}, !tx.async)
	if err != nil {
		tx.Rollback()
		return err
	}
	for i := range tx.ops {
		op := &tx.ops[i]
		releaseAll(op.rows)
		for _, s := range op.segs {
			s.release() // the published state holds its own reference
		}
		op.rows, op.segs = nil, nil
	}
	tx.ops = nil
	tx.finish()
	return nil
}

// finish ends the transaction: its snapshots, private segments and DML
// lock go.
func (tx *Tx) finish() {
	tx.done = true
	tx.dropPrivate()
	for _, s := range tx.snaps {
		s.Release()
	}
	tx.snaps = nil
	if tx.dml {
		tx.dml = false
		tx.c.dmlMu.RUnlock()
	}
}

// sameTable checks the table a statement wrote is still the one committed.
func sameTable(ts *tableState, meta *tableMeta) error {
	if ts == nil {
		return sqlerr.New(sqlerr.UndefinedTable, "relation %q was dropped by a concurrent transaction", meta.def.Name)
	}
	if ts.meta.id != meta.id {
		return sqlerr.New(codeSerializationFailure, "could not serialize access: relation %q was re-created by a concurrent transaction", meta.def.Name)
	}
	return nil
}

// sameColumns checks no concurrent ALTER TABLE changed the columns rows
// were written for.
func sameColumns(ts *tableState, meta *tableMeta) error {
	if !slices.Equal(ts.meta.colIDs, meta.colIDs) {
		return sqlerr.New(codeSerializationFailure, "could not serialize access: the columns of relation %q were altered by a concurrent transaction", meta.def.Name)
	}
	return nil
}

// Rollback discards the transaction; it is a no-op after Commit.
func (tx *Tx) Rollback() {
	if tx.done {
		return
	}
	for i := range tx.ops {
		tx.ops[i].release()
	}
	tx.ops = nil
	tx.finish()
}

// Err returns the error of the statement that aborted the transaction.
func (tx *Tx) Err() error { return tx.err }
