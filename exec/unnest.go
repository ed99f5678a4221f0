package exec

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqltypes"
)

// Unnest emits the elements of one array as a TEXT column (nil elements
// are NULL), in batches of at most seriesBatch rows.
type Unnest struct {
	mem    memory.Allocator
	schema *arrow.Schema
	elems  []*string
}

var _ Operator = (*Unnest)(nil)

// NewUnnest makes the operator over elems (owned by it from now on).
func NewUnnest(mem memory.Allocator, name string, elems []*string) *Unnest {
	return &Unnest{mem: mem, elems: elems,
		schema: arrow.NewSchema([]arrow.Field{sqltypes.TextType.Field(name, true)}, nil)}
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
	b := array.NewStringBuilder(u.mem)
	defer b.Release()
	for _, e := range u.elems[:n] {
		if e == nil {
			b.AppendNull()
		} else {
			b.Append(*e)
		}
	}
	u.elems = u.elems[n:]
	arr := b.NewArray()
	defer arr.Release()
	return array.NewRecordBatch(u.schema, []arrow.Array{arr}, int64(n)), nil
}
