package asofsql

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/memacct"
	"github.com/asofsql/asofsql/lower"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/planner"
)

// An INSERT INTO t VALUES ($1, ..., $n) whose parameters each fill one
// column of exactly the column's type (what a driver's prepared
// single-row INSERT is) is run as an append of the bound row: its one-row
// batch is built from the arguments straight into the table's columns,
// without lowering the plan into Values → Project operators for every
// execution. What the operators would do to such a row is nothing but
// copy it: the plan's projection is plain column references, so the
// result is the same batch, checked by the catalog (NOT NULL, VARCHAR(n))
// as any INSERT's rows are. Any other shape (expressions, casts,
// defaults, several rows, a SELECT) takes the general path.

// directInsert is the analysis of one Insert plan: for each table column,
// the index of the parameter it takes; nil cols when the plan is not of
// that shape.
type directInsert struct {
	plan   *planner.Insert
	cols   []int
	schema *arrow.Schema
}

// direct returns the direct-append form of p, or nil. It is computed once
// per plan (the kept plan of a prepared statement is the same pointer).
func (st *Stmt) direct(p *planner.Insert) *directInsert {
	if st == nil {
		return nil
	}
	if d := st.directPlan.Load(); d != nil && d.plan == p {
		if d.cols == nil {
			return nil
		}
		return d
	}
	d := analyseDirect(p)
	st.directPlan.Store(d)
	if d.cols == nil {
		return nil
	}
	return d
}

func analyseDirect(p *planner.Insert) *directInsert {
	d := &directInsert{plan: p}
	pr, ok := p.Input.(*planner.Project)
	if !ok {
		return d
	}
	v, ok := pr.Input.(*planner.Values)
	tcols := p.Table.Columns
	if !ok || len(v.Rows) != 1 || len(pr.Exprs) != len(tcols) {
		return d
	}
	row := v.Rows[0]
	cols := make([]int, len(tcols))
	fields := make([]arrow.Field, len(tcols))
	for i, e := range pr.Exprs {
		c, ok := e.(*expr.Column)
		if !ok || c.Index < 0 || c.Index >= len(row) {
			return d
		}
		pe, ok := row[c.Index].(*expr.Param)
		t := tcols[i].Type
		if !ok || pe.T != t || c.T != t || pe.N < 1 || pe.N > len(p.Params) || p.Params[pe.N-1] != t {
			return d
		}
		cols[i] = pe.N - 1
		fields[i] = t.Field(tcols[i].Name, !tcols[i].NotNull)
	}
	d.cols, d.schema = cols, arrow.NewSchema(fields, nil)
	return d
}

// insertDirect appends the bound row of d's plan.
func (s *Session) insertDirect(ctx context.Context, d *directInsert, args []any) (int64, error) {
	p := d.plan
	// The same binding as lowering's: the same conversions and errors.
	params, err := lower.Bind(p.Params, args, s.vopts)
	if err != nil {
		return 0, err
	}
	mem := s.db.opts.mem
	if a := memacct.FromContext(ctx); a != nil {
		mem = a
	}
	arrs := make([]arrow.Array, len(d.cols))
	defer func() {
		for _, a := range arrs {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i, n := range d.cols {
		a, err := eval.LiteralColumn(mem, p.Table.Columns[i].Type, params[n:n+1])
		if err != nil {
			return 0, err
		}
		arrs[i] = a
	}
	rec := array.NewRecordBatch(d.schema, arrs, 1)
	rdr := &oneBatch{schema: d.schema, rec: rec}
	defer rdr.Release()
	var n int64
	err = s.writeTo(ctx, "INSERT", p.Table.Temp, func(tx *catalog.Tx) error {
		var err error
		n, err = tx.Insert(ctx, p.Table.Name, rdr)
		return err
	})
	return n, err
}

// oneBatch is a RecordReader of one batch, which it owns.
type oneBatch struct {
	schema *arrow.Schema
	rec    arrow.RecordBatch
	done   bool
}

func (r *oneBatch) Retain() {}

func (r *oneBatch) Release() {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
}

func (r *oneBatch) Schema() *arrow.Schema { return r.schema }

func (r *oneBatch) Next() bool {
	if r.done || r.rec == nil {
		return false
	}
	r.done = true
	return true
}

func (r *oneBatch) RecordBatch() arrow.RecordBatch { return r.rec }

// Record is RecordBatch (array.RecordReader's deprecated name).
func (r *oneBatch) Record() arrow.RecordBatch { return r.rec }

func (r *oneBatch) Err() error { return nil }

var _ array.RecordReader = (*oneBatch)(nil)
