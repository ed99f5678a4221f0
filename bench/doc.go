// Command bench compares asofsql's ASOF join with DuckDB's on the same data
// in the same process and run (issue 9). It is a separate Go module so
// that DuckDB's cgo bindings never enter the main module.
//
// For each selected shape (S1–S6, see Shapes) it generates the data once,
// deterministically and with exec/asof BenchmarkJoin's seeds and generator,
// then:
//
//   - loads it into an in-memory DuckDB with the Appender (not timed);
//   - runs every engine once untimed (warm-up, and the run that measures
//     peak RSS), then its -runs timed runs back to back;
//   - times only the join producing the full result, materialised: the
//     asofsql operator's output batches are kept until the run ends,
//     DuckDB runs CREATE TEMP TABLE out AS SELECT ... (see JoinSQL for how
//     DuckDB spells ranges and nearest);
//   - checks that every run of every engine gives the same row count, NULL
//     count and checksum of the matched right values per right input
//     (Summary), and stops with an error showing both answers if not;
//   - prints a Markdown table of median times, ns per left row, peak RSS
//     growth, asofsql's peak Arrow memory and the ratio asofsql/DuckDB.
//
// It also runs issue 6's SQL operator shapes (QueryShapes: filter+project,
// sorts, top-N, GROUP BY on one 10M-row table) through asofsql's embedded
// SQL API and DuckDB with exact answer checks (QuerySpec), and S1 through
// the SQL API and the wire server with pgx (binary and text results).
//
// Engines implement Engine: OperatorEngine (exec/asof directly),
// SQLEngine (DB.Query), WireEngine (pgx against the wire server) and
// DuckDBEngine.
//
// Example (a quick run at 1% of the sizes, three timed runs):
//
//	cd bench && go run . -shapes S1,S3 -runs 3 -scale 0.01
package main
