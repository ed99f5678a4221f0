package catalog

import (
	"math/bits"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// copyPool is the allocator of one COPY's decoder: the buffers of the
// batches it builds come back, zeroed, once the segment writer has written
// and released them, and serve the batches after. A large COPY then
// allocates a few batches' worth of memory instead of all of its rows, so
// the Go heap stays flat and the garbage collector (which a COPY woke every
// few megabytes, on the cores the client needs too) and the kernel's page
// faults mostly stay away.
//
// Buffers are kept by power-of-two size class, at most copyPoolMax bytes in
// all; a buffer returned after close, or beyond that bound, goes back to the
// underlying allocator. Buffers come back zeroed, as from
// memory.GoAllocator, so what the builders leave unwritten (the value slot
// of a NULL) reads as before. It is safe for concurrent use: the decoder
// allocates on the statement's goroutine, the segment writer frees on its
// own.
type copyPool struct {
	base   memory.Allocator
	mu     sync.Mutex
	free   [copyMaxClass + 1][][]byte
	held   int  // bytes in free
	closed bool // free is empty and stays so
}

const (
	copyMinClass = 6  // 64 bytes
	copyMaxClass = 24 // 16 MiB; larger buffers are not kept
	copyPoolMax  = 32 << 20
)

func newCopyPool(base memory.Allocator) *copyPool { return &copyPool{base: base} }

// sizeClass is the class of a buffer of size bytes, -1 for one not kept.
func sizeClass(size int) int {
	if size <= 0 || size > 1<<copyMaxClass {
		return -1
	}
	return max(bits.Len(uint(size-1)), copyMinClass)
}

// classOf is the class of a buffer the pool handed out (its capacity is
// the class's size), -1 for one the underlying allocator made directly.
func classOf(b []byte) int {
	c := cap(b)
	if c < 1<<copyMinClass || c > 1<<copyMaxClass || c&(c-1) != 0 {
		return -1
	}
	return bits.Len(uint(c - 1))
}

func (p *copyPool) Allocate(size int) []byte {
	k := sizeClass(size)
	if k < 0 {
		return p.base.Allocate(size)
	}
	p.mu.Lock()
	if l := p.free[k]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[k] = l[:len(l)-1]
		p.held -= len(b)
		p.mu.Unlock()
		return b[:size]
	}
	p.mu.Unlock()
	b := p.base.Allocate(1 << k)
	return b[: size : 1<<k]
}

func (p *copyPool) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

func (p *copyPool) Free(b []byte) {
	k := classOf(b)
	if k < 0 {
		p.base.Free(b)
		return
	}
	b = b[:1<<k]
	p.mu.Lock()
	keep := !p.closed && p.held+len(b) <= copyPoolMax
	if keep {
		p.held += len(b) // reserved while it is cleared
	}
	p.mu.Unlock()
	if !keep {
		p.base.Free(b)
		return
	}
	clear(b)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.base.Free(b)
		return
	}
	p.free[k] = append(p.free[k], b)
	p.mu.Unlock()
}

// close hands every kept buffer back to the underlying allocator; buffers
// freed later go straight to it.
func (p *copyPool) close() {
	p.mu.Lock()
	p.closed = true
	free := p.free
	p.free = [copyMaxClass + 1][][]byte{}
	p.held = 0
	p.mu.Unlock()
	for _, l := range free {
		for _, b := range l {
			p.base.Free(b)
		}
	}
}

// ownValue is v (from valueAt) in memory of its own: a string is copied
// out of the array it aliases.
func ownValue(v any) any {
	if s, ok := v.(string); ok {
		return strings.Clone(s)
	}
	return v
}

var _ memory.Allocator = (*copyPool)(nil)
