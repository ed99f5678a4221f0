package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/server"
)

// shutdownGrace is how long running statements may finish after SIGINT
// or SIGTERM before they are cancelled.
const shutdownGrace = 10 * time.Second

func serveCmd(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("serve", `[--listen 127.0.0.1:5433] [--data DIR | --memory] [--database asofsql]
              [--tls-cert F --tls-key F] [--auth trust|password|md5|scram-sha-256 --users FILE]
              [--file-dir DIR] [--max-connections N] [--idle-timeout D] [--statement-timeout D]
              [--memory-limit SIZE|auto|0] [--workers N]

Serves the database over the PostgreSQL wire protocol until SIGINT or
SIGTERM. Trust authentication (the default) is only allowed on a loopback
address. The users file holds "name:verifier" lines (md5... or
SCRAM-SHA-256$... verifiers as in pg_authid, never passwords).
The memory limit is the default of the memory_limit setting: what each
sort, hash build or aggregate may hold before the query fails with 53200
(sessions may SET it); auto is half the machine's RAM. --workers is the
default of max_parallel_workers_per_gather, the degree each query runs at
(default 1: serial plans; 0: every core, GOMAXPROCS).`, stdout, stderr)
	var st storage
	st.register(fs)
	listen := fs.String("listen", "127.0.0.1:5433", "TCP `address` to listen on")
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
	memLimit := fs.String("memory-limit", "auto", "default memory_limit `size` per sort, hash build or aggregate (e.g. 4GB; 0: none; auto: half the RAM)")
	workers := fs.Int("workers", 1, "default max_parallel_workers_per_gather: workers per query (1: serial; 0: every core, GOMAXPROCS)")
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	cfg, err := serveConfig(*database, *certFile, *keyFile, *requireTLS, *authName, *usersFile)
	if err != nil {
		return fail(stderr, "serve", err)
	}
	if *maxConns <= 0 || *idle < 0 || *stmtTimeout < 0 {
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
	if *workers == 0 {
		*workers = asofsql.AllCores()
	}
	opts := []asofsql.Option{asofsql.WithMemoryLimit(limit), asofsql.WithWorkers(*workers)}
	if *fileDir != "" {
		opts = append(opts, asofsql.WithFileDir(*fileDir))
	}
	db, err := st.open(opts...)
	if err != nil {
		return fail(stderr, "serve", err)
	}
	defer db.Close()
	srv, err := server.New(db, cfg)
	if err != nil {
		return fail(stderr, "serve", err)
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return fail(stderr, "serve", err)
	}
	storageDesc := "memory"
	if st.data != "" {
		storageDesc = st.data
	}
	log.Info("listening", "addr", l.Addr().String(), "database", *database, "data", storageDesc,
		"auth", cfg.Auth.Method.String(), "tls", cfg.TLS != nil, "memory_limit", asofsql.FormatMemoryLimit(limit), "workers", *workers)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err := <-served: // Serve refused the listener (e.g. trust on a public address)
		return fail(stderr, "serve", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", shutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	code := exitOK
	if err := srv.Shutdown(sctx); err != nil {
		log.Error("shutdown", "err", err)
		code = exitFail
	}
	if err := <-served; err != nil && !errors.Is(err, pgwire.ErrServerClosed) {
		log.Error("serve", "err", err)
		code = exitFail
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
