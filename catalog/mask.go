package catalog

import "sort"

// delMask is the set of deleted row positions of one segment, as sorted,
// disjoint, non-adjacent half-open ranges. It is immutable: a DELETE builds
// a new mask (union) for the new state, so snapshots keep theirs. Retention
// deletes of ordered tables remove contiguous key ranges, which are
// contiguous position ranges in a sorted segment, so masks stay small.
type delMask struct {
	r     []posRange
	count int64
}

type posRange struct{ lo, hi int64 }

// maskFromPositions builds a mask from ascending positions.
func maskFromPositions(pos []int64) *delMask {
	if len(pos) == 0 {
		return nil
	}
	m := &delMask{count: int64(len(pos))}
	cur := posRange{pos[0], pos[0] + 1}
	for _, p := range pos[1:] {
		if p == cur.hi {
			cur.hi++
			continue
		}
		m.r = append(m.r, cur)
		cur = posRange{p, p + 1}
	}
	m.r = append(m.r, cur)
	return m
}

func maskFromRanges(r []posRange) *delMask {
	if len(r) == 0 {
		return nil
	}
	m := &delMask{r: r}
	for _, x := range r {
		m.count += x.hi - x.lo
	}
	return m
}

// union returns the mask of m and o together; overlap reports whether they
// shared a position (two deletes of one row: a write conflict).
func (m *delMask) union(o *delMask) (out *delMask, overlap bool) {
	if m == nil {
		return o, false
	}
	if o == nil {
		return m, false
	}
	var r []posRange
	i, j := 0, 0
	push := func(x posRange) {
		if n := len(r); n > 0 && x.lo <= r[n-1].hi {
			if x.lo < r[n-1].hi {
				overlap = true
			}
			r[n-1].hi = max(r[n-1].hi, x.hi)
			return
		}
		r = append(r, x)
	}
	for i < len(m.r) || j < len(o.r) {
		if j >= len(o.r) || (i < len(m.r) && m.r[i].lo <= o.r[j].lo) {
			push(m.r[i])
			i++
		} else {
			push(o.r[j])
			j++
		}
	}
	return maskFromRanges(r), overlap
}

// countBelow counts deleted positions below n.
func (m *delMask) countBelow(n int64) int64 {
	if m == nil {
		return 0
	}
	var c int64
	for _, x := range m.r {
		if x.lo >= n {
			break
		}
		c += min(x.hi, n) - x.lo
	}
	return c
}

// within returns the ranges intersecting [lo, hi).
func (m *delMask) within(lo, hi int64) []posRange {
	if m == nil {
		return nil
	}
	i := sort.Search(len(m.r), func(i int) bool { return m.r[i].hi > lo })
	j := i
	for j < len(m.r) && m.r[j].lo < hi {
		j++
	}
	return m.r[i:j]
}

// has reports whether position p is deleted.
func (m *delMask) has(p int64) bool {
	if m == nil {
		return false
	}
	i := sort.Search(len(m.r), func(i int) bool { return m.r[i].hi > p })
	return i < len(m.r) && m.r[i].lo <= p
}

// keep lists the positions of [lo, hi) the mask does not delete, or nil
// when it deletes none of them (the caller then keeps the whole range).
func (m *delMask) keep(lo, hi int64) ([]int64, bool) {
	rs := m.within(lo, hi)
	if len(rs) == 0 {
		return nil, false
	}
	out := make([]int64, 0, hi-lo)
	p := lo
	for _, x := range rs {
		for ; p < max(x.lo, lo); p++ {
			out = append(out, p)
		}
		p = max(p, x.hi)
	}
	for ; p < hi; p++ {
		out = append(out, p)
	}
	return out, true
}
