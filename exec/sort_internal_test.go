package exec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// TestNormalizedSortMatchesComparator checks the normalized-key sort
// against a plain stable sort with the column comparators, on random data
// full of the awkward values: NaN, ±0, ±Inf, NULLs, strings that are
// prefixes of each other, contain NUL bytes or share 7-byte prefixes.
func TestNormalizedSortMatchesComparator(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 3000
	schema := arrow.NewSchema([]arrow.Field{
		sqltypes.Int4Type.Field("i", true), sqltypes.Float8Type.Field("f", true),
		sqltypes.TextType.Field("s", true), sqltypes.Int8Type.Field("j", true),
	}, nil)
	bld := array.NewRecordBuilder(mem, schema)
	defer bld.Release()
	floats := []float64{math.NaN(), 0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), 1.5, -1.5, 1e300, -1e-300}
	strs := []string{"", "a", "a\x00", "ab", "abcdefg", "abcdefgh", "abcdefgX", "abcdefghij", "abcdefghik", "b", "\xff"}
	for i := 0; i < n; i++ {
		null := func() bool { return rng.IntN(10) == 0 }
		if null() {
			bld.Field(0).AppendNull()
		} else {
			bld.Field(0).(*array.Int32Builder).Append(int32(rng.IntN(7) - 3))
		}
		if null() {
			bld.Field(1).AppendNull()
		} else {
			bld.Field(1).(*array.Float64Builder).Append(floats[rng.IntN(len(floats))])
		}
		if null() {
			bld.Field(2).AppendNull()
		} else {
			bld.Field(2).(*array.StringBuilder).Append(strs[rng.IntN(len(strs))] + strings.Repeat("z", rng.IntN(2)))
		}
		bld.Field(3).(*array.Int64Builder).Append(int64(rng.IntN(3)))
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	types := []sqltypes.Type{sqltypes.Int4Type, sqltypes.Float8Type, sqltypes.TextType, sqltypes.Int8Type}
	for trial := 0; trial < 40; trial++ {
		var keys []SortKey
		var kt []sqltypes.Type
		for _, c := range rng.Perm(4)[:1+rng.IntN(3)] {
			keys = append(keys, SortKey{Col: c, Desc: rng.IntN(2) == 0, Nulls: NullsOrder(rng.IntN(3))})
			kt = append(kt, types[c])
		}
		t.Run(fmt.Sprint(keys), func(t *testing.T) {
			got, err := sortedOrder(rec, keys, kt)
			require.NoError(t, err)
			cmp := referenceComparator(t, rec, keys, kt)
			want := make([]int, n)
			for i := range want {
				want[i] = i
			}
			slices.SortStableFunc(want, cmp)
			require.Equal(t, want, got)
		})
	}
}

// referenceComparator is the ORDER BY semantics written plainly on top of
// eval.Comparator, without the sort's prefix tricks.
func referenceComparator(t *testing.T, b arrow.RecordBatch, keys []SortKey, types []sqltypes.Type) func(i, j int) int {
	cmps := make([]func(i, j int) int, len(keys))
	for n, k := range keys {
		c, err := eval.Comparator(types[n], b.Column(k.Col), b.Column(k.Col))
		require.NoError(t, err)
		cmps[n] = c
	}
	return func(i, j int) int {
		for n, k := range keys {
			a := b.Column(k.Col)
			ni, nj := a.IsNull(i), a.IsNull(j)
			nullsFirst := k.Nulls == NullsFirst || (k.Nulls == NullsDefault && k.Desc)
			var c int
			switch {
			case ni && nj:
				c = 0
			case ni || nj:
				c = 1
				if ni == nullsFirst {
					c = -1
				}
			default:
				c = cmps[n](i, j)
				if k.Desc {
					c = -c
				}
			}
			if c != 0 {
				return c
			}
		}
		return 0
	}
}

// TestRadixSortMatchesComparator covers the paths for NULL-free keys:
// the radix sort (every key normalized and exact, strings sharing a long
// common prefix that the normalization skips) and, when some string does
// not fit its key, the comparison sort; ties must keep input order.
func TestRadixSortMatchesComparator(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(9, 10))
	const n = 5000
	schema := arrow.NewSchema([]arrow.Field{
		sqltypes.Int8Type.Field("i", true), sqltypes.Float8Type.Field("f", true),
		sqltypes.TextType.Field("sym", true), sqltypes.TextType.Field("long", true), sqltypes.Int2Type.Field("h", true),
	}, nil)
	bld := array.NewRecordBuilder(mem, schema)
	defer bld.Release()
	floats := []float64{math.NaN(), 0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), 1.5, -1.5, 1e300, -1e-300}
	for i := 0; i < n; i++ {
		bld.Field(0).(*array.Int64Builder).Append(rng.Int64N(1<<40) - 1<<39)
		bld.Field(1).(*array.Float64Builder).Append(floats[rng.IntN(len(floats))])
		// "SYM" + 13 digits of which the first 9 are zeros: exact after
		// skipping the 12-byte common prefix; some values are shorter.
		sym := fmt.Sprintf("SYM%013d", rng.IntN(300))
		if rng.IntN(20) == 0 {
			sym = sym[:12+rng.IntN(4)]
		}
		bld.Field(2).(*array.StringBuilder).Append(sym)
		// A common prefix, then up to 12 more bytes: not always exact.
		bld.Field(3).(*array.StringBuilder).Append("prefix/" + strings.Repeat("ab", rng.IntN(6)) + fmt.Sprint(rng.IntN(3)))
		bld.Field(4).(*array.Int16Builder).Append(int16(rng.IntN(5) - 2))
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	types := []sqltypes.Type{sqltypes.Int8Type, sqltypes.Float8Type, sqltypes.TextType, sqltypes.TextType, sqltypes.Int2Type}
	for trial := 0; trial < 40; trial++ {
		var keys []SortKey
		var kt []sqltypes.Type
		for _, c := range rng.Perm(5)[:1+rng.IntN(2)] {
			keys = append(keys, SortKey{Col: c, Desc: rng.IntN(2) == 0})
			kt = append(kt, types[c])
		}
		t.Run(fmt.Sprint(keys), func(t *testing.T) {
			got, err := sortedOrder(rec, keys, kt)
			require.NoError(t, err)
			want := make([]int, n)
			for i := range want {
				want[i] = i
			}
			slices.SortStableFunc(want, referenceComparator(t, rec, keys, kt))
			require.Equal(t, want, got)
		})
	}
	// The symbol column is exact after its common prefix: radix-sortable.
	norm, exact, ok := normalizedKeys(rec.Column(2), sqltypes.TextType, false)
	require.True(t, ok)
	require.False(t, exact)
	for i, v := range norm {
		require.True(t, strKeyExact(v, false), rec.Column(2).ValueStr(i))
	}
}
