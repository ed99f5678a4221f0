package asof

import "sync"

// scratch recycles the join's per-batch working arrays (decoded on columns,
// key ids, NULL flags: a few MB at 64K-row batches) across joins in the
// process. They are plain Go memory, never handed out in a result, so a
// package-level pool is safe; a join takes them as it meets its first
// batches and gives them back at Close.
//
// Why: a join that allocated them afresh touched new pages every time it
// started. When the heap had no freed memory to hand out, that was a few
// hundred page faults per join, which on a 1M-row join (S1) cost as much as
// a fifth of its time and made its timings bimodal (BenchmarkJoin, faults
// counted per run with getrusage: ~800 per join in the slow runs, ~0 in the
// fast ones).
type scratch[T any] struct{ p sync.Pool }

// minScratch is the smallest slice (in elements) worth keeping.
const minScratch = 1024

var (
	u64Scratch  scratch[uint64]
	i32Scratch  scratch[int32]
	boolScratch scratch[bool]
)

// get returns a slice of length n with arbitrary contents.
func (s *scratch[T]) get(n int) []T {
	if v, _ := s.p.Get().(*[]T); v != nil && cap(*v) >= n {
		return (*v)[:n]
	}
	return make([]T, n)
}

// put gives b back; the caller must hold no other reference to it.
func (s *scratch[T]) put(b []T) {
	if cap(b) < minScratch {
		return
	}
	b = b[:0]
	s.p.Put(&b)
}

// free gives the column's arrays back to the scratch pools (t only when it
// is owned number-line scratch).
func (c *column[V]) free() {
	if t, ok := any(c.t).([]uint64); ok && !c.view {
		u64Scratch.put(t)
	}
	boolScratch.put(c.valid)
	c.t, c.valid = nil, nil
}

// free gives the batch's own arrays (not those borrowed from an array)
// back to the scratch pools. The offsets and hashes of text keys are
// pooled too: the morsels' joins (morsel.go) start one every 256K left
// rows, and fresh ones cost S4 ~3,000 page faults per 5M rows.
func (kb *keyBatch) free() {
	boolScratch.put(kb.null)
	if !kb.sharedU64 {
		u64Scratch.put(kb.u64)
	}
	if !kb.shared {
		i32Scratch.put(kb.offs)
	}
	kb.null, kb.u64, kb.sharedU64, kb.offs = nil, nil, false, nil
	kb.buf, kb.full, kb.shared = nil, nil, false
}

func (lk *leftKeys) free() {
	lk.kb.free()
	i32Scratch.put(lk.ids)
	lk.ids = nil
}

func (lb *leftBatch) free() {
	for i := range lb.decoded {
		lb.decoded[i].free()
	}
	for i := range lb.keys {
		lb.keys[i].free()
	}
}
