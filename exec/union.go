package exec

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sqlerr"
)

// UnionAll streams its children one after the other. All children must
// have the same column types; names come from the first.
type UnionAll struct {
	children []Operator
	schema   *arrow.Schema
	cur      int
}

var _ Operator = (*UnionAll)(nil)

// NewUnionAll returns the concatenation of children's rows.
func NewUnionAll(children ...Operator) (*UnionAll, error) {
	if len(children) == 0 {
		return nil, sqlerr.New(sqlerr.InternalError, "UNION ALL without inputs")
	}
	s0 := children[0].Schema()
	for i, c := range children[1:] {
		s := c.Schema()
		if s.NumFields() != s0.NumFields() {
			return nil, sqlerr.New(sqlerr.SyntaxError, "each UNION query must have the same number of columns").
				WithDetail("Input 1 has %d columns, input %d has %d.", s0.NumFields(), i+2, s.NumFields())
		}
		for f := range s.Fields() {
			if !arrow.TypeEqual(s.Field(f).Type, s0.Field(f).Type) {
				return nil, sqlerr.New(sqlerr.DatatypeMismatch, "UNION types %s and %s cannot be matched", s0.Field(f).Type, s.Field(f).Type).
					WithDetail("Column %d (%s) of input %d.", f+1, s0.Field(f).Name, i+2)
			}
		}
	}
	return &UnionAll{children: children, schema: s0}, nil
}

func (u *UnionAll) Schema() *arrow.Schema { return u.schema }

func (u *UnionAll) Open(ctx context.Context) error {
	for _, c := range u.children {
		if err := c.Open(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (u *UnionAll) Close() error {
	var first error
	for _, c := range u.children {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (u *UnionAll) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if u.cur >= len(u.children) {
			return nil, io.EOF
		}
		b, err := u.children[u.cur].Next(ctx)
		if errors.Is(err, io.EOF) {
			u.cur++
			continue
		}
		if err != nil {
			return nil, err
		}
		if u.cur == 0 {
			return b, nil
		}
		// Later inputs carry their own names; rewrap under ours.
		out := array.NewRecordBatch(u.schema, b.Columns(), b.NumRows())
		b.Release()
		return out, nil
	}
}
