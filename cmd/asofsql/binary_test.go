package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestBinaryPureGoAndSIGTERM builds the command with CGO_ENABLED=0 (the
// build must stay pure Go), starts "serve", queries it, and stops it with
// SIGTERM: the process must log its shutdown and exit 0.
func TestBinaryPureGoAndSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	bin := filepath.Join(t.TempDir(), "asofsql")
	build := exec.Command(gobin, "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	cmd := exec.Command(bin, "serve", "--memory", "--listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(stderr)
	require.True(t, lines.Scan(), "no log line")
	m := regexp.MustCompile(`msg=listening addr=(\S+)`).FindStringSubmatch(lines.Text())
	require.NotNil(t, m, lines.Text())

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, "postgres://alice@"+m[1]+"/asofsql?sslmode=disable")
	require.NoError(t, err)
	var n int64
	require.NoError(t, c.QueryRow(ctx, "SELECT 41 + 1").Scan(&n))
	require.Equal(t, int64(42), n)
	require.NoError(t, c.Close(ctx))

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	var rest []string
	for lines.Scan() {
		rest = append(rest, lines.Text())
	}
	require.NoError(t, cmd.Wait())
	log := strings.Join(rest, "\n")
	require.Contains(t, log, `msg="shutting down"`)
	require.Contains(t, log, "msg=stopped")
}
