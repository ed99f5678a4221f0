package pgwire_test

import (
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/asofsql/asofsql/pgwire"
)

// TestCancelReachesAStatementBlockedOnItsClient: a statement whose client
// stops reading blocks in a write, where no cancellation is looked at.
// Once it is cancelled (a CancelRequest here; statement_timeout and the
// rest alike), the client has a grace period to take what was written,
// and then the connection is closed.
func TestCancelReachesAStatementBlockedOnItsClient(t *testing.T) {
	// Small socket buffers on both sides, so that the server blocks soon
	// after the client's buffer stops filling.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	h := startOn(t, smallSendBuffers{l}, nil)
	pgwire.SetWriteGraces(h.srv, 200*time.Millisecond, 200*time.Millisecond)
	r, pid, key := connectWithKey(t, h.addr)
	require.NoError(t, r.nc.(*net.TCPConn).SetReadBuffer(16<<10))
	r.send(&pgproto3.Query{String: "select generate_series(1, 1000000000)"})
	// Never read: the server fills the socket buffers and blocks. It has
	// when the bytes waiting for the client stop growing.
	waitBlocked(t, r.nc)
	sendCancel(t, h.addr, pid, key)
	waitConns(t, h.srv, 0)
}

// waitBlocked waits until the bytes queued for reading on nc have stopped
// growing for a while: the sender is blocked on a full socket.
func waitBlocked(t *testing.T, nc net.Conn) {
	t.Helper()
	rc, err := nc.(*net.TCPConn).SyscallConn()
	require.NoError(t, err)
	queued := func() int {
		var n int
		require.NoError(t, rc.Control(func(fd uintptr) { n, err = unix.IoctlGetInt(int(fd), unix.SIOCINQ) }))
		require.NoError(t, err)
		return n
	}
	last, same := -1, 0
	for deadline := time.Now().Add(60 * time.Second); same < 5; time.Sleep(50 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the server never blocked")
		if n := queued(); n > 0 && n == last {
			same++
		} else {
			last, same = n, 0
		}
	}
}

// smallSendBuffers gives accepted connections a small send buffer (no
// autotuning).
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(8 << 10)
	}
	return c, err
}
