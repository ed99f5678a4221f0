package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
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
	if len(names) != len(exprs) {
		return nil, sqlerr.New(sqlerr.InternalError, "project: %d names for %d expressions", len(names), len(exprs))
	}
	env.Mem = mem
	evs, err := compileAll(exprs, child.Schema(), env)
	if err != nil {
		return nil, err
	}
	fields := make([]arrow.Field, len(exprs))
	for i, ev := range evs {
		fields[i] = ev.Type().Field(names[i], true)
	}
	return &Project{child: child, exprs: evs, schema: arrow.NewSchema(fields, nil)}, nil
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
