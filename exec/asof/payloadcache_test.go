package asof

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/stretchr/testify/require"
)

// TestHotPayloads checks the per-key payload copies (payloadcache.go) and the shared
// key dictionary against the reference: narrow payloads of every cached
// width with NULL values (the differential test's payloads are never NULL
// in a winning row), several right inputs on the same keys (one shared key
// dictionary, sometimes with every key forced into one hash bucket), keys
// present on one side only, backward, forward and nearest ranges. Serial and concurrent
// runs must agree byte for byte, including the values under NULLs.
func TestHotPayloads(t *testing.T) {
	seeds := uint64(150)
	if testing.Short() {
		seeds = 30
	}
	for seed := uint64(0); seed < seeds; seed++ {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		rng := rand.New(rand.NewPCG(seed, 5))
		mk := func(rows int, keyBase int) arrow.RecordBatch {
			fields := []arrow.Field{f("t", i64), f("k", i64), f("p8", arrow.PrimitiveTypes.Int8),
				f("p16", arrow.PrimitiveTypes.Int16), f("p32", arrow.FixedWidthTypes.Date32),
				f("p64", f64), f("pu", arrow.PrimitiveTypes.Uint64)}
			var data [][]any
			tv := int64(rng.IntN(10)) - 5
			for i := 0; i < rows; i++ {
				tv += int64(rng.IntN(3))
				var k any = int64(keyBase + rng.IntN(4))
				if rng.IntN(10) == 0 {
					k = nil
				}
				row := []any{tv, k}
				for c := 0; c < 5; c++ {
					var v any = int64(rng.IntN(100)) - 50
					if c == 4 {
						v = uint64(rng.IntN(1000))
					}
					if rng.IntN(4) == 0 {
						v = nil
					}
					row = append(row, v)
				}
				data = append(data, row)
			}
			return table(mem, fields, data...)
		}
		ranges := [][2]Bound{
			{Unbounded, IntBound(0)}, {Unbounded, IntBound(-1)}, {IntBound(-3), IntBound(3)},
			{IntBound(0), Unbounded}, {IntBound(-5), IntBound(-1)},
		}
		tables := []arrow.RecordBatch{mk(rng.IntN(40), 0)}
		var specs []Right
		for i := 0; i < 1+rng.IntN(3); i++ {
			// keyBase 1 or 2: some keys exist on one side only.
			tables = append(tables, mk(rng.IntN(40), rng.IntN(3)))
			rg := ranges[rng.IntN(len(ranges))]
			specs = append(specs, Right{Name: fmt.Sprintf("r%d", i), LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1},
				Lo: rg[0], Hi: rg[1], Tie: Tie(rng.IntN(2)), Kind: Kind(rng.IntN(2)), Payload: []int{2, 3, 4, 5, 6, 0}})
		}
		want := refJoin(mem, tables[0], tables[1:], specs)
		layout := exectest.Layout{Name: "random", Size: []int{1, 2, 3, 7, 1024}[rng.IntN(5)], Empty: rng.IntN(2) == 0, Seed: seed}
		compact := rng.IntN(2) == 0
		var outs []arrow.RecordBatch
		for _, serial := range []bool{true, false} {
			ops := make([]operator.Operator, len(tables))
			for i, tb := range tables {
				ops[i] = operator.NewBatches(tb.Schema(), exectest.Split(tb, layout, uint64(i)))
			}
			sp := append([]Right(nil), specs...)
			for i := range sp {
				sp[i].Input = ops[i+1]
			}
			opts := Options{Allocator: mem, Serial: serial}
			if seed%3 == 0 {
				// Every key in one bucket: the shared dictionary must
				// still tell keys apart by exact comparison.
				opts.hashU64 = func(uint64) uint64 { return 42 }
			}
			if compact {
				opts.compactSlack = -1
			}
			j, err := New(ops[0], sp, opts)
			require.NoError(t, err)
			got, err := exectest.Collect(context.Background(), j, mem)
			require.NoError(t, err)
			require.NoError(t, j.Close())
			require.Equal(t, want, exectest.Format(got), "seed %d serial=%v specs %s", seed, serial, describe(specs))
			outs = append(outs, got)
		}
		for c := int(tables[0].NumCols()); c < int(outs[0].NumCols()); c++ {
			a, b := outs[0].Column(c).Data(), outs[1].Column(c).Data()
			if a.Len() == 0 {
				continue
			}
			w := fixedWidth(a.DataType())
			require.True(t, bytes.Equal(a.Buffers()[1].Bytes()[a.Offset()*w:(a.Offset()+a.Len())*w],
				b.Buffers()[1].Bytes()[b.Offset()*w:(b.Offset()+b.Len())*w]), "seed %d column %d: serial and concurrent values differ", seed, c)
		}
		for _, o := range outs {
			o.Release()
		}
		for _, tb := range tables {
			tb.Release()
		}
		mem.AssertSize(t, 0)
	}
}

// TestSharedDictStatePerInput: inputs share one key dictionary, but an input
// keeps per-key state only up to the largest id it has read itself, so a
// few-key input next to a many-key one stays small.
func TestSharedDictStatePerInput(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	fields := []arrow.Field{f("t", i64), f("k", i64), f("v", i64)}
	var lrows, few, many [][]any
	for i := 0; i < 1200; i++ {
		lrows = append(lrows, []any{int64(i), int64(i % 600), int64(i)})
		few = append(few, []any{int64(i), int64(i % 5), int64(i)})
		many = append(many, []any{int64(i), int64(i % 600), int64(i)})
	}
	tables := []arrow.RecordBatch{table(mem, fields, lrows...), table(mem, fields, few...), table(mem, fields, many...)}
	defer func() {
		for _, tb := range tables {
			tb.Release()
		}
	}()
	var specs []Right
	for i := 1; i <= 2; i++ {
		tables[i].Retain()
		specs = append(specs, Right{Name: fmt.Sprintf("r%d", i), Input: operator.NewBatches(tables[i].Schema(), []arrow.RecordBatch{tables[i]}),
			LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1}, Lo: Unbounded, Hi: IntBound(0), Kind: Left, Payload: []int{2}})
	}
	// Two left batches: the second comes after the many-key input has
	// interned its keys.
	halves := []arrow.RecordBatch{tables[0].NewSlice(0, 600), tables[0].NewSlice(600, 1200)}
	j, err := New(operator.NewBatches(tables[0].Schema(), halves), specs, Options{Allocator: mem, Serial: true})
	require.NoError(t, err)
	got, err := exectest.Collect(context.Background(), j, mem)
	require.NoError(t, err)
	defer got.Release()
	require.Equal(t, refJoin(mem, tables[0], tables[1:], specs), exectest.Format(got))
	require.Same(t, lineInput(j, 0).dict, lineInput(j, 1).dict)
	require.Equal(t, 600, lineInput(j, 0).dict.len())
	require.Equal(t, 5, lineInput(j, 0).nkeys, "the few-key input's state covers its own ids only")
	require.NoError(t, j.Close())
}
