package exec

import (
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// orderedSetFuncs are the ordered-set aggregates, written f(fraction)
// WITHIN GROUP (ORDER BY x): Args[0] is x, Args[1] (percentiles) the
// fraction, a constant; AggSpec.Desc is the direction of the ORDER BY.
var orderedSetFuncs = map[string]bool{"percentile_cont": true, "percentile_disc": true, "mode": true}

// orderedSetAcc keeps every non-NULL x of every group (copied out of the
// input batches, so nothing it holds pins them) and sorts each group's
// values once, at the end. Its state is the values themselves, counted
// by varBytes against the memory limit.
type orderedSetAcc struct {
	fn   string
	t    sqltypes.Type
	desc bool
	mem  memory.Allocator // the copies: plain Go memory the GC reclaims

	chunks []arrow.Array
	starts []int     // global index of each chunk's first row
	rows   int       // rows held in all chunks
	refs   [][]int32 // per group: global indexes of its values
	bytes  int64

	frac     arrow.Array // this batch's fraction argument
	fraction float64
	haveFrac bool
	nullFrac bool
	// multi: the fraction is an array (percentile_cont(ARRAY[...])); its
	// elements are fracs, with fracNull marking NULL ones.
	multi    bool
	fracs    []float64
	fracNull []bool
}

var (
	_ multiArg = (*orderedSetAcc)(nil)
	_ varState = (*orderedSetAcc)(nil)
)

func newOrderedSet(spec AggSpec, t sqltypes.Type) *orderedSetAcc {
	// An array result (spec.Type, AggResultType's) means an array of
	// fractions, known before any batch brings one.
	return &orderedSetAcc{fn: spec.Func, t: t, desc: spec.Desc, mem: memory.NewGoAllocator(), multi: spec.Type.IsArray()}
}

func (a *orderedSetAcc) resize(n int)      { a.refs = grow(a.refs, n) }
func (a *orderedSetAcc) keep(g int)        { a.refs = keep1(a.refs, g) }
func (a *orderedSetAcc) groupBytes() int64 { return 24 }
func (a *orderedSetAcc) varBytes() int64   { return a.bytes }
func (a *orderedSetAcc) setExtra(args []arrow.Array) {
	a.frac = nil
	if len(args) > 0 {
		a.frac = args[0]
	}
}

func (a *orderedSetAcc) add(gids []int32, arg arrow.Array) error {
	if a.frac != nil && !a.haveFrac && a.frac.Len() > 0 {
		// The fraction is a constant (the planner checks): read it once.
		a.haveFrac = true
		if a.frac.IsNull(0) {
			a.nullFrac = true
		} else if l, ok := a.frac.(*array.List); ok {
			a.multi = true
			vals := l.ListValues().(*array.Float64)
			start, end := l.ValueOffsets(0)
			for j := int(start); j < int(end); j++ {
				a.fracs = append(a.fracs, vals.Value(j))
				a.fracNull = append(a.fracNull, vals.IsNull(j))
			}
		} else {
			a.fraction = a.frac.(*array.Float64).Value(0)
		}
	}
	var idx []int
	for i, g := range gids {
		if g >= 0 && arg.IsValid(i) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil
	}
	if a.rows+len(idx) > math.MaxInt32 {
		return sqlerr.New(sqlerr.ProgramLimitExceeded, "%s: more than %d values in one query", a.fn, math.MaxInt32)
	}
	c, err := eval.Take(a.mem, arg, idx)
	if err != nil {
		return err
	}
	for k, i := range idx {
		g := gids[i]
		a.refs[g] = append(a.refs[g], int32(a.rows+k))
	}
	a.chunks = append(a.chunks, c)
	a.starts = append(a.starts, a.rows)
	a.rows += len(idx)
	a.bytes += arrayBytes(c) + 4*int64(len(idx))
	return nil
}

func (a *orderedSetAcc) finish(mem memory.Allocator, n int) (arrow.Array, error) {
	if a.rows == 0 {
		return array.MakeArrayOfNull(mem, a.resultArrow(), n), nil
	}
	all := a.chunks[0]
	if len(a.chunks) > 1 {
		var err error
		if all, err = array.Concatenate(a.chunks, a.mem); err != nil {
			return nil, err
		}
		a.chunks, a.starts = []arrow.Array{all}, []int{0}
	}
	cmp, err := vec.Comparator(a.t, all, all)
	if err != nil {
		return nil, err
	}
	order := func(i, j int32) int {
		if c := cmp(int(i), int(j)); c != 0 {
			if a.desc {
				return -c
			}
			return c
		}
		return int(i) - int(j) // stable: input order among equals
	}
	if a.multi {
		return a.finishMulti(mem, n, all, order)
	}
	if a.fn == "percentile_cont" {
		return a.finishCont(mem, n, all, order)
	}
	pick := make([]int, n)
	for g := 0; g < n; g++ {
		vals := a.refs[g]
		pick[g] = -1
		if len(vals) == 0 || a.nullFrac && a.fn != "mode" {
			continue
		}
		slices.SortFunc(vals, order)
		switch a.fn {
		case "percentile_disc":
			if err := a.checkFraction(); err != nil {
				return nil, err
			}
			row := int(math.Ceil(a.fraction * float64(len(vals))))
			pick[g] = int(vals[max(row, 1)-1])
		case "mode":
			// The most frequent value; among equally frequent ones the
			// first in the sort order, as Postgres' mode_final keeps.
			best, bestLen, run := 0, 0, 0
			for k := range vals {
				if k == 0 || cmp(int(vals[k]), int(vals[k-1])) != 0 {
					run = 0
				}
				run++
				if run > bestLen {
					best, bestLen = k-run+1, run
				}
			}
			pick[g] = int(vals[best])
		}
	}
	return eval.Take(mem, all, pick)
}

func (a *orderedSetAcc) elemType() sqltypes.Type {
	if a.fn == "percentile_cont" {
		return sqltypes.Float8Type
	}
	return a.t
}

func (a *orderedSetAcc) resultArrow() arrow.DataType {
	if a.multi {
		return sqltypes.ArrayOf(a.elemType()).Arrow()
	}
	return a.elemType().Arrow()
}

func (a *orderedSetAcc) checkFraction() error { return checkFraction(a.fraction) }

func checkFraction(f float64) error {
	if math.IsNaN(f) || f < 0 || f > 1 {
		v := fmt.Sprintf("%.6g", f)
		if math.IsNaN(f) {
			v = "NaN"
		}
		return sqlerr.New(sqlerr.NumericValueOutOfRange, "percentile value %s is not between 0 and 1", v)
	}
	return nil
}

// finishMulti is percentile_cont/percentile_disc over an array of
// fractions: per group an array with one percentile per fraction (NULL
// for a NULL fraction), NULL for a group without values, as Postgres'
// percentile_*_multi_final.
func (a *orderedSetAcc) finishMulti(mem memory.Allocator, n int, all arrow.Array, order func(i, j int32) int) (arrow.Array, error) {
	offsets := make([]int32, n+1)
	valid := make([]bool, n)
	var pick []int // percentile_disc: rows of all, -1 for NULL
	var conts []float64
	var contValid []bool
	for g := 0; g < n; g++ {
		offsets[g+1] = offsets[g]
		vals := a.refs[g]
		if len(vals) == 0 || a.nullFrac {
			continue
		}
		slices.SortFunc(vals, order)
		valid[g] = true
		offsets[g+1] += int32(len(a.fracs))
		for k, f := range a.fracs {
			if a.fracNull[k] {
				pick, conts, contValid = append(pick, -1), append(conts, 0), append(contValid, false)
				continue
			}
			if err := checkFraction(f); err != nil {
				return nil, err
			}
			if a.fn == "percentile_disc" {
				row := int(math.Ceil(f * float64(len(vals))))
				pick = append(pick, int(vals[max(row, 1)-1]))
				continue
			}
			xs := all.(*array.Float64)
			pos := f * float64(len(vals)-1)
			lo, hi := math.Floor(pos), math.Ceil(pos)
			first, second := xs.Value(int(vals[int(lo)])), xs.Value(int(vals[int(hi)]))
			v := first
			if lo != hi {
				v = first + (pos-lo)*(second-first)
			}
			conts, contValid = append(conts, v), append(contValid, true)
		}
	}
	var elems arrow.Array
	if a.fn == "percentile_disc" {
		var err error
		if elems, err = eval.Take(mem, all, pick); err != nil {
			return nil, err
		}
	} else {
		elems = eval.MakeFixed(mem, arrow.PrimitiveTypes.Float64, conts, contValid)
	}
	defer elems.Release()
	return vec.MakeList(mem, sqltypes.ArrayOf(a.elemType()), offsets, valid, elems), nil
}

// finishCont is percentile_cont over double precision: linear
// interpolation between the two values around fraction*(N-1), as
// Postgres' float8_lerp computes it.
func (a *orderedSetAcc) finishCont(mem memory.Allocator, n int, all arrow.Array, order func(i, j int32) int) (arrow.Array, error) {
	xs := all.(*array.Float64)
	out := make([]float64, n)
	valid := make([]bool, n)
	for g := 0; g < n; g++ {
		vals := a.refs[g]
		if len(vals) == 0 || a.nullFrac {
			continue
		}
		if err := a.checkFraction(); err != nil {
			return nil, err
		}
		slices.SortFunc(vals, order)
		pos := a.fraction * float64(len(vals)-1)
		lo, hi := math.Floor(pos), math.Ceil(pos)
		first, second := xs.Value(int(vals[int(lo)])), xs.Value(int(vals[int(hi)]))
		v := first
		if lo != hi {
			v = first + (pos-lo)*(second-first)
		}
		out[g], valid[g] = v, true
	}
	return eval.MakeFixed(mem, arrow.PrimitiveTypes.Float64, out, valid), nil
}
