package eval

import (
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/functions"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

func (c *compiler) compileUnary(e *expr.Unary) (node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	switch e.Op {
	case expr.Not:
		if x.typ().Kind != sqltypes.Bool {
			return nil, sqlerr.New(sqlerr.DatatypeMismatch, "argument of NOT must be type boolean, not type %s", x.typ())
		}
		return &notNode{x: x}, nil
	case expr.Neg:
		if x.typ().Kind != e.T.Kind {
			return nil, unsupported("operator -", x.typ())
		}
		return &negNode{x: x, t: e.T}, nil
	}
	return nil, internalf("unary operator %d", e.Op)
}

func (c *compiler) compileBinary(e *expr.Binary) (node, error) {
	l, err := c.compile(e.L)
	if err != nil {
		return nil, err
	}
	r, err := c.compile(e.R)
	if err != nil {
		return nil, err
	}
	lk, rk, tk := l.typ().Kind, r.typ().Kind, e.T.Kind
	switch e.Op {
	case expr.And, expr.Or:
		if lk != sqltypes.Bool || rk != sqltypes.Bool {
			return nil, sqlerr.New(sqlerr.DatatypeMismatch, "argument of %s must be type boolean, not type %s", e.Op, pickNonBool(l.typ(), r.typ()))
		}
		return &logicNode{and: e.Op == expr.And, l: l, r: r}, nil
	case expr.Eq, expr.Ne, expr.Lt, expr.Le, expr.Gt, expr.Ge, expr.IsDistinctFrom, expr.IsNotDistinctFrom:
		if !vec.SameClass(l.typ(), r.typ()) {
			return nil, unsupported("operator "+e.Op.String(), l.typ(), r.typ())
		}
		return &cmpNode{op: e.Op, l: l, r: r}, nil
	case expr.Like, expr.NotLike, expr.ILike, expr.NotILike:
		if !vec.IsStringKind(lk) || !vec.IsStringKind(rk) {
			return nil, unsupported("operator "+e.Op.String(), l.typ(), r.typ())
		}
		return &likeNode{l: l, r: r, ilike: e.Op == expr.ILike || e.Op == expr.NotILike,
			negate: e.Op == expr.NotLike || e.Op == expr.NotILike}, nil
	case expr.Concat:
		if !vec.IsStringKind(lk) || !vec.IsStringKind(rk) {
			return nil, unsupported("operator ||", l.typ(), r.typ())
		}
		return &funcNode{k: functions.ConcatKernel([]sqltypes.Type{l.typ(), r.typ()}, true), args: []node{l, r}, t: e.T}, nil
	}
	// Arithmetic.
	switch {
	case l.typ().IsInteger() && lk == rk && tk == lk:
		return &intArithNode{op: e.Op, l: l, r: r, t: e.T}, nil
	case (lk == sqltypes.Float8 || lk == sqltypes.Float4) && lk == rk && tk == lk && e.Op != expr.Mod:
		return &floatArithNode{op: e.Op, l: l, r: r, t: e.T}, nil
	case lk == sqltypes.Numeric && rk == sqltypes.Numeric && tk == sqltypes.Numeric:
		return &numArithNode{op: e.Op, l: l, r: r, t: e.T}, nil
	case (lk == sqltypes.Timestamp || lk == sqltypes.TimestampTZ) && rk == sqltypes.Interval && tk == lk && (e.Op == expr.Add || e.Op == expr.Sub):
		return &tsIntervalNode{ts: l, iv: r, sub: e.Op == expr.Sub, t: e.T, env: c.env}, nil
	case lk == sqltypes.Date && rk == sqltypes.Interval && tk == sqltypes.Timestamp && (e.Op == expr.Add || e.Op == expr.Sub):
		return &tsIntervalNode{ts: &dateTSNode{d: l}, iv: r, sub: e.Op == expr.Sub, t: e.T, env: c.env}, nil
	case lk == sqltypes.Interval && rk == sqltypes.Date && tk == sqltypes.Timestamp && e.Op == expr.Add:
		return &tsIntervalNode{ts: &dateTSNode{d: r}, iv: l, t: e.T, env: c.env}, nil
	case lk == sqltypes.Interval && (rk == sqltypes.Timestamp || rk == sqltypes.TimestampTZ) && tk == rk && e.Op == expr.Add:
		return &tsIntervalNode{ts: r, iv: l, t: e.T, env: c.env}, nil
	case (lk == sqltypes.Timestamp || lk == sqltypes.TimestampTZ) && lk == rk && tk == sqltypes.Interval && e.Op == expr.Sub:
		return &tsDiffNode{l: l, r: r}, nil
	case lk == sqltypes.Interval && rk == sqltypes.Interval && tk == sqltypes.Interval && (e.Op == expr.Add || e.Op == expr.Sub):
		return &ivArithNode{l: l, r: r, sub: e.Op == expr.Sub}, nil
	case lk == sqltypes.Interval && rk == sqltypes.Float8 && tk == sqltypes.Interval && (e.Op == expr.Mul || e.Op == expr.Div):
		return &ivScaleNode{iv: l, f: r, div: e.Op == expr.Div}, nil
	case lk == sqltypes.Float8 && rk == sqltypes.Interval && tk == sqltypes.Interval && e.Op == expr.Mul:
		return &ivScaleNode{iv: r, f: l}, nil
	case lk == sqltypes.Date && rk == sqltypes.Int4 && tk == sqltypes.Date && (e.Op == expr.Add || e.Op == expr.Sub):
		return &dateIntNode{d: l, n: r, sub: e.Op == expr.Sub}, nil
	case lk == sqltypes.Int4 && rk == sqltypes.Date && tk == sqltypes.Date && e.Op == expr.Add:
		return &dateIntNode{d: r, n: l}, nil
	case lk == sqltypes.Date && rk == sqltypes.Date && tk == sqltypes.Int4 && e.Op == expr.Sub:
		return &dateDiffNode{l: l, r: r}, nil
	}
	return nil, unsupported("operator "+e.Op.String(), l.typ(), r.typ())
}

func pickNonBool(a, b sqltypes.Type) sqltypes.Type {
	if a.Kind != sqltypes.Bool {
		return a
	}
	return b
}

// dateTSNode widens a date to the timestamp of its midnight (date +
// interval is a timestamp in Postgres).
type dateTSNode struct{ d node }

func (n *dateTSNode) typ() sqltypes.Type { return sqltypes.TimestampType }

func (n *dateTSNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	da, err := n.d.eval(c, b)
	if err != nil {
		return nil, err
	}
	defer da.Release()
	rows := da.Len()
	buf, out := vec.NewFixed[int64](c.mem, rows)
	for i, d := range vec.Values[int32](da) {
		switch d {
		case sqltypes.DateInfinity:
			out[i] = sqltypes.TimestampInfinity
		case sqltypes.DateNegInfinity:
			out[i] = sqltypes.TimestampNegInfinity
		default:
			out[i] = int64(d) * vec.UsPerDay
		}
	}
	return vec.FinishFixed(c.mem, sqltypes.TimestampType.Arrow(), rows, buf, vec.Validity(rows, da)), nil
}

type tsIntervalNode struct {
	ts, iv node
	sub    bool
	t      sqltypes.Type
	env    *Env
}

func (n *tsIntervalNode) typ() sqltypes.Type { return n.t }

func (n *tsIntervalNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	ta, ia, err := eval2(c, b, n.ts, n.iv)
	if err != nil {
		return nil, err
	}
	defer ta.Release()
	defer ia.Release()
	rows := ta.Len()
	valid := vec.Validity(rows, ta, ia)
	tv, iv := vec.Values[int64](ta), vec.Values[arrow.MonthDayNanoInterval](ia)
	loc := time.UTC
	if n.t.Kind == sqltypes.TimestampTZ {
		loc = c.env.loc()
	}
	buf, out := vec.NewFixed[int64](c.mem, rows)
	for i := 0; i < rows; i++ {
		out[i] = 0
		if !vec.Valid(valid, i) {
			continue
		}
		v := iv[i]
		if n.sub {
			v = arrow.MonthDayNanoInterval{Months: -v.Months, Days: -v.Days, Nanoseconds: -v.Nanoseconds}
		}
		r, err := vec.AddInterval(tv[i], v, loc)
		if err != nil {
			buf.Release()
			return nil, err
		}
		out[i] = r
	}
	return vec.FinishFixed(c.mem, n.t.Arrow(), rows, buf, valid), nil
}

// tsDiffNode is timestamp − timestamp: an interval of days and time
// (Postgres' timestamp_mi, justify_hours applied).
type tsDiffNode struct{ l, r node }

func (n *tsDiffNode) typ() sqltypes.Type { return sqltypes.IntervalType }

func (n *tsDiffNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	la, ra, err := eval2(c, b, n.l, n.r)
	if err != nil {
		return nil, err
	}
	defer la.Release()
	defer ra.Release()
	rows := la.Len()
	valid := vec.Validity(rows, la, ra)
	lv, rv := vec.Values[int64](la), vec.Values[int64](ra)
	buf, out := vec.NewFixed[arrow.MonthDayNanoInterval](c.mem, rows)
	for i := 0; i < rows; i++ {
		out[i] = arrow.MonthDayNanoInterval{}
		if !vec.Valid(valid, i) {
			continue
		}
		if vec.IsInfTimestamp(lv[i]) || vec.IsInfTimestamp(rv[i]) {
			buf.Release()
			return nil, sqlerr.New(sqlerr.DatetimeFieldOverflow, "cannot subtract infinite timestamps")
		}
		d := lv[i] - rv[i]
		if (rv[i] < 0 && d < lv[i]) || (rv[i] > 0 && d > lv[i]) {
			buf.Release()
			return nil, sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
		}
		days := d / vec.UsPerDay
		rem := d - days*vec.UsPerDay
		if days > math.MaxInt32 || days < math.MinInt32 || rem > math.MaxInt64/1000 || rem < math.MinInt64/1000 {
			buf.Release()
			return nil, sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
		}
		out[i] = arrow.MonthDayNanoInterval{Days: int32(days), Nanoseconds: rem * 1000}
	}
	return vec.FinishFixed(c.mem, sqltypes.IntervalType.Arrow(), rows, buf, valid), nil
}

type ivArithNode struct {
	l, r node
	sub  bool
}

func (n *ivArithNode) typ() sqltypes.Type { return sqltypes.IntervalType }

func (n *ivArithNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	la, ra, err := eval2(c, b, n.l, n.r)
	if err != nil {
		return nil, err
	}
	defer la.Release()
	defer ra.Release()
	rows := la.Len()
	valid := vec.Validity(rows, la, ra)
	lv, rv := vec.Values[arrow.MonthDayNanoInterval](la), vec.Values[arrow.MonthDayNanoInterval](ra)
	buf, out := vec.NewFixed[arrow.MonthDayNanoInterval](c.mem, rows)
	for i := 0; i < rows; i++ {
		out[i] = arrow.MonthDayNanoInterval{}
		if !vec.Valid(valid, i) {
			continue
		}
		x, y := lv[i], rv[i]
		if n.sub {
			y = arrow.MonthDayNanoInterval{Months: -y.Months, Days: -y.Days, Nanoseconds: -y.Nanoseconds}
		}
		m, d, ns := int64(x.Months)+int64(y.Months), int64(x.Days)+int64(y.Days), x.Nanoseconds+y.Nanoseconds
		if m != int64(int32(m)) || d != int64(int32(d)) ||
			(y.Nanoseconds > 0 && ns < x.Nanoseconds) || (y.Nanoseconds < 0 && ns > x.Nanoseconds) {
			buf.Release()
			return nil, sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
		}
		out[i] = arrow.MonthDayNanoInterval{Months: int32(m), Days: int32(d), Nanoseconds: ns}
	}
	return vec.FinishFixed(c.mem, sqltypes.IntervalType.Arrow(), rows, buf, valid), nil
}

// ivScaleNode is interval * double and interval / double, a port of
// Postgres 15's interval_mul/interval_div: whole months and days scale
// in place, their fractions cascade down (a month is 30 days, a day 24
// hours) but never up.
type ivScaleNode struct {
	iv, f node
	div   bool
}

func (n *ivScaleNode) typ() sqltypes.Type { return sqltypes.IntervalType }

func (n *ivScaleNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	ia, fa, err := eval2(c, b, n.iv, n.f)
	if err != nil {
		return nil, err
	}
	defer ia.Release()
	defer fa.Release()
	rows := ia.Len()
	valid := vec.Validity(rows, ia, fa)
	iv, fs := vec.Values[arrow.MonthDayNanoInterval](ia), vec.Values[float64](fa)
	buf, out := vec.NewFixed[arrow.MonthDayNanoInterval](c.mem, rows)
	fail := func(err error) (arrow.Array, error) { buf.Release(); return nil, err }
	rangeErr := func() (arrow.Array, error) {
		return fail(sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range"))
	}
	tsround := func(x float64) float64 { return math.RoundToEven(x*1e6) / 1e6 }
	const daysPerMonth, secsPerDay = 30.0, 86400.0
	for i := 0; i < rows; i++ {
		out[i] = arrow.MonthDayNanoInterval{}
		if !vec.Valid(valid, i) {
			continue
		}
		v, f := iv[i], fs[i]
		scale := func(x float64) float64 { return x * f }
		if n.div {
			if f == 0 {
				return fail(errDivZero())
			}
			scale = func(x float64) float64 { return x / f }
		}
		md := scale(float64(v.Months))
		if md != md || md > math.MaxInt32 || md < math.MinInt32 {
			return rangeErr()
		}
		dd := scale(float64(v.Days))
		if dd != dd || dd > math.MaxInt32 || dd < math.MinInt32 {
			return rangeErr()
		}
		months, days := int32(md), int32(dd)
		monthRemDays := tsround((md - float64(months)) * daysPerMonth)
		secRem := tsround((dd - float64(days) + monthRemDays - float64(int32(monthRemDays))) * secsPerDay)
		if math.Abs(secRem) >= secsPerDay {
			days += int32(secRem / secsPerDay)
			secRem -= float64(int32(secRem/secsPerDay)) * secsPerDay
		}
		days += int32(monthRemDays)
		t := math.RoundToEven(scale(float64(v.Nanoseconds/1000)) + secRem*1e6)
		if t != t || t >= 9.2233720368547758e18/1000 || t < -9.2233720368547758e18/1000 {
			return rangeErr()
		}
		out[i] = arrow.MonthDayNanoInterval{Months: months, Days: days, Nanoseconds: int64(t) * 1000}
	}
	return vec.FinishFixed(c.mem, sqltypes.IntervalType.Arrow(), rows, buf, valid), nil
}

// Postgres' DATE range in days since 1970-01-01: 4714-11-24 BC to
// 5874897-12-31.
const (
	minDateDays = -2440588
	maxDateDays = 2147483494 - 2440588 - 1
)

type dateIntNode struct {
	d, n node
	sub  bool
}

func (n *dateIntNode) typ() sqltypes.Type { return sqltypes.DateType }

func (n *dateIntNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	da, na, err := eval2(c, b, n.d, n.n)
	if err != nil {
		return nil, err
	}
	defer da.Release()
	defer na.Release()
	rows := da.Len()
	valid := vec.Validity(rows, da, na)
	dv, nv := vec.Values[int32](da), vec.Values[int32](na)
	buf, out := vec.NewFixed[int32](c.mem, rows)
	for i := 0; i < rows; i++ {
		out[i] = 0
		if !vec.Valid(valid, i) {
			continue
		}
		if dv[i] == sqltypes.DateInfinity || dv[i] == sqltypes.DateNegInfinity {
			out[i] = dv[i]
			continue
		}
		k := int64(nv[i])
		if n.sub {
			k = -k
		}
		r := int64(dv[i]) + k
		if r < minDateDays || r > maxDateDays {
			buf.Release()
			return nil, sqlerr.New(sqlerr.DatetimeFieldOverflow, "date out of range")
		}
		out[i] = int32(r)
	}
	return vec.FinishFixed(c.mem, sqltypes.DateType.Arrow(), rows, buf, valid), nil
}

type dateDiffNode struct{ l, r node }

func (n *dateDiffNode) typ() sqltypes.Type { return sqltypes.Int4Type }

func (n *dateDiffNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	la, ra, err := eval2(c, b, n.l, n.r)
	if err != nil {
		return nil, err
	}
	defer la.Release()
	defer ra.Release()
	rows := la.Len()
	valid := vec.Validity(rows, la, ra)
	lv, rv := vec.Values[int32](la), vec.Values[int32](ra)
	buf, out := vec.NewFixed[int32](c.mem, rows)
	for i := 0; i < rows; i++ {
		out[i] = 0
		if !vec.Valid(valid, i) {
			continue
		}
		inf := func(v int32) bool { return v == sqltypes.DateInfinity || v == sqltypes.DateNegInfinity }
		if inf(lv[i]) || inf(rv[i]) {
			buf.Release()
			return nil, sqlerr.New(sqlerr.DatetimeFieldOverflow, "cannot subtract infinite dates")
		}
		out[i] = lv[i] - rv[i]
	}
	return vec.FinishFixed(c.mem, sqltypes.Int4Type.Arrow(), rows, buf, valid), nil
}
