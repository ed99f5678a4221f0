//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestImportRefusesPipesAndDirectories: import reads its file more than
// once, so a named pipe cannot work; it is refused at once rather than
// blocking in open(2), as is a directory.
func TestImportRefusesPipesAndDirectories(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.csv")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	sub := filepath.Join(dir, "sub.parquet")
	require.NoError(t, os.Mkdir(sub, 0o755))
	data := filepath.Join(dir, "db")
	for path, what := range map[string]string{fifo: "a named pipe", sub: "a directory"} {
		r := runCmd(t, "", "import", "--data", data, "--table", "t", path)
		require.Equal(t, exitFail, r.code, r.stderr)
		require.Contains(t, r.stderr, path+" is "+what+": import reads regular files only")
	}
}
