package catalog

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Target is the table a transaction's INSERT resolved its name to: one
// definition of it (a later ALTER, DROP or re-CREATE makes another). A
// session that gathers the rows of many single-row INSERTs into one
// append (the wire server's prepared INSERT in a transaction block) holds
// the Target its first INSERT resolved, checks with Tx.Current before
// each row that the name still resolves to it, and appends the rows with
// InsertTo, so they go to exactly the table each INSERT would have
// written.
type Target struct {
	meta *tableMeta
	name string
}

// Target resolves name for a write as Insert does (42P01, or 42809 for a
// view); it records no failure in the transaction.
func (tx *Tx) Target(name string) (Target, error) {
	if err := tx.check(); err != nil {
		return Target{}, err
	}
	meta, err := tx.target(name)
	if err != nil {
		return Target{}, err
	}
	return Target{meta: meta, name: name}, nil
}

// Current reports whether t's name still resolves to t's definition in
// tx: nothing the transaction did and nothing committed since changed the
// table's definition, dropped it or made another of its name.
func (tx *Tx) Current(t Target) bool {
	if t.meta == nil || tx.done || tx.err != nil {
		return false
	}
	m, err := tx.lookup(t.name)
	return err == nil && m == t.meta
}

// Schema is the table's Arrow schema: what rows appended to it hold.
func (t Target) Schema() *arrow.Schema {
	if t.meta == nil {
		return nil
	}
	return t.meta.schema
}

// Info describes the table as t resolved it.
func (t Target) Info() *TableInfo {
	if t.meta == nil {
		return nil
	}
	return t.meta.info(nil)
}

// SmallRows is the most rows one Insert keeps in memory to commit through
// the log (Options.LogRows, below Options.RunRows); a larger one writes
// segment files of its own.
func (tx *Tx) SmallRows() int {
	return min(tx.c.opts.LogRows, tx.c.opts.RunRows-1)
}

// InsertTo is Insert into the table t (one statement): the rows of src,
// typed as t's schema. src is consumed but not released.
func (tx *Tx) InsertTo(ctx context.Context, t Target, src array.RecordReader) (int64, error) {
	if err := tx.check(); err != nil {
		return 0, err
	}
	return tx.insertInto(ctx, t.meta, t.name, src)
}
