package exec

import (
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestEntryPool: a buffer given back is handed out again for a sort that
// fits in it (no fresh pages), the pool keeps at most entryPoolMax bytes,
// and a buffer larger than that is freed rather than kept.
func TestEntryPool(t *testing.T) {
	drainEntryPool()
	defer drainEntryPool()
	a := getEntries(1000)
	require.GreaterOrEqual(t, len(a.es), 1000)
	for i := range 1000 {
		a.es[i] = sortEntry{k0: uint64(i), row: int32(i)}
	}
	putEntries(a)
	b := getEntries(500)
	require.Same(t, unsafe.SliceData(a.es), unsafe.SliceData(b.es), "a smaller sort reuses the buffer")
	c := getEntries(10)
	require.NotSame(t, unsafe.SliceData(a.es), unsafe.SliceData(c.es), "a buffer in use is not handed out twice")
	putEntries(b)
	putEntries(c)
	kept, bytes := poolState()
	require.Equal(t, 2, kept)
	require.LessOrEqual(t, bytes, entryPoolMax)
	// Too large to keep: freed, and the kept ones stay. (A mapping, not
	// touched: a 1 GiB heap slice took more than entryPoolIdle to fault
	// in on a loaded machine, and the pool's timer freed b and c.)
	raw, mapped := allocEntryBytes(entryPoolMax + 1)
	putEntries(&entryBuf{raw: raw, mapped: mapped})
	kept, _ = poolState()
	require.Equal(t, 2, kept)
}

// poolState is the number of buffers the pool keeps and their bytes (read
// under its lock, released before a test asserts: a failing assertion
// must not leave it held for the deferred drain).
func poolState() (kept, bytes int) {
	entryPool.mu.Lock()
	defer entryPool.mu.Unlock()
	return len(entryPool.free), entryPool.bytes
}

// TestEntryPoolTrim: a buffer kept for entryPoolIdle is freed by the
// pool's timer; one given back since stays.
func TestEntryPoolTrim(t *testing.T) {
	drainEntryPool()
	defer drainEntryPool()
	old, fresh := getEntries(100), getEntries(200)
	putEntries(old)
	putEntries(fresh)
	entryPool.mu.Lock()
	old.kept = old.kept.Add(-entryPoolIdle)
	entryPool.mu.Unlock()
	trimEntryPool()
	entryPool.mu.Lock()
	free, bytes := slices.Clone(entryPool.free), entryPool.bytes
	entryPool.mu.Unlock()
	require.Equal(t, []*entryBuf{fresh}, free)
	require.Equal(t, len(fresh.raw), bytes)
}

// drainEntryPool frees every kept buffer, so a test starts from an empty
// pool and leaves one.
func drainEntryPool() {
	entryPool.mu.Lock()
	defer entryPool.mu.Unlock()
	for _, b := range entryPool.free {
		freeEntryBytes(b.raw, b.mapped)
	}
	entryPool.free, entryPool.bytes = nil, 0
}
