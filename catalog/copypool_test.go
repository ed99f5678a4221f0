package catalog

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// TestCopyPool checks the COPY allocator's contract: a freed buffer is
// handed out again for its size class, zeroed; growing copies; every byte
// goes back to the underlying allocator by close, and frees after close go
// straight to it.
func TestCopyPool(t *testing.T) {
	mem := newMem(t)
	p := newCopyPool(mem)
	a := p.Allocate(1000)
	require.Len(t, a, 1000)
	require.Equal(t, 1024, cap(a))
	for i := range a {
		a[i] = 0xff
	}
	p.Free(a)
	b := p.Allocate(600)
	require.Equal(t, &a[0], &b[0], "a buffer of the same class is reused")
	require.Equal(t, make([]byte, 600), b, "a reused buffer is zeroed")
	b[0] = 7
	b = p.Reallocate(5000, b)
	require.Len(t, b, 5000)
	require.Equal(t, byte(7), b[0])
	big := p.Allocate(1<<copyMaxClass + 1) // not kept
	zero := p.Allocate(0)
	c := p.Allocate(100)
	p.Free(big)
	p.Free(zero)
	p.Free(b)
	p.close()
	p.Free(c) // after close
	mem.AssertSize(t, 0)
}

// TestCopyTextKeyStats loads a table ordered by a text column through
// enough batches that the decoder reuses the buffers of batches already
// written: each segment's min and max must still be its first and last
// key (a statistic that aliased a reused buffer would read later rows).
func TestCopyTextKeyStats(t *testing.T) {
	ctx := context.Background()
	c, err := Open(ctx, t.TempDir(), Options{Allocator: newMem(t), RunRows: 64, BatchRows: 8, LogRows: 4, AutoCompact: -1})
	require.NoError(t, err)
	defer c.Close()
	createTable(t, c, TableDef{Name: "k", Columns: []Column{{Name: "s", Type: sqltypes.TextType}}, OrderBy: []string{"s"}})
	var in strings.Builder
	const rows = 1000
	for i := range rows {
		fmt.Fprintf(&in, "key%05d\n", i)
	}
	tx := c.Begin()
	_, err = tx.CopyFrom(ctx, "k", strings.NewReader(in.String()), CopyOptions{})
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	c.mu.Lock()
	segs := c.cur.tables["k"].segs
	c.mu.Unlock()
	require.Len(t, segs, (rows+63)/64)
	for i, s := range segs {
		first := i * 64
		last := min(rows, first+64) - 1
		require.Equal(t, fmt.Sprintf("key%05d", first), s.st.min, "segment %d min", i)
		require.Equal(t, fmt.Sprintf("key%05d", last), s.st.max, "segment %d max", i)
	}
}
