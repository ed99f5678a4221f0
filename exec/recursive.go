package exec

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sqltypes"
)

// WorkTable is the working table of a recursive query: the rows the last
// iteration produced, which the recursive term reads (WorkTableScan).
type WorkTable struct {
	schema  *arrow.Schema
	batches []arrow.RecordBatch
}

// NewWorkTable returns an empty working table of rows of schema.
func NewWorkTable(schema *arrow.Schema) *WorkTable { return &WorkTable{schema: schema} }

// Schema is the schema of the working table's rows.
func (w *WorkTable) Schema() *arrow.Schema { return w.schema }

func (w *WorkTable) set(bs []arrow.RecordBatch) {
	w.clear()
	w.batches = bs
}

func (w *WorkTable) clear() {
	for _, b := range w.batches {
		b.Release()
	}
	w.batches = nil
}

// WorkTableScan reads the working table as it is when opened.
type WorkTableScan struct {
	wt  *WorkTable
	pos int
}

var _ Operator = (*WorkTableScan)(nil)

// NewWorkTableScan returns a scan of wt.
func NewWorkTableScan(wt *WorkTable) *WorkTableScan { return &WorkTableScan{wt: wt} }

func (s *WorkTableScan) Schema() *arrow.Schema      { return s.wt.schema }
func (s *WorkTableScan) Open(context.Context) error { s.pos = 0; return nil }
func (s *WorkTableScan) Close() error               { return nil }
func (s *WorkTableScan) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.pos >= len(s.wt.batches) {
		return nil, io.EOF
	}
	b := s.wt.batches[s.pos]
	s.pos++
	b.Retain()
	return b, nil
}

// RecursiveUnion is WITH RECURSIVE's iteration, as PostgreSQL runs it: the
// non-recursive term's rows are output and become the working table; then
// the recursive term (built anew by newRecursive for each iteration, over
// a WorkTableScan of wt) runs while the working table is not empty, its
// rows output and forming the next working table. With distinct (UNION)
// a row already output is dropped, so a cycle ends. Rows stream out as
// they are produced, so a LIMIT above stops an endless recursion; the
// context is checked between iterations and batches.
//
// It holds the working table, the next one and, with distinct, every row
// seen, within the memory limit (53200 beyond it).
type RecursiveUnion struct {
	base         Operator
	newRecursive func() (Operator, error)
	wt           *WorkTable
	mem          memory.Allocator
	schema       *arrow.Schema
	types        []sqltypes.Type
	distinct     bool
	seen         map[string]struct{}
	budget       memBudget
	cur          Operator
	inBase       bool
	next         []arrow.RecordBatch
}

var _ Operator = (*RecursiveUnion)(nil)

// NewRecursiveUnion returns the recursive query of base and the recursive
// term newRecursive builds over wt (whose schema must be base's).
func NewRecursiveUnion(base Operator, wt *WorkTable, newRecursive func() (Operator, error), mem memory.Allocator, distinct bool, memoryLimit int64) (*RecursiveUnion, error) {
	s := base.Schema()
	r := &RecursiveUnion{base: base, newRecursive: newRecursive, wt: wt, mem: mem, schema: s, distinct: distinct,
		budget: newBudget("recursive query", mem, memoryLimit), inBase: true}
	for i := 0; i < s.NumFields(); i++ {
		t, err := columnType(s, i)
		if err != nil {
			return nil, err
		}
		r.types = append(r.types, t)
	}
	if distinct {
		r.seen = map[string]struct{}{}
	}
	return r, nil
}

func (r *RecursiveUnion) Schema() *arrow.Schema { return r.schema }

func (r *RecursiveUnion) Open(ctx context.Context) error {
	r.cur = r.base
	return r.base.Open(ctx)
}

func (r *RecursiveUnion) Close() error {
	var err error
	if r.cur != nil && r.cur != r.base {
		err = r.cur.Close()
	}
	r.cur = nil
	if r.base != nil {
		err = errors.Join(err, r.base.Close())
		r.base = nil
	}
	releaseBatches(r.next)
	r.next = nil
	r.wt.clear()
	r.seen = nil
	return err
}

func (r *RecursiveUnion) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if r.cur == nil {
			return nil, io.EOF
		}
		b, err := r.cur.Next(ctx)
		if errors.Is(err, io.EOF) {
			if err := r.iterate(ctx); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		out, err := r.keep(b)
		if err != nil || out != nil {
			return out, err
		}
	}
}

// keep drops b's rows already seen (with distinct), adds the rest to the
// next working table and returns them (nil when none is left).
func (r *RecursiveUnion) keep(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	if b.NumRows() == 0 {
		b.Release()
		return nil, nil
	}
	if r.distinct {
		mask, kept, added := markUnseen(r.seen, keyEncoder{cols: b.Columns(), types: r.types}, int(b.NumRows()))
		if err := r.budget.grow(added); err != nil {
			b.Release()
			return nil, err
		}
		if kept == 0 {
			b.Release()
			return nil, nil
		}
		if kept < len(mask) {
			f, err := eval.FilterBatch(r.mem, b, mask)
			b.Release()
			if err != nil {
				return nil, err
			}
			b = f
		}
	}
	// The recursive term's batches carry its own column names: output
	// (and keep) them under this operator's schema.
	out := array.NewRecordBatch(r.schema, b.Columns(), b.NumRows())
	b.Release()
	if err := r.budget.retain(out); err != nil {
		out.Release()
		return nil, err
	}
	out.Retain()
	r.next = append(r.next, out)
	return out, nil
}

// iterate ends the current term and starts the next iteration of the
// recursive term over the rows just produced (none: the query is done).
func (r *RecursiveUnion) iterate(ctx context.Context) error {
	if r.cur != r.base {
		err := r.cur.Close()
		r.cur = nil
		if err != nil {
			return err
		}
	}
	r.cur = nil
	// The old working table is no longer read; next becomes it.
	var old int64
	for _, b := range r.wt.batches {
		old += batchBytes(b)
	}
	r.wt.set(r.next)
	r.next = nil
	if r.budget.acct == nil {
		// (With a query account the allocator counts batches itself.)
		if err := r.budget.grow(-old); err != nil {
			return err
		}
	}
	if len(r.wt.batches) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	op, err := r.newRecursive()
	if err != nil {
		return err
	}
	if err := op.Open(ctx); err != nil {
		op.Close()
		return err
	}
	r.cur = op
	return nil
}
