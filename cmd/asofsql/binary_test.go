package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// TestBinaryPureGoAndSIGTERM builds the command with CGO_ENABLED=0 (the
// build must stay pure Go), starts "serve", queries it, and stops it with
// SIGTERM while a statement that would run for hours and an open
// transaction wait: the statement is cancelled, both clients are told
// (FATAL 57P01), and the process logs its shutdown and exits 0 within
// its grace period.
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
	_, err = c.Exec(ctx, "BEGIN")
	require.NoError(t, err)

	busy, err := pgx.Connect(ctx, "postgres://bob@"+m[1]+"/asofsql?sslmode=disable")
	require.NoError(t, err)
	defer busy.Close(context.Background())
	running := make(chan error, 1)
	go func() {
		_, err := busy.Exec(ctx, "SELECT count(*) FROM generate_series(1, 100000000000)")
		running <- err
	}()
	time.Sleep(200 * time.Millisecond) // let it start

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	var rest []string
	for lines.Scan() {
		rest = append(rest, lines.Text())
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		require.NoError(t, err, "exit status")
	case <-time.After(shutdownGrace):
		t.Fatalf("serve did not exit within its grace period of %s", shutdownGrace)
	}
	log := strings.Join(rest, "\n")
	require.Contains(t, log, `msg="shutting down"`)
	require.Contains(t, log, "msg=stopped")
	var pe *pgconn.PgError
	err = <-running
	require.True(t, errors.As(err, &pe), "%v", err)
	require.Equal(t, "57P01", pe.Code)
	_, err = c.Exec(ctx, "SELECT 1")
	require.Error(t, err)
}
