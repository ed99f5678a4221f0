package pgwire_test

import (
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/pgwire"
)

// keyOf extracts the BackendKeyData from startup replies by reconnecting
// with a raw Frontend that keeps the message.
func connectWithKey(t *testing.T, addr string) (*raw, uint32, []byte) {
	t.Helper()
	r := dialRaw(t, addr)
	r.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "u", "database": "asofsql"}})
	var pid uint32
	var key []byte
	for {
		m, err := r.fe.Receive()
		require.NoError(t, err)
		if k, ok := m.(*pgproto3.BackendKeyData); ok {
			pid, key = k.ProcessID, append([]byte(nil), k.SecretKey...)
		}
		if _, ok := m.(*pgproto3.ReadyForQuery); ok {
			return r, pid, key
		}
	}
}

// sendCancel sends a CancelRequest on a new connection and checks the
// server closes it without a reply.
func sendCancel(t *testing.T, addr string, pid uint32, key []byte) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	b := make([]byte, 16)
	binary.BigEndian.PutUint32(b, 16)
	binary.BigEndian.PutUint32(b[4:], 80877102)
	binary.BigEndian.PutUint32(b[8:], pid)
	copy(b[12:], key)
	_, err = nc.Write(b)
	require.NoError(t, err)
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := nc.Read(make([]byte, 1))
	require.Equal(t, 0, n)
	require.ErrorIs(t, err, io.EOF)
}

func TestCancelRequest(t *testing.T) {
	h := start(t, nil)
	r, pid, key := connectWithKey(t, h.addr)
	r.send(&pgproto3.Query{String: "select pg_sleep(30)"})
	time.Sleep(50 * time.Millisecond)
	// A wrong key cancels nothing.
	bad := append([]byte(nil), key...)
	bad[0] ^= 0xff
	sendCancel(t, h.addr, pid, bad)
	sendCancel(t, h.addr, pid+1000, key)
	time.Sleep(50 * time.Millisecond)
	begin := time.Now()
	sendCancel(t, h.addr, pid, key)
	require.Equal(t, []string{"T pg_sleep:25/-1/-1/0", "E ERROR 57014 canceling statement due to user request", "Z I"}, r.untilReady())
	require.Less(t, time.Since(begin), 5*time.Second)
	// The session goes on.
	require.Equal(t, []string{"T ?column?:23/4/-1/0", "D 1", "C SELECT 1", "Z I"}, r.query("select 1"))
}

func TestStatementTimeout(t *testing.T) {
	h := start(t, func(c *pgwire.Config) { c.StatementTimeout = 100 * time.Millisecond })
	r, _ := connect(t, h.addr, nil)
	require.Equal(t, []string{"T pg_sleep:25/-1/-1/0", "E ERROR 57014 canceling statement due to statement timeout", "Z I"}, r.query("select pg_sleep(10)"))
}

func TestDeadClientCancelsQuery(t *testing.T) {
	h := start(t, nil)
	r, _ := connect(t, h.addr, nil)
	r.send(&pgproto3.Query{String: "select pg_sleep(30)"})
	time.Sleep(50 * time.Millisecond)
	r.nc.Close()
	// The session ends (its query cancelled) long before 30 s.
	require.Eventually(t, func() bool { return h.srv.ConnCount() == 0 }, 5*time.Second, 10*time.Millisecond)
}

func TestCopyFromStdin(t *testing.T) {
	h := start(t, nil)
	r, _ := connect(t, h.addr, nil)
	r.send(&pgproto3.Query{String: "copy t from stdin"})
	require.Equal(t, []string{"G 0 [0 0 0 0]"}, r.recvN(1))
	r.send(&pgproto3.CopyData{Data: []byte("10\tx\t1.25\t2024-01-01 00:00:00+00\n11\t")},
		&pgproto3.CopyData{Data: []byte("y\t\\N\t\\N\n")}, &pgproto3.CopyDone{})
	require.Equal(t, []string{"C COPY 2", "Z I"}, r.untilReady())
	require.Equal(t, int64(5), h.eng.Rows("t"))

	// CSV, and a bad row: the error names the line; nothing is kept.
	r.send(&pgproto3.Query{String: "copy t from stdin (format csv)"})
	require.Equal(t, []string{"G 0 [0 0 0 0]"}, r.recvN(1))
	r.send(&pgproto3.CopyData{Data: []byte("20,p,,\n21,q,zz,\n")}, &pgproto3.CopyDone{})
	got := r.untilReady()
	require.Len(t, got, 2)
	require.True(t, strings.HasPrefix(got[0], `E ERROR 22P02 invalid input syntax for type numeric: "zz"`), got[0])
	require.Equal(t, "Z I", got[1])
	require.Equal(t, int64(5), h.eng.Rows("t"))

	// CopyFail from the client.
	r.send(&pgproto3.Query{String: "copy t from stdin"})
	r.recvN(1)
	r.send(&pgproto3.CopyData{Data: []byte("30\tz\t\\N\t\\N\n")}, &pgproto3.CopyFail{Message: "changed my mind"})
	require.Equal(t, []string{"E ERROR 57014 COPY from stdin failed: changed my mind", "Z I"}, r.untilReady())
	require.Equal(t, int64(5), h.eng.Rows("t"))

	// COPY inside a transaction becomes visible at COMMIT only.
	require.Equal(t, []string{"C BEGIN", "Z T"}, r.query("begin"))
	r.send(&pgproto3.Query{String: "copy t from stdin"})
	r.recvN(1)
	r.send(&pgproto3.CopyData{Data: []byte("40\tw\t\\N\t\\N\n\\.\n")}, &pgproto3.CopyDone{})
	require.Equal(t, []string{"C COPY 1", "Z T"}, r.untilReady())
	require.Equal(t, int64(5), h.eng.Rows("t"))
	require.Equal(t, []string{"C COMMIT", "Z I"}, r.query("commit"))
	require.Equal(t, int64(6), h.eng.Rows("t"))

	// COPY through the extended protocol.
	r.send(&pgproto3.Parse{Query: "copy t from stdin"}, &pgproto3.Bind{}, &pgproto3.Execute{})
	r.send(&pgproto3.Sync{}) // ignored during COPY IN
	require.Equal(t, []string{"1", "2", "G 0 [0 0 0 0]"}, r.recvN(3))
	r.send(&pgproto3.CopyData{Data: []byte("50\tv\t\\N\t\\N\n")}, &pgproto3.CopyDone{}, &pgproto3.Sync{})
	require.Equal(t, []string{"C COPY 1", "Z I"}, r.untilReady())
	require.Equal(t, int64(7), h.eng.Rows("t"))
}

func TestCopyToStdout(t *testing.T) {
	h := start(t, nil)
	r, _ := connect(t, h.addr, nil)
	require.Equal(t, []string{
		"H 0 [0 0 0 0]",
		"d 1\ta\t1.50\t2024-01-02 03:04:05.123456+00\n2\tb\t-2.25\t2024-01-02 03:04:06+00\n3\tc\t\\N\t2024-07-01 00:00:00+00\n",
		"c", "C COPY 3", "Z I"}, r.query("copy t to stdout"))
}

func TestSessionStatementTimeout(t *testing.T) {
	h := start(t, nil)
	r, _ := connect(t, h.addr, nil)
	require.Equal(t, []string{"C SET", "Z I"}, r.query("set statement_timeout = '100ms'"))
	require.Equal(t, []string{"T pg_sleep:25/-1/-1/0", "E ERROR 57014 canceling statement due to statement timeout", "Z I"}, r.query("select pg_sleep(10)"))
	require.Equal(t, []string{"C SET", "Z I"}, r.query("set statement_timeout = 0"))
	require.Equal(t, []string{"T pg_sleep:25/-1/-1/0", "D NULL", "C SELECT 1", "Z I"}, r.query("select pg_sleep(0.2)"))
}

func TestParseDuration(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"0", 0, true}, {"250", 250 * time.Millisecond, true}, {"5s", 5 * time.Second, true},
		{"1.5 min", 90 * time.Second, true}, {"10us", 10 * time.Microsecond, true}, {"2h", 2 * time.Hour, true},
		{"", 0, false}, {"5 parsecs", 0, false}, {"-1", 0, false}, {"1e300d", 0, false},
	}
	for _, tc := range cases {
		got, ok := pgwire.ParseDuration(tc.in)
		require.Equal(t, tc.ok, ok, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}
