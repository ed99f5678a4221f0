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

// sumCond is a test condition on both inputs, l.a * 3 + r.b > c in the
// spirit of `l.price + r.bid > 300`, over a pair batch whose column 0 is
// the left value and column 1 the right one. With nulls, a pair whose
// sum is a multiple of 5 gives NULL (which is not eligible), as a
// NULL-producing SQL expression does.
type sumCond struct {
	c     int64
	nulls bool
	// mod, when set, makes the condition (l.a * 3 + r.b) % mod = 0
	// instead: few pairs pass, so a left row walks many candidates.
	mod int64
}

// value is the condition on one pair: ok false is NULL.
func (s sumCond) value(la, rb arrow.Array, li, ri int) (v, ok bool) {
	if la.IsNull(li) || rb.IsNull(ri) {
		return false, false
	}
	sum := la.(*array.Int64).Value(li)*3 + rb.(*array.Int64).Value(ri)
	if s.nulls && sum%5 == 0 {
		return false, false
	}
	if s.mod > 0 {
		return sum%s.mod == 0, true
	}
	return sum > s.c, true
}

func (s sumCond) Eval(_ context.Context, b arrow.RecordBatch) (arrow.Array, error) {
	bb := array.NewBooleanBuilder(memory.NewGoAllocator())
	defer bb.Release()
	for i := 0; i < int(b.NumRows()); i++ {
		v, ok := s.value(b.Column(0), b.Column(1), i, i)
		if !ok {
			bb.AppendNull()
			continue
		}
		bb.Append(v)
	}
	return bb.NewArray(), nil
}

// pairHolds is the reference's reading of a condition on both inputs
// (nil holds; NULL fails).
func pairHolds(r Right, left arrow.RecordBatch, li int, right arrow.RecordBatch, ri int) bool {
	if r.PairCond == nil {
		return true
	}
	v, ok := r.PairCond.(sumCond).value(left.Column(r.PairLeft[0]), right.Column(r.PairRight[0]), li, ri)
	return ok && v
}
