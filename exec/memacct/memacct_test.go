package memacct_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/memacct"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

// TestAccountCountsArrow: buffers allocated through an account count
// until released, and Check fails past the limit with 53200 naming it.
func TestAccountCountsArrow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	a := memacct.Open(nil, mem, 64<<10, nil)
	defer a.Close()
	b := array.NewInt64Builder(a)
	for i := 0; i < 1000; i++ {
		b.Append(int64(i))
	}
	arr := b.NewArray()
	b.Release()
	require.Equal(t, int64(mem.CurrentAlloc()), a.ArrowBytes())
	require.Greater(t, a.Used(), int64(8000))
	require.NoError(t, a.Check("test"))

	err := a.Grow("hash join", 64<<10)
	require.Equal(t, sqlerr.OutOfMemory, sqlerr.Code(err))
	e, _ := sqlerr.As(err)
	require.Equal(t, "out of memory", e.Message)
	require.Contains(t, e.Detail, "hash join needs 64kB more")
	require.Contains(t, e.Detail, "memory_limit of 64kB (65536 bytes)")
	require.Equal(t, a.ArrowBytes(), a.Used(), "a refused Grow charges nothing")

	require.NoError(t, a.Grow("distinct", 1000))
	require.Equal(t, a.ArrowBytes()+1000, a.Used())
	require.NoError(t, a.Grow("distinct", -1000))

	big := array.NewInt64Builder(a)
	big.Reserve(10000) // Arrow allocations never fail; the next check does
	require.Equal(t, sqlerr.OutOfMemory, sqlerr.Code(a.Check("sort")))
	big.Release()
	arr.Release()
	require.Zero(t, a.Used())
}

// TestBudgetFailsNewest: past the shared budget the newest query that
// holds memory fails, whichever asks; an older one asking cancels the
// newer with the 53200 as cause and goes on; Close returns what Grow
// charged.
func TestBudgetFailsNewest(t *testing.T) {
	b := memacct.NewBudget(1000)
	oldCtx, oldCancel := context.WithCancelCause(context.Background())
	old := memacct.Open(b, memory.DefaultAllocator, 0, oldCancel)
	newCtx, newCancel := context.WithCancelCause(context.Background())
	young := memacct.Open(b, memory.DefaultAllocator, 0, newCancel)

	require.NoError(t, old.Grow("sort", 600))
	err := young.Grow("sort", 600)
	require.Equal(t, sqlerr.OutOfMemory, sqlerr.Code(err), "the newest asking fails")
	e, _ := sqlerr.As(err)
	require.Contains(t, e.Detail, "memory limit of 1000B")
	require.NoError(t, oldCtx.Err())
	require.NoError(t, newCtx.Err())

	require.NoError(t, young.Grow("sort", 300))
	require.NoError(t, old.Grow("sort", 300), "the older asking goes on")
	require.ErrorIs(t, newCtx.Err(), context.Canceled)
	require.Equal(t, sqlerr.OutOfMemory, sqlerr.Code(context.Cause(newCtx)))
	require.NoError(t, oldCtx.Err())
	require.Equal(t, sqlerr.OutOfMemory, sqlerr.Code(young.Check("sort")), "the doomed query fails at its next check")
	// Its memory counts as returned already.
	require.NoError(t, old.Grow("sort", 50))
	require.Equal(t, int64(1250), b.Used())

	young.Close()
	require.Equal(t, int64(950), b.Used())
	old.Close()
	old.Close()
	require.Zero(t, b.Used())

	// A newer query holding nothing is not failed for an older one.
	a1 := memacct.Open(b, memory.DefaultAllocator, 0, nil)
	a2 := memacct.Open(b, memory.DefaultAllocator, 0, func(error) { t.Error("cancelled an empty query") })
	require.NoError(t, a1.Grow("sort", 900))
	err = a1.Grow("sort", 200)
	require.Equal(t, sqlerr.OutOfMemory, sqlerr.Code(err))
	require.NoError(t, a2.Check("sort"))
	a1.Close()
	a2.Close()
	require.Zero(t, b.Used())
}

// TestCloseHandsOverLiveBuffers: buffers alive when the query ends (kept
// by someone else) leave the budget with it; the account still counts
// them until freed.
func TestCloseHandsOverLiveBuffers(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := memacct.NewBudget(1 << 20)
	a := memacct.Open(b, mem, 0, nil)
	buf := a.Allocate(1000)
	require.Equal(t, int64(1000), b.Used())
	a.Close()
	require.Zero(t, b.Used())
	require.Equal(t, int64(1000), a.ArrowBytes())
	a.Free(buf)
	require.Zero(t, b.Used())
	require.Zero(t, a.ArrowBytes())
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 1000: "1000B", 1536 << 10: "1536kB", 64 << 20: "64MB", 2 << 30: "2GB", 1 << 40: "1TB"} {
		require.Equal(t, want, memacct.FormatBytes(n))
	}
}

func TestContext(t *testing.T) {
	ctx := context.Background()
	require.Nil(t, memacct.FromContext(ctx))
	a := memacct.Open(nil, nil, 0, nil)
	require.Same(t, a, memacct.FromContext(memacct.NewContext(ctx, a)))
	require.Same(t, a, memacct.Of(a))
	require.Nil(t, memacct.Of(memory.DefaultAllocator))
}
