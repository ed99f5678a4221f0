package asof

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestIntWindow: intWindow.at is windowFor for integer bounds, at the
// number line's ends and around them, for every kind of bound.
func TestIntWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	vals := []int64{0, 1, -1, 2, -2, 5, -5, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, math.MaxInt64 - 5, math.MinInt64 + 5}
	pick := func() int64 {
		if rng.IntN(2) == 0 {
			return vals[rng.IntN(len(vals))]
		}
		return int64(rng.Uint64())
	}
	bound := func() Bound {
		b := IntBound(pick())
		switch rng.IntN(5) {
		case 0:
			b = Bound{Unbounded: true}
		case 1:
			b.Exclusive = true
		}
		return b
	}
	for range 200000 {
		lo, hi := bound(), bound()
		l := uint64(pick())
		iw, ok := newIntWindow(lo, hi, false)
		if !ok {
			t.Fatal("integer bounds not taken")
		}
		w := windowFor(l, lo, hi, false)
		wlo, b, empty := iw.at(l)
		if empty != w.empty || !empty && (wlo != w.lo || b != w.b) {
			t.Fatalf("l=%d lo=%+v hi=%+v: at gives (%d, %d, %v), windowFor %+v", l, lo, hi, wlo, b, empty, w)
		}
	}
	if _, ok := newIntWindow(IntBound(0), IntBound(1), true); ok {
		t.Fatal("float bounds taken")
	}
	if _, ok := newIntWindow(Bound{Cal: &Calendar{}}, IntBound(1), false); ok {
		t.Fatal("calendar bound taken")
	}
}
