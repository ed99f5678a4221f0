package asof

import (
	"math"
	"math/big"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Calendar is an INTERVAL bound with months or years on a date or
// timestamp on column (spec §3): the window edge is left.t + Months
// (calendar months, the day clamped to the month's end), then + Days,
// then + Micros, as PostgreSQL's date/time + interval computes it; for a
// zoned timestamp the months and days are added in Loc's local time (nil
// is UTC). A Bound with Cal set keeps in Int only a sign hint: > 0 when
// the edge may lie after left.t (upper bound) or always does (lower
// bound), which the kernels use to decide what to track.
type Calendar struct {
	Months, Days int32
	Micros       int64
	Loc          *time.Location
	// kind is the on column's, set when the join is built.
	kind timeKind
}

// add returns x+c on the number line (x a mapped value of c.kind),
// reporting an exact result below or above the line's ends.
func (c *Calendar) add(x uint64) (v uint64, under, over bool) {
	n := int64(x ^ signBit)
	loc := c.Loc
	if loc == nil {
		loc = time.UTC
	}
	var t time.Time
	switch c.kind.class {
	case classDate32:
		t = time.Date(1970, 1, 1+int(n), 0, 0, 0, 0, time.UTC)
		loc = time.UTC
	case classDate64:
		t = time.UnixMilli(n).UTC()
		loc = time.UTC
	default:
		switch c.kind.unit {
		case arrow.Second:
			t = time.Unix(n, 0)
		case arrow.Millisecond:
			t = time.UnixMilli(n)
		case arrow.Microsecond:
			t = time.UnixMicro(n)
		default:
			t = time.Unix(0, n)
		}
		t = t.In(loc)
	}
	y, m, d := t.Date()
	hh, mm, ss := t.Clock()
	// Months first, the day clamped to the target month's length.
	mi := int64(y)*12 + int64(m) - 1 + int64(c.Months)
	ty, tm := floorDiv(mi, 12), int(floorMod(mi, 12))+1
	if last := daysIn(ty, tm); d > last {
		d = last
	}
	r := time.Date(int(ty), time.Month(tm), d+int(c.Days), hh, mm, ss, t.Nanosecond(), loc)
	// The time part is an exact duration.
	sec := new(big.Int).SetInt64(r.Unix())
	ns := big.NewInt(int64(r.Nanosecond()))
	var out *big.Int
	switch {
	case c.kind.class == classDate32:
		out = new(big.Int).Div(sec, big.NewInt(86400))
	case c.kind.class == classDate64:
		out = sec.Mul(sec, big.NewInt(1000))
	default:
		per := int64(1e9)
		switch c.kind.unit {
		case arrow.Second:
			per = 1
		case arrow.Millisecond:
			per = 1e3
		case arrow.Microsecond:
			per = 1e6
		}
		out = sec.Mul(sec, big.NewInt(per))
		out.Add(out, ns.Div(ns, big.NewInt(1e9/per)))
		mic := big.NewInt(c.Micros)
		switch c.kind.unit {
		case arrow.Second:
			mic.Div(mic, big.NewInt(1e6)) // in the column's unit, rounded down
		case arrow.Millisecond:
			mic.Div(mic, big.NewInt(1e3))
		case arrow.Nanosecond:
			mic.Mul(mic, big.NewInt(1e3))
		}
		out.Add(out, mic)
	}
	switch {
	case out.Cmp(big.NewInt(math.MinInt64)) < 0:
		return 0, true, false
	case out.Cmp(big.NewInt(math.MaxInt64)) > 0:
		return math.MaxUint64, false, true
	}
	return uint64(out.Int64()) ^ signBit, false, false
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

func daysIn(y int64, m int) int {
	return time.Date(int(y), time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
