package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/operator"
)

// The operator contract lives in package exec/operator, which imports
// nothing of the SQL layer; these names keep it reachable as exec's own
// for the relational operators and their callers.

// Operator is a pull-based producer of record batches (operator.Operator).
type Operator = operator.Operator

// Batches is a source operator over an in-memory list of batches
// (operator.Batches).
type Batches = operator.Batches

// Pool is an allocator that recycles large buffers (operator.Pool).
type Pool = operator.Pool

// NewBatches returns a source that yields batches in order; it takes
// ownership of them.
func NewBatches(schema *arrow.Schema, batches []arrow.RecordBatch) *Batches {
	return operator.NewBatches(schema, batches)
}

// FromReader adapts an array.RecordReader into an Operator, taking over the
// caller's reference to rdr.
func FromReader(rdr array.RecordReader) Operator { return operator.FromReader(rdr) }

// ToReader adapts an opened Operator into an array.RecordReader that owns
// op: its final Release closes op.
func ToReader(ctx context.Context, op Operator) array.RecordReader { return operator.ToReader(ctx, op) }

// Drain opens op, reads it to the end and closes it, calling fn for each
// batch.
func Drain(ctx context.Context, op Operator, fn func(arrow.RecordBatch) error) error {
	return operator.Drain(ctx, op, fn)
}

// NewPool returns a pool over inner.
func NewPool(inner memory.Allocator) *Pool { return operator.NewPool(inner) }
