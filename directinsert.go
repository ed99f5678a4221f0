package asofsql

import (
	"context"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/memacct"
	"github.com/asofsql/asofsql/lower"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqltypes"
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
	// Arguments the wire server decoded already (lower.Value, each of its
	// parameter's type) are the literals' values as they are; any other
	// takes the same binding as lowering's: the same conversions and
	// errors.
	decoded := len(args) == len(p.Params)
	for i, a := range args {
		if v, ok := a.(lower.Value); !ok || v.Go == nil || v.T != p.Params[i] {
			decoded = false
			break
		}
	}
	var params []*expr.Literal
	if !decoded {
		var err error
		if params, err = lower.Bind(p.Params, args, s.vopts); err != nil {
			return 0, err
		}
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
		var v any
		var lit *expr.Literal
		if decoded {
			v = args[n].(lower.Value).V // what lower.Bind's literal would hold
		} else {
			lit = params[n]
			v = lit.Value
		}
		a, err := oneValue(mem, p.Table.Columns[i].Type, d.schema.Field(i).Type, v, lit)
		if err != nil {
			return 0, err
		}
		arrs[i] = a
	}
	rec := array.NewRecordBatch(d.schema, arrs, 1)
	rdr := &oneBatch{schema: d.schema, rec: rec}
	defer rdr.Release()
	var n int64
	err := s.writeTo(ctx, "INSERT", p.Table.Temp, func(tx *catalog.Tx) error {
		var err error
		n, err = tx.Insert(ctx, p.Table.Name, rdr)
		return err
	})
	return n, err
}

// oneValue is the one-row column of the literal value v of type t (lit,
// or nil to make it when needed): built straight into buffers of mem for
// the common BIGINT, timestamp, DOUBLE PRECISION and text values (an
// Arrow builder costs a dozen allocations per column and row, the larger
// part of a single-row INSERT's), by eval.LiteralColumn for anything
// else, NULL included. dt is t's Arrow type.
func oneValue(mem memory.Allocator, t sqltypes.Type, dt arrow.DataType, v any, lit *expr.Literal) (arrow.Array, error) {
	var bufs []*memory.Buffer
	switch v := v.(type) {
	case int64:
		if t.Kind != sqltypes.Int8 && t.Kind != sqltypes.Timestamp && t.Kind != sqltypes.TimestampTZ {
			break
		}
		b := memory.NewResizableBuffer(mem)
		b.Resize(arrow.Int64SizeBytes)
		arrow.Int64Traits.CastFromBytes(b.Bytes())[0] = v
		bufs = []*memory.Buffer{nil, b}
	case float64:
		if t.Kind != sqltypes.Float8 {
			break
		}
		b := memory.NewResizableBuffer(mem)
		b.Resize(arrow.Float64SizeBytes)
		arrow.Float64Traits.CastFromBytes(b.Bytes())[0] = v
		bufs = []*memory.Buffer{nil, b}
	case string:
		if t.Kind != sqltypes.Text && t.Kind != sqltypes.Varchar || len(v) > math.MaxInt32 {
			break
		}
		off := memory.NewResizableBuffer(mem)
		off.Resize(2 * arrow.Int32SizeBytes)
		o := arrow.Int32Traits.CastFromBytes(off.Bytes())
		o[0], o[1] = 0, int32(len(v))
		data := memory.NewResizableBuffer(mem)
		data.Resize(len(v))
		copy(data.Bytes(), v)
		bufs = []*memory.Buffer{nil, off, data}
	}
	if bufs == nil {
		if lit == nil {
			lit = &expr.Literal{Value: v, T: t}
		}
		return eval.LiteralColumn(mem, t, []*expr.Literal{lit})
	}
	data := array.NewData(dt, 1, bufs, nil, 0, 0)
	for _, b := range bufs[1:] {
		b.Release()
	}
	defer data.Release()
	return array.MakeFromData(data), nil
}

// directInBlock returns, inside a transaction block, the kept plan of a
// direct-append INSERT and a snapshot of the committed state without
// the block's view of its own changes; (nil, nil, nil) when the
// statement needs the view. The view is what reading statements of the
// block see their own writes through, and building it is a good part of
// an INSERT's cost in a block of many: an append reads nothing, and its
// plan's check (plancache.go) only looks up definitions, which the view
// changes only after DDL in the block, and that closes the plan cache.
func (st *Stmt) directInBlock() (planner.Plan, *snapshot, error) {
	s := st.s
	if s.tx == nil && s.ttx == nil || !s.planCacheOpen() || st.st == nil {
		return nil, nil, nil
	}
	c := st.cache.Load()
	if c == nil {
		return nil, nil, nil
	}
	ins, ok := c.plan.(*planner.Insert)
	if !ok || st.direct(ins) == nil {
		return nil, nil, nil
	}
	snap, err := s.committedSnapshot()
	if err != nil {
		return nil, nil, err
	}
	if p, ok := st.cached(s, snap); ok && p == c.plan {
		return p, snap, nil
	}
	snap.Release()
	return nil, nil, nil
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
