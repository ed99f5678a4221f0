package asofsql

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/memacct"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Column describes one result column.
type Column struct {
	Name string
	Type sqltypes.Type
}

// Cursor is an executed statement's result. It is an array.RecordReader
// that streams the rows (no columns and no rows for statements that return
// none) and, once read to the end, gives the Postgres command tag. Release
// it when done: it holds the query's operators, its catalog snapshot and
// its statement_timeout timer until then.
type Cursor struct {
	refs   atomic.Int64
	schema *arrow.Schema
	op     exec.Operator // nil: nothing to stream
	ctx    context.Context
	parent context.Context
	verb   string // SELECT and FETCH count rows in their tag; other verbs are the tag
	// affected is the row count of INSERT and COPY.
	affected int64
	rows     int64
	cur      arrow.RecordBatch
	err      error
	done     bool
	cleanup  []func()
}

var _ array.RecordReader = (*Cursor)(nil)

var emptySchema = arrow.NewSchema(nil, nil)

// doneCursor is the result of a statement without rows.
func doneCursor(tag string) *Cursor {
	c := &Cursor{schema: emptySchema, verb: tag, done: true}
	c.refs.Store(1)
	return c
}

func doneCursorN(tag string, n int64) *Cursor {
	c := doneCursor(tag)
	c.affected = n
	return c
}

// rowsCursor streams op (already opened); cleanup runs at the final
// Release, after op is closed.
func rowsCursor(ctx, parent context.Context, op exec.Operator, verb string, cleanup ...func()) *Cursor {
	c := &Cursor{schema: op.Schema(), op: op, ctx: ctx, parent: parent, verb: verb, cleanup: cleanup}
	c.refs.Store(1)
	return c
}

// textCursor returns rows of text columns named cols (SHOW, EXPLAIN).
func textCursor(mem memory.Allocator, verb string, cols []string, rows [][]string) *Cursor {
	fields := make([]arrow.Field, len(cols))
	for i, n := range cols {
		fields[i] = sqltypes.TextType.Field(n, true)
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for _, r := range rows {
		for i, v := range r {
			b.Field(i).(*array.StringBuilder).Append(v)
		}
	}
	batch := b.NewRecordBatch()
	ctx := context.Background()
	return rowsCursor(ctx, ctx, exec.NewBatches(schema, []arrow.RecordBatch{batch}), verb)
}

// Columns describes the result columns (none for a statement without
// rows).
func (c *Cursor) Columns() []Column { return columnsOf(c.schema) }

func columnsOf(s *arrow.Schema) []Column {
	cols := make([]Column, s.NumFields())
	for i, f := range s.Fields() {
		t, err := sqltypes.FromField(f)
		if err != nil {
			t = sqltypes.TextType
		}
		cols[i] = Column{Name: f.Name, Type: t}
	}
	return cols
}

// Tag is the Postgres command tag: "SELECT n" and "FETCH n" count the
// rows read so far.
func (c *Cursor) Tag() string {
	if c.counts() {
		return fmt.Sprintf("%s %d", c.verb, c.rows)
	}
	return c.verb
}

// counts reports the verbs whose tag counts the rows returned (SELECT,
// FETCH).
func (c *Cursor) counts() bool { return c.verb == "SELECT" || c.verb == "FETCH" }

// TagFor is the command tag when rows of the result were sent (Postgres
// reports the rows the last Execute sent, not all of them, after a
// suspended portal): "SELECT rows" for a query, "FETCH rows" for a cursor's
// FETCH, the tag of other statements as it is (CREATE TABLE AS's "SELECT n"
// counts rows written).
func (c *Cursor) TagFor(rows int64) string {
	if c.counts() {
		return fmt.Sprintf("%s %d", c.verb, rows)
	}
	return c.verb
}

// Rows is the number of rows read so far.
func (c *Cursor) Rows() int64 { return c.rows }

func (c *Cursor) Retain()               { c.refs.Add(1) }
func (c *Cursor) Schema() *arrow.Schema { return c.schema }
func (c *Cursor) Err() error            { return c.err }

// RecordBatch is the current batch, valid until the next call of Next.
func (c *Cursor) RecordBatch() arrow.RecordBatch { return c.cur }

// Record is the deprecated spelling of RecordBatch, kept for the interface.
func (c *Cursor) Record() arrow.RecordBatch { return c.cur }

// Next advances to the next batch; false at the end or on error (Err).
// Done reports that the cursor has no more rows to read: Next returns
// false at once, without running anything (a statement without rows is
// done from the start).
func (c *Cursor) Done() bool { return c.done }

func (c *Cursor) Next() bool {
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
	if c.done {
		return false
	}
	b, err := c.op.Next(c.ctx)
	if err != nil {
		c.done = true
		if !errors.Is(err, io.EOF) {
			c.err = cancelErr(c.parent, c.ctx, err)
		}
		c.finish()
		return false
	}
	if a := memacct.FromContext(c.ctx); a != nil {
		// What the client has not read yet counts against the query.
		if err := a.Check("the result"); err != nil {
			b.Release()
			c.done, c.err = true, err
			c.finish()
			return false
		}
	}
	c.rows += b.NumRows()
	c.cur = b
	return true
}

// ChargeOutput charges n bytes its caller holds for the result (a
// server's encoded rows waiting for a slow client) to the query's memory
// account, or returns them when n < 0: 53200, charging nothing, when they
// would take the query past its memory_limit or the server past its
// budget. Once the result is exhausted the account is closed and nothing
// is charged.
func (c *Cursor) ChargeOutput(n int64) error {
	a := memacct.FromContext(c.ctx)
	if a == nil || c.op == nil {
		return nil
	}
	return a.Grow("the result queued for the client", n)
}

// finish releases everything but the current batch, as soon as the
// result is exhausted, so a caller that forgets Release after reading to
// the end does not pin the snapshot.
func (c *Cursor) finish() {
	if c.op != nil {
		if err := c.op.Close(); err != nil && c.err == nil {
			c.err = err
		}
		c.op = nil
	}
	for _, f := range c.cleanup {
		f()
	}
	c.cleanup = nil
}

// Release drops a reference; the last one closes the result.
func (c *Cursor) Release() {
	if c.refs.Add(-1) != 0 {
		return
	}
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
	c.done = true
	c.finish()
}

// Close releases the cursor (the last reference) and reports a late error.
func (c *Cursor) Close() error {
	c.Release()
	return c.err
}

// drain reads c to the end and releases it.
func (c *Cursor) drain() error {
	defer c.Release()
	for c.Next() {
	}
	return c.err
}

// cancelErr gives a cancellation Postgres' wording (57014): a timeout of
// the statement itself (ctx carries statement_timeout), or a cancellation
// by the caller, or the server's memory budget failing this query (the
// cause is then its 53200). Other errors pass unchanged, even if the
// timer has fired since.
func cancelErr(parent, ctx context.Context, err error) error {
	if err == nil || !(errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		sqlerr.Code(err) == sqlerr.QueryCanceled) {
		return err
	}
	if cause := context.Cause(ctx); parent.Err() == nil && sqlerr.Code(cause) == sqlerr.OutOfMemory {
		return cause
	}
	if parent.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return sqlerr.Wrap(err, sqlerr.QueryCanceled, "canceling statement due to statement timeout")
	}
	return sqlerr.From(err)
}
