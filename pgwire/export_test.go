package pgwire

import "time"

// SetWriteGraces shortens the write deadlines of clients that stop
// reading (a cancelled statement's output, a stopping server's last
// words), so that tests need not wait the defaults. Call it before Serve.
func SetWriteGraces(s *Server, cancelled, stopping time.Duration) {
	s.cancelWriteGrace, s.stopWriteGrace = cancelled, stopping
}

// Quiet reports whether every started connection of s waits for its
// client and has taken every message the reader queued before that wait
// began (the fuzz harness's sign that the input it gave has been dealt
// with, once the reader has read it all).
func Quiet(s *Server) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.started.Load() && (!c.waiting.Load() || c.waitFrom.Load() != c.queuedN.Load()) {
			return false
		}
	}
	return true
}
