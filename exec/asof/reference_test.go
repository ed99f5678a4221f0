package asof

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// This file is the test oracle: an O(n·m) ASOF join written straight from
// the spec (../../../shared/spec/asof-join.md §2), sharing no code with the
// kernel. It works on whole tables (one batch per input).

// tval is one on-column value as the spec sees it.
type tval struct {
	null bool
	i    *big.Int // integer-like types (exact)
	f    float64  // floating-point types
	s    []byte   // strings, binaries, booleans (ordered bytewise)
	str  bool
}

func tvalOf(a arrow.Array, i int) tval {
	if a.IsNull(i) {
		return tval{null: true}
	}
	switch a := a.(type) {
	case *array.Float64:
		if math.IsNaN(a.Value(i)) {
			return tval{null: true}
		}
		return tval{f: a.Value(i)}
	case *array.Float32:
		if math.IsNaN(float64(a.Value(i))) {
			return tval{null: true}
		}
		return tval{f: float64(a.Value(i))}
	case *array.Int64:
		return tval{i: big.NewInt(a.Value(i))}
	case *array.Int32:
		return tval{i: big.NewInt(int64(a.Value(i)))}
	case *array.Int16:
		return tval{i: big.NewInt(int64(a.Value(i)))}
	case *array.Int8:
		return tval{i: big.NewInt(int64(a.Value(i)))}
	case *array.Uint64:
		return tval{i: new(big.Int).SetUint64(a.Value(i))}
	case *array.Uint32:
		return tval{i: big.NewInt(int64(a.Value(i)))}
	case *array.Uint16:
		return tval{i: big.NewInt(int64(a.Value(i)))}
	case *array.Uint8:
		return tval{i: big.NewInt(int64(a.Value(i)))}
	case *array.Date32:
		return tval{i: big.NewInt(int64(a.Value(i)))}
	case *array.Date64:
		return tval{i: big.NewInt(int64(a.Value(i)))}
	case *array.Timestamp:
		return tval{i: big.NewInt(int64(a.Value(i)))}
	case *array.Decimal128:
		return tval{i: a.Value(i).BigInt()}
	case *array.String:
		return tval{s: []byte(a.Value(i)), str: true}
	case *array.LargeString:
		return tval{s: []byte(a.Value(i)), str: true}
	case *array.Binary:
		return tval{s: a.Value(i), str: true}
	case *array.LargeBinary:
		return tval{s: a.Value(i), str: true}
	case *array.FixedSizeBinary:
		return tval{s: a.Value(i), str: true}
	case *array.Boolean:
		if a.Value(i) {
			return tval{s: []byte{1}, str: true}
		}
		return tval{s: []byte{0}, str: true}
	}
	panic("reference: unsupported on type " + a.DataType().String())
}

// keyOf renders the by-key tuple of row i as a comparable string; ok is
// false when any key is NULL (SQL '=': NULL equals nothing), except a key
// marked null-safe (IS NOT DISTINCT FROM), where NULL is one more value.
func keyOf(cols []arrow.Array, nullSafe []bool, i int) (string, bool) {
	var sb strings.Builder
	for ci, c := range cols {
		if c.IsNull(i) {
			if ci < len(nullSafe) && nullSafe[ci] {
				sb.WriteString("\x01NULL\x00")
				continue
			}
			return "", false
		}
		v := c.GetOneForMarshal(i)
		switch x := v.(type) {
		case float64:
			if x == 0 {
				x = 0
			}
			v = x
		case float32:
			if x == 0 {
				x = 0
			}
			v = float64(x)
		case int8, int16, int32, int64:
			v = fmt.Sprint(x)
		}
		// Quoted: text keys may hold zero bytes, and ("a\x00", "b") must
		// not render as ("a", "\x00b") does.
		fmt.Fprintf(&sb, "%q\x00", fmt.Sprint(v))
	}
	return sb.String(), true
}

// refMatch returns, for each left row, the index of the winning right row
// or -1.
func refMatch(left, right arrow.RecordBatch, r Right) []int {
	lt, rt := left.Column(r.LeftOn), right.Column(r.On)
	var lk, rk []arrow.Array
	for i := range r.LeftKeys {
		lk = append(lk, left.Column(r.LeftKeys[i]))
		rk = append(rk, right.Column(r.Keys[i]))
	}
	_, isFloat := rt.(*array.Float64)
	if _, ok := rt.(*array.Float32); ok {
		isFloat = true
	}
	// The right rows of each key, in input order (only to keep large
	// cases quick: every row of the key is still considered).
	byKey := map[string][]int{}
	for ri := 0; ri < int(right.NumRows()); ri++ {
		if rkey, ok := keyOf(rk, r.NullSafe, ri); ok {
			byKey[rkey] = append(byKey[rkey], ri)
		}
	}
	out := make([]int, left.NumRows())
	for li := range out {
		out[li] = -1
		l := tvalOf(lt, li)
		key, ok := keyOf(lk, r.NullSafe, li)
		if l.null || !ok || r.Empty || !condHolds(r.LeftCond, left, li) {
			continue
		}
		best := -1
		var bestDist *big.Float
		bestSign := 0
		for _, ri := range byKey[key] {
			rv := tvalOf(rt, ri)
			if rv.null || !condHolds(r.Cond, right, ri) || !pairHolds(r, left, li, right, ri) {
				continue
			}
			var sign int
			var dist *big.Float
			if rv.str {
				// No distance: bounds are 0 or unbounded, and the closest
				// row in byte order wins (spec §3: inequality forms only).
				sign = bytes.Compare(rv.s, l.s)
				if !r.Lo.Unbounded && (sign < 0 || sign == 0 && r.Lo.Exclusive) {
					continue
				}
				if !r.Hi.Unbounded && (sign > 0 || sign == 0 && r.Hi.Exclusive) {
					continue
				}
				if best < 0 {
					best, bestSign = ri, sign
					continue
				}
				bt := tvalOf(rt, best).s
				switch {
				case sign == 0 && bestSign == 0:
					best = ri // the last of equal t at the left row
				case sign == 0 || bestSign == 0:
					if sign == 0 {
						best, bestSign = ri, sign
					}
				case sign < 0 && bestSign < 0:
					if bytes.Compare(rv.s, bt) >= 0 {
						best = ri // greater is closer; the last of equal t
					}
				case sign > 0 && bestSign > 0:
					if bytes.Compare(rv.s, bt) < 0 {
						best = ri // smaller is closer; the first of equal t stays
					}
				default:
					panic("reference: a byte on column's range reaches both sides")
				}
				continue
			}
			if isFloat {
				if !r.Lo.Unbounded && (!(l.f+r.Lo.Float <= rv.f) || r.Lo.Exclusive && !(l.f+r.Lo.Float < rv.f)) {
					continue
				}
				if !r.Hi.Unbounded && (!(rv.f <= l.f+r.Hi.Float) || r.Hi.Exclusive && !(rv.f < l.f+r.Hi.Float)) {
					continue
				}
				d := rv.f - l.f
				switch {
				case rv.f < l.f:
					sign = -1
				case rv.f > l.f:
					sign = 1
				default:
					d = 0 // equal infinities are no distance apart
				}
				dist = big.NewFloat(math.Abs(d))
			} else {
				delta := new(big.Int).Sub(rv.i, l.i)
				if r.Lo.Cal != nil || r.Hi.Cal != nil {
					// Calendar bounds: compare right.t with the edges
					// left.t + lo and left.t + hi themselves.
					if !r.Lo.Unbounded && rv.i.Cmp(refEdge(l.i, r.Lo)) < 0 {
						continue
					}
					if !r.Hi.Unbounded && rv.i.Cmp(refEdge(l.i, r.Hi)) > 0 {
						continue
					}
				} else {
					if c := delta.Cmp(refBound(r.Lo)); !r.Lo.Unbounded && (c < 0 || c == 0 && r.Lo.Exclusive) {
						continue
					}
					if c := delta.Cmp(refBound(r.Hi)); !r.Hi.Unbounded && (c > 0 || c == 0 && r.Hi.Exclusive) {
						continue
					}
				}
				sign = delta.Sign()
				dist = new(big.Float).SetInt(new(big.Int).Abs(delta))
			}
			if best < 0 {
				best, bestDist, bestSign = ri, dist, sign
				continue
			}
			switch c := dist.Cmp(bestDist); {
			case c < 0:
				best, bestDist, bestSign = ri, dist, sign
			case c == 0:
				if sign != bestSign && sign != 0 && bestSign != 0 {
					// Opposite sides at equal distance: the tie rule.
					if (r.Tie == PreferEarlier) == (sign < 0) {
						best, bestDist, bestSign = ri, dist, sign
					}
				} else if sign <= 0 {
					// Same t at or before the left row: the last one wins.
					best, bestDist, bestSign = ri, dist, sign
				}
				// Same t after the left row: the first one stays.
			}
		}
		out[li] = best
	}
	return out
}

// refEdge is l + b for a microsecond timestamp l (UTC), b an exact
// offset or a Calendar: to the first of l's month, add the months, clamp
// l's day to that month's length, then add the days and the microseconds.
func refEdge(l *big.Int, b Bound) *big.Int {
	if b.Cal == nil {
		return new(big.Int).Add(l, refBound(b))
	}
	t := time.UnixMicro(l.Int64()).UTC()
	first := time.Date(t.Year(), t.Month(), 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC).AddDate(0, int(b.Cal.Months), 0)
	last := time.Date(first.Year(), first.Month()+1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, -1).Day()
	d := min(t.Day(), last)
	e := first.AddDate(0, 0, d-1+int(b.Cal.Days))
	us := new(big.Int).Mul(big.NewInt(e.Unix()), big.NewInt(1e6))
	us.Add(us, big.NewInt(int64(e.Nanosecond()/1000)))
	return us.Add(us, big.NewInt(b.Cal.Micros))
}

// refBound is an exact bound's value (a decimal bound may exceed int64).
func refBound(b Bound) *big.Int {
	if b.HasDec {
		return b.Dec.BigInt()
	}
	return big.NewInt(b.Int)
}

// refJoin renders the expected output of the join of left with rights in
// exectest.Format's notation.
func refJoin(mem memory.Allocator, left arrow.RecordBatch, rights []arrow.RecordBatch, specs []Right) string {
	matches := make([][]int, len(rights))
	for i := range rights {
		matches[i] = refMatch(left, rights[i], specs[i])
	}
	var sb strings.Builder
	for li := 0; li < int(left.NumRows()); li++ {
		drop := false
		for i, sp := range specs {
			switch m := matches[i][li]; sp.Kind {
			case Inner, Semi, RightOuter:
				drop = drop || m < 0
			case Anti:
				drop = drop || m >= 0
			}
		}
		if drop {
			continue
		}
		var vals []string
		for c := 0; c < int(left.NumCols()); c++ {
			vals = append(vals, cell(left.Column(c), li))
		}
		for i, sp := range specs {
			if sp.Kind == Semi || sp.Kind == Anti {
				continue // left columns only
			}
			for _, p := range sp.Payload {
				if m := matches[i][li]; m >= 0 {
					vals = append(vals, cell(rights[i].Column(p), m))
				} else {
					vals = append(vals, "NULL")
				}
			}
		}
		sb.WriteString(strings.Join(vals, " | "))
		sb.WriteByte('\n')
	}
	// RIGHT and FULL (one right input): then every right row that is the
	// winner of no left row, in the right input's order.
	if len(specs) == 1 && (specs[0].Kind == RightOuter || specs[0].Kind == FullOuter) {
		won := map[int]bool{}
		for _, m := range matches[0] {
			won[m] = true
		}
		for ri := 0; ri < int(rights[0].NumRows()); ri++ {
			if won[ri] {
				continue
			}
			var vals []string
			for c := 0; c < int(left.NumCols()); c++ {
				vals = append(vals, "NULL")
			}
			for _, p := range specs[0].Payload {
				vals = append(vals, cell(rights[0].Column(p), ri))
			}
			sb.WriteString(strings.Join(vals, " | "))
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

func cell(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return "NULL"
	}
	return a.ValueStr(i)
}
