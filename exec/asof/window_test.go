package asof

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
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
	kb.n, kb.anyNull = len(kb.u64), true
	ids := make([]int32, kb.n)
	tab.findU64Rows(kb, ids, 0, false)
	for i := range ids {
		if want := tab.lookup(kb, i); ids[i] != want {
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
			want = tab.lookup(kb, i)
		}
		if ids[i] != want {
			t.Fatalf("onlyAbsent row %d: id %d, want %d", i, ids[i], want)
		}
	}
}

// TestKeyTableModel checks the u64 key table against a Go map: small keys
// (the direct index, grown as larger small keys arrive, and its edge at
// directLimit), large and negative keys (the hash table), interned in
// random order and looked up one by one and by batch.
func TestKeyTableModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	randKey := func() uint64 {
		switch rng.IntN(5) {
		case 0:
			return uint64(rng.IntN(100))
		case 1:
			return uint64(directLimit - 3 + rng.IntN(6))
		case 2:
			return uint64(-int64(1 + rng.IntN(50)))
		case 3:
			return rng.Uint64()
		}
		return uint64(rng.IntN(5000))
	}
	tab := newKeyTable(true, &Options{})
	model := map[uint64]int32{}
	for round := 0; round < 20; round++ {
		for i := 0; i < 200; i++ {
			k := randKey()
			id := tab.internU64(k)
			if want, ok := model[k]; ok {
				require.Equal(t, want, id, "key %d interned twice", k)
			} else {
				require.Equal(t, int32(len(model)), id, "key %d: ids are dense", k)
				model[k] = id
			}
		}
		// Odd rounds have no NULLs (the lookup's fast path); some
		// rounds only small keys (no fall back to the general loop).
		kb := &keyBatch{anyNull: round%2 == 0}
		for i := 0; i < 500; i++ {
			k := randKey()
			if round%4 == 1 {
				k %= 100
			}
			kb.u64 = append(kb.u64, k)
			kb.null = append(kb.null, kb.anyNull && i%11 == 0)
		}
		kb.n = len(kb.u64)
		ids := make([]int32, kb.n)
		miss := tab.findU64Rows(kb, ids, 0, false)
		wantMiss := false
		for i, k := range kb.u64 {
			want, ok := model[k]
			if !ok || kb.null[i] {
				want = -1
			}
			wantMiss = wantMiss || (!ok && !kb.null[i])
			require.Equal(t, want, ids[i], "key %d", k)
			if !kb.null[i] {
				require.Equal(t, want, tab.findU64(k), "key %d", k)
			}
		}
		require.Equal(t, wantMiss, miss, "round %d: absent keys reported", round)
	}
}
