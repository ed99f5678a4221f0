package asof

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/stretchr/testify/require"
)

// deafSource is an endless right input that never looks at its context:
// first one large batch, then (empty, if empties) batches forever, every t
// below the left row's, so a join reads ahead without end.
type deafSource struct {
	schema  *arrow.Schema
	mem     memory.Allocator
	first   int
	empties bool
	t       int64
}

func (s *deafSource) Schema() *arrow.Schema      { return s.schema }
func (s *deafSource) Open(context.Context) error { return nil }
func (s *deafSource) Close() error               { return nil }
func (s *deafSource) Next(context.Context) (arrow.RecordBatch, error) {
	n := 1
	if s.first > 0 {
		n, s.first = s.first, 0
	} else if s.empties {
		n = 0
	}
	b := array.NewRecordBuilder(s.mem, s.schema)
	defer b.Release()
	for i := 0; i < n; i++ {
		s.t++
		b.Field(0).(*array.Int64Builder).Append(s.t)
		b.Field(1).(*array.StringBuilder).Append("a")
		b.Field(2).(*array.Int64Builder).Append(s.t)
	}
	return b.NewRecordBatch(), nil
}

// TestCancelDeafInput cancels joins whose right input ignores the context
// while the join reads ahead: Next returns context.Canceled promptly (the
// test fails after 30 s otherwise), Close leaves no goroutine and no memory.
func TestCancelDeafInput(t *testing.T) {
	forms := []struct {
		name   string
		lo, hi Bound
		kind   Kind
	}{
		{"backward", Unbounded, IntBound(0), Left},    // the backward kernel
		{"forward", IntBound(0), Unbounded, Inner},    // the general path
		{"range", IntBound(-5), IntBound(5), Semi},    // the general path, both sides
		{"right", Unbounded, IntBound(0), RightOuter}, // the outer path
		{"full-forward", IntBound(1), Unbounded, FullOuter},
	}
	for _, fm := range forms {
		for _, serial := range []bool{true, false} {
			for _, empties := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/serial=%v/empties=%v", fm.name, serial, empties), func(t *testing.T) {
					before := runtime.NumGoroutine()
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer mem.AssertSize(t, 0)
					left := table(mem, append([]arrow.Field(nil), lf...), []any{int64(1) << 60, "a", 1})
					sp := keyed(fm.lo, fm.hi, fm.kind)
					if fm.name == "forward" || fm.name == "full-forward" {
						sp.LeftKeys, sp.Keys = nil, nil // every right row is the key's, none after the left t
					}
					sp.Input = &deafSource{schema: arrow.NewSchema(rf, nil), mem: mem, first: 20_000, empties: empties}
					rights := []Right{sp}
					if !fm.kind.outer() {
						// A second input makes the concurrent mode run goroutines.
						sp2 := keyed(Unbounded, IntBound(0), Left)
						sp2.Name = "other"
						sp2.Input = operator.NewBatches(arrow.NewSchema(rf, nil), nil)
						rights = append(rights, sp2)
					}
					j, err := New(operator.NewBatches(left.Schema(), []arrow.RecordBatch{left}), rights, Options{Allocator: mem, Serial: serial})
					require.NoError(t, err)
					ctx, cancel := context.WithCancel(context.Background())
					done := make(chan error, 1)
					go func() {
						for {
							b, err := j.Next(ctx)
							if err != nil {
								done <- err
								return
							}
							b.Release()
						}
					}()
					time.Sleep(20 * time.Millisecond)
					cancel()
					select {
					case err = <-done:
					case <-time.After(30 * time.Second):
						t.Fatal("the join did not stop after cancellation")
					}
					require.True(t, errors.Is(err, context.Canceled), "got %v", err)
					require.NoError(t, j.Close())
					deadline := time.Now().Add(5 * time.Second)
					for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
						time.Sleep(time.Millisecond)
					}
					require.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines left after Close")
				})
			}
		}
	}
}
