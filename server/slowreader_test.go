package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/pgwire"
)

// TestHostileSlowReader: the rows the server has encoded for a client and
// not yet written to its socket count against the query's memory_limit.
// A single 12 MB value under a 24 MB limit is refused with 53200 before it
// is encoded (the value, in a 16 MB Arrow buffer, and its encoding would take 28 MB), and a client
// that sends a 300 MB result and never reads blocks its query on the
// socket with the server's memory bounded, while other sessions are
// served; closing the socket ends the query.
func TestHostileSlowReader(t *testing.T) {
	const limit = 24 << 20
	addr, srv := startServer(t, pgwire.Config{}, asofsql.WithMemoryLimit(limit))
	by := dial(t, addr, pgx.QueryExecModeSimpleProtocol)
	watch := watchMemory(t)

	w := connectWire(t, addr)
	w.send(&pgproto3.Query{String: "SELECT repeat('x', 12000000)"})
	got := w.untilReady()
	require.Len(t, got, 3, "%v", got)
	require.Equal(t, "T", got[0])
	require.True(t, strings.HasPrefix(got[1], "E ERROR 53200 out of memory"), "%v", got)
	w.clean("a 12 MB value", got)
	// The extended protocol goes through the same path.
	w.send(&pgproto3.Parse{Query: "SELECT repeat('y', 12000000)"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	got = w.untilReady()
	require.Contains(t, strings.Join(got, "\n"), "E ERROR 53200 out of memory", "%v", got)
	// Under the limit it goes out.
	w.send(&pgproto3.Query{String: "SELECT length(repeat('x', 5000000)), repeat('z', 5000000)"})
	got = w.untilReady()
	require.Equal(t, []string{"T", "D 5000000|" + strings.Repeat("z", 40), "C SELECT 1", "Z I"}, got)

	// A client that never reads: the query blocks on the socket.
	r := connectWire(t, addr)
	r.send(&pgproto3.Query{String: "SELECT repeat('x', 1000) FROM generate_series(1, 300000)"})
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) {
		require.Equal(t, []string{"1000"}, rows(t, by, `SELECT count(*) FROM generate_series(1, 1000)`), "another session while one never reads")
		time.Sleep(100 * time.Millisecond)
	}
	watch.check(t, limit)
	r.nc.Close()
	require.Eventually(t, func() bool { return srv.ConnCount() == 2 }, 20*time.Second, 10*time.Millisecond,
		"the non-reading client's session ended: %d connections open", srv.ConnCount())
	require.Equal(t, []string{"1000"}, rows(t, by, `SELECT count(*) FROM generate_series(1, 1000)`))
}
