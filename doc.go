// Package asofsql is the embedded form of the asofsql engine: open a
// database (in memory or in a directory), run SQL with the ASOF JOIN
// clause, and read results as streaming Arrow record batches, or use it
// through database/sql as the driver "asofsql".
//
// Contract:
//   - Open(":memory:") or Open(dir) (also "file:dir"); Close flushes and
//     releases everything. A DB is safe for concurrent use. Options:
//     WithAllocator, WithMemoryLimit, WithFileDir. Each statement runs
//     under one memory account (exec/memacct): memory_limit bounds the
//     query, WithMemoryLimit is that setting's default and ceiling and the
//     budget all queries of the DB share (the newest fails with 53200).
//   - A Session (db.Session()) is one connection's state, used by one
//     goroutine at a time: settings changed by SET and read by SHOW
//     (TimeZone, application_name, search_path, statement_timeout,
//     extra_float_digits, DateStyle ISO only, client_encoding UTF8 only,
//     transaction_isolation and its kin, SHOW ALL; unknown names are
//     42704), a BEGIN/COMMIT/ROLLBACK block, and cursors (DECLARE,
//     FETCH, MOVE, CLOSE; declare.go). DB.Query and DB.Exec run in a fresh
//     session each.
//   - Isolation, honestly: under READ COMMITTED (the default) each
//     statement plans and reads the catalog as last committed when it
//     starts; under REPEATABLE READ and SERIALIZABLE the block's first
//     statement that reads takes one snapshot and every later statement
//     of the block reads it (isolation.go). SERIALIZABLE transactions
//     must not write (0A000): asofsql has no conflict detection between
//     writers. READ ONLY refuses writes (25006). A block's writes commit
//     atomically at COMMIT and are invisible to other sessions until then;
//     the block's own later statements read them (read-your-writes, in
//     every level: the committed state of the statement with the block's
//     changes on top, catalog.Tx.View). A failed statement leaves nothing behind;
//     inside a block it fails the block (25P02 until ROLLBACK; COMMIT
//     then answers ROLLBACK). ROLLBACK also undoes SETs made in the block.
//     SET LOCAL is refused (0A000).
//   - statement_timeout cancels a statement (including the reading of its
//     rows) with 57014 "canceling statement due to statement timeout"; a
//     cancelled ctx gives 57014 "... due to user request".
//   - Query runs one statement that returns rows (SELECT, EXPLAIN [ANALYZE],
//     SHOW) and returns a *Cursor, an array.RecordReader that pulls batches
//     from the engine as the caller reads; Release it when done (it holds
//     a consistent snapshot until then). Column names and SQL types (field
//     metadata, see sqltypes.FromField) are the query's. EXPLAIN returns
//     the plan one line a row in a "QUERY PLAN" column; EXPLAIN ANALYZE runs
//     the query and adds actual rows, batches and time per node.
//   - Exec runs one or more statements and reports the last one's command
//     tag ("INSERT 0 3", "SELECT 2", "COPY 5", ...).
//   - Session.Prepare analyses a statement without running it: parameter
//     types and result columns are known before Execute (what the
//     Postgres wire protocol's Describe needs); Session.Batch yields the
//     statements of a string one at a time, each planned once on one
//     snapshot (its first Execute runs the plan Next made).
//   - Prepared statements have one namespace per session, as in Postgres:
//     SQL PREPARE / EXECUTE / DEALLOCATE and Session.PrepareNamed (the
//     wire protocol's named Parse), Prepared and Deallocate see the same
//     statements; DISCARD ALL resets the settings and drops them all.
//     A prepared INSERT or query keeps the plan of its last execution and
//     runs it again, binding only the arguments, until a relation it
//     looked up changes definition, a setting it was planned with changes
//     or DISCARD PLANS (plancache.go); rows always come from the
//     execution's own snapshot. INSERT INTO t VALUES ($1, ...) with one
//     parameter of the column's type per column appends the bound row
//     without building operators (directinsert.go).
//   - Arguments bind $1..$n: natural Go values or strings in Postgres text
//     syntax. The database/sql driver also accepts ? placeholders.
//   - COPY t FROM 'file' / TO 'file' works only inside the directory given
//     with WithFileDir (42501 otherwise, and for paths leaving it through
//     ".." or symbolic links), and only on regular files: a named pipe,
//     device or directory is 42501 at once. File reads and writes stop
//     when the statement's context ends. COPY ... FROM STDIN and TO STDOUT go through
//     Session.CopyFrom (an io.Reader) and Session.CopyTo (an io.Writer).
//   - Session.Ingest loads Arrow record batches into a table as one
//     statement (fields matched to columns by name and cast as COPY FROM a
//     Parquet file; all or nothing; an ordered table stays ordered), and
//     may create or replace the table (IngestOptions). Session.Fork gives
//     a session with the same settings outside any block, sharing the
//     session's prepared statements (one namespace per connection), for
//     servers that run one client's queries concurrently (the Flight SQL
//     server).
//   - Errors are *sqlerr.Error values (SQLSTATE, message, detail, hint,
//     position), possibly wrapped: use sqlerr.As or sqlerr.Code.
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
//
// or, through database/sql:
//
//	sdb, err := sql.Open("asofsql", "file:./data")
//	rows, err := sdb.QueryContext(ctx, `SELECT t.ts, q.bid FROM trades t
//	    ASOF LEFT JOIN quotes q ON t.sym = q.sym AND t.ts >= q.ts WHERE t.qty > ?`, 100)
package asofsql
