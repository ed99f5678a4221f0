package operator

import (
	"math/bits"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Pool is an allocator that recycles large buffers. Operators that emit a
// fresh output buffer per batch (gathers, projections) allocate from a Pool
// so that a buffer the consumer releases is reused by the next batch instead
// of being zeroed and page-faulted in again: at batch sizes of 64K rows that
// allocation otherwise costs more than the work itself.
//
// Buffers handed out are NOT zeroed; callers must initialise every byte
// they expose. Buffers below minPooled bytes go straight to the inner
// allocator. Close returns every pooled buffer to the inner allocator; a
// buffer freed after Close goes there directly, so batches may outlive the
// operator that made them.
//
// Over the Go allocator, whose Free is a no-op (the garbage collector owns
// the memory), buffers a pool gives up go to a process-wide cache instead,
// and a pool with none idle takes from there: so the next query's operators
// reuse them too. Why: a fresh buffer from the Go heap lands on pages new
// to the process more often than not (the runtime returns freed pages to
// the OS), and each of those costs a page fault, ~10 µs on this project's
// kind of machine. A join with four right inputs allocated ~10 MB of output
// buffers per run and spent a sixth of its time in those faults
// (BenchmarkJoin's faults/op). The cache is a sync.Pool per size class, so
// buffers idle across two garbage collections go back to the runtime. A
// query's allocator is a memory account over the Go allocator
// (memacct.Account): a pool over one uses the cache too, counting a
// buffer it takes from there in the account (Charge) and uncounting one
// it gives up (Free), so the account sees what Allocate and Free would
// have shown it.
type Pool struct {
	inner  memory.Allocator
	shared bool       // inner is the Go allocator or an account over it: use goIdle
	acct   goHeapAcct // inner, when it is an account over the Go allocator
	mu     sync.Mutex
	free   [48][][]byte // by size class (power of two)
	held   int
	closed bool
}

const (
	minPooled = 4 << 10
	// maxHeld bounds the bytes a pool keeps idle.
	maxHeld = 64 << 20
)

var _ memory.Allocator = (*Pool)(nil)

// goHeapAcct is an allocator that counts buffers of the Go allocator
// (memacct.Account; an interface, so that this package needs no SQL one).
type goHeapAcct interface {
	OverGoHeap() bool
	Charge(n int)
}

// NewPool returns a pool over inner.
func NewPool(inner memory.Allocator) *Pool {
	_, shared := inner.(*memory.GoAllocator)
	p := &Pool{inner: inner, shared: shared}
	if a, ok := inner.(goHeapAcct); ok && a.OverGoHeap() {
		p.shared, p.acct = true, a
	}
	return p
}

// goIdle is the process-wide cache of the Go allocator's buffers, by size
// class; every buffer in class c has length and capacity 1<<c.
var goIdle [48]sync.Pool

// giveUp hands b (a whole buffer of class c) to the process-wide cache when
// the pool is over the Go allocator, else to the inner allocator.
func (p *Pool) giveUp(b []byte, c int) {
	if p.shared {
		if p.acct != nil {
			p.inner.Free(b) // uncounts b; the Go allocator's Free does nothing
		}
		goIdle[c].Put(&b)
		return
	}
	p.inner.Free(b)
}

func class(size int) int { return bits.Len(uint(size - 1)) }

// Allocate returns a buffer of len size, recycled when one is idle.
func (p *Pool) Allocate(size int) []byte {
	if size < minPooled {
		return p.inner.Allocate(size)
	}
	c := class(size)
	p.mu.Lock()
	if n := len(p.free[c]); n > 0 && !p.closed {
		b := p.free[c][n-1]
		p.free[c] = p.free[c][:n-1]
		p.held -= cap(b)
		p.mu.Unlock()
		return b[:size]
	}
	p.mu.Unlock()
	if p.shared {
		if b, _ := goIdle[c].Get().(*[]byte); b != nil {
			if p.acct != nil {
				p.acct.Charge(len(*b))
			}
			return (*b)[:size]
		}
	}
	return p.inner.Allocate(1 << c)[:size]
}

// Reallocate grows or shrinks b, keeping its contents.
func (p *Pool) Reallocate(size int, b []byte) []byte {
	if cap(b) < minPooled && size < minPooled {
		return p.inner.Reallocate(size, b)
	}
	if cap(b) >= minPooled && size <= cap(b) && size >= minPooled {
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free returns b to the pool (or to the inner allocator when the pool is
// closed, full, or b is small).
func (p *Pool) Free(b []byte) {
	c := cap(b)
	if len(b) < minPooled || c&(c-1) != 0 {
		p.inner.Free(b)
		return
	}
	// The inner allocator accounts by length: always hand back the whole
	// buffer it gave out.
	b = b[:c]
	p.mu.Lock()
	if p.closed || p.held+c > maxHeld {
		p.mu.Unlock()
		p.giveUp(b, class(c))
		return
	}
	p.free[class(c)] = append(p.free[class(c)], b)
	p.held += c
	p.mu.Unlock()
}

// Close hands every idle buffer back to the inner allocator; later Frees
// bypass the pool.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for c := range p.free {
		for _, b := range p.free[c] {
			p.giveUp(b, c)
		}
		p.free[c] = nil
	}
	p.held = 0
}
