package asof

import (
	"context"
	"errors"
	"io"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

// skewedSource emits batches of batchRows rows over key "hot", except that
// the first row of each of the first rare batches has a key of its own that
// never recurs: without compaction each rare key's latest row would pin its
// whole batch forever.
type skewedSource struct {
	schema          *arrow.Schema
	mem             memory.Allocator
	batches, rare   int
	batchRows, sent int
	// strPayload makes the third column a string (not a hot column: the
	// input runs on the general path, whose refs pin batches).
	strPayload bool
}

func (s *skewedSource) Schema() *arrow.Schema      { return s.schema }
func (s *skewedSource) Open(context.Context) error { return nil }
func (s *skewedSource) Close() error               { return nil }
func (s *skewedSource) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if s.sent == s.batches {
		return nil, io.EOF
	}
	rows := make([][]any, s.batchRows)
	for i := range rows {
		t := int64(s.sent*s.batchRows + i)
		key := "hot"
		if i == 0 && s.sent < s.rare {
			key = "rare-" + string(rune('A'+s.sent%26)) + string(rune('a'+s.sent/26))
		}
		rows[i] = []any{t, key, t}
		if s.strPayload {
			rows[i][2] = strconv.FormatInt(t, 10)
		}
	}
	s.sent++
	return table(s.mem, append([]arrow.Field(nil), s.schema.Fields()...), rows...), nil
}

// TestBoundedMemory checks that the rows a join keeps stay bounded however
// long the input: on the general path by compaction (rare keys' latest rows
// would otherwise pin their batches), on the backward kernel by keeping no
// right rows at all beyond the cursor's batch.
func TestBoundedMemory(t *testing.T) {
	for _, general := range []bool{true, false} {
		t.Run(map[bool]string{true: "general", false: "backward"}[general], func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			const batchRows, batches, rare = 4096, 400, 100
			rfields := append([]arrow.Field(nil), rf...)
			if general {
				rfields[2] = f("rv", str)
			}
			right := &skewedSource{schema: arrow.NewSchema(rfields, nil), mem: mem, batches: batches, rare: rare, batchRows: batchRows, strPayload: general}
			left := &skewedSource{schema: arrow.NewSchema(lf, nil), mem: mem, batches: batches, rare: rare, batchRows: batchRows}
			sp := keyed(Unbounded, IntBound(0), Left)
			sp.Input = right
			j, err := New(left, []Right{sp}, Options{Allocator: mem, compactSlack: 8 * batchRows})
			require.NoError(t, err)
			defer j.Close()
			require.Equal(t, !general, lineInput(j, 0).back != nil)
			ctx := context.Background()
			require.NoError(t, j.Open(ctx))
			maxRetained, rows := int64(0), 0
			for {
				b, err := j.Next(ctx)
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				for i := 0; i < int(b.NumRows()); i++ {
					// Every left row matches its own right row (same t and key).
					require.Equal(t, b.Column(0).(*array.Int64).ValueStr(i), b.Column(4).ValueStr(i))
				}
				rows += int(b.NumRows())
				b.Release()
				maxRetained = max(maxRetained, lineInput(j, 0).retained)
			}
			require.Equal(t, batches*batchRows, rows)
			if general {
				// Without compaction the 100 rare keys would pin 100
				// batches (409,600 rows); with it, the dead rows stay
				// within the slack plus a few batches.
				require.Greater(t, lineInput(j, 0).compactions, 0)
				require.LessOrEqual(t, maxRetained, int64(8*batchRows+4*batchRows+2*rare))
				return
			}
			require.Zero(t, lineInput(j, 0).compactions)
			require.LessOrEqual(t, maxRetained, int64(batchRows))
		})
	}
}
