package asof

import (
	"math"
	"testing"
)

// process computes the window of the plain backward range (no lower bound,
// inclusive hi of 0, non-float column) without windowFor; this pins that
// the two agree, at the ends of the number line too.
func TestPlainBackwardWindow(t *testing.T) {
	for _, l := range []uint64{0, 1, 2, signBit - 1, signBit, signBit + 1, math.MaxUint64 - 1, math.MaxUint64} {
		got := windowFor(l, Unbounded, IntBound(0), false)
		if want := (window{hi: l, b: l}); got != want {
			t.Errorf("windowFor(%d) = %+v, want %+v", l, got, want)
		}
	}
}

// findU64Rows must give lookup's ids, NULL and absent keys included, and
// with onlyAbsent leave ids already found alone.
func TestFindU64Rows(t *testing.T) {
	tab := newKeyTable(true, &Options{})
	for k := uint64(0); k < 300; k += 3 {
		tab.internU64(k * 1000003)
	}
	kb := &keyBatch{}
	for k := uint64(0); k < 400; k++ {
		kb.u64 = append(kb.u64, k*1000003)
		kb.null = append(kb.null, k%7 == 5)
	}
	kb.n = len(kb.u64)
	ids := make([]int32, kb.n)
	tab.findU64Rows(kb, ids, 0, false)
	for i := range ids {
		if want := tab.lookup(kb, nil, i); ids[i] != want {
			t.Fatalf("row %d: id %d, want %d", i, ids[i], want)
		}
	}
	for i := range ids {
		ids[i] = 7
	}
	ids[10], ids[11] = -1, -1
	tab.findU64Rows(kb, ids, 5, true)
	for i := range ids {
		want := int32(7)
		if i == 10 || i == 11 {
			want = tab.lookup(kb, nil, i)
		}
		if ids[i] != want {
			t.Fatalf("onlyAbsent row %d: id %d, want %d", i, ids[i], want)
		}
	}
}
