package asofsql

import (
	"maps"
)

// This file holds what a network front door other than the Postgres wire
// (the Flight SQL server) needs beyond the embedded API.

// Fork returns a new session with s's settings (current values and the
// defaults RESET returns to) and identity, outside any transaction block,
// sharing s's prepared statements: the namespace is the connection's, so
// a statement PREPAREd in s or in any fork of it can be EXECUTEd, and
// DEALLOCATEd, in all of them (each plans it with its own settings).
// A server whose clients run statements of one connection concurrently
// (Flight SQL) runs each query in a fork of the connection's session, so
// that a SET while a result streams cannot change it. Closing a fork
// rolls back its block but keeps the shared prepared statements.
func (s *Session) Fork() *Session {
	f := &Session{db: s.db, timeout: s.timeout, memLimit: s.memLimit, workers: s.workers, minParallel: s.minParallel, user: s.user, database: s.database,
		stmts: s.stmts, forked: true}
	vopts := *s.vopts
	f.vopts = &vopts
	f.values = maps.Clone(s.values)
	f.resetVals = maps.Clone(s.resetVals)
	return f
}

// Remaining is the number of statements Next has not yet returned.
func (b *Batch) Remaining() int { return len(b.stmts) - b.next }

// Tables lists the committed tables, sorted by name (Table describes
// each).
func (db *DB) Tables() []string { return db.cat.Tables() }
