package exec

import (
	"context"
	"errors"
	"io"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sqltypes"
)

// NullsOrder says where NULLs sort.
type NullsOrder uint8

const (
	// NullsDefault is Postgres' default: NULLS LAST for ASC, NULLS FIRST
	// for DESC (NULL is larger than every value).
	NullsDefault NullsOrder = iota
	NullsFirst
	NullsLast
)

// SortKey is one ORDER BY key over an input column.
type SortKey struct {
	Col   int
	Desc  bool
	Nulls NullsOrder
}

func (k SortKey) nullsFirst() bool {
	switch k.Nulls {
	case NullsFirst:
		return true
	case NullsLast:
		return false
	}
	return k.Desc
}

// SortOptions are the knobs shared by Sort and TopN.
type SortOptions struct {
	// MemoryLimit bounds the bytes of input held (0 = unlimited); beyond
	// it the operator fails with 53200.
	MemoryLimit int64
	// BatchSize is the number of rows per output batch (0 = DefaultBatchSize).
	BatchSize int
}

func checkKeys(schema *arrow.Schema, keys []SortKey) ([]sqltypes.Type, error) {
	ts := make([]sqltypes.Type, len(keys))
	for i, k := range keys {
		t, err := columnType(schema, k.Col)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	return ts, nil
}

// rowComparator compares rows i and j of b by keys.
func rowComparator(b arrow.RecordBatch, keys []SortKey, types []sqltypes.Type) (func(i, j int) int, error) {
	return rowComparator2(b, b, keys, types)
}

// rowComparator2 compares row i of l with row j of r (same schema) by keys.
func rowComparator2(l, r arrow.RecordBatch, keys []SortKey, types []sqltypes.Type) (func(i, j int) int, error) {
	type keyCmp struct {
		lcol, rcol arrow.Array
		cmp        func(i, j int) int
		desc       bool
		nullsFirst bool
	}
	kcs := make([]keyCmp, len(keys))
	for n, k := range keys {
		la, ra := l.Column(k.Col), r.Column(k.Col)
		cmp, err := eval.Comparator(types[n], la, ra)
		if err != nil {
			return nil, err
		}
		if sa, ok := la.(*array.String); ok && l == r && bytewise(types[n]) {
			cmp = prefixed(sa, cmp)
		}
		kcs[n] = keyCmp{lcol: la, rcol: ra, cmp: cmp, desc: k.Desc, nullsFirst: k.nullsFirst()}
	}
	return func(i, j int) int {
		for _, k := range kcs {
			if k.lcol.NullN() > 0 || k.rcol.NullN() > 0 {
				ni, nj := k.lcol.IsNull(i), k.rcol.IsNull(j)
				switch {
				case ni && nj:
					continue
				case ni:
					if k.nullsFirst {
						return -1
					}
					return 1
				case nj:
					if k.nullsFirst {
						return 1
					}
					return -1
				}
			}
			c := k.cmp(i, j)
			if c != 0 {
				if k.desc {
					return -c
				}
				return c
			}
		}
		return 0
	}, nil
}

// prefixed speeds up string comparison: each value's first 8 bytes, big
// endian, decide most comparisons with one integer compare; only equal
// prefixes fall back to the full comparison.
// bytewise reports whether t's values order as their bytes do (text under
// the C collation; not jsonb, whose order is its own).
func bytewise(t sqltypes.Type) bool {
	switch t.Kind {
	case sqltypes.Text, sqltypes.Varchar, sqltypes.Unknown:
		return true
	}
	return false
}

func prefixed(sa *array.String, full func(i, j int) int) func(i, j int) int {
	pre := make([]uint64, sa.Len())
	short := make([]int8, sa.Len()) // length if at most 8, else -1
	lcp := commonPrefix(sa)         // shared by all: skipped
	for i := range pre {
		if sa.IsNull(i) {
			continue
		}
		v := sa.Value(i)[lcp:]
		var p uint64
		for k := 0; k < 8; k++ {
			p <<= 8
			if k < len(v) {
				p |= uint64(v[k])
			}
		}
		pre[i] = p
		short[i] = -1
		if len(v) <= 8 {
			short[i] = int8(len(v))
		}
	}
	return func(i, j int) int {
		switch pi, pj := pre[i], pre[j]; {
		case pi < pj:
			return -1
		case pi > pj:
			return 1
		}
		if li, lj := short[i], short[j]; li >= 0 && lj >= 0 {
			// Both values fit in their prefixes (zero padded): the
			// shorter one is smaller.
			return int(li) - int(lj)
		}
		return full(i, j)
	}
}

// sortedOrder returns the stable sorted order of b's rows.
func sortedOrder(b arrow.RecordBatch, keys []SortKey, types []sqltypes.Type) ([]int, error) {
	if len(keys) > 0 {
		if norm, exact, ok := normalizedKeys(b.Column(keys[0].Col), types[0], keys[0].Desc); ok {
			return sortNormalized(b, keys, types, norm, exact)
		}
	}
	cmp, err := rowComparator(b, keys, types)
	if err != nil {
		return nil, err
	}
	idx := make([]int, b.NumRows())
	for i := range idx {
		idx[i] = i
	}
	// pdqsort with the row number as the last key is stable and
	// O(n log n); SortStableFunc's in-place merge is O(n log² n).
	slices.SortFunc(idx, func(i, j int) int {
		if c := cmp(i, j); c != 0 {
			return c
		}
		return i - j
	})
	return idx, nil
}

// sortEntry is one row in a normalized-key sort: the first one or two
// keys as unsigned integers whose order is the keys' order (descending
// already inverted), kept next to the row number so that most comparisons
// touch one contiguous slice instead of the columns.
type sortEntry struct {
	k0, k1 uint64
	row    int32
	n0, n1 bool
}

// normalizedKeys maps column a to order-preserving uint64s. exact says
// equal keys always mean equal values; for strings (exact false) equal
// keys mean equal values only when the length byte says the string fit
// (see strKeyExact). ok is false for types without a normalization.
func normalizedKeys(a arrow.Array, t sqltypes.Type, desc bool) (keys []uint64, exact, ok bool) {
	keys = make([]uint64, a.Len())
	switch t.Kind {
	case sqltypes.Text, sqltypes.Varchar, sqltypes.Unknown:
		// The first 7 bytes, then the length capped at 8: strings of at
		// most 7 bytes are encoded exactly, and a string that is a prefix
		// of another sorts first, as bytewise order wants.
		// Bytes every value shares (symbols, ids with a common prefix)
		// are skipped: they cannot order two values of this column.
		sa := a.(*array.String)
		lcp := commonPrefix(sa)
		for i := range keys {
			if sa.IsNull(i) {
				continue
			}
			v := sa.Value(i)[lcp:]
			var p uint64
			for k := 0; k < 7; k++ {
				p <<= 8
				if k < len(v) {
					p |= uint64(v[k])
				}
			}
			keys[i] = p<<8 | uint64(min(len(v), 8))
		}
		if desc {
			for i := range keys {
				keys[i] = ^keys[i]
			}
		}
		return keys, false, true
	}
	if !normalizeExact(keys, a, t, desc) {
		return nil, false, false
	}
	return keys, true, true
}

// normalizeExact writes the normalized keys of a's rows into keys[:a.Len()]
// for the types whose normalization is exact (numbers, dates,
// timestamps), and reports whether t is one of them. The keys of two
// columns of the same type compare as their values.
func normalizeExact(keys []uint64, a arrow.Array, t sqltypes.Type, desc bool) bool {
	keys = keys[:a.Len()]
	const sign = uint64(1) << 63
	switch t.Kind {
	case sqltypes.Int2:
		for i, v := range eval.FixedValues[int16](a) {
			keys[i] = uint64(int64(v)) ^ sign
		}
	case sqltypes.Int4, sqltypes.Date:
		for i, v := range eval.FixedValues[int32](a) {
			keys[i] = uint64(int64(v)) ^ sign
		}
	case sqltypes.Int8, sqltypes.Timestamp, sqltypes.TimestampTZ:
		for i, v := range eval.FixedValues[int64](a) {
			keys[i] = uint64(v) ^ sign
		}
	case sqltypes.Float8, sqltypes.Float4:
		var fs []float64
		if t.Kind == sqltypes.Float8 {
			fs = eval.FixedValues[float64](a)
		} else {
			fs = readFloatCol(a, t)
		}
		for i, f := range fs {
			switch {
			case f != f:
				keys[i] = math.MaxUint64 // NaN: above everything, all equal
			case f == 0:
				keys[i] = sign // -0 = 0
			default:
				bits := math.Float64bits(f)
				if bits&sign != 0 {
					keys[i] = ^bits
				} else {
					keys[i] = bits | sign
				}
			}
		}
	default:
		return false
	}
	if desc {
		for i := range keys {
			keys[i] = ^keys[i]
		}
	}
	return true
}

// commonPrefix is the length of the longest prefix all non-NULL values
// of sa share.
func commonPrefix(sa *array.String) int {
	var p string
	first := true
	for i := 0; i < sa.Len(); i++ {
		if sa.IsNull(i) {
			continue
		}
		v := sa.Value(i)
		if first {
			p, first = v, false
			continue
		}
		n := min(len(p), len(v))
		k := 0
		for k < n && p[k] == v[k] {
			k++
		}
		p = p[:k]
		if k == 0 {
			return 0
		}
	}
	return len(p)
}

// strKeyExact reports whether a normalized string key encodes its whole
// value (length byte below 8).
func strKeyExact(k uint64, desc bool) bool {
	if desc {
		k = ^k
	}
	return k&0xff < 8
}

func sortNormalized(b arrow.RecordBatch, keys []SortKey, types []sqltypes.Type, norm0 []uint64, exact0 bool) ([]int, error) {
	norms := [][]uint64{norm0}
	exact := []bool{exact0}
	if len(keys) > 1 {
		if norm1, exact1, ok := normalizedKeys(b.Column(keys[1].Col), types[1], keys[1].Desc); ok {
			norms = append(norms, norm1)
			exact = append(exact, exact1)
		}
	}
	m := len(norms)
	entries := make([]sortEntry, len(norm0))
	c0 := b.Column(keys[0].Col)
	for i := range entries {
		entries[i] = sortEntry{k0: norm0[i], row: int32(i), n0: c0.IsNull(i)}
	}
	if m > 1 {
		c1 := b.Column(keys[1].Col)
		for i := range entries {
			entries[i].k1, entries[i].n1 = norms[1][i], c1.IsNull(i)
		}
	}
	if len(keys) == m && radixable(entries, norms, exact, keys, b) {
		entries = radixSort(entries, m)
		idx := make([]int, len(entries))
		for i, e := range entries {
			idx[i] = int(e.row)
		}
		return idx, nil
	}
	// tieFrom[l] compares keys[l:] on the columns: for ties past the
	// normalized keys, or from a key whose normalized form was only a
	// prefix of the value.
	tieFrom := make([]func(i, j int) int, m+1)
	for l := range tieFrom {
		cmp, err := rowComparator(b, keys[l:], types[l:])
		if err != nil {
			return nil, err
		}
		tieFrom[l] = cmp
	}
	level := func(l int, xk, yk uint64, xn, yn bool, x, y sortEntry) (int, bool) {
		if xn != yn {
			if xn == keys[l].nullsFirst() {
				return -1, true
			}
			return 1, true
		}
		if xn {
			return 0, false
		}
		if xk != yk {
			if xk < yk {
				return -1, true
			}
			return 1, true
		}
		if !exact[l] && !strKeyExact(xk, keys[l].Desc) {
			return tieFrom[l](int(x.row), int(y.row)), true
		}
		return 0, false
	}
	slices.SortFunc(entries, func(x, y sortEntry) int {
		if c, done := level(0, x.k0, y.k0, x.n0, y.n0, x, y); done && c != 0 {
			return c
		} else if !done {
			if m > 1 {
				if c, done := level(1, x.k1, y.k1, x.n1, y.n1, x, y); done && c != 0 {
					return c
				} else if !done {
					if c := tieFrom[2](int(x.row), int(y.row)); c != 0 {
						return c
					}
				}
			} else if c := tieFrom[1](int(x.row), int(y.row)); c != 0 {
				return c
			}
		}
		return int(x.row) - int(y.row)
	})
	idx := make([]int, len(entries))
	for i, e := range entries {
		idx[i] = int(e.row)
	}
	return idx, nil
}

// radixable reports whether the normalized keys alone decide the order:
// every sort key is normalized, none is NULL, and every string key holds
// its whole value.
func radixable(entries []sortEntry, norms [][]uint64, exact []bool, keys []SortKey, b arrow.RecordBatch) bool {
	for l, k := range keys {
		if b.Column(k.Col).NullN() > 0 {
			return false
		}
		if !exact[l] {
			for _, v := range norms[l] {
				if !strKeyExact(v, k.Desc) {
					return false
				}
			}
		}
	}
	return len(entries) > 1
}

// radixSort sorts entries by (k0[, k1]) stably (entries start in row
// order, so ties keep it) and returns them sorted (in entries or in a
// scratch slice of the same length). It reads the keys as 8*m digits of a
// byte, most significant first, and skips the digits where every key
// agrees. Large ranges are cut by their top digit into buckets (a stable
// counting pass over main memory); a bucket small enough for the cache is
// finished by least-significant-digit passes there. A least-significant-
// digit sort of the whole input instead makes every digit a pass over
// main memory with 256 scattered write streams: five times slower on ten
// million rows of (1000 keys, random float).
func radixSort(entries []sortEntry, m int) []sortEntry {
	return radixSortWith(entries, nil, m)
}

// radixSortWith is radixSort with tmp (nil, or as long as entries) as the
// scratch slice; the result is always in entries.
func radixSortWith(entries, tmp []sortEntry, m int) []sortEntry {
	if len(entries) < 2 {
		return entries
	}
	// The digits where some key differs from the first's.
	var diff [2]uint64
	f := entries[0]
	for i := range entries {
		diff[0] |= entries[i].k0 ^ f.k0
		diff[1] |= entries[i].k1 ^ f.k1
	}
	var digits []uint8
	for key := 0; key < m; key++ {
		for d := 7; d >= 0; d-- {
			if byte(diff[key]>>(8*d)) != 0 {
				digits = append(digits, uint8(8*key+7-d))
			}
		}
	}
	if len(digits) == 0 {
		return entries
	}
	if tmp == nil {
		tmp = make([]sortEntry, len(entries))
	}
	radixRange(entries, tmp[:len(entries)], digits, false)
	return entries
}

// radixCache is the largest range radixRange finishes by least-significant-
// digit passes (two slices of it stay in a core's L2 cache); radixSmall
// the largest it insertion-sorts. Variables so that tests can shrink them.
var (
	radixCache = 1 << 14
	radixSmall = 48
)

// digit is digit d of e's key: bytes of k0 then of k1, most significant
// first.
func digit(e *sortEntry, d uint8) byte {
	if d < 8 {
		return byte(e.k0 >> (56 - 8*d))
	}
	return byte(e.k1 >> (56 - 8*(d-8)))
}

func entryLess(x, y *sortEntry) bool {
	if x.k0 != y.k0 {
		return x.k0 < y.k0
	}
	return x.k1 < y.k1
}

// radixRange sorts data stably by digits (the ones that can differ, most
// significant first), with other (same length) as scratch; the result ends
// in other if into, else in data.
func radixRange(data, other []sortEntry, digits []uint8, into bool) {
	for len(digits) > 0 && len(data) > radixCache {
		var counts [256]int
		d := digits[0]
		for i := range data {
			counts[digit(&data[i], d)]++
		}
		digits = digits[1:]
		if counts[digit(&data[0], d)] == len(data) {
			continue
		}
		sum := 0
		for i := range counts {
			counts[i], sum = sum, sum+counts[i]
		}
		starts := counts
		for i := range data {
			dig := digit(&data[i], d)
			other[counts[dig]] = data[i]
			counts[dig]++
		}
		// The entries are in other now: each bucket's result belongs in
		// data when into was false, in other when it was true.
		for b := range 256 {
			lo, hi := starts[b], counts[b]
			if hi-lo > 0 {
				radixRange(other[lo:hi], data[lo:hi], digits, !into)
			}
		}
		return
	}
	switch {
	case len(digits) == 0 || len(data) < 2:
	case len(data) <= radixSmall:
		for i := 1; i < len(data); i++ {
			e := data[i]
			j := i
			for ; j > 0 && entryLess(&e, &data[j-1]); j-- {
				data[j] = data[j-1]
			}
			data[j] = e
		}
	default:
		if radixLSD(data, other, digits) {
			data, other = other, data
			into = !into
		}
	}
	if into {
		copy(other, data)
	}
}

// radixLSD sorts data stably by digits, least significant last in digits
// first, passing the entries between data and other; it reports whether
// the result ended in other.
func radixLSD(data, other []sortEntry, digits []uint8) (swapped bool) {
	var counts [16][256]int32
	for i := range data {
		for n, d := range digits {
			counts[n][digit(&data[i], d)]++
		}
	}
	for n := len(digits) - 1; n >= 0; n-- {
		c := &counts[n]
		d := digits[n]
		if int(c[digit(&data[0], d)]) == len(data) {
			continue
		}
		var sum int32
		for i := range c {
			c[i], sum = sum, sum+c[i]
		}
		for i := range data {
			dig := digit(&data[i], d)
			other[c[dig]] = data[i]
			c[dig]++
		}
		data, other = other, data
		swapped = !swapped
	}
	return swapped
}

// Sort materializes its input and emits it ordered by keys. The sort is
// stable: rows with equal keys keep their input order.
type Sort struct {
	child  Operator
	mem    memory.Allocator
	keys   []SortKey
	types  []sqltypes.Type
	opts   SortOptions
	budget memBudget

	sorted arrow.RecordBatch
	order  []int
	pos    int
	loaded bool
}

var _ Operator = (*Sort)(nil)

// NewSort returns a sort of child by keys.
func NewSort(child Operator, mem memory.Allocator, keys []SortKey, opts SortOptions) (*Sort, error) {
	types, err := checkKeys(child.Schema(), keys)
	if err != nil {
		return nil, err
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	return &Sort{child: child, mem: mem, keys: keys, types: types, opts: opts,
		budget: newBudget("sort", mem, opts.MemoryLimit)}, nil
}

func (s *Sort) Schema() *arrow.Schema          { return s.child.Schema() }
func (s *Sort) Open(ctx context.Context) error { return s.child.Open(ctx) }

func (s *Sort) Close() error {
	if s.sorted != nil {
		s.sorted.Release()
		s.sorted = nil
	}
	return s.child.Close()
}

func (s *Sort) load(ctx context.Context) error {
	s.loaded = true
	parts, err := drainAll(ctx, s.child, &s.budget)
	if err != nil {
		return err
	}
	all, err := concatBatches(s.mem, s.Schema(), parts)
	releaseBatches(parts)
	if err != nil {
		return err
	}
	s.sorted = all
	// The concatenation doubled the input for a moment; the order is
	// one int a row on the Go heap.
	if err := s.budget.check(); err != nil {
		return err
	}
	if err := s.budget.grow(8 * all.NumRows()); err != nil {
		return err
	}
	s.order, err = sortedOrder(all, s.keys, s.types)
	return err
}

func (s *Sort) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !s.loaded {
		if err := s.load(ctx); err != nil {
			return nil, err
		}
	}
	if s.pos >= len(s.order) {
		return nil, io.EOF
	}
	end := min(len(s.order), s.pos+s.opts.BatchSize)
	out, err := eval.TakeBatch(s.mem, s.sorted, s.order[s.pos:end])
	s.pos = end
	return out, err
}

// TopN is ORDER BY keys LIMIT n without sorting the whole input: it keeps
// the best n rows seen so far (stable, like Sort followed by Limit).
type TopN struct {
	child  Operator
	mem    memory.Allocator
	keys   []SortKey
	types  []sqltypes.Type
	n      int64
	opts   SortOptions
	budget memBudget

	top  arrow.RecordBatch
	pos  int64
	done bool
}

var _ Operator = (*TopN)(nil)

// NewTopN returns the first n rows of child in keys order (n >= 0; put an
// OFFSET's rows into n and a Limit on top).
func NewTopN(child Operator, mem memory.Allocator, keys []SortKey, n int64, opts SortOptions) (*TopN, error) {
	types, err := checkKeys(child.Schema(), keys)
	if err != nil {
		return nil, err
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	return &TopN{child: child, mem: mem, keys: keys, types: types, n: max(n, 0), opts: opts,
		budget: newBudget("top-N sort", mem, opts.MemoryLimit)}, nil
}

func (t *TopN) Schema() *arrow.Schema          { return t.child.Schema() }
func (t *TopN) Open(ctx context.Context) error { return t.child.Open(ctx) }

func (t *TopN) Close() error {
	if t.top != nil {
		t.top.Release()
		t.top = nil
	}
	return t.child.Close()
}

// absorb merges b into the current top rows. The current rows come first
// in the concatenation, so the stable sort keeps earlier input first.
func (t *TopN) absorb(b arrow.RecordBatch) error {
	if t.top != nil && t.top.NumRows() == t.n {
		// Only rows strictly better than the current worst can enter
		// (an equal row comes later in the input, so it loses the tie).
		worst := int(t.n - 1)
		cand, ok, err := t.prefilter(b, worst)
		if err != nil {
			return err
		}
		if !ok {
			cmp, err := rowComparator2(b, t.top, t.keys, t.types)
			if err != nil {
				return err
			}
			for i := 0; i < int(b.NumRows()); i++ {
				if cmp(i, worst) < 0 {
					cand = append(cand, i)
				}
			}
		}
		if len(cand) == 0 {
			return nil
		}
		if len(cand) < int(b.NumRows()) {
			sub, err := eval.TakeBatch(t.mem, b, cand)
			if err != nil {
				return err
			}
			defer sub.Release()
			b = sub
		}
	}
	parts := []arrow.RecordBatch{b}
	if t.top != nil {
		parts = []arrow.RecordBatch{t.top, b}
	}
	all, err := concatBatches(t.mem, t.Schema(), parts)
	if err != nil {
		return err
	}
	defer all.Release()
	order, err := sortedOrder(all, t.keys, t.types)
	if err != nil {
		return err
	}
	if int64(len(order)) > t.n {
		order = order[:t.n]
	}
	next, err := eval.TakeBatch(t.mem, all, order)
	if err != nil {
		return err
	}
	if t.top != nil {
		t.top.Release()
	}
	t.top = next
	return t.budget.hold(next)
}

// prefilter finds the rows of b better than the kept row worst by the
// first key's normalized form, when that form is exact (numbers, dates,
// timestamps) and neither side is NULL there: one integer compare per
// row, the full comparison only for rows equal on the first key. ok is
// false when it does not apply.
func (t *TopN) prefilter(b arrow.RecordBatch, worst int) (cand []int, ok bool, err error) {
	k := t.keys[0]
	bc, tc := b.Column(k.Col), t.top.Column(k.Col)
	if bc.NullN() > 0 || tc.IsNull(worst) {
		return nil, false, nil
	}
	norm, exact, ok := normalizedKeys(bc, t.types[0], k.Desc)
	if !ok || !exact {
		return nil, false, nil
	}
	ws := array.NewSlice(tc, int64(worst), int64(worst+1))
	wn, _, _ := normalizedKeys(ws, t.types[0], k.Desc)
	ws.Release()
	w := wn[0]
	var cmp func(i, j int) int
	for i, v := range norm {
		switch {
		case v < w:
			cand = append(cand, i)
		case v == w && len(t.keys) > 1:
			if cmp == nil {
				if cmp, err = rowComparator2(b, t.top, t.keys, t.types); err != nil {
					return nil, false, err
				}
			}
			if cmp(i, worst) < 0 {
				cand = append(cand, i)
			}
		}
	}
	return cand, true, nil
}

func (t *TopN) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !t.done {
		if t.n > 0 {
			for {
				b, err := t.child.Next(ctx)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return nil, err
				}
				if b.NumRows() > 0 {
					err = t.absorb(b)
				}
				b.Release()
				if err != nil {
					return nil, err
				}
			}
		}
		t.done = true
	}
	if t.top == nil || t.pos >= t.top.NumRows() {
		return nil, io.EOF
	}
	end := min(t.top.NumRows(), t.pos+int64(t.opts.BatchSize))
	out := t.top.NewSlice(t.pos, end)
	t.pos = end
	return out, nil
}
