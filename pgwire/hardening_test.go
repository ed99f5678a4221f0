package pgwire_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/pgwire"
)

// waitConns waits (a hang guard, not a timing) until the server has n
// connections.
func waitConns(t *testing.T, srv *pgwire.Server, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return srv.ConnCount() == n }, 10*time.Second, 10*time.Millisecond,
		"%d connections open, want %d", srv.ConnCount(), n)
}

// TestTerminateCancelsTheRunningStatement: Terminate sent while a
// statement runs ends it and the session at once, with the socket closed
// or still open, instead of running it to the end for nobody.
func TestTerminateCancelsTheRunningStatement(t *testing.T) {
	h := start(t, nil)
	for _, closeSocket := range []bool{false, true} {
		r, _ := connect(t, h.addr, nil)
		// pgwire's test engine runs pg_sleep until cancelled.
		r.send(&pgproto3.Query{String: "select pg_sleep(600)"})
		time.Sleep(50 * time.Millisecond)
		r.send(&pgproto3.Terminate{})
		if closeSocket {
			r.nc.Close()
		}
		waitConns(t, h.srv, 0)
	}
	// Pipelined behind a statement, Terminate cancels it too.
	r, _ := connect(t, h.addr, nil)
	r.send(&pgproto3.Query{String: "select pg_sleep(600)"}, &pgproto3.Query{String: "select 1"}, &pgproto3.Terminate{})
	waitConns(t, h.srv, 0)
}

// TestClosedSocketCancelsTheRunningStatement: a client that vanishes
// without Terminate is noticed by the reader while its statement runs.
func TestClosedSocketCancelsTheRunningStatement(t *testing.T) {
	h := start(t, nil)
	r, _ := connect(t, h.addr, nil)
	r.send(&pgproto3.Query{String: "select pg_sleep(600)"})
	time.Sleep(50 * time.Millisecond)
	r.nc.Close()
	waitConns(t, h.srv, 0)
}

// TestStopCancelsAndEndsEverySession: Stop cancels a running statement,
// ends an idle transaction and a session whose client does not read, and
// returns once they are all gone; every client that reads is told why.
func TestStopCancelsAndEndsEverySession(t *testing.T) {
	h := start(t, nil)
	pgwire.SetWriteGraces(h.srv, 10*time.Second, 200*time.Millisecond)
	busy, _ := connect(t, h.addr, nil)
	busy.send(&pgproto3.Query{String: "select pg_sleep(600)"})
	inTx, _ := connect(t, h.addr, nil)
	require.Equal(t, []string{"C BEGIN", "Z T"}, inTx.query("begin"))
	deaf, _ := connect(t, h.addr, nil)
	deaf.send(&pgproto3.Query{String: "select generate_series(1, 1000000000)"})
	time.Sleep(100 * time.Millisecond)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, h.srv.Stop(ctx))
	require.Equal(t, 0, h.srv.ConnCount())
	got := busy.readToClose()
	require.Equal(t, []string{"T pg_sleep:25/-1/-1/0", "E FATAL 57P01 terminating connection due to administrator command"}, got)
	require.Equal(t, []string{"E FATAL 57P01 terminating connection due to administrator command"}, inTx.readToClose())
}

// TestIdleSessionSettings: idle_in_transaction_session_timeout and
// idle_session_timeout, set by the session, end it with Postgres' FATAL
// once it has waited that long for the client after ReadyForQuery in the
// matching transaction state; a statement that runs longer is not idle.
func TestIdleSessionSettings(t *testing.T) {
	h := start(t, nil)
	r, _ := connect(t, h.addr, nil)
	r.query("set idle_in_transaction_session_timeout = '150ms'")
	time.Sleep(400 * time.Millisecond)
	// Outside a block it does not apply.
	require.Equal(t, []string{"C BEGIN", "Z T"}, r.query("begin"))
	require.Equal(t, []string{"T pg_sleep:25/-1/-1/0", "D NULL", "C SELECT 1", "Z T"}, r.query("select pg_sleep(0.4)"))
	require.Equal(t, []string{"E FATAL 25P03 terminating connection due to idle-in-transaction timeout"}, r.readToClose())

	r2, _ := connect(t, h.addr, nil)
	r2.query("set idle_session_timeout = 150")
	require.Equal(t, []string{"E FATAL 57P05 terminating connection due to idle-session timeout"}, r2.readToClose())

	// In a block, only the in-transaction one counts.
	r3, _ := connect(t, h.addr, map[string]string{"user": "u", "database": "asofsql", "idle_session_timeout": "100"})
	r3.query("begin")
	time.Sleep(300 * time.Millisecond)
	require.Equal(t, []string{"C COMMIT", "Z I"}, r3.query("commit"))
	require.Equal(t, []string{"E FATAL 57P05 terminating connection due to idle-session timeout"}, r3.readToClose())
	waitConns(t, h.srv, 0)
}

// TestDeclaredLengthCostsNothing: a message's buffer grows with the bytes
// that arrive, not with the length the client declares, so connections
// that each announce a 60 MiB message and send a few bytes do not make
// the server allocate gigabytes.
func TestDeclaredLengthCostsNothing(t *testing.T) {
	h := start(t, nil)
	const conns, declared = 20, 60 << 20
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var clients []*raw
	for range conns {
		r, _ := connect(t, h.addr, nil)
		_, err := r.nc.Write(frameBytes('Q', declared, []byte("select ")))
		require.NoError(t, err)
		clients = append(clients, r)
	}
	time.Sleep(200 * time.Millisecond) // let every reader take its bytes
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	require.Less(t, int64(after.TotalAlloc-before.TotalAlloc), int64(declared),
		"bytes allocated for %d messages that declared %d bytes each", conns, declared)
	for _, r := range clients {
		r.nc.Close()
	}
	waitConns(t, h.srv, 0)
}

// TestHangupNoticedBehindAFullQueue: a client that queues more than the
// read-ahead limit of statements behind a long one and hangs up leaves
// the reader waiting for room, not reading; the server still notices the
// hang-up (Linux) and cancels, instead of running what was queued.
func TestHangupNoticedBehindAFullQueue(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the hang-up check needs POLLRDHUP")
	}
	h := start(t, nil)
	r, _ := connect(t, h.addr, nil)
	pad := "-- " + strings.Repeat("x", 64<<10-100) + "\n"
	msgs := []pgproto3.FrontendMessage{&pgproto3.Query{String: "select pg_sleep(600)"}}
	for range 17 { // 17 x 64 KiB: one past the 1 MiB read-ahead
		msgs = append(msgs, &pgproto3.Query{String: pad + "select pg_sleep(600)"})
	}
	r.send(msgs...)
	time.Sleep(200 * time.Millisecond)
	r.nc.Close()
	waitConns(t, h.srv, 0)
}
