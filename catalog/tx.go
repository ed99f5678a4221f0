package catalog

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sqlerr"
)

// Tx groups statements that commit together in one manifest swap. Rows are
// written to new segment files as statements run; nothing is visible to
// snapshots until Commit. A statement that fails leaves nothing behind and
// aborts the transaction (as in PostgreSQL: later statements and Commit
// return 25P02). A Tx is used by one goroutine at a time.
type Tx struct {
	c    *Catalog
	ops  []txOp
	view map[string]*tableMeta // tables created (meta) or dropped (nil) in this tx
	err  error                 // the first failed statement
	done bool
}

type opKind uint8

const (
	opCreate opKind = iota
	opDrop
	opAppend
)

type txOp struct {
	kind opKind
	meta *tableMeta
	segs []*segment // opAppend: the statement's segments, in insertion order
}

// Begin starts a transaction.
func (c *Catalog) Begin() *Tx {
	return &Tx{c: c, view: map[string]*tableMeta{}}
}

// lookup resolves a table name as this transaction sees it; nil if the
// table does not exist.
func (tx *Tx) lookup(name string) (*tableMeta, error) {
	if m, ok := tx.view[name]; ok {
		return m, nil
	}
	tx.c.mu.Lock()
	defer tx.c.mu.Unlock()
	if tx.c.closed {
		return nil, errClosed()
	}
	if ts := tx.c.cur.tables[name]; ts != nil {
		return ts.meta, nil
	}
	return nil, nil
}

// target resolves the table a statement writes: 42P01 if it does not exist.
func (tx *Tx) target(name string) (*tableMeta, error) {
	meta, err := tx.lookup(name)
	if err == nil && meta == nil {
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

// fail records a statement's error; the transaction can only roll back.
func (tx *Tx) fail(err error) error {
	if tx.err == nil {
		tx.err = err
	}
	return err
}

// CreateTable adds a table; 42P07 if the name is taken (a no-op with
// ifNotExists).
func (tx *Tx) CreateTable(ctx context.Context, def TableDef, ifNotExists bool) error {
	if err := tx.check(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return tx.fail(err)
	}
	existing, err := tx.lookup(def.Name)
	if err != nil {
		return tx.fail(err)
	}
	if existing != nil {
		if ifNotExists {
			return nil
		}
		return tx.fail(errDupTable(def.Name))
	}
	meta, err := newTableMeta(tx.c.nextTable.Add(1), def)
	if err != nil {
		return tx.fail(err)
	}
	tx.view[def.Name] = meta
	tx.ops = append(tx.ops, txOp{kind: opCreate, meta: meta})
	return nil
}

func errDupTable(name string) error {
	return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", name)
}

// DropTable removes a table; 42P01 if absent (a no-op with ifExists).
func (tx *Tx) DropTable(ctx context.Context, name string, ifExists bool) error {
	if err := tx.check(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return tx.fail(err)
	}
	meta, err := tx.lookup(name)
	if err != nil {
		return tx.fail(err)
	}
	if meta == nil {
		if ifExists {
			return nil
		}
		return tx.fail(errNoTable(name))
	}
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
	if src == nil {
		return 0, tx.fail(sqlerr.New(sqlerr.InternalError, "INSERT into %q without a row source", name))
	}
	w := tx.c.newTableWriter(meta)
	err = func() error {
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

// endWrite finishes a statement's writer and records its segments.
func (tx *Tx) endWrite(meta *tableMeta, w *tableWriter, err error) (int64, error) {
	var segs []*segment
	if err == nil {
		segs, err = w.finish()
	}
	if err != nil {
		w.abort()
		return 0, tx.fail(err)
	}
	if len(segs) > 0 {
		tx.ops = append(tx.ops, txOp{kind: opAppend, meta: meta, segs: segs})
	}
	return w.rows, nil
}

// CreateTableAs creates a table and fills it from src in one statement.
func (tx *Tx) CreateTableAs(ctx context.Context, def TableDef, src array.RecordReader) (int64, error) {
	if err := tx.CreateTable(ctx, def, false); err != nil {
		return 0, err
	}
	return tx.Insert(ctx, def.Name, src)
}

// Commit makes every statement of the transaction visible and durable at
// once. Another transaction that dropped or re-created a table this one
// writes makes Commit fail (40001 or 42P01/42P07) with nothing applied.
func (tx *Tx) Commit(ctx context.Context) error {
	if err := tx.check(); err != nil {
		tx.Rollback()
		return err
	}
	if err := ctx.Err(); err != nil {
		tx.Rollback()
		return err
	}
	c := tx.c
	err := c.commit(func(tables map[string]*tableState) error {
		for _, op := range tx.ops {
			name := op.meta.def.Name
			ts := tables[name]
			switch op.kind {
			case opCreate:
				if ts != nil {
					return errDupTable(name)
				}
				tables[name] = &tableState{meta: op.meta}
			case opDrop:
				if err := sameTable(ts, op.meta); err != nil {
					return err
				}
				delete(tables, name)
			case opAppend:
				if err := sameTable(ts, op.meta); err != nil {
					return err
				}
				segs := append(append(make([]*segment, 0, len(ts.segs)+len(op.segs)), ts.segs...), op.segs...)
				tables[name] = &tableState{meta: ts.meta, segs: segs}
			}
		}
		// Orders are assigned only once the commit cannot fail on
		// conflicts, in statement order, so they follow commit order.
		for _, op := range tx.ops {
			for _, s := range op.segs {
				s.order = c.nextOrder.Add(1)
			}
		}
		return nil
	})
	if err != nil {
		tx.Rollback()
		return err
	}
	tx.done = true
	for _, op := range tx.ops {
		for _, s := range op.segs {
			s.release() // the published state holds its own reference
		}
	}
	tx.ops = nil
	return nil
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

// Rollback discards the transaction; it is a no-op after Commit.
func (tx *Tx) Rollback() {
	if tx.done {
		return
	}
	tx.done = true
	for _, op := range tx.ops {
		discard(op.segs)
	}
	tx.ops = nil
}

// Err returns the error of the statement that aborted the transaction.
func (tx *Tx) Err() error { return tx.err }
