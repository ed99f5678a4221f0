package pgwire_test

import (
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/pgwire"
)

// frameBytes builds a typed message with an explicit length field.
func frameBytes(typ byte, length int32, body []byte) []byte {
	b := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(length))
	return append(b, body...)
}

// readToClose reads rendered messages until the server closes.
func (r *raw) readToClose() []string {
	r.t.Helper()
	var out []string
	for {
		m, err := r.fe.Receive()
		if err != nil {
			return out
		}
		out = append(out, render(m))
	}
}

func TestMalformedMessages(t *testing.T) {
	h := start(t, func(c *pgwire.Config) { c.MaxMessageSize = 1 << 16 })
	cases := []struct {
		name  string
		bytes []byte
		want  []string
	}{
		{"unknown type", frameBytes('@', 4, nil), []string{"E FATAL 08P01 invalid frontend message type 64"}},
		{"negative length", frameBytes('Q', -5, nil), []string{"E FATAL 08P01 invalid message length"}},
		{"length below 4", frameBytes('Q', 2, nil), []string{"E FATAL 08P01 invalid message length"}},
		{"oversized", frameBytes('Q', 1<<20, nil), []string{"E FATAL 08P01 invalid message length D=message of 1048572 bytes exceeds the limit of 65536 bytes"}},
		{"query without terminator", frameBytes('Q', 7, []byte("sel")), []string{"E FATAL 08P01 invalid message format"}},
		{"bind truncated", frameBytes('B', 6, []byte{0, 0}), []string{"E FATAL 08P01 invalid message format"}},
		{"describe bad subtype", frameBytes('D', 6, []byte{'X', 0}), []string{"E ERROR 08P01 invalid DESCRIBE message subtype 88"}},
		{"close bad subtype", frameBytes('C', 6, []byte{'X', 0}), []string{"E ERROR 08P01 invalid CLOSE message subtype 88"}},
		{"truncated body then EOF", frameBytes('Q', 100, []byte("select")), nil},
		{"function call", frameBytes('F', 4, nil), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := connect(t, h.addr, nil)
			_, err := r.nc.Write(tc.bytes)
			require.NoError(t, err)
			if tc.name == "truncated body then EOF" || tc.name == "function call" {
				if tc.name == "truncated body then EOF" {
					r.nc.(interface{ CloseWrite() error }).CloseWrite()
				} else {
					require.Equal(t, []string{"E ERROR 0A000 the function call protocol is not supported", "Z I"}, r.untilReady())
					return
				}
				require.Empty(t, r.readToClose())
				return
			}
			got := r.recvN(len(tc.want))
			require.Equal(t, tc.want, got)
			if len(tc.want) > 0 && tc.want[0][:7] == "E ERROR" {
				// A non-fatal error: skip to Sync, and the session lives.
				require.Equal(t, []string{"Z I"}, r.ext())
				require.Equal(t, []string{"T ?column?:23/4/-1/0", "D 1", "C SELECT 1", "Z I"}, r.query("select 1"))
				return
			}
			require.Empty(t, r.readToClose())
		})
	}
	require.Eventually(t, func() bool { return h.srv.ConnCount() == 0 }, 5*time.Second, 10*time.Millisecond)
}

func TestMalformedStartup(t *testing.T) {
	h := start(t, nil)
	cases := []struct {
		name  string
		bytes []byte
		want  string
	}{
		{"too short", []byte{0, 0, 0, 4}, "E FATAL 08P01 invalid length of startup packet"},
		{"too long", []byte{0, 1, 0, 0, 0, 3, 0, 0}, "E FATAL 08P01 invalid length of startup packet"},
		{"protocol 2", []byte{0, 0, 0, 8, 0, 2, 0, 0}, "E FATAL 0A000 unsupported frontend protocol 2.0: server supports 3.0 to 3.0"},
		{"unterminated parameters", []byte{0, 0, 0, 12, 0, 3, 0, 0, 'u', 's', 'e', 'r'}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := dialRaw(t, h.addr)
			_, err := r.nc.Write(tc.bytes)
			require.NoError(t, err)
			got := r.readToClose()
			if tc.want == "" {
				require.Len(t, got, 1)
				require.Contains(t, got[0], "E FATAL 08P01 invalid startup packet layout")
				return
			}
			require.Equal(t, []string{tc.want}, got)
		})
	}
	// A startup message cut short by EOF.
	r := dialRaw(t, h.addr)
	_, err := r.nc.Write([]byte{0, 0, 0, 40, 0, 3})
	require.NoError(t, err)
	r.nc.(interface{ CloseWrite() error }).CloseWrite()
	require.Equal(t, []string{"E FATAL 08P01 incomplete startup packet"}, r.readToClose())
}

func TestOutOfOrderMessages(t *testing.T) {
	h := start(t, nil)
	r, _ := connect(t, h.addr, nil)
	// Execute and Describe before any Parse/Bind; CopyData/CopyDone
	// outside COPY are dropped as Postgres does.
	r.send(&pgproto3.CopyData{Data: []byte("junk")}, &pgproto3.CopyDone{})
	require.Equal(t, []string{`E ERROR 34000 portal "" does not exist`, "Z I"}, r.ext(&pgproto3.Execute{}))
	require.Equal(t, []string{`E ERROR 26000 unnamed prepared statement does not exist`, "Z I"}, r.ext(&pgproto3.Bind{}))
	// A Sync with nothing before it is just ReadyForQuery.
	require.Equal(t, []string{"Z I"}, r.ext())
	// Startup message again, mid-session: not a valid typed message.
	_, err := r.nc.Write([]byte{0, 0, 0, 8, 0, 3, 0, 0})
	require.NoError(t, err)
	require.Equal(t, []string{"E FATAL 08P01 invalid frontend message type 0"}, r.readToClose())
}

func TestTerminate(t *testing.T) {
	h := start(t, nil)
	r, _ := connect(t, h.addr, nil)
	r.send(&pgproto3.Terminate{})
	_, err := r.fe.Receive()
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.Eventually(t, func() bool { return h.srv.ConnCount() == 0 }, 5*time.Second, 10*time.Millisecond)
}
