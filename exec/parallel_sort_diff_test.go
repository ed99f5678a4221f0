package exec_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

var sortDiffSchema = arrow.NewSchema([]arrow.Field{
	sqltypes.Int4Type.Field("id", false),
	sqltypes.Int8Type.Field("k", true),
	sqltypes.Float8Type.Field("f", true),
	sqltypes.TextType.Field("s", true),
	sqltypes.Int8Type.Field("u", false),
	sqltypes.Float8Type.Field("g", false),
	sqltypes.Int8Type.Field("z", false),
	sqltypes.Float8Type.Field("h", false),
}, nil)

// sortDiffTable is n rows full of ties and awkward values: k one of 5
// (10% NULL), f from NaN, ±0, ±Inf and a few numbers (10% NULL), s text
// sharing a long prefix, some values prefixes of others (10% NULL), u
// without NULLs from 3 values; g without NULLs from f's values; z
// without NULLs and skewed: most rows in one radix bucket (1000 to 1009,
// ties), the others anywhere in the int64 range; h without NULLs, NaN or
// -0 (so decodable from its normalized key); id numbers the rows.
func sortDiffTable(n int) func(mem memory.Allocator) []arrow.RecordBatch {
	return func(mem memory.Allocator) []arrow.RecordBatch {
		rng := rand.New(rand.NewPCG(3, 4))
		floats := []float64{math.NaN(), 0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), 1.5, -2.5, 1e300}
		strs := []string{"", "a", "ab", "abcdefgh", "abcdefghij", "abcdefghik", "b"}
		bld := array.NewRecordBuilder(mem, sortDiffSchema)
		defer bld.Release()
		null := func() bool { return rng.IntN(10) == 0 }
		for i := 0; i < n; i++ {
			bld.Field(0).(*array.Int32Builder).Append(int32(i))
			if null() {
				bld.Field(1).AppendNull()
			} else {
				bld.Field(1).(*array.Int64Builder).Append(int64(rng.IntN(5) - 2))
			}
			if null() {
				bld.Field(2).AppendNull()
			} else {
				bld.Field(2).(*array.Float64Builder).Append(floats[rng.IntN(len(floats))])
			}
			if null() {
				bld.Field(3).AppendNull()
			} else {
				bld.Field(3).(*array.StringBuilder).Append("common/prefix/" + strs[rng.IntN(len(strs))])
			}
			bld.Field(4).(*array.Int64Builder).Append(int64(rng.IntN(3)))
			bld.Field(5).(*array.Float64Builder).Append(floats[rng.IntN(len(floats))])
			z := 1000 + rng.Int64N(10)
			if rng.IntN(5) == 0 {
				z = int64(rng.Uint64())
			}
			bld.Field(6).(*array.Int64Builder).Append(z)
			h := []float64{0, math.Inf(1), math.Inf(-1), -1e-300, 7}[rng.IntN(5)]
			if rng.IntN(2) == 0 {
				h = rng.NormFloat64() * 1e6
			}
			bld.Field(7).(*array.Float64Builder).Append(h)
		}
		return []arrow.RecordBatch{bld.NewRecordBatch()}
	}
}

// serialSorted is the serial Sort's output over the whole table, formatted.
func serialSorted(t *testing.T, table func(memory.Allocator) []arrow.RecordBatch, keys []exec.SortKey) string {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s, err := exec.NewSort(exec.NewBatches(sortDiffSchema, table(mem)), mem, keys, exec.SortOptions{})
	require.NoError(t, err)
	got, err := exectest.Collect(context.Background(), s, mem)
	require.NoError(t, err)
	defer got.Release()
	return exectest.Format(got)
}

// TestParallelSortDiff: the parallel sort gives the serial Sort's output,
// row for row, at 1, 2, 3 and 8 workers over every layout of the input
// (batches of 1 row make 240 morsels, so many runs per worker's
// merge; empty batches in between), at several output batch sizes, on
// keys with ties, NULLs first and last, DESC, NaN and ±0, text keys that
// share a long prefix and do not fit the normalized key, and keys of the
// fast merge (numbers only) with and without NULLs.
func TestParallelSortDiff(t *testing.T) {
	// Buckets of about 2 rows: the range path cuts its ranges into many.
	defer exec.SetRangeBucketRows(2)()
	table := sortDiffTable(240)
	for i, keys := range [][]exec.SortKey{
		{{Col: 4}},                         // three values, no NULLs: the fast merge, many ties
		{{Col: 4, Desc: true}, {Col: 1}},   // fast merge, NULLs last in the second key
		{{Col: 1, Nulls: exec.NullsFirst}}, // NULLs first, ties
		{{Col: 2, Desc: true}, {Col: 4}},   // NaN, ±0, ±Inf, DESC (NULLs first)
		{{Col: 2, Nulls: exec.NullsLast}, {Col: 1, Desc: true, Nulls: exec.NullsLast}, {Col: 4}},
		{{Col: 3}}, // text with a shared prefix, ties
		{{Col: 3, Desc: true, Nulls: exec.NullsLast}, {Col: 1}},
		{{Col: 1}, {Col: 3, Nulls: exec.NullsFirst}, {Col: 2}},
		// Without NULLs, at most two keys of numbers: the range path.
		{{Col: 5}},                       // NaN, ±0, ±Inf, ties
		{{Col: 5, Desc: true}, {Col: 4}}, // DESC, then ties on both keys
		{{Col: 6}},                       // skewed: one radix bucket holds most rows
		{{Col: 6, Desc: true}, {Col: 5, Desc: true}}, // skewed DESC
		{{Col: 0, Desc: true}},                       // no ties (Int4)
		{{Col: 7}},                                   // floats without NaN or -0
		{{Col: 7, Desc: true}, {Col: 6}},
		{{Col: 4}, {Col: 6}, {Col: 5}}, // three keys without NULLs: the merge
	} {
		want := serialSorted(t, table, keys)
		// One output batch size per key set, in turn: every key set at
		// every size takes minutes under the race detector.
		for _, batch := range []int{[]int{1, 7, 1024}[i%3]} {
			t.Run(fmt.Sprintf("%v/batch=%d", keys, batch), func(t *testing.T) {
				exectest.Run(t, exectest.Case{
					Inputs:   table,
					Parallel: parallelSort(keys, exec.SortOptions{BatchSize: batch}, nil),
					Check: func(t *testing.T, got arrow.RecordBatch, err error) {
						t.Helper()
						require.NoError(t, err)
						if g := exectest.Format(got); g != want {
							gl, wl := strings.Split(g, "\n"), strings.Split(want, "\n")
							for i := range min(len(gl), len(wl)) {
								if gl[i] != wl[i] {
									t.Fatalf("row %d is %q, the serial sort's %q", i, gl[i], wl[i])
								}
							}
							t.Fatalf("%d rows, the serial sort gave %d", len(gl), len(wl))
						}
					},
				})
			})
		}
	}
}

// TestParallelSortRangeBuckets: the range path over more rows than its
// sample (1024 a range) takes, so the sample misses keys below and above
// the first and last range's estimated bounds (z: 20% of its values
// anywhere in the int64 range), cut into buckets of about 16 rows, gives
// the serial Sort's output at every degree.
func TestParallelSortRangeBuckets(t *testing.T) {
	defer exec.SetRangeBucketRows(16)()
	table := sortDiffTable(6000)
	for _, keys := range [][]exec.SortKey{
		{{Col: 6}},
		{{Col: 6, Desc: true}, {Col: 5}},
		{{Col: 7, Desc: true}, {Col: 6}},
		{{Col: 4}, {Col: 7}},
		{{Col: 0, Desc: true}},
	} {
		want := serialSorted(t, table, keys)
		t.Run(fmt.Sprint(keys), func(t *testing.T) {
			exectest.Run(t, exectest.Case{
				Inputs:   table,
				Layouts:  []exectest.Layout{{Name: "size=1000+empty", Size: 1000, Empty: true, Seed: 1}, {Name: "random", Seed: 2}},
				Parallel: parallelSort(keys, exec.SortOptions{BatchSize: 1024}, nil),
				Check: func(t *testing.T, got arrow.RecordBatch, err error) {
					t.Helper()
					require.NoError(t, err)
					if g := exectest.Format(got); g != want {
						gl, wl := strings.Split(g, "\n"), strings.Split(want, "\n")
						for i := range min(len(gl), len(wl)) {
							if gl[i] != wl[i] {
								t.Fatalf("row %d is %q, the serial sort's %q", i, gl[i], wl[i])
							}
						}
						t.Fatalf("%d rows, the serial sort gave %d", len(gl), len(wl))
					}
				},
			})
		})
	}
}

// TestParallelSortEarlyClose: a consumer that stops after the first batch
// (LIMIT) or whose context is cancelled leaves no worker and no memory.
func TestParallelSortEarlyClose(t *testing.T) {
	before := runtime.NumGoroutine()
	// Text keys take the merge path; numbers without NULLs the range path.
	for _, keys := range [][]exec.SortKey{{{Col: 3}, {Col: 0}}, {{Col: 6}, {Col: 0}}} {
		for _, workers := range []int{1, 2, 3, 8} {
			for _, cancel := range []bool{false, true} {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				table := sortDiffTable(500)(mem)
				in := exectest.Split(table[0], exectest.Layout{Size: 7}, 0)
				table[0].Release()
				op, err := parallelSort(keys, exec.SortOptions{BatchSize: 10}, nil)(mem, []exec.Operator{exec.NewBatches(sortDiffSchema, in)}, workers)
				require.NoError(t, err)
				ctx, stop := context.WithCancel(context.Background())
				require.NoError(t, op.Open(ctx))
				b, err := op.Next(ctx)
				require.NoError(t, err)
				require.EqualValues(t, 10, b.NumRows())
				b.Release()
				if cancel {
					stop()
					_, err = op.Next(ctx)
					require.ErrorIs(t, err, context.Canceled)
				}
				require.NoError(t, op.Close())
				stop()
				mem.AssertSize(t, 0)
			}
		}
	}
	requireGoroutines(t, before)
}
