package exec

import (
	"math/rand/v2"
	"testing"
)

// TestBucketFn: a range's bucket function is monotone in the key (so
// sorted buckets one after the other are the sorted range), sends keys
// below and above the range's bounds to its first and last bucket, and
// numbers the buckets from start, at most 1<<nb of them; over bounds
// that share a prefix of every length, within k0, across k0 and k1, and
// equal bounds.
func TestBucketFn(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	less := func(a, b *sortEntry) bool { return a.k0 < b.k0 || a.k0 == b.k0 && a.k1 < b.k1 }
	for it := range 1000 {
		// lo and hi share their top p bits (of 128).
		p := r.IntN(129)
		lo := sortEntry{k0: r.Uint64(), k1: r.Uint64()}
		hi := lo
		flip := func(e *sortEntry, bit int, v bool) { // bit 0 is the top bit of k0
			m := uint64(1) << (63 - bit%64)
			k := &e.k0
			if bit >= 64 {
				k = &e.k1
			}
			if v {
				*k |= m
			} else {
				*k &^= m
			}
		}
		for b := p; b < 128; b++ {
			flip(&lo, b, r.IntN(2) == 0)
			flip(&hi, b, r.IntN(2) == 0)
		}
		if p < 128 {
			flip(&lo, p, false)
			flip(&hi, p, true)
		}
		if less(&hi, &lo) {
			t.Fatalf("bounds out of order")
		}
		nb := uint(r.IntN(12))
		start := r.IntN(100)
		f := newBucketFn(&lo, &hi, nb, start)
		if f.top >= 1<<nb {
			t.Fatalf("%d buckets for nb=%d (lo %x %x, hi %x %x)", f.top+1, nb, lo.k0, lo.k1, hi.k0, hi.k1)
		}
		// Keys near and between the bounds, and anywhere.
		keys := []sortEntry{lo, hi, {}, {k0: ^uint64(0), k1: ^uint64(0)}}
		for range 120 {
			e := lo
			switch r.IntN(4) {
			case 0:
				e = hi
			case 1:
				e = sortEntry{k0: r.Uint64(), k1: r.Uint64()}
			}
			for b := max(0, p-2+r.IntN(4)); b < 128; b++ {
				if r.IntN(3) == 0 {
					flip(&e, b, r.IntN(2) == 0)
				}
			}
			keys = append(keys, e)
		}
		for i := range keys {
			x := &keys[i]
			bx := f.of(x.k0, x.k1)
			if bx < start || bx > start+int(f.top) {
				t.Fatalf("it %d: bucket %d outside [%d, %d]", it, bx, start, start+int(f.top))
			}
			if less(x, &lo) && bx != start || less(&hi, x) && bx != start+int(f.top) {
				t.Fatalf("it %d: key outside the bounds in bucket %d", it, bx)
			}
			for j := range keys {
				y := &keys[j]
				if less(x, y) && bx > f.of(y.k0, y.k1) {
					t.Fatalf("it %d: p=%d nb=%d: key %x %x in bucket %d after key %x %x in bucket %d",
						it, p, nb, x.k0, x.k1, bx, y.k0, y.k1, f.of(y.k0, y.k1))
				}
			}
		}
	}
}
