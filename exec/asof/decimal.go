package asof

import (
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Decimal on columns of precision > 18, or with a bound beyond int64
// unscaled units, run on the comparison kernel (comparison.go) with 128-bit
// values (narrower ones take the number line: decimalOnLine in options.go): the unscaled value of every decimal128 is a legal t, windows are
// computed with explicit under/overflow (an edge beyond the 128-bit range
// lies beyond every value), and distances are exact unsigned 128-bit
// differences, so nothing is rounded or refused anywhere in the range.

// decimalValue is an unscaled decimal128 value.
type decimalValue = decimal128.Num

var (
	maxDecimal = decimal128.New(math.MaxInt64, math.MaxUint64)
	minDecimal = decimal128.New(math.MinInt64, 0)
	oneDecimal = decimal128.FromI64(1)
)

// decBound is a bound of a decimal on column in unscaled units.
func decBound(b Bound) decimalValue {
	if b.HasDec {
		return b.Dec
	}
	return decimal128.FromI64(b.Int)
}

// cmpDecimal orders two 128-bit signed values.
func cmpDecimal(a, b decimalValue) int {
	ah, bh := a.HighBits(), b.HighBits()
	switch {
	case ah < bh:
		return -1
	case ah > bh:
		return 1
	}
	al, bl := a.LowBits(), b.LowBits()
	switch {
	case al < bl:
		return -1
	case al > bl:
		return 1
	}
	return 0
}

// addDecimal returns a+b, reporting whether the exact sum lies below or
// above the signed 128-bit range.
func addDecimal(a, b decimalValue) (s decimalValue, under, over bool) {
	s = a.Add(b)
	ah, bh, sh := a.HighBits(), b.HighBits(), s.HighBits()
	switch {
	case ah >= 0 && bh >= 0 && sh < 0:
		return s, false, true
	case ah < 0 && bh < 0 && sh >= 0:
		return s, true, false
	}
	return s, false, false
}

// distDecimal is hi − lo for hi >= lo, exact as an unsigned 128-bit number
// (high, low words).
func distDecimal(hi, lo decimalValue) (uint64, uint64) {
	l, borrow := bits.Sub64(hi.LowBits(), lo.LowBits(), 0)
	h, _ := bits.Sub64(uint64(hi.HighBits()), uint64(lo.HighBits()), borrow)
	return h, l
}

type decOps struct{}

func (decOps) decode(arr arrow.Array, c *column[decimalValue]) error {
	c.reset(arr)
	copy(c.t, arr.(*array.Decimal128).Values())
	return nil
}

func (decOps) cmp(a, b decimalValue) int { return cmpDecimal(a, b) }

func (decOps) own(v decimalValue) decimalValue { return v }

// window computes [l+lo, l+hi] on the 128-bit line. A strict bound moves its
// edge one unscaled unit inward; an edge beyond the line opens that side
// (every value is inside) or empties the window (none is).
func (decOps) window(l decimalValue, lo, hi Bound) ordWindow[decimalValue] {
	var w ordWindow[decimalValue]
	if lo.Unbounded {
		w.loOpen = true
	} else {
		v, under, over := addDecimal(l, decBound(lo))
		switch {
		case over:
			w.empty = true
			return w
		case under:
			w.loOpen = true
		case lo.Exclusive:
			if v == maxDecimal {
				w.empty = true
				return w
			}
			w.lo = v.Add(oneDecimal)
		default:
			w.lo = v
		}
	}
	if hi.Unbounded {
		w.hiOpen = true
	} else {
		v, under, over := addDecimal(l, decBound(hi))
		switch {
		case under:
			w.empty = true
			return w
		case over:
			w.hiOpen = true
		case hi.Exclusive:
			if v == minDecimal {
				w.empty = true
				return w
			}
			w.hi = v.Sub(oneDecimal)
		default:
			w.hi = v
		}
	}
	if !w.loOpen && !w.hiOpen && cmpDecimal(w.lo, w.hi) > 0 {
		// Crossed edges (Right.Empty's range): nothing is eligible.
		w.empty = true
		return w
	}
	w.b = l
	if !w.hiOpen && cmpDecimal(w.hi, l) < 0 {
		w.b = w.hi
	}
	return w
}

func (decOps) preferBackward(l, b, f decimalValue, tie Tie) bool {
	bh, bl := distDecimal(l, b)
	fh, fl := distDecimal(f, l)
	switch {
	case bh != fh:
		return bh < fh
	case bl != fl:
		return bl < fl
	}
	return tie == PreferEarlier
}
