package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

type exprLike = expr.Expr

// Filter passes on the rows for which a boolean predicate is TRUE (NULL
// counts as FALSE, as in WHERE and HAVING). Batches where every row passes
// are forwarded untouched; batches where none passes are skipped.
type Filter struct {
	child Operator
	pred  *eval.Evaluator
	mem   memory.Allocator
}

var _ Operator = (*Filter)(nil)

// NewFilter returns a filter of child by pred. env supplies now() and the
// session options; mem allocates the output.
func NewFilter(child Operator, mem memory.Allocator, pred expr.Expr, env eval.Env) (*Filter, error) {
	env.Mem = mem
	ev, err := eval.Compile(pred, child.Schema(), env)
	if err != nil {
		return nil, err
	}
	if ev.Type().Kind != sqltypes.Bool {
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "argument of WHERE must be type boolean, not type %s", ev.Type())
	}
	return &Filter{child: child, pred: ev, mem: mem}, nil
}

func (f *Filter) Schema() *arrow.Schema          { return f.child.Schema() }
func (f *Filter) Open(ctx context.Context) error { return f.child.Open(ctx) }
func (f *Filter) Close() error                   { return f.child.Close() }

func (f *Filter) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := f.child.Next(ctx)
		if err != nil {
			return nil, err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		m, err := f.pred.Eval(ctx, b)
		if err != nil {
			b.Release()
			return nil, err
		}
		ba := m.(*array.Boolean)
		mask := make([]bool, ba.Len())
		kept := 0
		for i := range mask {
			mask[i] = ba.IsValid(i) && ba.Value(i)
			if mask[i] {
				kept++
			}
		}
		m.Release()
		if kept == 0 {
			b.Release()
			continue
		}
		out, err := eval.FilterBatch(f.mem, b, mask)
		b.Release()
		return out, err
	}
}
