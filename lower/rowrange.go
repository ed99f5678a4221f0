package lower

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/sql/planner"
)

// rowRange passes on the rows [Start, End) of its input (a Scan's
// planner.RowRange: one part of a partitioned result). The rows before
// Start are read and dropped whole batches at a time; reading stops at
// End without draining the rest.
type rowRange struct {
	in         exec.Operator
	skip, left int64 // left < 0: no end
}

func newRowRange(in exec.Operator, r planner.RowRange) exec.Operator {
	left := int64(-1)
	if r.End >= 0 {
		left = max(r.End-r.Start, 0)
	}
	return &rowRange{in: in, skip: max(r.Start, 0), left: left}
}

func (r *rowRange) Schema() *arrow.Schema          { return r.in.Schema() }
func (r *rowRange) Open(ctx context.Context) error { return r.in.Open(ctx) }
func (r *rowRange) Close() error                   { return r.in.Close() }

func (r *rowRange) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for r.left != 0 {
		b, err := r.in.Next(ctx)
		if err != nil {
			return nil, err
		}
		n := b.NumRows()
		if r.skip >= n {
			r.skip -= n
			b.Release()
			continue
		}
		lo, hi := r.skip, n
		r.skip = 0
		if r.left >= 0 && hi-lo > r.left {
			hi = lo + r.left
		}
		if r.left > 0 {
			r.left -= hi - lo
		}
		if lo == 0 && hi == n {
			return b, nil
		}
		s := b.NewSlice(lo, hi)
		b.Release()
		return s, nil
	}
	return nil, io.EOF
}
