package asof

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/exec/memacct"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

// pairTables builds a left and a right table of n rows each: t = i, key
// i % keys, value i.
func pairTables(mem memory.Allocator, n, keys int) (arrow.RecordBatch, arrow.RecordBatch) {
	mk := func(name string) arrow.RecordBatch {
		rows := make([][]any, n)
		for i := range rows {
			rows[i] = []any{int64(i), int64(i % keys), int64(i)}
		}
		return table(mem, []arrow.Field{f("t", i64), f("k", i64), f(name, i64)}, rows...)
	}
	return mk("lv"), mk("rv")
}

// runPair runs the join of left and right under sp through a few
// layouts and compares it with the reference.
func runPair(t *testing.T, mem memory.Allocator, left, right arrow.RecordBatch, sp Right) {
	t.Helper()
	want := refJoin(mem, left, []arrow.RecordBatch{right}, []Right{sp})
	for _, l := range []exectest.Layout{{Name: "1", Size: 1}, {Name: "random", Empty: true, Seed: 3}} {
		s := sp
		s.Input = operator.NewBatches(right.Schema(), exectest.Split(right, l, 1))
		j, err := New(operator.NewBatches(left.Schema(), exectest.Split(left, l, 0)), []Right{s}, Options{Allocator: mem})
		require.NoError(t, err)
		got, err := exectest.Collect(context.Background(), j, mem)
		require.NoError(t, err)
		gs := exectest.Format(got)
		got.Release()
		if sp.Kind.outer() {
			gs = leftRowsFirst(gs, int(left.NumCols()))
		}
		require.Equal(t, want, gs, "layout %s", l.Name)
	}
}

// TestPairWalk checks left rows that skip many failing candidates (about
// 1 in 31 pairs passes): several rounds per batch, rounds capped at
// maxPairs pairs, in every direction and kind.
func TestPairWalk(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	left, right := pairTables(mem, 160, 2)
	defer left.Release()
	defer right.Release()
	cond := sumCond{mod: 31}
	for _, r := range []struct {
		name   string
		lo, hi Bound
	}{
		{"backward", Unbounded, IntBound(0)}, {"forward", IntBound(0), Unbounded}, {"nearest", IntBound(-100), IntBound(80)}, {"before", IntBound(-200), IntBound(-5)},
	} {
		for _, kind := range []Kind{Anti, FullOuter} {
			t.Run(fmt.Sprintf("%s/%s", r.name, kind), func(t *testing.T) {
				runPair(t, mem, left, right, Right{
					Name: "r", LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1}, Lo: r.lo, Hi: r.hi,
					Kind: kind, Payload: []int{0, 2}, PairCond: cond, PairLeft: []int{2}, PairRight: []int{2},
				})
			})
		}
	}
}

// TestPairMemoryLimit checks that a key's history, kept for a condition
// on both inputs with an unbounded lower side, stays within the query's
// account: 53200 naming the join past it, and everything released.
func TestPairMemoryLimit(t *testing.T) {
	checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer checked.AssertSize(t, 0)
	acct := memacct.Open(nil, checked, 256<<10, nil)
	defer acct.Close()
	left, right := pairTables(acct, 20000, 1)
	defer left.Release()
	defer right.Release()
	sp := Right{
		Name: "quotes", LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1}, Lo: Unbounded, Hi: IntBound(0),
		Kind: Left, Payload: []int{2}, PairCond: sumCond{c: -1}, PairLeft: []int{2}, PairRight: []int{2},
		Input: operator.NewBatches(right.Schema(), exectest.Split(right, exectest.Layout{Size: 1024}, 1)),
	}
	j, err := New(operator.NewBatches(left.Schema(), exectest.Split(left, exectest.Layout{Size: 1024}, 0)), []Right{sp}, Options{Allocator: acct})
	require.NoError(t, err)
	_, err = exectest.Collect(context.Background(), j, acct)
	require.Error(t, err)
	require.Equal(t, sqlerr.OutOfMemory, sqlerr.Code(err), err.Error())
	e, _ := sqlerr.As(err)
	require.Contains(t, e.Detail, "ASOF JOIN with quotes (right rows kept for a condition on both inputs)")
}

// TestPairDrop checks a bounded range over many keys: rows leave as the
// left input passes them (their unmatched ones output by FULL), and the
// key lists of keys the left input no longer asks for are trimmed.
func TestPairDrop(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	left, right := pairTables(mem, 10000, 1000)
	defer left.Release()
	defer right.Release()
	sp := Right{
		Name: "r", LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1}, Lo: IntBound(-1500), Hi: IntBound(0),
		Kind: FullOuter, Payload: []int{0, 2}, PairCond: sumCond{mod: 7}, PairLeft: []int{2}, PairRight: []int{2},
	}
	want := refJoin(mem, left, []arrow.RecordBatch{right}, []Right{sp})
	sp.Input = operator.NewBatches(right.Schema(), exectest.Split(right, exectest.Layout{Size: 1024}, 1))
	j, err := New(operator.NewBatches(left.Schema(), exectest.Split(left, exectest.Layout{Size: 1024}, 0)), []Right{sp}, Options{Allocator: mem})
	require.NoError(t, err)
	got, err := exectest.Collect(context.Background(), j, mem)
	require.NoError(t, err)
	defer got.Release()
	require.True(t, leftRowsFirst(exectest.Format(got), 3) == want, "differs from the reference")
	require.Less(t, len(j.pair.seq), 2000, "rows below the window are dropped")
}

// gtCond is r.rp > frac as a pair condition over a batch (lp, rp):
// about 1 - frac of the right rows pass.
type gtCond struct{ frac float64 }

func (c gtCond) Eval(_ context.Context, b arrow.RecordBatch) (arrow.Array, error) {
	rp := b.Column(1).(*array.Float64).Float64Values()
	bb := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer bb.Release()
	bb.Reserve(len(rp))
	for _, v := range rp {
		bb.UnsafeAppend(v > c.frac)
	}
	return bb.NewArray(), nil
}

// BenchmarkPairCond is S1 (1M x 1M rows, 1,000 keys, backward unbounded)
// without a condition, and with a condition on both inputs that the
// nearest row passes always, or about 1 time in 8 (a left row then walks
// about 8 candidates): go test -run X -bench PairCond ./exec/asof/.
func BenchmarkPairCond(b *testing.B) {
	mem := memory.NewGoAllocator()
	left := materialize(b, newGen(mem, 1<<20, 1000, false, 1, "lp"))
	right := materialize(b, newGen(mem, 1<<20, 1000, false, 2, "rp"))
	for _, c := range []struct {
		name string
		cond Cond
	}{{"none", nil}, {"nearest", gtCond{-1}}, {"1in8", gtCond{0.875}}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sp := Right{Name: "r", Input: replay(right[0].Schema(), right), LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1},
					Lo: Unbounded, Hi: IntBound(0), Kind: Left, Payload: []int{0, 2}}
				if c.cond != nil {
					sp.PairCond, sp.PairLeft, sp.PairRight = c.cond, []int{2}, []int{2}
				}
				j, err := New(replay(left[0].Schema(), left), []Right{sp}, Options{Allocator: mem})
				if err != nil {
					b.Fatal(err)
				}
				if err := operator.Drain(context.Background(), j, func(rec arrow.RecordBatch) error { return nil }); err != nil {
					b.Fatal(err)
				}
				j.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(1<<20), "ns/leftrow")
		})
	}
}
