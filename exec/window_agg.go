package exec

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// A frame minus its EXCLUDE rows is at most two runs of rows, A = [a0, a1)
// and B = [b0, b1) (A before B), plus, for EXCLUDE TIES, the current row
// between them. Each run's ends only move forward from row to row within
// a partition, so an aggregate over a run slides: rows enter at the end
// and leave at the start, and each row enters and leaves once. That is
// what keeps moving aggregates linear.

// slider is an aggregate over the two runs: state k (0 for A, 1 for B)
// takes rows in with add and out with remove (in the order they came
// in); emit stores the aggregate of both states, and of row extra when
// extra >= 0, as output row r.
type slider interface {
	reset(k int)
	add(k, j int) error
	remove(k, j int) error
	emit(r, extra int) error
	finish(mem memory.Allocator) (arrow.Array, error)
}

// pieces are row i's runs.
type pieces struct{ a0, a1, b0, b1, extra int }

func framePieces(l *layout, f WindowFrame, s, e []int, i int) pieces {
	x, y := e[i], e[i]
	switch f.Exclude {
	case ExcludeCurrentRow:
		x, y = i, i+1
	case ExcludeGroup, ExcludeTies:
		x, y = l.gstart[i], l.gend[i]
	}
	p := pieces{a0: s[i], a1: max(s[i], min(x, e[i])), b0: min(max(y, s[i]), e[i]), b1: e[i], extra: -1}
	if f.Exclude == ExcludeTies && s[i] <= i && i < e[i] {
		p.extra = i
	}
	return p
}

// slide runs sl over every row's frame.
func slide(l *layout, f WindowFrame, s, e []int, sl slider) error {
	var cur [2][2]int // each state's current run
	move := func(k, lo, hi int) error {
		c := &cur[k]
		if lo < c[0] || hi < c[1] || lo >= c[1] {
			sl.reset(k)
			*c = [2]int{lo, lo}
		}
		for j := c[1]; j < hi; j++ {
			if err := sl.add(k, j); err != nil {
				return err
			}
		}
		for j := c[0]; j < lo; j++ {
			if err := sl.remove(k, j); err != nil {
				return err
			}
		}
		*c = [2]int{lo, hi}
		return nil
	}
	for i := 0; i < l.n; i++ {
		p := framePieces(l, f, s, e, i)
		if i == l.pstart[i] {
			for k := range cur {
				sl.reset(k)
				cur[k] = [2]int{i, i}
			}
		}
		if err := move(0, p.a0, p.a1); err != nil {
			return err
		}
		if err := move(1, p.b0, p.b1); err != nil {
			return err
		}
		if err := sl.emit(i, p.extra); err != nil {
			return err
		}
	}
	return nil
}

// nthInFrame is the row of the n-th (1-based; from the end when last)
// frame row of p, or -1.
func nthInFrame(p pieces, n int64, last bool) int {
	runs := [][2]int{{p.a0, p.a1}, {p.extra, p.extra + 1}, {p.b0, p.b1}}
	if p.extra < 0 {
		runs[1] = [2]int{0, 0}
	}
	if last {
		runs[0], runs[2] = runs[2], runs[0]
	}
	for _, r := range runs {
		ln := int64(r[1] - r[0])
		if n <= ln {
			if last {
				return r[1] - int(n)
			}
			return r[0] + int(n) - 1
		}
		n -= ln
	}
	return -1
}

// ---- count ----

type countSlider struct {
	star bool
	arg  arrow.Array
	c    [2]int64
	out  []int64
}

func (a *countSlider) counts(j int) bool { return a.star || a.arg.IsValid(j) }
func (a *countSlider) reset(k int)       { a.c[k] = 0 }
func (a *countSlider) add(k, j int) error {
	if a.counts(j) {
		a.c[k]++
	}
	return nil
}
func (a *countSlider) remove(k, j int) error {
	if a.counts(j) {
		a.c[k]--
	}
	return nil
}
func (a *countSlider) emit(r, extra int) error {
	a.out[r] = a.c[0] + a.c[1]
	if extra >= 0 && a.counts(extra) {
		a.out[r]++
	}
	return nil
}
func (a *countSlider) finish(mem memory.Allocator) (arrow.Array, error) {
	return (&countAcc{n: a.out}).finish(mem, len(a.out))
}

// ---- sum/avg over integers and numeric: exact, by add and subtract ----

type decSlider struct {
	arg  arrow.Array
	vals []decimal128.Num
	s    [2]decimal128.Num
	c    [2]int64
	acc  *decSumAcc // per output row: its sum and count, finished as grouped
}

func newDecSlider(arg arrow.Array, in, out sqltypes.Type, avg bool, n int) (*decSlider, error) {
	vals := make([]decimal128.Num, arg.Len())
	if in.Kind == sqltypes.Numeric {
		d := arg.(*array.Decimal128)
		for i := range vals {
			vals[i] = d.Value(i)
		}
	} else {
		iv, err := readIntCol(arg, in)
		if err != nil {
			return nil, err
		}
		for i, v := range iv {
			vals[i] = decimal128.FromI64(v)
		}
	}
	acc := &decSumAcc{in: in, out: out, avg: avg}
	acc.resize(n)
	return &decSlider{arg: arg, vals: vals, acc: acc}, nil
}

func addDec(x, v decimal128.Num) (decimal128.Num, error) {
	s := x.Add(v)
	if (v.Sign() > 0 && s.Less(x)) || (v.Sign() < 0 && s.Greater(x)) {
		return s, sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric field overflow").
			WithDetail("The sum does not fit in 128 bits.")
	}
	return s, nil
}

func (a *decSlider) reset(k int) { a.s[k], a.c[k] = decimal128.Num{}, 0 }
func (a *decSlider) add(k, j int) (err error) {
	if a.arg.IsValid(j) {
		a.s[k], err = addDec(a.s[k], a.vals[j])
		a.c[k]++
	}
	return err
}
func (a *decSlider) remove(k, j int) (err error) {
	if a.arg.IsValid(j) {
		a.s[k], err = addDec(a.s[k], a.vals[j].Negate())
		a.c[k]--
	}
	return err
}
func (a *decSlider) emit(r, extra int) error {
	s, err := addDec(a.s[0], a.s[1])
	if err != nil {
		return err
	}
	c := a.c[0] + a.c[1]
	if extra >= 0 && a.arg.IsValid(extra) {
		if s, err = addDec(s, a.vals[extra]); err != nil {
			return err
		}
		c++
	}
	a.acc.sum[r], a.acc.cnt[r] = s, c
	return nil
}
func (a *decSlider) finish(mem memory.Allocator) (arrow.Array, error) {
	return a.acc.finish(mem, len(a.acc.cnt))
}

// ---- sum/avg over floats ----

// floatRun is one run's float sum. While rows only enter, sum is the
// plain left-to-right sum, exactly Postgres' (which adds in frame order).
// Once rows have left, the run answers with the Neumaier-compensated sum
// (cs + c) instead: plain add-and-subtract would drift, and Postgres
// itself recomputes such frames from scratch (float8 has no inverse
// transition), so the compensated sum stays within the last digits of
// its answer. Non-finite values are counted apart so that one Inf or NaN
// leaving the frame leaves no trace.
type floatRun struct {
	sum, cs, c      float64
	nan, pinf, ninf int64
	cnt             int64
	removed         bool
}

func (f *floatRun) fold(v float64, sign int64) error {
	switch {
	case math.IsNaN(v):
		f.nan += sign
	case math.IsInf(v, 1):
		f.pinf += sign
	case math.IsInf(v, -1):
		f.ninf += sign
	default:
		if sign < 0 {
			v = -v
		}
		f.sum += v
		t := f.cs + v
		if math.Abs(f.cs) >= math.Abs(v) {
			f.c += (f.cs - t) + v
		} else {
			f.c += (v - t) + f.cs
		}
		f.cs = t
		if math.IsInf(f.sum, 0) || math.IsInf(t, 0) {
			return sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
		}
	}
	f.cnt += sign
	return nil
}

func (f *floatRun) finite() float64 {
	if f.removed {
		return f.cs + f.c
	}
	return f.sum
}

type floatSlider struct {
	arg  arrow.Array
	vals []float64
	r    [2]floatRun
	acc  *floatSumAcc
}

func (a *floatSlider) reset(k int) { a.r[k] = floatRun{} }
func (a *floatSlider) add(k, j int) error {
	if a.arg.IsNull(j) {
		return nil
	}
	return a.r[k].fold(a.vals[j], 1)
}
func (a *floatSlider) remove(k, j int) error {
	if a.arg.IsNull(j) {
		return nil
	}
	a.r[k].removed = true
	return a.r[k].fold(a.vals[j], -1)
}
func (a *floatSlider) emit(r, extra int) error {
	t := a.r[0]
	x, y := &a.r[0], &a.r[1]
	t.nan, t.pinf, t.ninf, t.cnt = x.nan+y.nan, x.pinf+y.pinf, x.ninf+y.ninf, x.cnt+y.cnt
	v := x.finite()
	if extra >= 0 && a.arg.IsValid(extra) {
		e := floatRun{}
		if err := e.fold(a.vals[extra], 1); err != nil {
			return err
		}
		t.nan, t.pinf, t.ninf, t.cnt = t.nan+e.nan, t.pinf+e.pinf, t.ninf+e.ninf, t.cnt+1
		v += e.sum
	}
	if y.cnt > 0 {
		v += y.finite()
	}
	switch {
	case t.nan > 0 || (t.pinf > 0 && t.ninf > 0):
		v = math.NaN()
	case t.pinf > 0:
		v = math.Inf(1)
	case t.ninf > 0:
		v = math.Inf(-1)
	case math.IsInf(v, 0):
		return sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
	}
	a.acc.sum[r], a.acc.cnt[r] = v, t.cnt
	return nil
}
func (a *floatSlider) finish(mem memory.Allocator) (arrow.Array, error) {
	return a.acc.finish(mem, len(a.acc.cnt))
}

// ---- sum(interval) ----

type intervalSlider struct {
	arg              arrow.Array
	vals             []arrow.MonthDayNanoInterval
	months, days, ns [2]int64
	c                [2]int64
	acc              *intervalSumAcc
}

func ivOverflow() error { return sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range") }

func addNs(x, v int64) (int64, error) {
	s := x + v
	if (v > 0 && s < x) || (v < 0 && s > x) {
		return 0, ivOverflow()
	}
	return s, nil
}

func (a *intervalSlider) reset(k int) { a.months[k], a.days[k], a.ns[k], a.c[k] = 0, 0, 0, 0 }
func (a *intervalSlider) fold(k, j int, sign int64) (err error) {
	if a.arg.IsNull(j) {
		return nil
	}
	v := a.vals[j]
	a.months[k] += sign * int64(v.Months)
	a.days[k] += sign * int64(v.Days)
	a.ns[k], err = addNs(a.ns[k], sign*v.Nanoseconds)
	a.c[k] += sign
	return err
}
func (a *intervalSlider) add(k, j int) error    { return a.fold(k, j, 1) }
func (a *intervalSlider) remove(k, j int) error { return a.fold(k, j, -1) }
func (a *intervalSlider) emit(r, extra int) error {
	m, d, c := a.months[0]+a.months[1], a.days[0]+a.days[1], a.c[0]+a.c[1]
	ns, err := addNs(a.ns[0], a.ns[1])
	if err != nil {
		return err
	}
	if extra >= 0 && a.arg.IsValid(extra) {
		v := a.vals[extra]
		m, d, c = m+int64(v.Months), d+int64(v.Days), c+1
		if ns, err = addNs(ns, v.Nanoseconds); err != nil {
			return err
		}
	}
	if m != int64(int32(m)) || d != int64(int32(d)) {
		return ivOverflow()
	}
	a.acc.sum[r] = arrow.MonthDayNanoInterval{Months: int32(m), Days: int32(d), Nanoseconds: ns}
	a.acc.cnt[r] = c
	return nil
}
func (a *intervalSlider) finish(mem memory.Allocator) (arrow.Array, error) {
	return a.acc.finish(mem, len(a.acc.cnt))
}

// ---- min/max: a monotonic deque per run ----

// minMaxSlider keeps, per run, the rows that can still become the
// extreme (each better than every later one): the front is the answer,
// a row entering drops the worse ones behind it, and a row leaving is
// the front or already gone. Amortized O(1) per row.
type minMaxSlider struct {
	arg   arrow.Array
	t     sqltypes.Type
	cmp   func(i, j int) int
	max   bool
	dq    [2][]int
	head  [2]int
	which []int
	idx   []int
}

// better reports whether row i beats row j (ties keep the earlier row).
func (a *minMaxSlider) better(i, j int) bool {
	c := a.cmp(i, j)
	if a.max {
		return c > 0
	}
	return c < 0
}

func (a *minMaxSlider) reset(k int) { a.dq[k], a.head[k] = a.dq[k][:0], 0 }
func (a *minMaxSlider) add(k, j int) error {
	if a.arg.IsNull(j) {
		return nil
	}
	q := a.dq[k]
	for len(q) > a.head[k] && !a.better(q[len(q)-1], j) {
		q = q[:len(q)-1]
	}
	if a.head[k] > 1024 && a.head[k] > len(q)/2 {
		q = q[:copy(q, q[a.head[k]:])]
		a.head[k] = 0
	}
	a.dq[k] = append(q, j)
	return nil
}
func (a *minMaxSlider) remove(k, j int) error {
	if a.head[k] < len(a.dq[k]) && a.dq[k][a.head[k]] == j {
		a.head[k]++
	}
	return nil
}
func (a *minMaxSlider) emit(r, extra int) error {
	best := -1
	consider := func(j int) {
		if best < 0 || a.better(j, best) {
			best = j
		}
	}
	if a.head[0] < len(a.dq[0]) {
		consider(a.dq[0][a.head[0]])
	}
	if extra >= 0 && a.arg.IsValid(extra) {
		consider(extra)
	}
	if a.head[1] < len(a.dq[1]) {
		consider(a.dq[1][a.head[1]])
	}
	if best < 0 {
		a.which[r] = -1
	} else {
		a.which[r], a.idx[r] = 0, best
	}
	return nil
}
func (a *minMaxSlider) finish(mem memory.Allocator) (arrow.Array, error) {
	return eval.Gather(mem, a.t, []arrow.Array{a.arg}, a.which, a.idx), nil
}

// slidable reports (as an error) whether newSlider takes fn over in.
func slidable(fn string, in sqltypes.Type) error {
	k := in.Kind
	switch {
	case fn == "count" || fn == "min" || fn == "max":
		return nil
	case (fn == "sum" || fn == "avg") && (k == sqltypes.Float4 || k == sqltypes.Float8 || in.IsInteger() || k == sqltypes.Numeric):
		return nil
	case fn == "sum" && k == sqltypes.Interval:
		return nil
	}
	return sqlerr.New(sqlerr.FeatureNotSupported, "%s(%s) as a window function is not supported", fn, in)
}

// newSlider returns the sliding form of aggregate fn (result type out)
// over arg (nil for count(*)) of type in, for n rows.
func newSlider(fn string, arg arrow.Array, in, out sqltypes.Type, n int) (slider, error) {
	k := in.Kind
	switch fn {
	case "count":
		return &countSlider{star: arg == nil, arg: arg, out: make([]int64, n)}, nil
	case "sum", "avg":
		avg := fn == "avg"
		switch {
		case k == sqltypes.Float4 || k == sqltypes.Float8:
			acc := &floatSumAcc{in: in, out: out, avg: avg}
			acc.resize(n)
			return &floatSlider{arg: arg, vals: readFloatCol(arg, in), acc: acc}, nil
		case k == sqltypes.Interval && !avg:
			acc := &intervalSumAcc{}
			acc.resize(n)
			return &intervalSlider{arg: arg, vals: eval.FixedValues[arrow.MonthDayNanoInterval](arg), acc: acc}, nil
		case in.IsInteger() || k == sqltypes.Numeric:
			return newDecSlider(arg, in, out, avg, n)
		}
	case "min", "max":
		cmp, err := eval.Comparator(in, arg, arg)
		if err != nil {
			return nil, err
		}
		return &minMaxSlider{arg: arg, t: in, cmp: cmp, max: fn == "max", which: make([]int, n), idx: make([]int, n)}, nil
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s(%s) as a window function is not supported", fn, in)
}
