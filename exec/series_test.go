package exec_test

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

func TestSeries(t *testing.T) {
	for _, tc := range []struct {
		name              string
		t                 sqltypes.Type
		start, stop, step int64
		want              []string
	}{
		{"ascending", sqltypes.Int4Type, 1, 5, 2, []string{"1", "3", "5"}},
		{"descending", sqltypes.Int4Type, 10, 0, -4, []string{"10", "6", "2"}},
		{"one", sqltypes.Int8Type, 7, 7, 1, []string{"7"}},
		{"empty", sqltypes.Int4Type, 5, 1, 1, nil},
		{"stops before overflowing", sqltypes.Int8Type, math.MaxInt64 - 1, math.MaxInt64, 1,
			[]string{"9223372036854775806", "9223372036854775807"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exectest.Run(t, exectest.Case{
				Inputs: func(memory.Allocator) []arrow.RecordBatch { return nil },
				Build: func(mem memory.Allocator, _ []exec.Operator) (exec.Operator, error) {
					return exec.NewSeries(mem, "g", tc.t, tc.start, tc.stop, tc.step)
				},
				Check: wantRows(tc.want...),
			})
		})
	}
	t.Run("many batches", func(t *testing.T) {
		exectest.Run(t, exectest.Case{
			Inputs: func(memory.Allocator) []arrow.RecordBatch { return nil },
			Build: func(mem memory.Allocator, _ []exec.Operator) (exec.Operator, error) {
				return exec.NewSeries(mem, "g", sqltypes.Int8Type, 1, 2500, 1)
			},
			Check: func(t *testing.T, got arrow.RecordBatch, err error) {
				require.NoError(t, err)
				require.EqualValues(t, 2500, got.NumRows())
				rows := exectest.Rows(got)
				require.Equal(t, "1", rows[0])
				require.Equal(t, "2500", rows[2499])
			},
		})
	})
	_, err := exec.NewSeries(memory.DefaultAllocator, "g", sqltypes.Int4Type, 1, 2, 0)
	require.Equal(t, sqlerr.InvalidParameterValue, sqlerr.Code(err))
}

func TestUnnest(t *testing.T) {
	exectest.Run(t, exectest.Case{
		Inputs: func(memory.Allocator) []arrow.RecordBatch { return nil },
		Build: func(mem memory.Allocator, _ []exec.Operator) (exec.Operator, error) {
			return exec.NewUnnest(mem, "u", sqltypes.TextType, []any{"a", nil, ""}), nil
		},
		Check: wantRows("a", "NULL", ""),
	})
	exectest.Run(t, exectest.Case{
		Inputs: func(memory.Allocator) []arrow.RecordBatch { return nil },
		Build: func(mem memory.Allocator, _ []exec.Operator) (exec.Operator, error) {
			return exec.NewUnnest(mem, "u", sqltypes.Int8Type, []any{int64(3), nil}), nil
		},
		Check: wantRows("3", "NULL"),
	})
	exectest.Run(t, exectest.Case{
		Inputs: func(memory.Allocator) []arrow.RecordBatch { return nil },
		Build: func(mem memory.Allocator, _ []exec.Operator) (exec.Operator, error) {
			return exec.NewUnnest(mem, "u", sqltypes.TextType, nil), nil
		},
		Check: wantRows(),
	})
}
