// Package sqllogic runs SQL logic test files (the sqllogictest dialect of
// SQLite, DuckDB and DataFusion) against asofsql through each of its front
// doors: the embedded API (a Session), the Postgres wire protocol (pgx
// over a loopback pgwire server, simple and extended protocol) and Arrow
// Flight SQL (arrow-go's client over a loopback flightsql server, values
// rendered from the Arrow results as the wire server renders them), and
// optionally against a real PostgreSQL to check expectations.
//
// Contract:
//   - Parse reads a file into Records: "statement ok", "statement error
//     <regex>", "query <types> [nosort|rowsort|valuesort]" with "----" and
//     the expected rows (values separated by tabs, one row a line, or
//     "N values hashing to <md5>"), "# comments", "halt", "skipif <mode>" /
//     "onlyif <mode>" before a record, "require <capability>",
//     "loop <var> <from> <to>" ... "endloop" with ${var} in the SQL, and
//     "hash-threshold" (accepted, ignored), and two extensions for COPY
//     streams: "copy-in ok|error <regex>" (the lines after "----" are the
//     FROM STDIN data) and "copy-out" (they are the expected TO STDOUT
//     output). A malformed file is a 42601
//     error naming file and line.
//   - Capabilities ("require" and Runner.Caps): "asof", and CapCopyStdin,
//     without which copy-in and copy-out records are skipped (Flight SQL
//     has no COPY streams).
//   - Runner.Run executes the records on a Conn in order and returns
//     passed/failed/skipped counts and, for each failure, the file, line,
//     SQL and what differed (a line diff for results).
//   - Values are PostgreSQL text output; NULL is "NULL", the empty string
//     "(empty)", and R columns are printed with three decimals. Errors are
//     matched as "SQLSTATE: message[ DETAIL: d][ HINT: h][ POSITION: n]".
//   - The hash is sqllogictest's: md5 over every value followed by "\n",
//     in result order (after rowsort/valuesort).
//   - Rewrite puts a run's actual results back into the file (-update).
//
// Example:
//
//	recs, err := sqllogic.Parse("basic.slt", f)
//	if err != nil { ... }
//	r := &sqllogic.Runner{Mode: "embedded", Aliases: []string{"asofsql"}, Caps: map[string]bool{"asof": true}}
//	res := r.Run(ctx, "basic.slt", recs, &sqllogic.Embedded{S: db.Session()})
//	fmt.Printf("%d passed, %d failed\n", res.Passed, res.Failed)
package sqllogic
