package operator

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/memacct"
	"github.com/stretchr/testify/require"
)

func TestPoolRecyclesAndDrains(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	p := NewPool(mem)
	a := p.Allocate(100 << 10)
	require.Len(t, a, 100<<10)
	a[0] = 7
	p.Free(a)
	b := p.Allocate(90 << 10) // same class: the buffer comes back
	require.Equal(t, byte(7), b[0])
	small := p.Allocate(10)
	c := p.Reallocate(200<<10, b)
	require.Equal(t, byte(7), c[0])
	p.Free(small)
	p.Close()
	p.Free(c) // after Close, straight to the inner allocator
	mem.AssertSize(t, 0)
}

// TestPoolSharesGoBuffers: over the Go allocator, a buffer one pool gives
// up is reused by the next pool (the next query's operator) instead of a
// fresh one from the heap. sync.Pool may drop any single buffer (the race
// detector drops some on purpose), so the test asks for reuse in at least
// one of many rounds, and that a CheckedAllocator never shares.
func TestPoolSharesGoBuffers(t *testing.T) {
	reused := false
	for round := 0; round < 100 && !reused; round++ {
		p1 := NewPool(memory.NewGoAllocator())
		a := p1.Allocate(64 << 10)
		a[0], a[len(a)-1] = 0x5a, byte(round)
		p1.Free(a)
		p1.Close()
		p2 := NewPool(memory.NewGoAllocator())
		b := p2.Allocate(40 << 10) // same size class
		reused = cap(b) == 64<<10 && b[0] == 0x5a && b[:cap(b)][cap(b)-1] == byte(round)
		p2.Free(b)
		p2.Close()
	}
	require.True(t, reused, "no buffer came back from the process-wide cache in 100 rounds")

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	p := NewPool(mem)
	p.Free(p.Allocate(64 << 10))
	p.Close()
	mem.AssertSize(t, 0)
}

// TestPoolSharesThroughAccount: a query's allocator is a memory account
// over the Go allocator; a pool over one shares buffers with the next
// query's pool as over the bare Go allocator, and each account counts
// exactly the buffers its pool holds: a buffer taken from the shared cache
// is charged to the account that takes it, one given up is uncounted.
func TestPoolSharesThroughAccount(t *testing.T) {
	reused := false
	for round := 0; round < 100 && !reused; round++ {
		a1 := memacct.Open(nil, memory.NewGoAllocator(), 0, nil)
		p1 := NewPool(a1)
		a := p1.Allocate(64 << 10)
		require.EqualValues(t, 64<<10, a1.ArrowBytes())
		a[0], a[len(a)-1] = 0x5a, byte(round)
		p1.Free(a)
		require.EqualValues(t, 64<<10, a1.ArrowBytes(), "an idle buffer the pool keeps stays counted")
		p1.Close()
		require.Zero(t, a1.ArrowBytes())
		a1.Close()

		a2 := memacct.Open(nil, memory.NewGoAllocator(), 0, nil)
		p2 := NewPool(a2)
		b := p2.Allocate(40 << 10) // same size class
		require.EqualValues(t, 64<<10, a2.ArrowBytes())
		reused = cap(b) == 64<<10 && b[0] == 0x5a && b[:cap(b)][cap(b)-1] == byte(round)
		p2.Close()
		p2.Free(b) // after Close: given up at once
		require.Zero(t, a2.ArrowBytes())
		a2.Close()
	}
	require.True(t, reused, "no buffer came back from the process-wide cache in 100 rounds")

	// An account over any other allocator never shares: its Free is real.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	acct := memacct.Open(nil, mem, 0, nil)
	p := NewPool(acct)
	p.Free(p.Allocate(64 << 10))
	p.Close()
	require.Zero(t, acct.ArrowBytes())
	mem.AssertSize(t, 0)
}
