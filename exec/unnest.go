package exec

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// Unnest emits the elements of one array as a column of their type (nil
// elements are NULL), in batches of at most seriesBatch rows.
type Unnest struct {
	mem    memory.Allocator
	schema *arrow.Schema
	t      sqltypes.Type
	elems  []any
}

var _ Operator = (*Unnest)(nil)

// NewUnnest makes the operator over elems, values of type t in
// expr.Literal's representation (owned by it from now on).
func NewUnnest(mem memory.Allocator, name string, t sqltypes.Type, elems []any) *Unnest {
	return &Unnest{mem: mem, elems: elems, t: t,
		schema: arrow.NewSchema([]arrow.Field{t.Field(name, true)}, nil)}
}

func (u *Unnest) Schema() *arrow.Schema          { return u.schema }
func (u *Unnest) Open(ctx context.Context) error { return nil }
func (u *Unnest) Close() error                   { return nil }

func (u *Unnest) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(u.elems) == 0 {
		return nil, io.EOF
	}
	n := min(len(u.elems), seriesBatch)
	b := array.NewBuilder(u.mem, u.t.Arrow())
	defer b.Release()
	for _, e := range u.elems[:n] {
		vec.AppendValue(b, e)
	}
	u.elems = u.elems[n:]
	arr := b.NewArray()
	defer arr.Release()
	return array.NewRecordBatch(u.schema, []arrow.Array{arr}, int64(n)), nil
}
