package asof

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

var maxNumeric = decimal128.GetMaxValue(38)

func decOf(t *testing.T, s string, scale int32) decimal128.Num {
	n, err := decimal128.FromString(s, 38, scale)
	require.NoError(t, err)
	return n
}

// TestDecimalOnColumn runs NUMERIC on columns of several scales over the
// whole decimal range: values and bounds beyond int64 unscaled units
// (before the 128-bit kernel `BETWEEN -1000 AND 0` on a plain NUMERIC —
// scale 16 — could not even be expressed), negative values, and ties at
// equal distance on both sides under both PREFER rules.
func TestDecimalOnColumn(t *testing.T) {
	for _, scale := range []int32{0, 2, 16} {
		dt := &arrow.Decimal128Type{Precision: 38, Scale: scale}
		d := func(s string) decimal128.Num { return decOf(t, s, scale) }
		bound := func(s string) Bound { return DecBound(d(s)) }
		lfs := []arrow.Field{f("t", dt), f("lv", i64)}
		rfs := []arrow.Field{f("t", dt), f("rv", i64)}
		left := [][]any{
			{d("-99999999999999999999"), 1}, {d("-2000"), 2}, {d("-1000"), 3}, {d("0"), 4},
			{d("1000"), 5}, {d("3000"), 6}, {d("99999999999999999999"), 7}, {nil, 8},
		}
		right := [][]any{
			{d("-99999999999999999999"), 10}, {d("-3000"), 11}, {d("-2500"), 12}, {d("-1000"), 13},
			{d("-1000"), 14}, {d("1000"), 15}, {d("1000"), 16}, {d("3500"), 17}, {nil, 18},
			{d("99999999999999999999"), 19},
		}
		cases := []struct {
			name   string
			lo, hi Bound
			tie    Tie
			want   []any
		}{
			// backward within 1000: -2000 has -2500 (500 back); -1000 the
			// last of two; 0 reaches -1000 exactly 1000 back.
			{"back1000", bound("-1000"), bound("0"), PreferEarlier, []any{10, 12, 14, 14, 16, nil, 19, nil}},
			// nearest within 1000: 0 is 1000 from -1000 and from 1000.
			{"near-earlier", bound("-1000"), bound("1000"), PreferEarlier, []any{10, 12, 14, 14, 16, 17, 19, nil}},
			{"near-later", bound("-1000"), bound("1000"), PreferLater, []any{10, 12, 14, 15, 16, 17, 19, nil}},
			// forward excluding exact: the first of equal t after the row.
			{"forward-strict", Bound{Exclusive: true}, Unbounded, PreferEarlier, []any{11, 13, 15, 15, 17, 17, nil, nil}},
			// a range wider than int64 units at every scale.
			{"wide", bound("-100000000000000000000"), bound("-1"), PreferEarlier, []any{nil, 12, 12, 14, 14, 16, 17, nil}},
			// ±(10^38 − 1) unscaled units, the largest NUMERIC bound.
			{"huge", DecBound(maxNumeric.Negate()), DecBound(maxNumeric), PreferLater, []any{10, 12, 14, 15, 16, 17, 19, nil}},
		}
		if scale > 0 {
			// The same bound in units of the scale: 0.01 at scale 2 is one
			// unscaled unit.
			cases = append(cases, struct {
				name   string
				lo, hi Bound
				tie    Tie
				want   []any
			}{"fraction", bound("-0.5"), bound("0"), PreferEarlier, []any{10, nil, 14, nil, 16, nil, 19, nil}})
		}
		for _, c := range cases {
			sp := Right{Name: "r", LeftOn: 0, On: 0, Lo: c.lo, Hi: c.hi, Tie: c.tie, Kind: Left, Payload: []int{1}}
			runJoinCase(t, joinCase{name: fmt.Sprintf("%s/%s", dt, c.name), left: rowsOf(lfs, left...),
				rights: []func(memory.Allocator) arrow.RecordBatch{rowsOf(rfs, right...)}, specs: []Right{sp},
				want: expectRows(lfs, left, c.want)})
		}
	}
}

// TestDecimalWindowEdges: windows that leave the signed 128-bit range
// saturate (an edge beyond the line keeps every value on that side) or
// empty; strict bounds step one unit inward; distances up to 2^128 − 1 are
// compared exactly.
func TestDecimalWindowEdges(t *testing.T) {
	one := decimal128.FromI64(1)
	cases := []struct {
		name   string
		l      decimalValue
		lo, hi Bound
		empty  bool
		loOpen bool
		hiOpen bool
	}{
		{"hi overflows: open", maxDecimal, DecBound(decimal128.FromI64(0)), DecBound(one), false, false, true},
		{"lo overflows: empty", maxDecimal, DecBound(one), Unbounded, true, false, false},
		{"hi underflows: empty", minDecimal, Unbounded, DecBound(one.Negate()), true, false, false},
		{"lo underflows: open", minDecimal.Add(one), DecBound(minDecimal), DecBound(decimal128.FromI64(0)), false, true, false},
		{"hi saturates", decimal128.FromI64(5), DecBound(decimal128.FromI64(0)), DecBound(maxDecimal), false, false, true},
		{"strict at the top", maxDecimal, Bound{Exclusive: true, HasDec: true}, Unbounded, true, false, false},
		{"strict at the bottom", minDecimal, Unbounded, Bound{Exclusive: true, HasDec: true}, true, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := decOps{}.window(c.l, c.lo, c.hi)
			require.Equal(t, c.empty, w.empty)
			if !c.empty {
				require.Equal(t, c.loOpen, w.loOpen)
				require.Equal(t, c.hiOpen, w.hiOpen)
			}
		})
	}
	// Distances: from minDecimal to maxDecimal is 2^128 − 1, just more
	// than from minDecimal to maxDecimal − 1.
	require.False(t, decOps{}.preferBackward(maxDecimal.Sub(one), minDecimal, maxDecimal, PreferEarlier))
	require.True(t, decOps{}.preferBackward(decimal128.FromI64(0), minDecimal.Add(one), maxDecimal, PreferEarlier))
	require.False(t, decOps{}.preferBackward(decimal128.FromI64(0), minDecimal.Add(one), maxDecimal, PreferLater))
	require.True(t, decOps{}.preferBackward(decimal128.FromI64(0), minDecimal.Add(decimal128.FromI64(2)), maxDecimal, PreferLater))
}

// TestDecimalLineMatchesWide runs NUMERIC(p,s) with p <= 18 through both
// decimal paths — the int64 number line (chosen from the type's precision
// and the bounds) and the 128-bit comparison kernel (forced) — and
// requires one answer from both, equal to the reference's: values up to
// the type's largest magnitude, bounds at the int64 edges (windows
// saturate at the ends of the line), strict bounds there, ties at equal
// distance under both PREFER rules, and bounds beyond int64 units (which
// keep the input on the 128-bit kernel).
func TestDecimalLineMatchesWide(t *testing.T) {
	i64b := func(v int64) Bound { return DecBound(decimal128.FromI64(v)) }
	strict := func(b Bound) Bound { b.Exclusive = true; return b }
	beyond := DecBound(decimal128.FromI64(math.MaxInt64).Add(decimal128.FromI64(1)))
	bounds := []struct {
		name   string
		lo, hi Bound
		line   bool // the number line runs it
	}{
		{"back", i64b(-1000), i64b(0), true},
		{"near", i64b(-1000), i64b(1000), true},
		{"near-int", IntBound(-500), IntBound(500), true},
		{"exact", i64b(0), i64b(0), true},
		{"forward-strict", strict(i64b(0)), Unbounded, true},
		{"backward-strict", Unbounded, strict(i64b(0)), true},
		{"int64-edges", i64b(math.MinInt64), i64b(math.MaxInt64), true},
		{"int64-edges-strict", strict(i64b(math.MinInt64)), strict(i64b(math.MaxInt64)), true},
		{"int64-top", i64b(math.MaxInt64 - 1), i64b(math.MaxInt64), true},
		{"int64-bottom", i64b(math.MinInt64), i64b(math.MinInt64 + 1), true},
		{"far-back", Unbounded, i64b(-1), true},
		{"beyond-int64", i64b(-1), beyond, false},
		{"beyond-int64-low", DecBound(decimal128.FromI64(math.MinInt64).Sub(decimal128.FromI64(1))), i64b(0), false},
	}
	for _, typ := range []struct{ p, s int32 }{{18, 0}, {18, 2}, {18, 18}, {10, 4}, {4, 2}} {
		dt := &arrow.Decimal128Type{Precision: typ.p, Scale: typ.s}
		top := decimal128.GetMaxValue(typ.p) // 10^p − 1 unscaled
		u := func(v int64) decimal128.Num { return decimal128.FromI64(v) }
		small := func(v int64) decimal128.Num { // clamp into the type
			n := u(v)
			if n.Greater(top) {
				return top
			}
			if n.Less(top.Negate()) {
				return top.Negate()
			}
			return n
		}
		lfs := []arrow.Field{f("t", dt), f("lv", i64)}
		rfs := []arrow.Field{f("t", dt), f("rv", i64)}
		left := [][]any{
			{top.Negate(), 1}, {small(-2000), 2}, {small(-1000), 3}, {u(0), 4}, {u(0), 5},
			{small(1000), 6}, {small(3000), 7}, {nil, 8}, {top, 9},
		}
		right := [][]any{
			{top.Negate(), 10}, {small(-3000), 11}, {small(-2500), 12}, {small(-1000), 13},
			{small(-1000), 14}, {small(1000), 15}, {small(1000), 16}, {small(3500), 17}, {nil, 18},
			{top, 19},
		}
		for _, b := range bounds {
			for _, tie := range []Tie{PreferEarlier, PreferLater} {
				name := fmt.Sprintf("%s/%s/%s", dt, b.name, tie)
				sp := Right{Name: "r", LeftOn: 0, On: 0, Lo: b.lo, Hi: b.hi, Tie: tie, Kind: Left, Payload: []int{1}}
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				lt, rt := table(mem, lfs, left...), table(mem, rfs, right...)
				want := refJoin(mem, lt, []arrow.RecordBatch{rt}, []Right{sp})
				var got [2]string
				for w, wide := range []bool{false, true} {
					lo := operator.NewBatches(lt.Schema(), exectest.Split(lt, exectest.Layout{Size: 3}, 0))
					ro := operator.NewBatches(rt.Schema(), exectest.Split(rt, exectest.Layout{Size: 4}, 1))
					s := sp
					s.Input = ro
					opts := Options{Allocator: mem, wideDecimals: wide}
					specs, err := validate(lo.Schema(), []Right{s}, &opts)
					require.NoError(t, err, name)
					require.Equal(t, b.line && !wide, specs[0].ord == ordNone, "%s wide=%v: path", name, wide)
					j, err := New(lo, []Right{s}, opts)
					require.NoError(t, err, name)
					out, err := exectest.Collect(context.Background(), j, mem)
					require.NoError(t, err, name)
					got[w] = exectest.Format(out)
					out.Release()
				}
				require.Equal(t, got[1], got[0], "%s: number line vs 128-bit kernel", name)
				require.Equal(t, want, got[0], "%s: against the reference", name)
				lt.Release()
				rt.Release()
				mem.AssertSize(t, 0)
			}
		}
	}
}

// TestDecimalLineValueOutOfPrecision: a value beyond int64 units in a
// column whose type promises precision <= 18 is an error on the number
// line, never a wrong match.
func TestDecimalLineValueOutOfPrecision(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dt := &arrow.Decimal128Type{Precision: 18, Scale: 0}
	big := decimal128.FromI64(math.MaxInt64).Add(decimal128.FromI64(1))
	lt := table(mem, []arrow.Field{f("t", dt), f("lv", i64)}, []any{decimal128.FromI64(1), 1})
	rt := table(mem, []arrow.Field{f("t", dt), f("rv", i64)}, []any{big, 2})
	defer lt.Release()
	defer rt.Release()
	sp := Right{Name: "r", Input: operator.NewBatches(rt.Schema(), []arrow.RecordBatch{rt}), Lo: Unbounded, Hi: IntBound(0), Kind: Left, Payload: []int{1}}
	rt.Retain()
	lt.Retain()
	j, err := New(operator.NewBatches(lt.Schema(), []arrow.RecordBatch{lt}), []Right{sp}, Options{Allocator: mem})
	require.NoError(t, err)
	out, err := exectest.Collect(context.Background(), j, mem)
	if out != nil {
		out.Release()
	}
	require.Error(t, err)
	var se *sqlerr.Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, sqlerr.NumericValueOutOfRange, se.Code)
	require.Contains(t, err.Error(), "9223372036854775808")
}
