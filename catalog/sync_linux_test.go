package catalog

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWALWriteRaw: the log's raw writes (walWrite) put the same bytes at
// the same offsets as the scheduler's (os.File.WriteAt), whole, also past
// the end of the file and over earlier bytes; a slow write sends the next
// ones through the scheduler for rawBackoff.
func TestWALWriteRaw(t *testing.T) {
	dir := t.TempDir()
	open := func(name string) *os.File {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDWR|os.O_CREATE|walSyncFlag, 0o644)
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		return f
	}
	raw, plain := open("raw"), open("plain")
	defer func(d time.Duration) { rawSlow = d }(rawSlow)
	rawSlow = time.Hour // every write raw, however slow the disk
	writes := []struct {
		off int64
		n   int
	}{{0, 50}, {50, 61}, {111, 1}, {4090, 300}, {20, 30}, {1 << 16, 70 << 10}, {9000, 5}}
	for i, w := range writes {
		b := bytes.Repeat([]byte{byte('a' + i)}, w.n)
		for j := range b {
			b[j] += byte(j % 7)
		}
		rawSlowUntil.Store(0)
		require.NoError(t, walWrite(raw, b, w.off))
		require.Zero(t, rawSlowUntil.Load(), "a fast write leaves raw writes on")
		_, err := plain.WriteAt(b, w.off)
		require.NoError(t, err)
	}
	got, err := os.ReadFile(raw.Name())
	require.NoError(t, err)
	want, err := os.ReadFile(plain.Name())
	require.NoError(t, err)
	require.Equal(t, len(want), len(got))
	require.True(t, bytes.Equal(want, got), "raw writes differ from WriteAt's")

	// A write slower than rawSlow turns raw writes off for rawBackoff.
	rawSlow = -1
	rawSlowUntil.Store(0)
	before := time.Now()
	require.NoError(t, walWrite(raw, []byte("slow"), 0))
	if rawWrite {
		require.GreaterOrEqual(t, rawSlowUntil.Load(), before.Add(rawBackoff).UnixNano())
	}
	rawSlowUntil.Store(0)
	rawSlow = time.Hour

	// A closed file fails as WriteAt does.
	f := open("closed")
	f.Close()
	require.ErrorIs(t, walWrite(f, []byte("x"), 0), os.ErrClosed)

	// A write error is returned (a file opened read-only).
	ro, err := os.Open(raw.Name())
	require.NoError(t, err)
	defer ro.Close()
	require.ErrorIs(t, walWrite(ro, []byte("x"), 0), syscall.EBADF)
}
