package asof

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sqlerr"
)

// Cond is a condition on the rows of one input's batches (an extra ON
// condition of spec §2.5 on one input alone): Eval returns a boolean
// array of the batch's length; a row it gives false or NULL for fails.
// The SQL layer's compiled expressions (exec/eval.Evaluator) are Conds.
type Cond interface {
	Eval(ctx context.Context, b arrow.RecordBatch) (arrow.Array, error)
}

// maskRows marks the rows failing c as having a NULL key: a left row then
// has no eligible rows, a right row is eligible for no left row (and, for
// RIGHT and FULL, comes out unmatched). ids, when given, are the rows'
// looked-up key ids, which a failing row loses.
func maskRows(ctx context.Context, c Cond, b arrow.RecordBatch, kb *keyBatch, ids []int32) error {
	m, err := c.Eval(ctx, b)
	if err != nil {
		return err
	}
	defer m.Release()
	return maskWith(m, kb, ids)
}

// maskWith applies an evaluated condition (see maskRows).
func maskWith(m arrow.Array, kb *keyBatch, ids []int32) error {
	ba, ok := m.(*array.Boolean)
	if !ok || ba.Len() != kb.n {
		return sqlerr.New(sqlerr.InternalError, "ASOF join condition gave %s of %d rows for a batch of %d", m.DataType(), m.Len(), kb.n)
	}
	for i := 0; i < kb.n; i++ {
		if ba.IsValid(i) && ba.Value(i) {
			continue
		}
		kb.null[i], kb.anyNull = true, true
		if ids != nil {
			ids[i] = -1
		}
	}
	return nil
}
