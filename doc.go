// Package asofsql is the embedded form of the asofsql engine: open a
// database (in memory or in a directory), run SQL with the ASOF JOIN
// clause, and read results as streaming Arrow record batches.
//
// Contract:
//   - Open(":memory:") or Open(dir) (also "file:dir"); Close flushes and
//     releases everything. A DB is safe for concurrent use.
//   - Query runs one statement that returns rows and streams them: the
//     returned array.RecordReader pulls batches from the engine as the
//     caller reads; Release it when done (it holds a consistent snapshot
//     of the tables until then). Column names and SQL types (field
//     metadata, see sqltypes.FromField) are the query's.
//   - Exec runs one or more statements (CREATE TABLE ... ORDER BY, DROP
//     TABLE, INSERT, SELECT) and reports the last one's command tag; each
//     statement commits on its own (autocommit).
//   - Arguments bind $1..$n: natural Go values or strings in Postgres text
//     syntax.
//   - Errors are *sqlerr.Error values (SQLSTATE, message, hint, position),
//     possibly wrapped: use sqlerr.As.
//
// Example:
//
//	db, err := asofsql.Open(":memory:")
//	if err != nil { ... }
//	defer db.Close()
//	_, err = db.Exec(ctx, `CREATE TABLE quotes (ts BIGINT, sym TEXT, bid DOUBLE PRECISION) ORDER BY (ts)`)
//	rdr, err := db.Query(ctx, `SELECT * FROM trades ASOF LEFT JOIN quotes
//	                             ON ts BETWEEN -10 AND 0 USING (sym)`)
//	if err != nil { ... }
//	defer rdr.Release()
//	for rdr.Next() { use(rdr.RecordBatch()) }
//	err = rdr.Err()
package asofsql
