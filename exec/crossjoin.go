package exec

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
)

// CrossJoin is the Cartesian product of a streamed left input and a
// materialized (small) right input: for each left row, every right row, in
// order. Output: left columns, then right columns. Output batches hold at
// most about BatchSize rows (one left row's product at least).
type CrossJoin struct {
	left, right Operator
	mem         memory.Allocator
	schema      *arrow.Schema
	budget      memBudget
	batchSize   int

	rightAll arrow.RecordBatch
	cur      arrow.RecordBatch // left batch being expanded
	curRow   int
}

var _ Operator = (*CrossJoin)(nil)

// CrossJoinOptions tune a CrossJoin.
type CrossJoinOptions struct {
	// MemoryLimit bounds the right side's bytes (0 = unlimited; 53200 beyond).
	MemoryLimit int64
	BatchSize   int // 0 = DefaultBatchSize
}

// NewCrossJoin returns left × right.
func NewCrossJoin(left, right Operator, mem memory.Allocator, opts CrossJoinOptions) (*CrossJoin, error) {
	fields := append(append([]arrow.Field{}, left.Schema().Fields()...), right.Schema().Fields()...)
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	return &CrossJoin{left: left, right: right, mem: mem, schema: arrow.NewSchema(fields, nil),
		budget: newBudget("cross join", mem, opts.MemoryLimit), batchSize: opts.BatchSize}, nil
}

func (c *CrossJoin) Schema() *arrow.Schema { return c.schema }

func (c *CrossJoin) Open(ctx context.Context) error {
	if err := c.left.Open(ctx); err != nil {
		return err
	}
	return c.right.Open(ctx)
}

func (c *CrossJoin) Close() error {
	for _, b := range []*arrow.RecordBatch{&c.rightAll, &c.cur} {
		if *b != nil {
			(*b).Release()
			*b = nil
		}
	}
	lerr, rerr := c.left.Close(), c.right.Close()
	if lerr != nil {
		return lerr
	}
	return rerr
}

func (c *CrossJoin) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if c.rightAll == nil {
		parts, err := drainAll(ctx, c.right, &c.budget)
		if err != nil {
			return nil, err
		}
		all, err := concatBatches(c.mem, c.right.Schema(), parts)
		releaseBatches(parts)
		if err != nil {
			return nil, err
		}
		c.rightAll = all
	}
	m := int(c.rightAll.NumRows())
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if c.cur == nil || c.curRow >= int(c.cur.NumRows()) {
			if c.cur != nil {
				c.cur.Release()
				c.cur = nil
			}
			b, err := c.left.Next(ctx)
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			if err != nil {
				return nil, err
			}
			if m == 0 || b.NumRows() == 0 {
				b.Release()
				continue
			}
			c.cur, c.curRow = b, 0
		}
		rows := max(1, c.batchSize/m)
		end := min(int(c.cur.NumRows()), c.curRow+rows)
		var li, ri []int
		for i := c.curRow; i < end; i++ {
			for r := 0; r < m; r++ {
				li = append(li, i)
				ri = append(ri, r)
			}
		}
		c.curRow = end
		cols := make([]arrow.Array, 0, c.schema.NumFields())
		for _, side := range []struct {
			b   arrow.RecordBatch
			idx []int
		}{{c.cur, li}, {c.rightAll, ri}} {
			for k := 0; k < int(side.b.NumCols()); k++ {
				a, err := eval.Take(c.mem, side.b.Column(k), side.idx)
				if err != nil {
					releaseArrays(cols)
					return nil, err
				}
				cols = append(cols, a)
			}
		}
		out := array.NewRecordBatch(c.schema, cols, int64(len(li)))
		releaseArrays(cols)
		return out, nil
	}
}
