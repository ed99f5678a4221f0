//go:build linux

package scaleout

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// postgres is a private PostgreSQL server for one test.
type postgres struct {
	port int
	dir  string
}

// dsn is a pgx DSN for the server's postgres database as its superuser.
func (p *postgres) dsn() string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres sslmode=disable", p.port)
}

// pgBinDir is where PostgreSQL 15's server binaries are.
func pgBinDir() string {
	if d := os.Getenv("ASOFSQL_PG_BINDIR"); d != "" {
		return d
	}
	return "/usr/lib/postgresql/15/bin"
}

// startPostgres initdbs and starts a PostgreSQL 15 on a free loopback
// port; it stops and is removed when tb ends. Skips when the server
// binaries are not installed.
func startPostgres(tb testing.TB) *postgres {
	tb.Helper()
	bin := pgBinDir()
	if _, err := os.Stat(filepath.Join(bin, "postgres")); err != nil {
		tb.Skipf("PostgreSQL 15 server binaries are not in %s (apt-get install postgresql-15, or set ASOFSQL_PG_BINDIR): %v", bin, err)
	}
	// PostgreSQL refuses to run as root: run it as the postgres user the
	// Debian package creates.
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			tb.Skipf("running as root, and there is no postgres user to run PostgreSQL as: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	dir, err := os.MkdirTemp("", "asofsql-pg-")
	require.NoError(tb, err)
	tb.Cleanup(func() { os.RemoveAll(dir) })
	if cred != nil {
		require.NoError(tb, os.Chown(dir, int(cred.Uid), int(cred.Gid)))
	}
	data := filepath.Join(dir, "data")
	cmd := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync",
		"-E", "UTF8", "--locale=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("initdb: %v\n%s", err, out)
	}
	var lastErr error
	for range 3 { // a free port can be taken between the probe and the start
		p, err := runPostgres(tb, bin, dir, data, cred)
		if err == nil {
			return p
		}
		lastErr = err
	}
	tb.Fatalf("postgres did not start: %v", lastErr)
	return nil
}

func runPostgres(tb testing.TB, bin, dir, data string, cred *syscall.Credential) (*postgres, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	logPath := filepath.Join(dir, "postgres.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "shared_buffers=32MB", "-c", "max_connections=40", "-c", "max_parallel_workers_per_gather=0")
	cmd.Stdout, cmd.Stderr = logf, logf
	// Pdeathsig: a test binary that dies takes its server with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	p := &postgres{port: port, dir: dir}
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := pgx.Connect(ctx, p.dsn())
		cancel()
		if err == nil {
			c.Close(context.Background())
			break
		}
		select {
		case werr := <-exited:
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("postgres exited: %v\n%s", werr, log)
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-exited
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("postgres not ready: %v\n%s", err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT) // fast shutdown
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	return p, nil
}
