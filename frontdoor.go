package asofsql

import (
	"maps"
)

// This file holds what a network front door other than the Postgres wire
// (the Flight SQL server) needs beyond the embedded API.

// Fork returns a new session with s's settings (current values and the
// defaults RESET returns to) and identity, outside any transaction block.
// A server whose clients run statements of one connection concurrently
// (Flight SQL) runs each query in a fork of the connection's session, so
// that a SET while a result streams cannot change it.
func (s *Session) Fork() *Session {
	f := &Session{db: s.db, timeout: s.timeout, memLimit: s.memLimit, user: s.user, database: s.database}
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
