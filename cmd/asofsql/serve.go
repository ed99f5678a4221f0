package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"time"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/flightsql"
	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/server"
)

// shutdownGrace bounds the shutdown after SIGINT or SIGTERM: running
// statements are cancelled at once, and a connection that has not ended
// when it runs out is closed.
const shutdownGrace = 10 * time.Second

// heapFloorSize is the least live heap the garbage collector paces the
// server by. A server answering single-row statements holds ~2 MB live,
// so with GOGC's default of 100 it collected every 2-3 MB of allocation:
// every few hundred statements, a tenth of the CPU of a prepared INSERT
// (BenchmarkInsertTxOverPgx, GOGC=400 against 100). A pointer-free
// allocation of this size, kept live while serving, raises the heap goal
// of a small heap to about twice it (the collector never scans it, and
// its pages, never written, take no memory), and changes nothing for a
// heap of queries that hold gigabytes.
const heapFloorSize = 32 << 20

// heapFloor returns the allocation that sets the heap floor, for the
// caller to keep alive (runtime.KeepAlive) while it serves; nil when the
// GOGC environment variable is set: whoever set it tunes the collector.
func heapFloor() []byte {
	if _, set := os.LookupEnv("GOGC"); set {
		return nil
	}
	return make([]byte, heapFloorSize)
}

func serveCmd(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("serve", `[--listen 127.0.0.1:5433] [--flight ADDR] [--data DIR | --memory] [--database asofsql]
              [--tls-cert F --tls-key F] [--auth trust|password|md5|scram-sha-256 --users FILE]
              [--file-dir DIR] [--max-connections N] [--idle-timeout D] [--statement-timeout D]
              [--idle-in-transaction-timeout D] [--memory-limit SIZE|auto|0]
              [--workers N]

Serves the database over the PostgreSQL wire protocol (--listen) and, with
--flight, over Arrow Flight SQL (gRPC) until SIGINT or SIGTERM; with only
--flight given, only Flight SQL. Both serve the same data, transactions
and users. SIGINT and SIGTERM stop the server as Postgres' fast shutdown
does: running statements are cancelled, open transactions rolled back, and
every wire client gets FATAL 57P01; the command exits 0 once all sessions
have ended (at most 10s later). Trust authentication (the default) is only
allowed on a loopback address; Flight SQL on another address also needs
TLS (its basic authentication sends the password in clear text). The users
file holds "name:verifier" lines (md5... or SCRAM-SHA-256$... verifiers as
in pg_authid, never passwords). Over TLS, scram-sha-256 also offers
SCRAM-SHA-256-PLUS (channel binding), so clients set to
channel_binding=require connect.
The memory limit bounds what queries hold (their batches, expression
results, sorts, hash tables, results not yet sent): it is the default of
the memory_limit setting, the most one query may hold before it fails with
53200, and the ceiling of that setting (sessions may lower it, not raise
it); all running queries share it too, and when together they would pass
it the newest fails with 53200. auto is half the machine's RAM; 0 is no
limit (sessions may then SET any memory_limit). --workers is the default
of max_parallel_workers_per_gather, the most workers a parallel step of a
query gets (default 0: every core, GOMAXPROCS; 1: serial plans); the
planner gives inputs below min_parallel_table_scan_size (8MB) serial plans
and larger ones more workers, up to it.`, stdout, stderr)
	var st storage
	st.register(fs)
	listen := fs.String("listen", "127.0.0.1:5433", "TCP `address` to serve the PostgreSQL wire protocol on")
	flightAddr := fs.String("flight", "", "TCP `address` to serve Arrow Flight SQL on (none by default)")
	database := fs.String("database", pgwire.DefaultDatabase, "the database `name` clients connect to")
	certFile := fs.String("tls-cert", "", "TLS certificate `file` (PEM); with --tls-key enables TLS")
	keyFile := fs.String("tls-key", "", "TLS private key `file` (PEM)")
	requireTLS := fs.Bool("require-tls", false, "refuse connections that do not use TLS (needed by --auth password)")
	authName := fs.String("auth", "trust", "authentication `method`: trust, password (needs --require-tls), md5 or scram-sha-256")
	usersFile := fs.String("users", "", "users `file` for password authentication")
	fileDir := fs.String("file-dir", "", "allow COPY to and from server files inside this `directory`")
	maxConns := fs.Int("max-connections", pgwire.DefaultMaxConnections, "maximum concurrent sessions")
	idle := fs.Duration("idle-timeout", 0, "close sessions idle for this `duration` (0: never)")
	stmtTimeout := fs.Duration("statement-timeout", 0, "default statement_timeout (0: none)")
	idleInTx := fs.Duration("idle-in-transaction-timeout", 0, "default idle_in_transaction_session_timeout: close sessions idle this long inside a transaction block, rolling it back (0: never)")
	memLimit := fs.String("memory-limit", "auto", "memory `size` queries may hold, each and together; memory_limit's default and ceiling (e.g. 4GB; 0: none; auto: half the RAM)")
	workers := fs.Int("workers", 0, "default max_parallel_workers_per_gather: the most workers per parallel step of a query (0: every core, GOMAXPROCS; 1: serial)")
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	floor := heapFloor()
	defer runtime.KeepAlive(floor)
	log := slog.New(slog.NewTextHandler(stderr, nil))
	cfg, err := serveConfig(*database, *certFile, *keyFile, *requireTLS, *authName, *usersFile)
	if err != nil {
		return fail(stderr, "serve", err)
	}
	if *maxConns <= 0 || *idle < 0 || *stmtTimeout < 0 || *idleInTx < 0 {
		return fail(stderr, "serve", errUsage("--max-connections must be positive, timeouts not negative"))
	}
	if *workers < 0 || *workers > 1024 {
		return fail(stderr, "serve", errUsage("--workers must be between 0 (every core) and 1024"))
	}
	limit, err := memoryLimitFlag(*memLimit)
	if err != nil {
		return fail(stderr, "serve", err)
	}
	cfg.Logger = log
	cfg.MaxConnections, cfg.IdleTimeout, cfg.StatementTimeout = *maxConns, *idle, *stmtTimeout
	cfg.IdleInTransactionTimeout = *idleInTx
	if *workers == 0 {
		*workers = asofsql.AllCores()
	}
	opts := []asofsql.Option{asofsql.WithMemoryLimit(limit), asofsql.WithWorkers(*workers)}
	if *fileDir != "" {
		opts = append(opts, asofsql.WithFileDir(*fileDir))
	}
	listenSet := false
	fs.Visit(func(f *flag.Flag) { listenSet = listenSet || f.Name == "listen" })
	withPG := *flightAddr == "" || listenSet
	db, err := st.open(opts...)
	if err != nil {
		return fail(stderr, "serve", err)
	}
	defer db.Close()
	storageDesc := "memory"
	if st.data != "" {
		storageDesc = st.data
	}
	// servers are the front doors to run: each serves until stopped.
	type front struct {
		name     string
		serve    func(net.Listener) error
		shutdown func(context.Context) error
		closed   error
		l        net.Listener
	}
	var fronts []*front
	if withPG {
		srv, err := server.New(db, cfg)
		if err != nil {
			return fail(stderr, "serve", err)
		}
		fronts = append(fronts, &front{name: "postgres", serve: srv.Serve, shutdown: srv.Stop, closed: pgwire.ErrServerClosed})
	}
	if *flightAddr != "" {
		fsrv, err := flightsql.New(db, flightsql.Config{Database: cfg.Database, TLS: cfg.TLS, Auth: cfg.Auth,
			StatementTimeout: *stmtTimeout, Logger: log})
		if err != nil {
			return fail(stderr, "serve", err)
		}
		fronts = append(fronts, &front{name: "flightsql", serve: fsrv.Serve, shutdown: fsrv.Shutdown, closed: flightsql.ErrServerClosed})
	}
	addrs := []string{}
	if withPG {
		addrs = append(addrs, *listen)
	}
	if *flightAddr != "" {
		addrs = append(addrs, *flightAddr)
	}
	for i, f := range fronts {
		l, err := net.Listen("tcp", addrs[i])
		if err != nil {
			for _, g := range fronts[:i] {
				g.l.Close()
			}
			return fail(stderr, "serve", err)
		}
		f.l = l
	}
	served := make(chan error, len(fronts))
	for _, f := range fronts {
		log.Info("listening", "addr", f.l.Addr().String(), "protocol", f.name, "database", *database, "data", storageDesc,
			"auth", cfg.Auth.Method.String(), "tls", cfg.TLS != nil, "memory_limit", asofsql.FormatMemoryLimit(limit), "workers", *workers)
		go func() {
			err := f.serve(f.l)
			if errors.Is(err, f.closed) {
				err = nil
			}
			served <- err
		}()
	}
	code := exitOK
	pending := len(fronts)
	select {
	case err := <-served: // a front door refused its listener (e.g. trust on a public address)
		pending--
		if err != nil {
			log.Error("serve", "err", err)
			fmt.Fprintf(stderr, "asofsql serve: %v\n", err)
			code = exitFail
		}
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", shutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	// Both front doors drain at once, within the same grace.
	stopped := make(chan error, len(fronts))
	for _, f := range fronts {
		go func() {
			err := f.shutdown(sctx)
			if err != nil {
				err = fmt.Errorf("%s: %w", f.name, err)
			}
			stopped <- err
		}()
	}
	for range fronts {
		if err := <-stopped; err != nil {
			log.Error("shutdown", "err", err)
			code = exitFail
		}
	}
	for ; pending > 0; pending-- {
		if err := <-served; err != nil {
			log.Error("serve", "err", err)
			code = exitFail
		}
	}
	if err := db.Close(); err != nil {
		log.Error("closing the database", "err", err)
		code = exitFail
	}
	log.Info("stopped")
	return code
}

func serveConfig(database, certFile, keyFile string, requireTLS bool, authName, usersFile string) (pgwire.Config, error) {
	cfg := pgwire.Config{Database: database, RequireTLS: requireTLS}
	if (certFile == "") != (keyFile == "") {
		return cfg, errUsage("--tls-cert and --tls-key go together")
	}
	if certFile != "" {
		t, err := pgwire.LoadTLS(certFile, keyFile)
		if err != nil {
			return cfg, err
		}
		cfg.TLS = t
	}
	if requireTLS && cfg.TLS == nil {
		return cfg, errUsage("--require-tls needs --tls-cert and --tls-key")
	}
	m, err := pgwire.ParseAuthMethod(authName)
	if err != nil {
		return cfg, errUsage("--auth: " + err.Error())
	}
	cfg.Auth.Method = m
	switch {
	case m == pgwire.AuthTrust && usersFile != "":
		return cfg, errUsage("--users needs --auth password, md5 or scram-sha-256")
	case m != pgwire.AuthTrust && usersFile == "":
		return cfg, errUsage("--auth " + authName + " needs --users FILE")
	case usersFile != "":
		f, err := os.Open(usersFile)
		if err != nil {
			return cfg, err
		}
		defer f.Close()
		users, err := pgwire.LoadUsers(f)
		if err != nil {
			return cfg, err
		}
		cfg.Auth.Users = users
	}
	return cfg, nil
}

// memoryLimitFlag reads --memory-limit. auto is half the machine's RAM: a
// server's default should turn a runaway sort into a 53200 error, not let
// it exhaust the machine (which kills every session), while leaving room
// for the operating system and the other queries. Where the RAM cannot be
// read, auto is no limit.
func memoryLimitFlag(v string) (int64, error) {
	if v == "auto" {
		// In whole megabytes, so that SHOW prints it plainly.
		return physicalMemory() / 2 &^ (1<<20 - 1), nil
	}
	n, err := asofsql.ParseMemoryLimit(v)
	if err != nil {
		return 0, errUsage("--memory-limit: " + err.Error())
	}
	return n, nil
}
