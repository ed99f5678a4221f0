package exec

import (
	"slices"
	"sync"
	"time"
	"unsafe"
)

// entryBuf is a buffer of sort entries that the range path takes for its
// entries and its radix scratch and gives back when done. Its memory is
// not the Go heap's on Linux (mapped with transparent huge pages, see
// sort_entries_linux.go), and buffers given back are kept for the next
// sort, up to entryPoolMax bytes in all and for at most entryPoolIdle,
// rather than left to the GC.
//
// Why: a sort of 10M rows writes 480 MB of entries and scratch. Fresh
// pages cost a page fault each on first write; on this project's
// machines (virtual machines) a 4 KiB fault costs ~20 µs of CPU, which
// made the faults most of a 10M-row sort's time (~1.2 s of the 2.5 s
// sorting 10M rows on one worker), and the Go heap gets fresh pages for
// them on most queries (its scavenger gives freed pages back to the
// system while the heap is small between queries). Huge pages fault
// 512 times less often; a kept buffer does not fault at all.
type entryBuf struct {
	raw    []byte // the whole mapping (or heap slice)
	mapped bool   // raw is a mapping, not the Go heap
	es     []sortEntry
	kept   time.Time // when it was given back to the pool
}

// entryPoolMax is the most memory the pool keeps between sorts: 1 GiB,
// the entries and scratch of a 20M-row sort.
const entryPoolMax = 1 << 30

// entryPoolIdle is how long a kept buffer may wait for a sort before it
// is freed: the pool serves a run of sorts, and a server that has stopped
// sorting gives the memory back.
const entryPoolIdle = 30 * time.Second

var entryPool struct {
	mu    sync.Mutex
	free  []*entryBuf
	bytes int
	trim  *time.Timer // armed while free is not empty
}

// trimEntryPool frees the buffers kept for entryPoolIdle or longer, and
// rearms itself for the rest.
func trimEntryPool() {
	entryPool.mu.Lock()
	defer entryPool.mu.Unlock()
	now := time.Now()
	entryPool.free = slices.DeleteFunc(entryPool.free, func(b *entryBuf) bool {
		if now.Sub(b.kept) < entryPoolIdle {
			return false
		}
		entryPool.bytes -= len(b.raw)
		freeEntryBytes(b.raw, b.mapped)
		return true
	})
	if len(entryPool.free) > 0 {
		entryPool.trim.Reset(entryPoolIdle)
	}
}

// getEntries returns a buffer of at least n entries (contents
// undefined); b.es[:n] are them.
func getEntries(n int) *entryBuf {
	entryPool.mu.Lock()
	best := -1
	for i, b := range entryPool.free {
		if len(b.es) >= n && (best < 0 || len(b.es) < len(entryPool.free[best].es)) {
			best = i
		}
	}
	if best >= 0 {
		b := entryPool.free[best]
		entryPool.free = slices.Delete(entryPool.free, best, best+1)
		entryPool.bytes -= len(b.raw)
		entryPool.mu.Unlock()
		return b
	}
	entryPool.mu.Unlock()
	raw, mapped := allocEntryBytes(max(n, 1) * int(unsafe.Sizeof(sortEntry{})))
	es := unsafe.Slice((*sortEntry)(unsafe.Pointer(unsafe.SliceData(raw))), len(raw)/int(unsafe.Sizeof(sortEntry{})))
	return &entryBuf{raw: raw, mapped: mapped, es: es}
}

// putEntries gives b back: kept for the next sort when the pool has room,
// else freed. b must not be used after.
func putEntries(b *entryBuf) {
	if b == nil {
		return
	}
	entryPool.mu.Lock()
	defer entryPool.mu.Unlock()
	// Evict smaller buffers first to make room; free b itself if it
	// alone is too large.
	if len(b.raw) > entryPoolMax {
		freeEntryBytes(b.raw, b.mapped)
		return
	}
	for entryPool.bytes+len(b.raw) > entryPoolMax {
		// Drop the smallest kept buffer.
		s := 0
		for i, f := range entryPool.free {
			if len(f.raw) < len(entryPool.free[s].raw) {
				s = i
			}
		}
		f := entryPool.free[s]
		entryPool.free = slices.Delete(entryPool.free, s, s+1)
		entryPool.bytes -= len(f.raw)
		freeEntryBytes(f.raw, f.mapped)
	}
	b.kept = time.Now()
	entryPool.free = append(entryPool.free, b)
	entryPool.bytes += len(b.raw)
	if entryPool.trim == nil {
		entryPool.trim = time.AfterFunc(entryPoolIdle, trimEntryPool)
	} else if len(entryPool.free) == 1 {
		entryPool.trim.Reset(entryPoolIdle)
	}
}
