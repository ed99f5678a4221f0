package exec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
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
