package functions

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
	"github.com/stretchr/testify/require"
)

// testInput is an Input over ready-made argument arrays.
type testInput struct {
	mem  memory.Allocator
	args []arrow.Array
}

func (in *testInput) Context() context.Context   { return context.Background() }
func (in *testInput) Rows() int                  { return in.args[0].Len() }
func (in *testInput) Mem() memory.Allocator      { return in.mem }
func (in *testInput) Now() time.Time             { return time.Unix(0, 0) }
func (in *testInput) Options() *sqltypes.Options { return nil }
func (in *testInput) Location() *time.Location   { return time.UTC }
func (in *testInput) Arg(i int) (arrow.Array, error) {
	in.args[i].Retain()
	return in.args[i], nil
}
func (in *testInput) ArgWhere(i int, _ []bool) (arrow.Array, error) { return in.Arg(i) }

// roundTrip runs strict1 with the identity over one value of t (and a
// NULL), checking that reader and appender agree on T for that type.
func roundTrip[T comparable](t *testing.T, typ sqltypes.Type, v T) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	in := vec.Const(mem, typ, nil, 1)
	defer in.Release()
	var lit any = v
	switch x := lit.(type) {
	case int32:
		if typ.Kind != sqltypes.Date {
			lit = int64(x)
		}
	}
	one := vec.Const(mem, typ, lit, 2)
	defer one.Release()
	out, err := strict1(typ, func(x T) (T, error) { return x, nil })(&testInput{mem: mem, args: []arrow.Array{one}})
	require.NoError(t, err, typ.String())
	defer out.Release()
	require.Equal(t, lit, vec.Value(out, 1), typ.String())
	nulls, err := strict1(typ, func(x T) (T, error) { return x, nil })(&testInput{mem: mem, args: []arrow.Array{in}})
	require.NoError(t, err)
	defer nulls.Release()
	require.True(t, nulls.IsNull(0))
}

func TestReaderAppenderTypes(t *testing.T) {
	roundTrip(t, sqltypes.TextType, "x")
	roundTrip(t, sqltypes.Int4Type, int32(7))
	roundTrip(t, sqltypes.DateType, int32(19000))
	roundTrip(t, sqltypes.Int8Type, int64(-3))
	roundTrip(t, sqltypes.TimestampType, int64(1_000_000))
	roundTrip(t, sqltypes.TimestampTZType, int64(1_000_000))
	roundTrip(t, sqltypes.Float8Type, 2.5)
	roundTrip(t, sqltypes.BoolType, true)
	roundTrip(t, sqltypes.NumericType(10, 2), decimal128.FromI64(125))
	roundTrip(t, sqltypes.IntervalType, arrow.MonthDayNanoInterval{Months: 1, Days: 2, Nanoseconds: 3})
}
