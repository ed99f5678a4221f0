package asof

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/stretchr/testify/require"
)

// The edge generator complements randomCase (property_test.go): on columns
// of int32, date32 and timestamp as well as int64 and float64; t at the
// int64 and int32 extremes; floats with -0, NaN and ±Inf, and infinite
// bounds (NaN edges); ranges that rounding emptied (Right.Empty); and one
// large case with more than 2,048 rows a batch and more than 65,536
// distinct keys. Every case is checked against the reference.

type edgeKind uint8

const (
	edgeInt64 edgeKind = iota
	edgeInt32
	edgeDate32
	edgeTimestamp
	edgeFloat
	edgeKinds
)

func (k edgeKind) dataType() arrow.DataType {
	switch k {
	case edgeInt32:
		return arrow.PrimitiveTypes.Int32
	case edgeDate32:
		return arrow.FixedWidthTypes.Date32
	case edgeTimestamp:
		return arrow.FixedWidthTypes.Timestamp_us
	case edgeFloat:
		return f64
	}
	return i64
}

// edgeValues returns n sorted on-column values (as int64 or float64), a
// few of them NULL (nil) or NaN.
func edgeValues(rng *rand.Rand, k edgeKind, n int) []any {
	out := make([]any, 0, n)
	switch k {
	case edgeFloat:
		pool := []float64{math.Inf(-1), -1e308, -3, -1.5, math.Copysign(0, -1), 0, 0.5, 1, 2.5, 1e308, math.Inf(1)}
		vs := make([]float64, n)
		for i := range vs {
			vs[i] = pool[rng.IntN(len(pool))]
		}
		slices.Sort(vs)
		for _, v := range vs {
			switch rng.IntN(12) {
			case 0:
				out = append(out, nil)
			case 1:
				out = append(out, math.NaN()) // NULL to the join, anywhere
			default:
				out = append(out, v)
			}
		}
		return out
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if k == edgeInt32 || k == edgeDate32 {
		lo, hi = math.MinInt32, math.MaxInt32
	}
	vs := make([]int64, n)
	for i := range vs {
		switch rng.IntN(8) {
		case 0:
			vs[i] = lo + int64(rng.IntN(3))
		case 1:
			vs[i] = hi - int64(rng.IntN(3))
		default:
			vs[i] = int64(rng.IntN(41)) - 20
		}
	}
	slices.Sort(vs)
	for _, v := range vs {
		if rng.IntN(12) == 0 {
			out = append(out, nil)
			continue
		}
		out = append(out, v)
	}
	return out
}

func edgeBounds(rng *rand.Rand, k edgeKind) (Bound, Bound) {
	if k == edgeFloat {
		pool := []float64{math.Inf(-1), -2.5, -1, 0, 1, 3, math.Inf(1)}
		a, b := pool[rng.IntN(len(pool))], pool[rng.IntN(len(pool))]
		if a > b {
			a, b = b, a
		}
		lo, hi := FloatBound(a), FloatBound(b)
		switch rng.IntN(5) {
		case 0:
			lo = Unbounded
		case 1:
			hi = Unbounded
		}
		return lo, hi
	}
	pool := []int64{math.MinInt64, math.MinInt32, -10, -3, -1, 0, 2, 5, math.MaxInt32, math.MaxInt64}
	a, b := pool[rng.IntN(len(pool))], pool[rng.IntN(len(pool))]
	if a > b {
		a, b = b, a
	}
	lo, hi := IntBound(a), IntBound(b)
	switch rng.IntN(5) {
	case 0:
		lo = Unbounded
	case 1:
		hi = Unbounded
	}
	return lo, hi
}

// edgeCase builds the tables and one right spec of a seed; rows and keys
// size the inputs.
func edgeCase(mem memory.Allocator, seed uint64, rows, keys int) ([]arrow.RecordBatch, Right, bool) {
	rng := rand.New(rand.NewPCG(seed, 1234))
	k := edgeKind(rng.IntN(int(edgeKinds)))
	mk := func(n int, name string) arrow.RecordBatch {
		fields := []arrow.Field{f("t", k.dataType()), f("k", i64), f(name, i64)}
		var data [][]any
		for i, v := range edgeValues(rng, k, n) {
			var kv any = int64(rng.IntN(keys))
			if rng.IntN(20) == 0 {
				kv = nil
			}
			data = append(data, []any{v, kv, int64(i)})
		}
		return table(mem, fields, data...)
	}
	cal := k == edgeTimestamp
	if cal {
		// Timestamps around month ends with calendar (month) bounds.
		mk = func(n int, name string) arrow.RecordBatch {
			fields := []arrow.Field{f("t", k.dataType()), f("k", i64), f(name, i64)}
			base := time.Date(2024, 1, 27, 0, 0, 0, 0, time.UTC).UnixMicro()
			vs := make([]int64, n)
			for i := range vs {
				vs[i] = base + int64(rng.IntN(100))*86_400_000_000 + int64(rng.IntN(3)-1)*1_000_000
			}
			slices.Sort(vs)
			var data [][]any
			for i, v := range vs {
				data = append(data, []any{v, int64(rng.IntN(keys)), int64(i)})
			}
			return table(mem, fields, data...)
		}
	}
	tables := []arrow.RecordBatch{mk(rng.IntN(rows+1), "lv"), mk(rng.IntN(rows+1), "rv")}
	lo, hi := edgeBounds(rng, k)
	if cal {
		calOf := func(months int32) Bound {
			c := &Calendar{Months: months, Days: int32(rng.IntN(3) - 1), Micros: int64(rng.IntN(3)-1) * 1_000_000}
			return Bound{Cal: c, Int: int64(months)}
		}
		lo, hi = calOf(int32(-rng.IntN(3))), calOf(int32(rng.IntN(3)))
		switch rng.IntN(4) {
		case 0:
			lo = Unbounded
		case 1:
			hi = Unbounded
		case 2:
			lo = IntBound(-int64(rng.IntN(40)) * 86_400_000_000)
		}
		// The sign hints as the planner sets them (calendarBound).
		for i, b := range []*Bound{&lo, &hi} {
			if b.Cal == nil {
				continue
			}
			c := b.Cal
			b.Int = -1
			anyPositive := c.Months > 0 || c.Days > 0 || c.Micros > 0
			if i == 0 && c.Months >= 0 && c.Days >= 0 && c.Micros >= 0 && anyPositive || i == 1 && anyPositive {
				b.Int = 1
			}
		}
	}
	sp := Right{Name: "r", LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1}, Lo: lo, Hi: hi,
		Tie: Tie(rng.IntN(2)), Kind: Kind(rng.IntN(6)), Payload: []int{0, 2}}
	if rng.IntN(3) == 0 {
		sp.LeftKeys, sp.Keys = nil, nil
	}
	if rng.IntN(8) == 0 {
		sp.Empty = true
	}
	return tables, sp, rng.IntN(2) == 0
}

// checkEdge runs one case at a layout against the reference.
func checkEdge(t *testing.T, seed uint64, rows, keys int, layout exectest.Layout) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tables, sp, serial := edgeCase(mem, seed, rows, keys)
	defer func() {
		for _, tb := range tables {
			tb.Release()
		}
	}()
	want := refJoin(mem, tables[0], tables[1:], []Right{sp})
	lop := operator.NewBatches(tables[0].Schema(), exectest.Split(tables[0], layout, 0))
	sp.Input = operator.NewBatches(tables[1].Schema(), exectest.Split(tables[1], layout, 1))
	j, err := New(lop, []Right{sp}, Options{Allocator: mem, Serial: serial})
	require.NoError(t, err)
	got, err := exectest.Collect(context.Background(), j, mem)
	require.NoError(t, err)
	defer got.Release()
	gotS := exectest.Format(got)
	if sp.Kind.outer() {
		gotS = leftRowsFirst(gotS, len(tables[0].Columns()))
	}
	if gotS != want {
		t.Fatalf("seed %d layout %+v on %s [lo=%+v hi=%+v empty=%v %s %s]\nleft:\n%s\nright:\n%s\nwant:\n%s\ngot:\n%s",
			seed, layout, tables[0].Schema().Field(0).Type, sp.Lo, sp.Hi, sp.Empty, sp.Tie, sp.Kind,
			exectest.Format(tables[0]), exectest.Format(tables[1]), want, gotS)
	}
}

// TestDifferentialEdges checks 1,000 small edge cases (200 in -short).
func TestDifferentialEdges(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 200
	}
	sizes := []int{0, 1, 2, 3, 7, 1024}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		checkEdge(t, seed, 30, 1+int(seed%4), exectest.Layout{Name: "random", Size: sizes[seed%6], Empty: seed%3 == 0, Seed: seed})
		if t.Failed() {
			return
		}
	}
}

// TestDifferentialLarge checks two large cases: inputs of up to 3,000 and
// 70,000 rows, in batches beyond 2,048 rows, with about 70,000 distinct
// keys on the right.
func TestDifferentialLarge(t *testing.T) {
	for _, seed := range []uint64{7, 8} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rng := rand.New(rand.NewPCG(seed, 5))
			const nl, nr, keys = 3000, 70000, 70000
			k := edgeKind(seed % uint64(edgeKinds))
			mk := func(n int, name string) arrow.RecordBatch {
				fields := []arrow.Field{f("t", k.dataType()), f("k", i64), f(name, i64)}
				data := make([][]any, 0, n)
				for i, v := range edgeValues(rng, k, n) {
					data = append(data, []any{v, int64(rng.IntN(keys)), int64(i)})
				}
				return table(mem, fields, data...)
			}
			left, right := mk(nl, "lv"), mk(nr, "rv")
			defer left.Release()
			defer right.Release()
			sp := Right{Name: "r", LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1}, Lo: Unbounded, Hi: IntBound(0),
				Kind: Kind(seed % 6), Payload: []int{0, 2}}
			if k == edgeFloat {
				sp.Hi = FloatBound(0)
			}
			want := refJoin(mem, left, []arrow.RecordBatch{right}, []Right{sp})
			layout := exectest.Layout{Name: "big", Size: 4096, Seed: seed}
			lop := operator.NewBatches(left.Schema(), exectest.Split(left, layout, 0))
			sp.Input = operator.NewBatches(right.Schema(), exectest.Split(right, layout, 1))
			j, err := New(lop, []Right{sp}, Options{Allocator: mem})
			require.NoError(t, err)
			got, err := exectest.Collect(context.Background(), j, mem)
			require.NoError(t, err)
			defer got.Release()
			gotS := exectest.Format(got)
			if sp.Kind.outer() {
				gotS = leftRowsFirst(gotS, 3)
			}
			require.True(t, gotS == want, "large case %d differs from the reference", seed)
		})
	}
}
