//go:build unix

package safefile_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/internal/safefile"
	"github.com/asofsql/asofsql/sqlerr"
)

// TestIrregularFilesRefusedAtOnce: a FIFO with no writer (where a plain
// open blocks forever), a device, a socket and a directory are refused
// with 42501 naming what they are, for reading and for writing.
func TestIrregularFilesRefusedAtOnce(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer l.Close()
	cases := []struct{ path, what string }{
		{fifo, "a named pipe"},
		{"/dev/null", "a device"},
		{sock, "a socket"},
		{dir, "a directory"},
	}
	for _, tc := range cases {
		for _, op := range []string{"open", "create"} {
			var err error
			if op == "open" {
				_, err = safefile.Open(tc.path)
			} else {
				_, err = safefile.Create(tc.path, 0o644)
			}
			require.Equal(t, sqlerr.InsufficientPrivilege, sqlerr.Code(err), "%s %s: %v", op, tc.path, err)
			require.ErrorContains(t, err, `"`+tc.path+`" is `+tc.what+", not a regular file")
		}
	}
	_, err = safefile.Open(filepath.Join(dir, "missing"))
	require.True(t, errors.Is(err, os.ErrNotExist), "%v", err)
}

func TestRegularFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data.csv")
	f, err := safefile.Create(path, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString("a long first version\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	// Create truncates what was there.
	f, err = safefile.Create(path, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString("1,2\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	f, err = safefile.Open(path)
	require.NoError(t, err)
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.Equal(t, "1,2\n", string(b))
	// A symbolic link as the last component is not followed.
	link := filepath.Join(dir, "link.csv")
	require.NoError(t, os.Symlink(path, link))
	_, err = safefile.Open(link)
	require.Error(t, err)
}

func TestContextReadersAndWriters(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stopped")
	r := safefile.Reader(ctx, strings.NewReader("abcdef"))
	buf := make([]byte, 3)
	n, err := r.Read(buf)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	var out bytes.Buffer
	w := safefile.Writer(ctx, &out)
	_, err = w.Write([]byte("x"))
	require.NoError(t, err)
	ra := safefile.ReaderAt(ctx, strings.NewReader("abcdef"))
	_, err = ra.ReadAt(buf, 2)
	require.NoError(t, err)
	cancel(stop)
	_, err = r.Read(buf)
	require.ErrorIs(t, err, stop)
	_, err = w.Write([]byte("y"))
	require.ErrorIs(t, err, stop)
	_, err = ra.ReadAt(buf, 0)
	require.ErrorIs(t, err, stop)
	_, err = ra.Seek(0, io.SeekStart)
	require.ErrorIs(t, err, stop)
	require.Equal(t, "x", out.String())
}
