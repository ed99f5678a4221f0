package exec

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRadixSortStable checks radixSort against a stable comparison sort on
// keys of several shapes (constant bytes, few distinct values, random,
// runs of ties), at sizes around its thresholds and with the thresholds
// shrunk so that small inputs take every path: most-significant-digit
// buckets nested several deep, least-significant-digit passes ending in
// either slice, insertion sort.
func TestRadixSortStable(t *testing.T) {
	shapes := map[string]func(r *rand.Rand) (uint64, uint64){
		"few-then-random": func(r *rand.Rand) (uint64, uint64) { return uint64(r.IntN(1000)), r.Uint64() },
		"random":          func(r *rand.Rand) (uint64, uint64) { return r.Uint64(), r.Uint64() },
		"ties":            func(r *rand.Rand) (uint64, uint64) { return uint64(r.IntN(3)) << 40, uint64(r.IntN(2)) },
		"constant":        func(r *rand.Rand) (uint64, uint64) { return 7, 9 },
		"top-bytes":       func(r *rand.Rand) (uint64, uint64) { return uint64(r.IntN(300)) << 52, uint64(r.IntN(70000)) << 8 },
	}
	defer func(c, s int) { radixCache, radixSmall = c, s }(radixCache, radixSmall)
	for _, th := range [][2]int{{1 << 14, 48}, {64, 4}, {8, 0}, {300, 48}} {
		radixCache, radixSmall = th[0], th[1]
		for name, gen := range shapes {
			for _, n := range []int{0, 1, 2, 5, 49, 100, 5000, 70000} {
				for m := 1; m <= 2; m++ {
					t.Run(fmt.Sprintf("%v/%s/n=%d/m=%d", th, name, n, m), func(t *testing.T) {
						r := rand.New(rand.NewPCG(uint64(n), uint64(m)))
						entries := make([]sortEntry, n)
						for i := range entries {
							k0, k1 := gen(r)
							if m == 1 {
								k1 = 0
							}
							entries[i] = sortEntry{k0: k0, k1: k1, row: int32(i)}
						}
						want := slices.Clone(entries)
						slices.SortStableFunc(want, func(x, y sortEntry) int {
							return cmp.Or(cmp.Compare(x.k0, y.k0), cmp.Compare(x.k1, y.k1))
						})
						got := radixSort(entries, m)
						require.Len(t, got, n)
						for i := range want {
							if got[i] != want[i] {
								// Not require.Equal: its diff of 70000 entries takes minutes.
								t.Fatalf("entry %d is %+v, want %+v", i, got[i], want[i])
							}
						}
					})
				}
			}
		}
	}
}
