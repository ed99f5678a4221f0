package operator

import (
	"context"
	"errors"
	"io"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Operator is a pull-based producer of record batches. See the package
// documentation for the full contract.
type Operator interface {
	Schema() *arrow.Schema
	Open(ctx context.Context) error
	// Next returns the next batch, owned by the caller, or io.EOF.
	Next(ctx context.Context) (arrow.RecordBatch, error)
	// Close releases every resource the operator holds; it is idempotent.
	Close() error
}

// Batches is a source operator over an in-memory list of batches. It takes
// ownership of the batches it is given and releases those never handed out.
type Batches struct {
	schema  *arrow.Schema
	batches []arrow.RecordBatch
	next    int
}

var _ Operator = (*Batches)(nil)

// NewBatches returns a source that yields batches in order.
func NewBatches(schema *arrow.Schema, batches []arrow.RecordBatch) *Batches {
	return &Batches{schema: schema, batches: batches}
}

func (b *Batches) Schema() *arrow.Schema      { return b.schema }
func (b *Batches) Open(context.Context) error { return nil }

func (b *Batches) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if b.next >= len(b.batches) {
		return nil, io.EOF
	}
	r := b.batches[b.next]
	b.batches[b.next] = nil
	b.next++
	return r, nil
}

func (b *Batches) Close() error {
	for i := b.next; i < len(b.batches); i++ {
		if b.batches[i] != nil {
			b.batches[i].Release()
			b.batches[i] = nil
		}
	}
	b.next = len(b.batches)
	return nil
}

// FromReader adapts an array.RecordReader into an Operator. The operator
// takes over the caller's reference to rdr.
func FromReader(rdr array.RecordReader) Operator { return &readerOp{rdr: rdr} }

type readerOp struct {
	rdr    array.RecordReader
	closed bool
}

func (r *readerOp) Schema() *arrow.Schema      { return r.rdr.Schema() }
func (r *readerOp) Open(context.Context) error { return nil }

func (r *readerOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.closed || !r.rdr.Next() {
		if r.closed {
			return nil, io.EOF
		}
		if err := r.rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		return nil, io.EOF
	}
	b := r.rdr.RecordBatch()
	b.Retain()
	return b, nil
}

func (r *readerOp) Close() error {
	if !r.closed {
		r.closed = true
		r.rdr.Release()
	}
	return nil
}

// ToReader adapts an opened Operator into an array.RecordReader. The reader
// owns op: its final Release closes op. Errors (including cancellation) are
// reported by Err after Next returns false.
func ToReader(ctx context.Context, op Operator) array.RecordReader {
	r := &opReader{ctx: ctx, op: op}
	r.refs.Store(1)
	return r
}

// opReader stores a context because array.RecordReader's Next takes none;
// the context belongs to the single query the reader streams.
type opReader struct {
	refs atomic.Int64
	ctx  context.Context
	op   Operator
	cur  arrow.RecordBatch
	err  error
	done bool
}

func (r *opReader) Retain()               { r.refs.Add(1) }
func (r *opReader) Schema() *arrow.Schema { return r.op.Schema() }
func (r *opReader) Err() error            { return r.err }

func (r *opReader) Release() {
	if r.refs.Add(-1) == 0 {
		r.release()
		if err := r.op.Close(); err != nil && r.err == nil {
			r.err = err
		}
	}
}

func (r *opReader) release() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}

func (r *opReader) Next() bool {
	r.release()
	if r.done {
		return false
	}
	b, err := r.op.Next(r.ctx)
	if err != nil {
		r.done = true
		if !errors.Is(err, io.EOF) {
			r.err = err
		}
		return false
	}
	r.cur = b
	return true
}

func (r *opReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is the deprecated spelling of RecordBatch, kept for the interface.
func (r *opReader) Record() arrow.RecordBatch { return r.cur }

// Drain opens op, reads it to the end and closes it, calling fn for each
// batch (fn must not keep the batch without retaining it).
func Drain(ctx context.Context, op Operator, fn func(arrow.RecordBatch) error) (err error) {
	defer func() {
		if cerr := op.Close(); err == nil {
			err = cerr
		}
	}()
	if err := op.Open(ctx); err != nil {
		return err
	}
	for {
		b, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		ferr := fn(b)
		b.Release()
		if ferr != nil {
			return ferr
		}
	}
}
