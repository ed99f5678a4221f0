package exec

import (
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sqlerr"
)

// combiner is an accumulator whose partial states combine: the parallel
// hash aggregate folds each worker's state of group g into the final
// state of group gmap[g], as PostgreSQL's combine functions do. Only
// aggregates whose result does not depend on which rows a worker saw
// implement it (CombinableAgg lists them); the others (DISTINCT,
// first/last, the ordered-set and list-building aggregates) run serially.
type combiner interface {
	accumulator
	merge(src accumulator, gmap []int32) error
}

// CombinableAgg reports whether aggregate fn (DISTINCT or not) has a
// combine step, so a parallel hash aggregate can compute it from
// per-worker partial states. The planner asks it before splitting an
// Aggregate into Partial and Final.
func CombinableAgg(fn string, distinct bool) bool {
	if distinct {
		return false
	}
	switch fn {
	case "count", "sum", "avg", "min", "max", "bool_and", "bool_or", "every",
		"stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop":
		return true
	}
	return regrFuncs[fn]
}

var (
	_ combiner = (*countAcc)(nil)
	_ combiner = (*decSumAcc)(nil)
	_ combiner = (*floatSumAcc)(nil)
	_ combiner = (*intervalSumAcc)(nil)
	_ combiner = (*varAcc)(nil)
	_ combiner = (*minMaxAcc[int64])(nil)
	_ combiner = (*boolAcc)(nil)
	_ combiner = (*regrAcc)(nil)
)

func (a *countAcc) merge(src accumulator, gmap []int32) error {
	s := src.(*countAcc)
	for g, m := range gmap {
		a.n[m] += s.n[g]
	}
	return nil
}

func (a *decSumAcc) merge(src accumulator, gmap []int32) error {
	s := src.(*decSumAcc)
	if err := s.settle(); err != nil {
		return err
	}
	if err := a.settle(); err != nil {
		return err
	}
	for g, m := range gmap {
		if s.cnt[g] == 0 {
			continue
		}
		v, old := s.sum[g], a.sum[m]
		sum := old.Add(v)
		if (v.Sign() > 0 && sum.Less(old)) || (v.Sign() < 0 && sum.Greater(old)) {
			return sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric field overflow").
				WithDetail("The sum does not fit in 128 bits.")
		}
		a.sum[m] = sum
		a.cnt[m] += s.cnt[g]
	}
	return nil
}

// merge adds the workers' float sums in worker order: the result can
// differ from the serial sum in the last bits, as PostgreSQL's parallel
// sum(float8) can (docs/sql.md).
func (a *floatSumAcc) merge(src accumulator, gmap []int32) error {
	s := src.(*floatSumAcc)
	for g, m := range gmap {
		if s.cnt[g] == 0 {
			continue
		}
		old, v := a.sum[m], s.sum[g]
		sum := old + v
		if math.IsInf(sum, 0) && !math.IsInf(old, 0) && !math.IsInf(v, 0) {
			return sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
		}
		a.sum[m] = sum
		a.cnt[m] += s.cnt[g]
	}
	return nil
}

func (a *intervalSumAcc) merge(src accumulator, gmap []int32) error {
	s := src.(*intervalSumAcc)
	for g, m := range gmap {
		if s.cnt[g] == 0 {
			continue
		}
		o, v := a.sum[m], s.sum[g]
		mo, d, ns := int64(o.Months)+int64(v.Months), int64(o.Days)+int64(v.Days), o.Nanoseconds+v.Nanoseconds
		if mo != int64(int32(mo)) || d != int64(int32(d)) || (v.Nanoseconds > 0 && ns < o.Nanoseconds) || (v.Nanoseconds < 0 && ns > o.Nanoseconds) {
			return sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
		}
		a.sum[m] = arrow.MonthDayNanoInterval{Months: int32(mo), Days: int32(d), Nanoseconds: ns}
		a.cnt[m] += s.cnt[g]
	}
	return nil
}

// merge combines Youngs-Cramer states as PostgreSQL's float8_combine does
// (floats), or adds the exact sums (integers and numerics: exact at every
// degree).
func (a *varAcc) merge(src accumulator, gmap []int32) error {
	s := src.(*varAcc)
	for g, m := range gmap {
		n2 := s.n[g]
		if n2 == 0 {
			continue
		}
		n1 := a.n[m]
		a.n[m] = n1 + n2
		if a.isFloat() {
			if n1 == 0 {
				a.sx[m], a.sxx[m] = s.sx[g], s.sxx[g]
				continue
			}
			f1, f2 := float64(n1), float64(n2)
			tmp := a.sx[m]/f1 - s.sx[g]/f2
			a.sxx[m] += s.sxx[g] + f1*f2*tmp*tmp/(f1+f2)
			a.sx[m] += s.sx[g]
			continue
		}
		if a.sum[m] == nil {
			a.sum[m], a.sq[m] = new(big.Int), new(big.Int)
		}
		a.sum[m].Add(a.sum[m], s.sum[g])
		a.sq[m].Add(a.sq[m], s.sq[g])
	}
	return nil
}

func (a *minMaxAcc[T]) merge(src accumulator, gmap []int32) error {
	s := src.(*minMaxAcc[T])
	for g, m := range gmap {
		if !s.seen[g] {
			continue
		}
		v := s.val[g]
		if !a.seen[m] {
			a.val[m], a.seen[m] = v, true
			continue
		}
		c := a.ops.cmp(v, a.val[m])
		if (a.max && c > 0) || (!a.max && c < 0) {
			a.val[m] = v
		}
	}
	return nil
}

func (a *boolAcc) merge(src accumulator, gmap []int32) error {
	s := src.(*boolAcc)
	for g, m := range gmap {
		if !s.seen[g] {
			continue
		}
		v := s.val[g]
		switch {
		case !a.seen[m]:
			a.val[m], a.seen[m] = v, true
		case a.or:
			a.val[m] = a.val[m] || v
		default:
			a.val[m] = a.val[m] && v
		}
	}
	return nil
}

// merge is PostgreSQL's float8_regr_combine.
func (a *regrAcc) merge(src accumulator, gmap []int32) error {
	s := src.(*regrAcc)
	for g, m := range gmap {
		s2 := s.st[g]
		if s2.n == 0 {
			continue
		}
		s1 := &a.st[m]
		if s1.n == 0 {
			*s1 = s2
			continue
		}
		n := s1.n + s2.n
		tx := s1.sx/s1.n - s2.sx/s2.n
		ty := s1.sy/s1.n - s2.sy/s2.n
		sx, sy := s1.sx+s2.sx, s1.sy+s2.sy
		sxx := s1.sxx + s2.sxx + s1.n*s2.n*tx*tx/n
		syy := s1.syy + s2.syy + s1.n*s2.n*ty*ty/n
		sxy := s1.sxy + s2.sxy + s1.n*s2.n*tx*ty/n
		inf := math.IsInf
		if inf(sx, 0) && !inf(s1.sx, 0) && !inf(s2.sx, 0) || inf(sxx, 0) && !inf(s1.sxx, 0) && !inf(s2.sxx, 0) ||
			inf(sy, 0) && !inf(s1.sy, 0) && !inf(s2.sy, 0) || inf(syy, 0) && !inf(s1.syy, 0) && !inf(s2.syy, 0) ||
			inf(sxy, 0) && !inf(s1.sxy, 0) && !inf(s2.sxy, 0) {
			return sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
		}
		*s1 = regrState{n: n, sx: sx, sxx: sxx, sy: sy, syy: syy, sxy: sxy}
	}
	return nil
}
