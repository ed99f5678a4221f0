package catalog

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSyncCommitDurableWhenAcknowledged: a synchronous commit returns only
// once its log record is on disk, alone and in a group. The log's durable
// write is wrapped to keep a copy of every byte it made durable (what a
// power loss would leave of the log; a kill -9 keeps the page cache, so the
// crash tests cannot see a commit acknowledged before its sync); after each
// commit returns, its row's unique text must be in that copy. The writes
// are slowed a little so that commits of 8 goroutines queue and share
// flushes. Acknowledging before the write, or waking a group's waiters
// before the leader's write returns, fails it.
func TestSyncCommitDurableWhenAcknowledged(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t)
	c, err := Open(ctx, t.TempDir(), Options{Allocator: mem, AutoCompact: -1})
	require.NoError(t, err)
	defer c.Close()
	createTable(t, c, kvDef)

	var mu sync.Mutex
	var durable []byte // every completed durable write, concatenated
	writes := 0
	c.wal.mu.Lock()
	c.wal.write = func(f *os.File, b []byte, off int64) error {
		time.Sleep(time.Millisecond)
		if err := walWrite(f, b, off); err != nil {
			return err
		}
		mu.Lock()
		durable = append(durable, b...) // whole records: a write never splits one
		writes++
		mu.Unlock()
		return nil
	}
	c.wal.mu.Unlock()

	const workers, each = 8, 25
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				k := g*each + i
				v := fmt.Sprintf("acknowledged-%04d;", k)
				insert(t, c, "kv", []any{k, v})
				mu.Lock()
				ok := bytes.Contains(durable, []byte(v))
				mu.Unlock()
				if !ok {
					t.Errorf("commit of row %d returned before its log record was durable", k)
					return
				}
			}
		}()
	}
	wg.Wait()
	require.Len(t, scanRows(t, c, "kv", ScanOptions{}), workers*each)
	t.Logf("%d commits, %d durable writes", workers*each, writes)
}

// TestLogGrowsPastPreallocation: commits whose records outgrow the
// zero-filled part of the log grow it by whole chunks (written through
// the synchronous descriptor) and replay after a crash.
func TestLogGrowsPastPreallocation(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const chunk = 4096
	c, err := Open(ctx, dir, Options{Allocator: newMem(t), AutoCompact: -1, LogPreallocate: chunk, CheckpointRows: -1})
	require.NoError(t, err)
	createTable(t, c, kvDef)
	long := strings.Repeat("x", 1000)
	const n = 20 // ~20 KB of records: four chunks past the first
	for k := range n {
		insert(t, c, "kv", []any{k, long})
	}
	files, err := listWAL(dir)
	require.NoError(t, err)
	require.Len(t, files, 1)
	st, err := os.Stat(files[0].path)
	require.NoError(t, err)
	require.Greater(t, st.Size(), int64(chunk))
	require.Zero(t, st.Size()%chunk, "the log grows by whole chunks")
	c.abandon()

	c, err = Open(ctx, dir, Options{Allocator: newMem(t), AutoCompact: -1})
	require.NoError(t, err)
	defer c.Close()
	require.Len(t, scanRows(t, c, "kv", ScanOptions{}), n)
}
