package operator

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

func batches(t *testing.T, mem memory.Allocator, sizes ...int) (*arrow.Schema, []arrow.RecordBatch) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	var out []arrow.RecordBatch
	v := int64(0)
	for _, n := range sizes {
		b := array.NewInt64Builder(mem)
		for i := 0; i < n; i++ {
			b.Append(v)
			v++
		}
		a := b.NewArray()
		out = append(out, array.NewRecordBatch(schema, []arrow.Array{a}, int64(n)))
		a.Release()
		b.Release()
	}
	return schema, out
}

func TestReaderRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema, bs := batches(t, mem, 3, 0, 2)
	rdr, err := array.NewRecordReader(schema, bs)
	require.NoError(t, err)
	for _, b := range bs {
		b.Release() // the reader holds its own references
	}
	// RecordReader -> Operator -> RecordReader.
	op := FromReader(rdr)
	require.NoError(t, op.Open(context.Background()))
	out := ToReader(context.Background(), op)
	var rows []int64
	for out.Next() {
		rows = append(rows, out.RecordBatch().Column(0).(*array.Int64).Int64Values()...)
	}
	require.NoError(t, out.Err())
	out.Release()
	require.Equal(t, []int64{0, 1, 2, 3, 4}, rows)
}

// failing yields one batch, then an error.
type failing struct {
	*Batches
	closed bool
}

func (f *failing) Next(ctx context.Context) (arrow.RecordBatch, error) {
	b, err := f.Batches.Next(ctx)
	if err != nil {
		return nil, errors.New("disk on fire")
	}
	return b, nil
}

func (f *failing) Close() error { f.closed = true; return f.Batches.Close() }

func TestToReaderReportsErrorsAndCancellation(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema, bs := batches(t, mem, 1)
	f := &failing{Batches: NewBatches(schema, bs)}
	r := ToReader(context.Background(), f)
	require.True(t, r.Next())
	require.False(t, r.Next())
	require.EqualError(t, r.Err(), "disk on fire")
	r.Release()
	require.True(t, f.closed, "the reader's last Release closes the operator")

	schema, bs = batches(t, mem, 1, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r = ToReader(ctx, NewBatches(schema, bs))
	require.False(t, r.Next())
	require.ErrorIs(t, r.Err(), context.Canceled)
	r.Release() // unread batches are released by Close
}

func TestDrainStopsOnCallbackError(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema, bs := batches(t, mem, 1, 1, 1)
	calls := 0
	err := Drain(context.Background(), NewBatches(schema, bs), func(arrow.RecordBatch) error {
		calls++
		return errors.New("stop")
	})
	require.EqualError(t, err, "stop")
	require.Equal(t, 1, calls)
}
