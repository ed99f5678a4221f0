package exec

import (
	"context"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Project computes one output column per expression. A bare column
// reference passes the input array through without copying.
type Project struct {
	child  Operator
	exprs  []*eval.Evaluator
	schema *arrow.Schema
}

var _ Operator = (*Project)(nil)

// NewProject returns a projection of child; names[i] names output column i
// (its SQL type is exprs[i].Type(), recorded in the field metadata).
func NewProject(child Operator, mem memory.Allocator, exprs []expr.Expr, names []string, env eval.Env) (*Project, error) {
	return NewProjectMemo(child, mem, exprs, names, env, nil)
}

// ProjectMemo keeps a projection's output schema between the times one
// plan node is lowered (the executions of a prepared statement), so that
// each does not build it and its name index again. It is safe for
// concurrent use; the zero value is empty.
type ProjectMemo struct {
	mu     sync.Mutex
	types  []sqltypes.Type
	schema *arrow.Schema
}

// NewProjectMemo is NewProject that takes its schema from m (nil: none)
// when the compiled expressions have the types m's schema was made for,
// and keeps the schema it makes in m otherwise. names must be the same at
// every call with one m.
func NewProjectMemo(child Operator, mem memory.Allocator, exprs []expr.Expr, names []string, env eval.Env, m *ProjectMemo) (*Project, error) {
	if len(names) != len(exprs) {
		return nil, sqlerr.New(sqlerr.InternalError, "project: %d names for %d expressions", len(names), len(exprs))
	}
	env.Mem = mem
	evs, err := compileAll(exprs, child.Schema(), env)
	if err != nil {
		return nil, err
	}
	if m != nil {
		m.mu.Lock()
		schema := m.schema
		for i := 0; schema != nil && i < len(evs); i++ {
			if len(m.types) != len(evs) || m.types[i] != evs[i].Type() {
				schema = nil
			}
		}
		m.mu.Unlock()
		if schema != nil {
			return &Project{child: child, exprs: evs, schema: schema}, nil
		}
	}
	fields := make([]arrow.Field, len(exprs))
	types := make([]sqltypes.Type, len(exprs))
	for i, ev := range evs {
		types[i] = ev.Type()
		fields[i] = types[i].Field(names[i], true)
	}
	schema := arrow.NewSchema(fields, nil)
	if m != nil {
		m.mu.Lock()
		m.types, m.schema = types, schema
		m.mu.Unlock()
	}
	return &Project{child: child, exprs: evs, schema: schema}, nil
}

func (p *Project) Schema() *arrow.Schema          { return p.schema }
func (p *Project) Open(ctx context.Context) error { return p.child.Open(ctx) }
func (p *Project) Close() error                   { return p.child.Close() }

func (p *Project) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := p.child.Next(ctx)
	if err != nil {
		return nil, err
	}
	defer b.Release()
	cols := make([]arrow.Array, len(p.exprs))
	for i, ev := range p.exprs {
		c, err := ev.Eval(ctx, b)
		if err != nil {
			releaseArrays(cols[:i])
			return nil, err
		}
		cols[i] = c
	}
	out := array.NewRecordBatch(p.schema, cols, b.NumRows())
	releaseArrays(cols)
	return out, nil
}

func releaseArrays(as []arrow.Array) {
	for _, a := range as {
		if a != nil {
			a.Release()
		}
	}
}
