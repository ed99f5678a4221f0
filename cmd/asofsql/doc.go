// Command asofsql is the asofsql engine on the command line: a Postgres
// wire server, a SQL runner, and a demo of the ASOF JOIN on generated
// market data.
//
// Subcommands (each has --help; bad flags print a message and exit 2, a
// failing statement or start-up exits 1):
//
//	asofsql serve [--listen 127.0.0.1:5433] [--data DIR | --memory] [--database asofsql]
//	              [--tls-cert F --tls-key F] [--auth trust|password|md5|scram-sha-256 --users FILE]
//	              [--file-dir DIR]
//	asofsql sql   [--data DIR | --memory] [-c "SQL" | -f FILE] [--format table|csv|json]
//	asofsql demo  [--rows N] [--data DIR]
//
// serve logs with log/slog to stderr and stops cleanly on SIGINT or
// SIGTERM (running statements get a few seconds to finish). sql prints
// results as psql's aligned tables, CSV or JSON; without -c or -f it
// reads SQL from standard input, or, on a terminal, runs an interactive
// shell (multi-line statements, line editing and history with
// golang.org/x/term).
// demo loads a deterministic trading day of trades and quotes with COPY
// and runs a tour of ASOF queries.
//
// Example:
//
//	asofsql demo --data ./market
//	asofsql serve --data ./market &
//	psql -h 127.0.0.1 -p 5433 -d asofsql
package main
