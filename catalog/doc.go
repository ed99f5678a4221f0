// Package catalog holds asofsql's tables: their definitions, their rows in
// immutable Arrow segments, and the ordering guarantee ASOF JOIN relies on.
//
// # Contract
//
//   - A table has columns of sqltypes types (NOT NULL enforced on every
//     write, 23502 naming table, column and row or COPY line) and an optional
//     ordering (TableDef.OrderBy). A scan of an ordered table yields rows
//     ascending by the ordering columns, NULLs last, rows with equal keys in
//     insertion order (spec §4); an unordered table yields insertion order.
//   - Writes happen in a Tx. A statement of at most Options.LogRows rows
//     keeps them in memory; a larger one writes stably sorted runs of up to
//     Options.RunRows rows as segment files as it runs. Commit orders the whole
//     transaction as one record of the write-ahead log and is durable when
//     that record is on disk (group commit: concurrent commits share one
//     fsync; Tx.SetSynchronousCommit(false) returns before it). Nothing of
//     a failed statement or an uncommitted transaction is ever visible, and
//     a statement error aborts the Tx (25P02 afterwards, as in PostgreSQL).
//   - Recent small writes live in per-table append segments in memory that
//     every snapshot sees in commit order and scans merge in key order; a
//     checkpoint (background, Checkpoint, Close) writes them out as sorted
//     segment files, records them in the manifest and truncates the log.
//     Open replays the log after the last checkpoint, cutting a torn tail.
//   - Readers take a Snapshot: a consistent, immutable view that keeps its
//     segments alive (files included) until released. Readers never block
//     writers, checkpoints or compaction, and vice versa. Tx.View puts a
//     transaction's own uncommitted changes on top of a snapshot, for its
//     later statements (read-your-writes); its rows there are private.
//   - DELETE/UPDATE (Tx.Delete, Tx.Update) record deleted positions in
//     deletion masks; segments wholly inside a deleted key range go without
//     being read. A commit that deletes a row a transaction committed first
//     deleted fails with 40001 (first committer wins). ALTER TABLE never
//     rewrites: columns have ids, scans fill added ones with their default.
//   - Compact (also run in the background when a table collects small
//     segments) merges consecutive small segments without changing what any
//     scan returns.
//   - See docs/storage.md for the formats and the durability argument.
//   - Errors are *sqlerr.Error: 42P07 duplicate table, 42P01 unknown table,
//     42703 unknown column, 42601 INSERT shape, 42804 type mismatch, COPY
//     22P02/22003/22P04/23502 with "COPY t, line N, column c" in the Detail.
//
// # Who calls it
//
// The planner only reads table definitions, through its Catalog interface
// (Table(name) *TableInfo: columns, ordering as TableInfo.OrderKeys); the
// virtual pg_catalog tables are built from the same TableInfo. The root
// package's session runs the statements that write, each in a Tx:
//
//	CREATE TABLE t (...) ORDER BY (ts)   tx.CreateTable(ctx, def, ifNotExists)
//	CREATE TABLE t AS SELECT ...         tx.CreateTableAs(ctx, def, rows)
//	CREATE TEMP TABLE ...                temp, _ := cat.NewTemp() // per session; Close at its end
//	DROP TABLE [IF EXISTS] t             tx.DropTable(ctx, "t", ifExists)
//	INSERT INTO t VALUES/SELECT ...      tx.Insert(ctx, "t", rdr) // rows typed as the table, by position
//	COPY t FROM STDIN (FORMAT csv)       tx.CopyFrom(ctx, "t", r, opts)
//	COPY t FROM '/f.parquet'             tx.CopyFromFile(ctx, "t", "/f.parquet", opts)
//	Arrow batches (Flight SQL ingest)    tx.Ingest(ctx, "t", rdr) // fields by name, cast to the columns
//	SET synchronous_commit = off         tx.SetSynchronousCommit(false) before Commit
//	DELETE FROM t WHERE ts < $1          tx.Delete(ctx, "t", DeleteOptions{Range: &Range{Hi: x, HiExclusive: true}})
//	DELETE FROM t WHERE p                tx.Delete(ctx, "t", DeleteOptions{Where: pred})
//	UPDATE t SET ... WHERE p             tx.Update(ctx, "t", UpdateOptions{Where: pred, Set: f})
//	TRUNCATE t                           tx.Truncate(ctx, "t")
//	ALTER TABLE t ADD/DROP/RENAME ...    tx.AddColumn / DropColumn / RenameColumn / RenameTable
//	CREATE [OR REPLACE] VIEW / DROP VIEW tx.CreateView(ctx, ViewDef{...}, orReplace) / tx.DropView
//
// Reads go through a Snapshot: package lower turns each plan Scan into
// snap.Scan(ctx, "t", ScanOptions{Columns, Range}), an array.RecordReader
// that exec.FromReader makes an operator, and COPY t TO scans the same way.
// An autocommit statement is Begin, one call, Commit. Table names are taken
// verbatim (the planner folds identifiers).
//
// # Example
//
//	cat, err := catalog.Open(ctx, "/var/lib/asofsql", catalog.Options{Allocator: mem}) // or catalog.Memory
//	if err != nil { ... }
//	defer cat.Close()
//	tx := cat.Begin()
//	err = tx.CreateTable(ctx, catalog.TableDef{
//		Name: "quotes",
//		Columns: []catalog.Column{
//			{Name: "ts", Type: sqltypes.TimestampType, NotNull: true},
//			{Name: "sym", Type: sqltypes.TextType},
//			{Name: "bid", Type: sqltypes.Float8Type},
//		},
//		OrderBy: []string{"ts"},
//	}, false)
//	n, err := tx.CopyFrom(ctx, "quotes", strings.NewReader(data), catalog.CopyOptions{Format: "csv"})
//	err = tx.Commit(ctx)
//
//	snap, _ := cat.Snapshot()
//	defer snap.Release()
//	rdr, err := snap.Scan(ctx, "quotes", catalog.ScanOptions{Range: &catalog.Range{Lo: from, Hi: to}})
//	defer rdr.Release()
//	for rdr.Next() { use(rdr.RecordBatch()) } // ascending ts, NULLs last, stable
//	err = rdr.Err()
package catalog
