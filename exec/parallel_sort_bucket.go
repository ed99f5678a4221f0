package exec

import (
	"math/bits"
)

// rangeBucketRows is the number of entries the range path aims at per
// bucket: a bucket of that size is sorted in a core's L2 cache (two
// slices of it, see radixCache). A variable so that tests can shrink it
// and make many buckets of a few rows.
var rangeBucketRows = 8192

// rangeBucketsMax caps the buckets of a sort: each is a write stream of
// the pass that places the entries, and more streams than the cache and
// the TLB hold make that pass slower than the radix pass it replaces.
const rangeBucketsMax = 1024

// bucketFn cuts one key range into buckets by the bits of its keys that
// follow the bits every key of the range shares: the key (k0, k1) read as
// one 128-bit number, shifted right so that nb bits are left below the
// shared prefix, minus the same of the range's lowest key. The bucket
// number is monotone in the key, so sorting each bucket and putting the
// buckets one after the other sorts the range.
//
// The range's bounds lo and hi are estimates from a sample (for the first
// and last range) or splitters: a key below lo goes to the first bucket,
// one above hi to the last. Those buckets may then hold keys that differ
// in their top bits, which the bucket's sort (radixSortWith, reading
// every digit where its keys differ) handles like any other.
type bucketFn struct {
	lo0, lo1, hi0, hi1 uint64
	r0, l0, r1         uint   // t(k) = k0>>r0 | k0<<l0 | k1>>r1: the low 64 bits of k>>S
	tlo                uint64 // t(lo)
	top                uint64 // the last bucket: t(hi) - t(lo)
	start              int    // the number of the range's first bucket in the sort
}

// newBucketFn returns the buckets of keys in [lo, hi] (lo <= hi), with at
// most 1<<nb of them, numbered from start.
func newBucketFn(lo, hi *sortEntry, nb uint, start int) bucketFn {
	f := bucketFn{lo0: lo.k0, lo1: lo.k1, hi0: hi.k0, hi1: hi.k1, start: start}
	// p: the leading bits lo and hi share; S: the shift that leaves nb
	// bits below them.
	p := 128
	if lo.k0 != hi.k0 {
		p = bits.LeadingZeros64(lo.k0 ^ hi.k0)
	} else if lo.k1 != hi.k1 {
		p = 64 + bits.LeadingZeros64(lo.k1^hi.k1)
	}
	s := max(0, 128-p-int(nb))
	if s >= 64 {
		f.r0, f.l0, f.r1 = uint(s-64), 64, 64
	} else {
		f.r0, f.l0, f.r1 = 64, uint(64-s), uint(s)
	}
	f.tlo = f.t(lo.k0, lo.k1)
	f.top = f.t(hi.k0, hi.k1) - f.tlo
	return f
}

func (f *bucketFn) t(k0, k1 uint64) uint64 {
	return k0>>f.r0 | k0<<f.l0 | k1>>f.r1
}

// of is the bucket of key (k0, k1) in the sort.
func (f *bucketFn) of(k0, k1 uint64) int {
	d := f.t(k0, k1) - f.tlo
	if k0 < f.lo0 || k0 == f.lo0 && k1 < f.lo1 {
		d = 0
	}
	if k0 > f.hi0 || k0 == f.hi0 && k1 > f.hi1 {
		d = f.top
	}
	return f.start + int(d)
}

// bucketBits is the number of bits each of ranges ranges is cut by, for
// total rows in all: buckets of about rangeBucketRows rows, at most
// rangeBucketsMax in all.
func bucketBits(total, ranges int) uint {
	nb := uint(bits.Len(uint(total / ranges / rangeBucketRows)))
	for nb > 0 && ranges<<nb > rangeBucketsMax {
		nb--
	}
	return nb
}
