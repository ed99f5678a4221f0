package exec_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// diffRow is one input row of the differential test: partition p, order
// key o (nil = NULL), float value v and integer value w (nil = NULL).
type diffRow struct {
	p    int64
	o    *int64
	v    float64
	w    *int32
	vNil bool
}

// TestWindowFramesDifferential checks every frame kind (ROWS, RANGE with
// offsets, GROUPS; each EXCLUDE) and every framed function against a
// naive per-row recomputation of the frame, on random data with
// duplicate and NULL keys, at every batch layout.
func TestWindowFramesDifferential(t *testing.T) {
	for seed := uint64(1); seed <= 2; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { windowDiff(t, seed) })
	}
}

func windowDiff(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	n := 60 + rng.IntN(60)
	rows := make([]diffRow, n)
	for i := range rows {
		r := diffRow{p: int64(rng.IntN(3))}
		if rng.IntN(8) > 0 {
			o := int64(rng.IntN(12))
			r.o = &o
		}
		// Halves sum exactly in float64, so sliding and naive sums agree.
		r.v = float64(rng.IntN(41)-20) / 2
		r.vNil = rng.IntN(7) == 0
		if rng.IntN(6) > 0 {
			w := int32(rng.IntN(201) - 100)
			r.w = &w
		}
		rows[i] = r
	}
	// The operator's input is sorted by p, then o ascending NULLS LAST.
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.p != b.p {
			return a.p < b.p
		}
		switch {
		case a.o == nil:
			return false
		case b.o == nil:
			return true
		}
		return *a.o < *b.o
	})

	bounds := []exec.FrameBound{
		{Kind: exec.UnboundedPreceding}, {Kind: exec.OffsetPreceding, N: 0}, {Kind: exec.OffsetPreceding, N: 1},
		{Kind: exec.OffsetPreceding, N: 3}, {Kind: exec.CurrentRow}, {Kind: exec.OffsetFollowing, N: 0},
		{Kind: exec.OffsetFollowing, N: 2}, {Kind: exec.UnboundedFollowing},
	}
	var frames []exec.WindowFrame
	for unit := exec.FrameRange; unit <= exec.FrameGroups; unit++ {
		for _, s := range bounds {
			for _, e := range bounds {
				if s.Kind == exec.UnboundedFollowing || e.Kind == exec.UnboundedPreceding ||
					(s.Kind == exec.CurrentRow && e.Kind == exec.OffsetPreceding) ||
					(s.Kind == exec.OffsetFollowing && (e.Kind == exec.OffsetPreceding || e.Kind == exec.CurrentRow)) {
					continue // Postgres' grammar refuses these
				}
				ex := exec.FrameExclude(rng.IntN(4))
				frames = append(frames, exec.WindowFrame{Unit: unit, Start: rangeValue(unit, s), End: rangeValue(unit, e), Exclude: ex})
			}
		}
	}
	// A random sample keeps the test quick under -race.
	rng.Shuffle(len(frames), func(i, j int) { frames[i], frames[j] = frames[j], frames[i] })
	frames = frames[:24]

	vCol := &expr.Column{Index: 2, Name: "v", T: sqltypes.Float8Type}
	wCol := &expr.Column{Index: 3, Name: "w", T: sqltypes.Int4Type}
	type fn struct {
		name string
		arg  *expr.Column
		n    int64
	}
	fns := []fn{{"count", nil, 0}, {"count", wCol, 0}, {"sum", wCol, 0}, {"sum", vCol, 0}, {"avg", vCol, 0},
		{"min", wCol, 0}, {"max", vCol, 0}, {"first_value", wCol, 0}, {"last_value", wCol, 0}, {"nth_value", wCol, 2}}
	var funcs []exec.WindowFunc
	for fi, f := range frames {
		for k, g := range fns {
			wf := exec.WindowFunc{Func: g.name, N: g.n, Frame: f, Name: fmt.Sprintf("f%d_%d", fi, k)}
			if g.arg != nil {
				wf.Arg = g.arg
			}
			funcs = append(funcs, wf)
		}
	}

	ranking := []exec.WindowFunc{{Func: "row_number"}, {Func: "rank"}, {Func: "dense_rank"}, {Func: "percent_rank"},
		{Func: "cume_dist"}, {Func: "ntile", N: 1}, {Func: "ntile", N: 4}, {Func: "ntile", N: 100}}
	for i := range ranking {
		ranking[i].Name = fmt.Sprintf("r%d", i)
	}
	funcs = append(funcs, ranking...)
	checked := false
	exectest.Run(t, exectest.Case{
		Inputs: func(mem memory.Allocator) []arrow.RecordBatch { return []arrow.RecordBatch{diffBatch(mem, rows)} },
		Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			return exec.NewWindow(in[0], mem, []int{0}, []exec.SortKey{{Col: 1}}, funcs, eval.Env{}, exec.WindowOptions{BatchSize: 7})
		},
		Check: func(t *testing.T, got arrow.RecordBatch, err error) {
			require.NoError(t, err)
			require.EqualValues(t, n, got.NumRows())
			if checked {
				return // Run requires every layout to give the same output
			}
			checked = true
			base := 4 + len(frames)*len(fns)
			for k, f := range ranking {
				for i := range rows {
					require.Equal(t, naiveRank(rows, i, f), cell(got.Column(base+k), i), "%s(%d), row %d", f.Func, f.N, i)
				}
			}
			for fi, f := range frames {
				for k, g := range fns {
					col := got.Column(4 + fi*len(fns) + k)
					for i := range rows {
						want := naiveWindow(rows, i, f, g.name, g.arg == wCol, g.n)
						require.Equal(t, want, cell(col, i), "frame %+v, %s(%v), row %d", f, g.name, g.arg, i)
					}
				}
			}
		},
	})
}

// naiveRank computes a ranking function from its definition.
func naiveRank(rows []diffRow, i int, f exec.WindowFunc) string {
	grp := peerGroups(rows)
	var pos, size, before, peersUpTo int // before: rows of earlier peer groups
	for j := range rows {
		if rows[j].p != rows[i].p {
			continue
		}
		size++
		if j < i {
			pos++
		}
		if grp[j] < grp[i] {
			before++
		}
		if grp[j] <= grp[i] {
			peersUpTo++
		}
	}
	switch f.Func {
	case "row_number":
		return fmt.Sprint(pos + 1)
	case "rank":
		return fmt.Sprint(before + 1)
	case "dense_rank":
		return fmt.Sprint(grp[i] + 1)
	case "percent_rank":
		if size == 1 {
			return "0"
		}
		return fmt.Sprint(float64(before) / float64(size-1))
	case "cume_dist":
		return fmt.Sprint(float64(peersUpTo) / float64(size))
	}
	// ntile: deal the rows out so bucket sizes differ by at most one,
	// larger buckets first.
	n := int(f.N)
	bucket, start := 0, 0
	for b := 0; b < n; b++ {
		sz := size / n
		if b < size%n {
			sz++
		}
		if pos < start+sz {
			bucket = b + 1
			break
		}
		start += sz
	}
	return fmt.Sprint(bucket)
}

// rangeValue gives a RANGE offset bound its value expression.
func rangeValue(unit exec.FrameUnit, b exec.FrameBound) exec.FrameBound {
	if unit == exec.FrameRange && (b.Kind == exec.OffsetPreceding || b.Kind == exec.OffsetFollowing) {
		b.Value = i8(b.N)
	}
	return b
}

func diffBatch(mem memory.Allocator, rows []diffRow) arrow.RecordBatch {
	p, o := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
	v, w := array.NewFloat64Builder(mem), array.NewInt32Builder(mem)
	for _, r := range rows {
		p.Append(r.p)
		if r.o == nil {
			o.AppendNull()
		} else {
			o.Append(*r.o)
		}
		if r.vNil {
			v.AppendNull()
		} else {
			v.Append(r.v)
		}
		if r.w == nil {
			w.AppendNull()
		} else {
			w.Append(*r.w)
		}
	}
	schema := arrow.NewSchema([]arrow.Field{sqltypes.Int8Type.Field("p", false), sqltypes.Int8Type.Field("o", true),
		sqltypes.Float8Type.Field("v", true), sqltypes.Int4Type.Field("w", true)}, nil)
	cols := []arrow.Array{p.NewArray(), o.NewArray(), v.NewArray(), w.NewArray()}
	for _, b := range []array.Builder{p, o, v, w} {
		b.Release()
	}
	rec := array.NewRecordBatch(schema, cols, int64(len(rows)))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// peerGroups numbers each row's peer group within its partition.
func peerGroups(rows []diffRow) []int {
	grp := make([]int, len(rows))
	for j := 1; j < len(rows); j++ {
		x, y := rows[j-1].o, rows[j].o
		switch {
		case rows[j-1].p != rows[j].p:
		case (x == nil && y == nil) || (x != nil && y != nil && *x == *y):
			grp[j] = grp[j-1]
		default:
			grp[j] = grp[j-1] + 1
		}
	}
	return grp
}

// cell renders one value for comparison (NULL as "NULL").
func cell(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return "NULL"
	}
	switch x := a.(type) {
	case *array.Int64:
		return fmt.Sprint(x.Value(i))
	case *array.Int32:
		return fmt.Sprint(x.Value(i))
	case *array.Float64:
		return fmt.Sprint(x.Value(i))
	}
	return "?" + a.DataType().String()
}

// naiveWindow computes function fn for row i straight from the frame's
// definition: it scans the partition for the frame's head and tail, then
// folds the rows that are not excluded.
func naiveWindow(rows []diffRow, i int, f exec.WindowFrame, fn string, onW bool, nth int64) string {
	ps, pe := i, i+1
	for ps > 0 && rows[ps-1].p == rows[i].p {
		ps--
	}
	for pe < len(rows) && rows[pe].p == rows[i].p {
		pe++
	}
	// Peer group numbers within the partition.
	grp := peerGroups(rows)
	// inFrameStart/End say whether row j is at or after the head, and
	// before the tail.
	after := func(j int, b exec.FrameBound) bool { // j is at or after the bound's row
		switch b.Kind {
		case exec.UnboundedPreceding:
			return true
		case exec.UnboundedFollowing:
			return false
		}
		d := b.N
		if b.Kind == exec.OffsetPreceding {
			d = -d
		}
		if b.Kind == exec.CurrentRow {
			d = 0
		}
		switch f.Unit {
		case exec.FrameRows:
			return int64(j-i) >= d
		case exec.FrameGroups:
			return int64(grp[j]-grp[i]) >= d
		}
		if b.Kind == exec.CurrentRow || rows[i].o == nil {
			return grp[j] >= grp[i] // the current row's peers
		}
		return rows[j].o == nil || *rows[j].o >= *rows[i].o+d
	}
	before := func(j int, b exec.FrameBound) bool { // j is at or before the bound's row
		switch b.Kind {
		case exec.UnboundedFollowing:
			return true
		}
		d := b.N
		if b.Kind == exec.OffsetPreceding {
			d = -d
		}
		if b.Kind == exec.CurrentRow {
			d = 0
		}
		switch f.Unit {
		case exec.FrameRows:
			return int64(j-i) <= d
		case exec.FrameGroups:
			return int64(grp[j]-grp[i]) <= d
		}
		if b.Kind == exec.CurrentRow || rows[i].o == nil {
			return grp[j] <= grp[i]
		}
		return rows[j].o != nil && *rows[j].o <= *rows[i].o+d
	}
	var members []int
	for j := ps; j < pe; j++ {
		if !after(j, f.Start) || !before(j, f.End) {
			continue
		}
		switch f.Exclude {
		case exec.ExcludeCurrentRow:
			if j == i {
				continue
			}
		case exec.ExcludeGroup:
			if grp[j] == grp[i] {
				continue
			}
		case exec.ExcludeTies:
			if grp[j] == grp[i] && j != i {
				continue
			}
		}
		members = append(members, j)
	}
	switch fn {
	case "first_value", "last_value", "nth_value":
		k := int64(0)
		switch fn {
		case "last_value":
			k = int64(len(members)) - 1
		case "nth_value":
			k = nth - 1
		}
		if k < 0 || k >= int64(len(members)) || rows[members[k]].w == nil {
			return "NULL"
		}
		return fmt.Sprint(*rows[members[k]].w)
	}
	var cnt int64
	var isum int64
	var fsum float64
	var best *float64
	for _, j := range members {
		r := rows[j]
		if fn == "count" && !onW { // count(*)
			cnt++
			continue
		}
		var x float64
		if onW {
			if r.w == nil {
				continue
			}
			x = float64(*r.w)
			isum += int64(*r.w)
		} else {
			if r.vNil {
				continue
			}
			x = r.v
			fsum += r.v
		}
		cnt++
		if best == nil || (fn == "min" && x < *best) || (fn == "max" && x > *best) {
			best = &x
		}
	}
	switch fn {
	case "count":
		return fmt.Sprint(cnt)
	}
	if cnt == 0 {
		return "NULL"
	}
	switch fn {
	case "sum":
		if onW {
			return fmt.Sprint(isum)
		}
		return fmt.Sprint(fsum)
	case "avg":
		return fmt.Sprint(fsum / float64(cnt))
	case "min", "max":
		if onW {
			return fmt.Sprint(int64(*best))
		}
		return fmt.Sprint(*best)
	}
	return "?" + fn
}
