// Package memengine is a small in-memory implementation of pgwire.Engine
// that exists to exercise the wire server in tests. It runs real statements
// over Arrow tables held in memory, recognized with sql/parser:
//
//   - SELECT * | col, ... FROM t [LIMIT n]
//   - SELECT <items> where an item is a literal, a $n parameter, x::type
//     (or CAST), generate_series(a, b) (rows produced lazily, 4096 per
//     batch), pg_sleep(seconds) (waits, honouring cancellation; yields a
//     NULL text) or fail('message') (raises 22012 positioned at the call);
//     generate_series must be the only item
//   - SET / SHOW / BEGIN / COMMIT / ROLLBACK with Postgres transaction
//     states, 25P02 in a failed block, and WARNING 25P01 for a ROLLBACK
//     outside one
//   - CREATE TABLE, COPY t FROM STDIN (text, csv, binary, via copyfmt) and
//     COPY t TO STDOUT (text); COPY names all columns in order or none
//
// Writes (COPY) are staged in the session and published when the implicit
// or explicit transaction commits, discarded when it rolls back. It is not
// a planner: anything else is 0A000.
//
// Example:
//
//	eng := memengine.New(mem)
//	defer eng.Release()
//	eng.AddTable("t", schema, batch)
//	srv, _ := pgwire.NewServer(pgwire.Config{Engine: eng, Allocator: mem})
package memengine
