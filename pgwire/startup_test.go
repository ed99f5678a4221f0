package pgwire_test

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/pgwire/internal/memengine"
)

func TestStartupParameterStatus(t *testing.T) {
	h := start(t, nil)
	_, got := connect(t, h.addr, map[string]string{"user": "alice", "database": "asofsql", "application_name": "psql"})
	require.Equal(t, []string{
		"R ok",
		"S application_name=psql",
		"S client_encoding=UTF8",
		"S DateStyle=ISO, MDY",
		"S default_transaction_read_only=off",
		"S in_hot_standby=off",
		"S integer_datetimes=on",
		"S IntervalStyle=postgres",
		"S is_superuser=on",
		"S server_encoding=UTF8",
		"S server_version=15.0 (asofsql " + pgwire.Version + ")",
		"S session_authorization=alice",
		"S standard_conforming_strings=on",
		"S TimeZone=UTC",
		"K 1/4",
		"Z I",
	}, got)
}

func TestBackendKeysAreRandom(t *testing.T) {
	h := start(t, nil)
	keys := map[string]bool{}
	for range 4 {
		r := dialRaw(t, h.addr)
		r.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "u", "database": "asofsql"}})
		for {
			m, err := r.fe.Receive()
			require.NoError(t, err)
			if k, ok := m.(*pgproto3.BackendKeyData); ok {
				keys[string(k.SecretKey)] = true
			}
			if _, ok := m.(*pgproto3.ReadyForQuery); ok {
				break
			}
		}
	}
	require.Len(t, keys, 4)
}

// writeStartupCode sends an 8-byte SSLRequest/GSSENCRequest packet.
func writeStartupCode(t *testing.T, nc net.Conn, code uint32) byte {
	t.Helper()
	var b [8]byte
	binary.BigEndian.PutUint32(b[:], 8)
	binary.BigEndian.PutUint32(b[4:], code)
	_, err := nc.Write(b[:])
	require.NoError(t, err)
	var reply [1]byte
	_, err = io.ReadFull(nc, reply[:])
	require.NoError(t, err)
	return reply[0]
}

func TestSSLAndGSSRefusedThenStartup(t *testing.T) {
	h := start(t, nil)
	r := dialRaw(t, h.addr)
	require.Equal(t, byte('N'), writeStartupCode(t, r.nc, 80877104)) // GSSENC
	require.Equal(t, byte('N'), writeStartupCode(t, r.nc, 80877103)) // SSL
	r.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "u", "database": "asofsql"}})
	got := r.untilReady()
	require.Equal(t, "Z I", got[len(got)-1])
}

func TestEOFBeforeStartupIsQuiet(t *testing.T) {
	h := start(t, nil)
	// pgx's probe: SSLRequest, 'N', close.
	r := dialRaw(t, h.addr)
	require.Equal(t, byte('N'), writeStartupCode(t, r.nc, 80877103))
	r.nc.Close()
	r2 := dialRaw(t, h.addr)
	r2.nc.Close()
	require.Eventually(t, func() bool { return h.srv.ConnCount() == 0 }, 5*time.Second, 10*time.Millisecond)
}

func TestProtocol32NegotiatedDown(t *testing.T) {
	h := start(t, nil)
	r := dialRaw(t, h.addr)
	r.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion32, Parameters: map[string]string{"user": "u", "database": "asofsql", "_pq_.foo": "1"}})
	got := r.untilReady()
	require.Equal(t, "v 196608 [_pq_.foo]", got[0])
	require.Equal(t, "Z I", got[len(got)-1])
	require.Equal(t, []string{"T ?column?:23/4/-1/0", "D 1", "C SELECT 1", "Z I"}, r.query("select 1"))
}

func TestStartupFailures(t *testing.T) {
	h := start(t, nil)
	cases := []struct {
		name   string
		params map[string]string
		want   string
	}{
		{"unknown database", map[string]string{"user": "u", "database": "nosuchdb"}, `E FATAL 3D000 database "nosuchdb" does not exist`},
		{"database defaults to user", map[string]string{"user": "u"}, `E FATAL 3D000 database "u" does not exist`},
		{"no user", map[string]string{"database": "asofsql"}, "E FATAL 28000 no PostgreSQL user name specified in startup packet"},
		{"unknown setting", map[string]string{"user": "u", "database": "asofsql", "foo_bar": "1"}, `E FATAL 42704 unrecognized configuration parameter "foo_bar"`},
		{"bad DateStyle", map[string]string{"user": "u", "database": "asofsql", "DateStyle": "German"}, `E FATAL 0A000 DateStyle "German" is not supported`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, got := connect(t, h.addr, tc.params)
			require.Equal(t, tc.want, got[len(got)-1])
		})
	}
}

func TestStartupSettingsApply(t *testing.T) {
	h := start(t, nil)
	r, got := connect(t, h.addr, map[string]string{"user": "u", "database": "asofsql", "TimeZone": "Asia/Kolkata", "extra_float_digits": "2", "client_encoding": "UTF8"})
	require.Contains(t, got, "S TimeZone=Asia/Kolkata")
	require.Equal(t, []string{"T TimeZone:25/-1/-1/0", "D Asia/Kolkata", "C SHOW", "Z I"}, r.query("show timezone"))
	require.Equal(t, []string{"T timestamptz:1184/8/-1/0", "D 2024-01-02 08:34:05+05:30", "C SELECT 1", "Z I"},
		r.query("select '2024-01-02 03:04:05+00'::timestamptz"))
}

func TestMaxConnections(t *testing.T) {
	h := start(t, func(c *pgwire.Config) { c.MaxConnections = 2 })
	connect(t, h.addr, nil)
	r2, _ := connect(t, h.addr, nil)
	_, got := connect(t, h.addr, nil)
	require.Equal(t, []string{"E FATAL 53300 sorry, too many clients already"}, got)
	// A closed session frees its slot.
	r2.send(&pgproto3.Terminate{})
	require.Eventually(t, func() bool {
		_, got := connect(t, h.addr, nil)
		return got[len(got)-1] == "Z I"
	}, 5*time.Second, 20*time.Millisecond)
}

func TestIdleTimeout(t *testing.T) {
	h := start(t, func(c *pgwire.Config) { c.IdleTimeout = 100 * time.Millisecond })
	r, _ := connect(t, h.addr, nil)
	require.Equal(t, []string{"E FATAL 57P05 terminating connection due to idle-session timeout"}, r.recvN(1))
	_, err := r.fe.Receive()
	require.Error(t, err)
	r2, _ := connect(t, h.addr, nil)
	r2.query("begin")
	require.Equal(t, []string{"E FATAL 25P03 terminating connection due to idle-in-transaction timeout"}, r2.recvN(1))
}

func TestTrustRefusedOffLoopback(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	srv, err := pgwire.NewServer(pgwire.Config{Engine: memengine.New(mem)})
	require.NoError(t, err)
	l, err := net.Listen("tcp", "0.0.0.0:0")
	require.NoError(t, err)
	err = srv.Serve(l)
	require.ErrorContains(t, err, "trust authentication is only allowed on a loopback address")
	require.NoError(t, srv.Shutdown(context.Background()))
}

func TestGracefulShutdown(t *testing.T) {
	h := start(t, nil)
	idle, _ := connect(t, h.addr, nil)
	busy, _ := connect(t, h.addr, nil)
	busy.send(&pgproto3.Query{String: "select pg_sleep(0.3)"})
	time.Sleep(50 * time.Millisecond)
	done := make(chan error, 1)
	go func() { done <- h.srv.Shutdown(context.Background()) }()
	// The idle session is closed at once with 57P01...
	require.Equal(t, []string{"E FATAL 57P01 terminating connection due to administrator command"}, idle.recvN(1))
	// ...the running statement finishes first.
	require.Equal(t, []string{"T pg_sleep:25/-1/-1/0", "D NULL", "C SELECT 1", "Z I",
		"E FATAL 57P01 terminating connection due to administrator command"}, busy.recvN(5))
	require.NoError(t, <-done)
	_, err := net.Dial("tcp", h.addr)
	require.Error(t, err)
}

func TestForcedShutdownCancels(t *testing.T) {
	h := start(t, nil)
	busy, _ := connect(t, h.addr, nil)
	busy.send(&pgproto3.Query{String: "select pg_sleep(30)"})
	time.Sleep(50 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	require.ErrorIs(t, h.srv.Shutdown(ctx), context.DeadlineExceeded)
	require.Less(t, time.Since(start), 5*time.Second)
	got := busy.recvN(2)
	require.Equal(t, "T pg_sleep:25/-1/-1/0", got[0])
	require.Equal(t, "E FATAL 57P01 terminating connection due to administrator command", got[1])
}
