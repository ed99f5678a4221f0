// Command asofsql is the asofsql engine on the command line: a Postgres
// wire and Arrow Flight SQL server, a SQL runner, and a demo of the ASOF
// JOIN on generated market data.
//
// Subcommands (each has --help; bad flags print a message and exit 2, a
// failing statement or start-up exits 1):
//
//	asofsql serve [--listen 127.0.0.1:5433] [--flight ADDR] [--data DIR | --memory] [--database asofsql]
//	              [--tls-cert F --tls-key F] [--auth trust|password|md5|scram-sha-256 --users FILE]
//	              [--file-dir DIR]
//	asofsql sql   [--data DIR | --memory] [-c "SQL" | -f FILE] [--format table|csv|json]
//	asofsql demo  [--rows N] [--data DIR]
//	asofsql import --data DIR --table T [--order-by col[,col...]] [--header=false]
//	              [--progress-interval 5s] FILE.csv|FILE.parquet
//
// serve logs with log/slog to stderr and stops cleanly on SIGINT or
// SIGTERM (running statements get a few seconds to finish). --flight ADDR
// also serves Arrow Flight SQL (package flightsql) over the same database,
// with the same users file and certificate; given without --listen, only
// Flight SQL. sql prints
// results as psql's aligned tables, CSV or JSON; without -c or -f it
// reads SQL from standard input, or, on a terminal, runs an interactive
// shell (multi-line statements, line editing and history with
// golang.org/x/term).
// demo loads a deterministic trading day of trades and quotes with COPY
// and runs a tour of ASOF queries.
// import bulk-loads a CSV or Parquet file through the catalog's streaming
// COPY loader in one transaction (BEGIN, CREATE TABLE if needed, COPY,
// COMMIT), so an error or SIGINT leaves the table as it was (exit code 1,
// or 130 when interrupted). A missing table is created: Parquet columns
// keep their types, CSV column types are inferred from the first 10000
// rows (bigint, double precision, boolean, date, timestamp, timestamptz,
// else text), --order-by declares its ORDER BY. An existing table is
// appended to after checking that the file's columns are its columns.
// Progress (rows, rows/s, ETA from the bytes read of a CSV file or the
// rows of a Parquet file's footer) is a bar redrawn in place on a
// terminal, and plain lines every --progress-interval otherwise.
//
// Example:
//
//	asofsql demo --data ./market
//	asofsql serve --data ./market &
//	psql -h 127.0.0.1 -p 5433 -d asofsql
package main
