package exec

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sqlerr"
)

// Limit skips Offset rows and then passes at most Count rows (Count < 0:
// no limit). It slices batches without copying and stops pulling from its
// child as soon as the count is reached.
type Limit struct {
	child         Operator
	offset, count int64
	done          bool
}

var _ Operator = (*Limit)(nil)

// NewLimit returns LIMIT count OFFSET offset over child; count < 0 means
// no LIMIT. A negative offset is 2201X, as in Postgres.
func NewLimit(child Operator, count, offset int64) (*Limit, error) {
	if offset < 0 {
		return nil, sqlerr.New("2201X", "OFFSET must not be negative")
	}
	return &Limit{child: child, offset: offset, count: count}, nil
}

func (l *Limit) Schema() *arrow.Schema          { return l.child.Schema() }
func (l *Limit) Open(ctx context.Context) error { return l.child.Open(ctx) }
func (l *Limit) Close() error                   { return l.child.Close() }

func (l *Limit) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if l.done || l.count == 0 {
			l.done = true
			return nil, io.EOF
		}
		b, err := l.child.Next(ctx)
		if err != nil {
			return nil, err
		}
		n := b.NumRows()
		if l.offset >= n {
			l.offset -= n
			b.Release()
			continue
		}
		start, end := l.offset, n
		l.offset = 0
		if l.count >= 0 && end-start >= l.count {
			end = start + l.count
			l.done = true
		}
		if l.count >= 0 {
			l.count -= end - start
		}
		if start == 0 && end == n {
			return b, nil
		}
		out := b.NewSlice(start, end)
		b.Release()
		return out, nil
	}
}
