package pgwire

import "time"

// SetWriteGraces shortens the write deadlines of clients that stop
// reading (a cancelled statement's output, a stopping server's last
// words), so that tests need not wait the defaults. Call it before Serve.
func SetWriteGraces(s *Server, cancelled, stopping time.Duration) {
	s.cancelWriteGrace, s.stopWriteGrace = cancelled, stopping
}

// Quiet reports whether every started connection of s waits for its
// client with no whole message buffered (the fuzz harness's sign that the
// input it gave has been dealt with, once it has all been read).
func Quiet(s *Server) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.started.Load() && !c.waiting.Load() {
			return false
		}
	}
	return true
}

// Watchers is the number of watchers s has started: one per statement
// that ran long, none for quick ones.
func Watchers(s *Server) int64 { return s.watchers.Load() }

// SetWatchAfter sets how long a statement runs before a watcher reads
// ahead for it.
func SetWatchAfter(s *Server, d time.Duration) { s.watchAfter.Store(int64(d)) }
