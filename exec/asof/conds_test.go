package asof

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// modCond is a test condition on an int64 column: the value is not a
// multiple of mod (NULL fails). The reference reads holds, the join Eval.
type modCond struct {
	col int
	mod int64
}

func (c modCond) holds(b arrow.RecordBatch, i int) bool {
	a := b.Column(c.col).(*array.Int64)
	return a.IsValid(i) && a.Value(i)%c.mod != 0
}

func (c modCond) Eval(_ context.Context, b arrow.RecordBatch) (arrow.Array, error) {
	bb := array.NewBooleanBuilder(memory.NewGoAllocator())
	defer bb.Release()
	a := b.Column(c.col)
	for i := 0; i < int(b.NumRows()); i++ {
		if a.IsNull(i) {
			bb.AppendNull()
			continue
		}
		bb.Append(c.holds(b, i))
	}
	return bb.NewArray(), nil
}

// condHolds is the reference's reading of a condition (nil holds).
func condHolds(c Cond, b arrow.RecordBatch, i int) bool {
	return c == nil || c.(modCond).holds(b, i)
}
