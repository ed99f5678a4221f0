package operator

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

// sources builds three arrays of dt from random values (some NULL), the
// last one a slice with an offset.
func sources(t *testing.T, mem memory.Allocator, dt arrow.DataType, rng *rand.Rand) []arrow.Array {
	var out []arrow.Array
	for s := 0; s < 3; s++ {
		b := array.NewBuilder(mem, dt)
		n := 1 + rng.IntN(20)
		for i := 0; i < n; i++ {
			if rng.IntN(5) == 0 {
				b.AppendNull()
				continue
			}
			v := rng.IntN(1000)
			switch b := b.(type) {
			case *array.Int8Builder:
				b.Append(int8(v))
			case *array.Int16Builder:
				b.Append(int16(v))
			case *array.Int32Builder:
				b.Append(int32(v))
			case *array.Int64Builder:
				b.Append(int64(v))
			case *array.Float64Builder:
				b.Append(float64(v) / 7)
			case *array.Decimal128Builder:
				b.Append(decimal128.FromI64(int64(v)))
			case *array.MonthDayNanoIntervalBuilder:
				b.Append(arrow.MonthDayNanoInterval{Months: int32(v), Days: 1, Nanoseconds: int64(v)})
			case *array.BooleanBuilder:
				b.Append(v%2 == 0)
			case *array.StringBuilder:
				b.Append(string(rune('a'+v%26)) + "xyz"[:v%4])
			case *array.LargeStringBuilder:
				b.Append(string(rune('a'+v%26)) + "xyz"[:v%4])
			case *array.BinaryBuilder:
				b.Append([]byte{byte(v), 0, byte(v >> 8)}[:v%4])
			case *array.ListBuilder:
				b.Append(true)
				b.ValueBuilder().(*array.Int64Builder).AppendValues([]int64{int64(v), 1}[:v%3%2+1], nil)
			default:
				t.Fatalf("no generator for %s", dt)
			}
		}
		a := b.NewArray()
		b.Release()
		if s == 2 && a.Len() > 2 {
			sl := array.NewSlice(a, 1, int64(a.Len()))
			a.Release()
			a = sl
		}
		out = append(out, a)
	}
	return out
}

// requireGathered checks got row by row against the sources.
func requireGathered(t *testing.T, srcs []arrow.Array, refs []Ref, got arrow.Array) {
	require.Equal(t, len(refs), got.Len())
	nulls := 0
	for i, r := range refs {
		if r.Src < 0 || srcs[r.Src].IsNull(int(r.Row)) {
			require.True(t, got.IsNull(i), "row %d: want NULL", i)
			nulls++
			continue
		}
		require.True(t, got.IsValid(i), "row %d: want a value", i)
		require.Equal(t, srcs[r.Src].ValueStr(int(r.Row)), got.ValueStr(i), "row %d", i)
	}
	require.Equal(t, nulls, got.NullN())
}

// TestGather checks Gather row by row against its sources for the typed
// loops (fixed widths of 1 to 16 bytes, booleans, strings, binaries) and
// the take kernel (a list), with NULL refs, NULL values and sliced sources,
// and that a fixed-width column has zero bytes under every NULL even from
// a pool whose buffers are dirty.
func TestGather(t *testing.T) {
	types := []arrow.DataType{
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32,
		arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, &arrow.Decimal128Type{Precision: 20, Scale: 2},
		arrow.FixedWidthTypes.MonthDayNanoInterval, arrow.FixedWidthTypes.Boolean, arrow.BinaryTypes.String,
		arrow.BinaryTypes.LargeString, arrow.BinaryTypes.Binary, arrow.ListOf(arrow.PrimitiveTypes.Int64),
	}
	for _, dt := range types {
		t.Run(dt.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			pool := NewPool(mem)
			defer pool.Close()
			rng := rand.New(rand.NewPCG(1, uint64(dt.ID())))
			for round := 0; round < 12; round++ {
				// Leave garbage in the pool's buffers of every size the
				// gather may ask for.
				for size := 4 << 10; size <= 64<<10; size *= 2 {
					dirty := pool.Allocate(size)
					for i := range dirty {
						dirty[i] = 0xA5
					}
					pool.Free(dirty)
				}
				srcs := sources(t, mem, dt, rng)
				refs := make([]Ref, 200+rng.IntN(400))
				for i := range refs {
					s := rng.IntN(len(srcs) + 1)
					if s == len(srcs) {
						refs[i] = NullRef
						continue
					}
					refs[i] = Ref{Src: int32(s), Row: int32(rng.IntN(srcs[s].Len()))}
				}
				got, err := Gather(context.Background(), pool, dt, srcs, refs)
				require.NoError(t, err)
				requireGathered(t, srcs, refs, got)
				if w := FixedWidth(dt); w > 0 {
					vals := FixedBytes(got, w)
					for i := range refs {
						if got.IsNull(i) {
							require.Equal(t, make([]byte, w), vals[i*w:(i+1)*w], "row %d: bytes under a NULL", i)
						}
					}
				}
				got.Release()
				for _, s := range srcs {
					s.Release()
				}
			}
		})
	}
}

func TestTake(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewStringBuilder(mem)
	b.AppendValues([]string{"a", "b", "c"}, []bool{true, false, true})
	a := b.NewArray()
	b.Release()
	defer a.Release()
	got, err := Take(context.Background(), mem, a, []int{2, -1, 1, 0, 2})
	require.NoError(t, err)
	defer got.Release()
	require.Equal(t, `["c" (null) (null) "a" "c"]`, got.String())
}

func TestCmpFloat(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	// Ascending in PostgreSQL's order.
	order := []float64{math.Inf(-1), -1, 0, 0.5, inf, nan}
	for i, a := range order {
		for j, b := range order {
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			require.Equal(t, want, CmpFloat(a, b), "%v vs %v", a, b)
			require.Equal(t, want, CmpFloat(float32(a), float32(b)), "float32 %v vs %v", a, b)
		}
	}
	require.Zero(t, CmpFloat(math.Copysign(0, -1), 0), "-0 = 0")
	require.Zero(t, CmpFloat(nan, -nan), "every NaN is equal")
}
