package asof

import "math"

// intWindow is windowFor for an integer on column whose bounds are plain
// offsets (no calendar interval), with the bounds unpacked once per batch:
// the backward walk computes a window per left row, and windowFor's two
// Bound arguments (about 70 bytes each, passed by value) and its calls
// cost bounded ranges (BETWEEN -5 AND -1) several ns a row. at gives
// exactly windowFor's lo, b and empty (TestIntWindow).
type intWindow struct {
	lo, hi         int64
	loUnb, hiUnb   bool
	loExcl, hiExcl bool
}

// newIntWindow unpacks lo and hi; ok is false when windowFor must be used
// (a float on column or a calendar bound).
func newIntWindow(lo, hi Bound, float bool) (intWindow, bool) {
	if float || lo.Cal != nil || hi.Cal != nil {
		return intWindow{}, false
	}
	return intWindow{lo: lo.Int, hi: hi.Int, loUnb: lo.Unbounded, hiUnb: hi.Unbounded,
		loExcl: lo.Exclusive && !lo.Unbounded, hiExcl: hi.Exclusive && !hi.Unbounded}, true
}

// at returns the window of left value l: its low edge, its backward edge
// and whether it is empty (then lo and b mean nothing).
func (iw *intWindow) at(l uint64) (lo, b uint64, empty bool) {
	var wlo, whi uint64
	var loSat, hiSat bool
	if !iw.loUnb {
		v, under, over := addOffset(l, iw.lo)
		switch {
		case over:
			empty = true
		case under:
			wlo, loSat = 0, true
		default:
			wlo = v
		}
	}
	if iw.hiUnb {
		whi = math.MaxUint64
	} else {
		v, under, over := addOffset(l, iw.hi)
		switch {
		case under:
			empty = true
		case over:
			whi, hiSat = math.MaxUint64, true
		default:
			whi = v
		}
	}
	if iw.loExcl && !empty && !loSat {
		if wlo == math.MaxUint64 {
			empty = true
		}
		wlo++
	}
	if iw.hiExcl && !empty && !hiSat {
		if whi == 0 {
			empty = true
		}
		whi--
	}
	if wlo > whi {
		empty = true
	}
	return wlo, min(l, whi), empty
}
