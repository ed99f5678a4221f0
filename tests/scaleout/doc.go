// Package scaleout checks asofsql as the data nodes of a PostgreSQL 15
// coordinator (docs/scale-out.md): a partitioned table whose partitions
// are postgres_fdw foreign tables on several asofsql nodes, and dblink
// fanning an ASOF query out to each node.
//
// Contract:
//   - The tests start a private PostgreSQL 15 (initdb in a temporary
//     directory, loopback only, a free port, run as the "postgres" user
//     when the test runs as root) and asofsql nodes on 127.0.0.1:0 in the
//     test process. Without PostgreSQL's server binaries
//     (/usr/lib/postgresql/15/bin, or $ASOFSQL_PG_BINDIR) they are skipped
//     with a message saying so; .ci/run installs them.
//   - Every key (symbol) lives on exactly one node. Results through the
//     coordinator (per-key aggregates, filtered row sets, ORDER BY and
//     LIMIT, joins on one node) must equal, as text, those of one asofsql
//     node holding all the data.
//   - BenchmarkCoordinator times the market-data ASOF aggregate on one
//     node directly and through the coordinator over 1, 2 and 3 nodes.
//
// Example:
//
//	go test ./tests/scaleout/ -run TestPostgresFDW -v
//	go test ./tests/scaleout/ -run '^$' -bench Coordinator -benchtime 20x
package scaleout
