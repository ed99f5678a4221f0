package exec_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// TestHashVersusStreamAggregate runs the same aggregates with a hash
// table and, after a stable sort, in streaming mode over random data with
// many groups, NULL keys and random batch splits: both must agree (first
// and last too, since the sort keeps input order within a group).
func TestHashVersusStreamAggregate(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rng := rand.New(rand.NewPCG(seed, 99))
			n := 200 + rng.IntN(800)
			groups := 1 + rng.IntN(60)
			cell := func(null int, f func() string) []string {
				out := make([]string, n)
				for i := range out {
					if rng.IntN(100) < null {
						out[i] = "NULL"
					} else {
						out[i] = f()
					}
				}
				return out
			}
			tbl := mkTable(t, mem,
				tcol{"k", sqltypes.Int4Type, cell(5, func() string { return fmt.Sprint(rng.IntN(groups)) })},
				tcol{"v", sqltypes.Float8Type, cell(10, func() string { return fmt.Sprint(rng.IntN(1000)) })},
				tcol{"s", sqltypes.TextType, cell(10, func() string { return fmt.Sprintf("s%d", rng.IntN(7)) })},
				tcol{"q", sqltypes.Int8Type, cell(0, func() string { return fmt.Sprint(rng.IntN(50) - 25) })},
				// Many int8 groups: the hash table grows several times.
				tcol{"w", sqltypes.Int8Type, cell(5, func() string { return fmt.Sprint(rng.IntN(3000) - 1500) })},
				tcol{"h", sqltypes.Int2Type, cell(5, func() string { return fmt.Sprint(rng.IntN(groups) - 30) })},
			)
			defer tbl.Release()
			k := &expr.Column{Index: 0, Name: "k", T: sqltypes.Int4Type}
			v := &expr.Column{Index: 1, Name: "v", T: sqltypes.Float8Type}
			s := &expr.Column{Index: 2, Name: "s", T: sqltypes.TextType}
			q := &expr.Column{Index: 3, Name: "q", T: sqltypes.Int8Type}
			aggs := []exec.AggSpec{
				agg("count", false), agg("count", false, v), agg("sum", false, v), agg("sum", false, q),
				agg("avg", false, q), agg("min", false, s), agg("max", false, v), agg("count", true, s),
				agg("sum", true, q), agg("first", false, v), agg("last", false, s), agg("stddev", false, q),
				agg("bool_or", false, &expr.IsNull{X: s}),
			}
			keys := []*expr.Column{k, s, q,
				{Index: 4, Name: "w", T: sqltypes.Int8Type}, {Index: 5, Name: "h", T: sqltypes.Int2Type}}
			for _, key := range keys {
				t.Run(key.Name, func(t *testing.T) {
					hash, stream := runAgg(t, mem, rng, tbl, seed, key, aggs, false), runAgg(t, mem, rng, tbl, seed, key, aggs, true)
					require.Equal(t, hash, stream)
					require.NotEmpty(t, hash)
				})
			}
		})
	}
}

// runAgg aggregates tbl grouped by key, by hash or (after a stable sort)
// streaming, over random batch splits, and returns the result rows sorted.
func runAgg(t *testing.T, mem memory.Allocator, rng *rand.Rand, tbl arrow.RecordBatch, seed uint64, key *expr.Column, aggs []exec.AggSpec, stream bool) []string {
	layout := exectest.Layout{Seed: seed, Empty: true}
	src := exec.NewBatches(tbl.Schema(), exectest.Split(tbl, layout, 0))
	var op exec.Operator
	var err error
	if stream {
		var srt exec.Operator
		srt, err = exec.NewSort(src, mem, []exec.SortKey{{Col: key.Index}}, exec.SortOptions{BatchSize: 1 + rng.IntN(50)})
		require.NoError(t, err)
		op, err = exec.NewStreamAggregate(srt, mem, []expr.Expr{key}, []string{key.Name}, aggs, eval.Env{}, exec.AggOptions{})
	} else {
		op, err = exec.NewHashAggregate(src, mem, []expr.Expr{key}, []string{key.Name}, aggs, eval.Env{}, exec.AggOptions{BatchSize: 7})
	}
	require.NoError(t, err)
	got, err := exectest.Collect(context.Background(), op, mem)
	require.NoError(t, err)
	defer got.Release()
	rows := pgRows(got)
	slices.Sort(rows)
	return rows
}
