package pgwire

import "time"

// SetWriteGraces shortens the write deadlines of clients that stop
// reading (a cancelled statement's output, a stopping server's last
// words), so that tests need not wait the defaults. Call it before Serve.
func SetWriteGraces(s *Server, cancelled, stopping time.Duration) {
	s.cancelWriteGrace, s.stopWriteGrace = cancelled, stopping
}
