package asof

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sqlerr"
)

// The kernel works on one number line for every on-column type: values are
// mapped to uint64 so that unsigned comparison is the type's order and, for
// integer-like types, differences are exact. Signed values flip the sign bit
// (so -1 < 0 across zero, and MinInt64 maps to 0); unsigned values map to
// themselves; floats use the IEEE total-order trick with -0 folded into 0;
// decimals of precision at most 18 with bounds that fit in int64 unscaled
// units use their unscaled value (decimalOnLine decides this up front).
// Wider decimals, strings, binaries and booleans are off this line: the
// comparison kernel (comparison.go, decimal.go) joins them.

const signBit = uint64(1) << 63

type timeClass uint8

const (
	classSigned timeClass = iota
	classUnsigned
	classFloat
	classDate32
	classDate64
	classTimestamp
	classDecimal
	classTime
)

// timeKind is what the kernel needs to know about an on column's type.
type timeKind struct {
	class timeClass
	float bool
	unit  arrow.TimeUnit // timestamps and times
	scale int32          // decimals
}

func timeKindOf(dt arrow.DataType) (timeKind, error) {
	switch d := dt.(type) {
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type:
		return timeKind{class: classSigned}, nil
	case *arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type, *arrow.Uint64Type:
		return timeKind{class: classUnsigned}, nil
	case *arrow.Float32Type, *arrow.Float64Type:
		return timeKind{class: classFloat, float: true}, nil
	case *arrow.Date32Type:
		return timeKind{class: classDate32}, nil
	case *arrow.Date64Type:
		return timeKind{class: classDate64}, nil
	case *arrow.TimestampType:
		return timeKind{class: classTimestamp, unit: d.Unit}, nil
	case *arrow.Time32Type:
		return timeKind{class: classTime, unit: d.Unit}, nil
	case *arrow.Time64Type:
		return timeKind{class: classTime, unit: d.Unit}, nil
	case *arrow.Decimal128Type:
		return timeKind{class: classDecimal, scale: d.Scale}, nil
	}
	return timeKind{}, sqlerr.New(sqlerr.FeatureNotSupported,
		"type %s cannot be an ASOF on column (the range form needs an integer, date, timestamp, floating-point or numeric column)", dt)
}

// comparable reports whether two on columns share one number line (same
// class and unit or scale; integer widths may differ).
func (k timeKind) comparable(o timeKind) bool { return k == o }

// decodeOn maps arr into c, reusing c's storage. NaN is NULL. A decimal is
// decoded only for a join that put it on the line (decimalOnLine); a value
// beyond int64 units, which its type's precision rules out, is an error.
func decodeOn(arr arrow.Array, c *onColumn, input string) error {
	if c.view {
		c.t, c.view = nil, false
	}
	c.xor = 0
	n := arr.Len()
	if cap(c.t) < n {
		u64Scratch.put(c.t)
		c.t = u64Scratch.get(n)
	}
	c.t = c.t[:n]
	c.decodeValid(arr)
	t := c.t
	switch a := arr.(type) {
	case *array.Int64:
		for i, v := range a.Int64Values() {
			t[i] = uint64(v) ^ signBit
		}
	case *array.Int32:
		for i, v := range a.Int32Values() {
			t[i] = uint64(int64(v)) ^ signBit
		}
	case *array.Int16:
		for i, v := range a.Int16Values() {
			t[i] = uint64(int64(v)) ^ signBit
		}
	case *array.Int8:
		for i, v := range a.Int8Values() {
			t[i] = uint64(int64(v)) ^ signBit
		}
	case *array.Uint64:
		copy(t, a.Uint64Values())
	case *array.Uint32:
		for i, v := range a.Uint32Values() {
			t[i] = uint64(v)
		}
	case *array.Uint16:
		for i, v := range a.Uint16Values() {
			t[i] = uint64(v)
		}
	case *array.Uint8:
		for i, v := range a.Uint8Values() {
			t[i] = uint64(v)
		}
	case *array.Date32:
		for i, v := range a.Date32Values() {
			t[i] = uint64(int64(v)) ^ signBit
		}
	case *array.Date64:
		for i, v := range a.Date64Values() {
			t[i] = uint64(int64(v)) ^ signBit
		}
	case *array.Timestamp:
		for i, v := range a.TimestampValues() {
			t[i] = uint64(int64(v)) ^ signBit
		}
	case *array.Time32:
		for i, v := range a.Time32Values() {
			t[i] = uint64(int64(v)) ^ signBit
		}
	case *array.Time64:
		for i, v := range a.Time64Values() {
			t[i] = uint64(int64(v)) ^ signBit
		}
	case *array.Float64:
		for i, v := range a.Float64Values() {
			t[i] = floatKey(c, i, v)
		}
	case *array.Float32:
		for i, v := range a.Float32Values() {
			t[i] = floatKey(c, i, float64(v))
		}
	case *array.Decimal128:
		for i, v := range a.Values() {
			lo, hi := v.LowBits(), v.HighBits()
			if (hi != 0 || lo > math.MaxInt64) && (hi != -1 || lo <= math.MaxInt64) {
				if !c.ok(i) {
					continue
				}
				return sqlerr.New(sqlerr.NumericValueOutOfRange,
					"ASOF on column of %s: value %s exceeds the precision of its type %s", input, v.ToString(a.DataType().(*arrow.Decimal128Type).Scale), arr.DataType())
			}
			t[i] = lo ^ signBit
		}
	default:
		return sqlerr.New(sqlerr.FeatureNotSupported, "type %s cannot be an ASOF on column", arr.DataType())
	}
	return nil
}

// decodeValid sets c.valid from arr's validity (nil without NULLs).
func (c *column[V]) decodeValid(arr arrow.Array) {
	n := arr.Len()
	c.valid = c.valid[:0]
	if arr.NullN() == 0 {
		c.valid = nil
		return
	}
	if cap(c.valid) < n {
		boolScratch.put(c.valid)
		c.valid = boolScratch.get(n)
	}
	c.valid = c.valid[:n]
	for i := 0; i < n; i++ {
		c.valid[i] = arr.IsValid(i)
	}
}

// viewOn is decodeOn without the copy for the 64-bit integer types, whose
// number-line word is the value's bits (XOR signBit when signed): c.t is
// the array's own values and c.xor the mask, so that the reader maps each
// value as it reads it (t[i] ^ xor). For every other type it is decodeOn,
// xor 0. The backward kernel reads its right input so: a pass over every
// right batch writing a copy (and the walk reading the copy) cost more
// than the XOR.
func viewOn(arr arrow.Array, c *onColumn, input string) error {
	w, signed, ok := words64(arr)
	if !ok {
		return decodeOn(arr, c, input)
	}
	if !c.view {
		u64Scratch.put(c.t)
	}
	c.t, c.view, c.xor = w, true, 0
	c.decodeValid(arr)
	if signed {
		c.xor = signBit
	}
	return nil
}

// floatKey maps f, row i of c, to the number line; NaN marks the row NULL.
func floatKey(c *onColumn, i int, f float64) uint64 {
	if f != f {
		if c.valid == nil {
			c.valid = make([]bool, len(c.t))
			for j := range c.valid {
				c.valid[j] = true
			}
		}
		c.valid[i] = false
		return 0
	}
	return floatToKey(f)
}

func floatToKey(f float64) uint64 {
	if f == 0 {
		f = 0 // fold -0 into +0
	}
	b := math.Float64bits(f)
	if b&signBit != 0 {
		return ^b
	}
	return b | signBit
}

func keyToFloat(k uint64) float64 {
	if k&signBit != 0 {
		return math.Float64frombits(k &^ signBit)
	}
	return math.Float64frombits(^k)
}

// addOffset returns x+d on the number line, reporting whether the exact sum
// falls below 0 or above MaxUint64.
func addOffset(x uint64, d int64) (v uint64, under, over bool) {
	if d >= 0 {
		v = x + uint64(d)
		return v, false, v < x
	}
	m := uint64(-(d + 1)) + 1 // |d| without overflowing at MinInt64
	if m > x {
		return 0, true, false
	}
	return x - m, false, false
}

// addBound is addOffset for a bound that may be a Calendar interval.
func addBound(x uint64, b Bound) (uint64, bool, bool) {
	if b.Cal != nil {
		return b.Cal.add(x)
	}
	return addOffset(x, b.Int)
}

// window is the eligible range of right t for one left row, plus the
// backward edge b: rows with t <= b have Δ <= 0 (or are below the range when
// hi < 0) and only the last of them per key can win.
type window struct {
	lo, hi, b uint64
	empty     bool
}

// windowFor computes the window of left value l for range [lo, hi].
func windowFor(l uint64, lo, hi Bound, float bool) window {
	var w window
	var loSaturated, hiSaturated bool
	if float {
		lf := keyToFloat(l)
		if lo.Unbounded {
			w.lo = 0
		} else {
			e := lf + lo.Float
			if e != e {
				// An infinite t with an infinite bound of the other
				// sign: the edge is NaN, and such a row has no eligible
				// rows (spec §3), whatever sign the NaN has.
				w.empty = true
				return w
			}
			w.lo = floatToKey(e)
		}
		if hi.Unbounded {
			w.hi = math.MaxUint64
		} else {
			e := lf + hi.Float
			if e != e {
				w.empty = true
				return w
			}
			w.hi = floatToKey(e)
		}
	} else {
		if !lo.Unbounded {
			v, under, over := addBound(l, lo)
			switch {
			case over:
				w.empty = true
			case under:
				w.lo, loSaturated = 0, true
			default:
				w.lo = v
			}
		}
		if hi.Unbounded {
			w.hi = math.MaxUint64
		} else {
			v, under, over := addBound(l, hi)
			switch {
			case under:
				w.empty = true
			case over:
				w.hi, hiSaturated = math.MaxUint64, true
			default:
				w.hi = v
			}
		}
	}
	// A strict bound moves its edge one step inward on the number line;
	// an edge that saturated at the line's end needs no step (the exact
	// bound lies beyond every value).
	if lo.Exclusive && !lo.Unbounded && !w.empty && !loSaturated {
		if w.lo == math.MaxUint64 {
			w.empty = true
		}
		w.lo++
	}
	if hi.Exclusive && !hi.Unbounded && !w.empty && !hiSaturated {
		if w.hi == 0 {
			w.empty = true
		}
		w.hi--
	}
	if w.lo > w.hi {
		// Crossed edges (Right.Empty's range): nothing is eligible.
		w.empty = true
	}
	w.b = min(l, w.hi)
	return w
}
