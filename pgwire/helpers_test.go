package pgwire_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/pgwire/internal/memengine"
	"github.com/asofsql/asofsql/sqltypes"
)

type harness struct {
	srv  *pgwire.Server
	addr string
	eng  *memengine.Engine
	mem  *memory.CheckedAllocator
}

// start runs a server on a loopback port over a memengine holding table t
// (id int4, name text, price numeric(10,2), created timestamptz; 3 rows).
// Cleanup shuts it down and checks that no Arrow memory and no goroutine
// is left behind.
func start(t testing.TB, mutate func(*pgwire.Config)) *harness {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return startOn(t, l, mutate)
}

// startOn is start on a listener of the caller's.
func startOn(t testing.TB, l net.Listener, mutate func(*pgwire.Config)) *harness {
	t.Helper()
	before := runtime.NumGoroutine()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	eng := memengine.New(mem)
	require.NoError(t, eng.AddTable("t", tSchema(), tBatch(mem)))
	cfg := pgwire.Config{Engine: eng, Allocator: mem}
	if mutate != nil {
		mutate(&cfg)
	}
	srv, err := pgwire.NewServer(cfg)
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	h := &harness{srv: srv, addr: l.Addr().String(), eng: eng, mem: mem}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		require.NoError(t, srv.Shutdown(ctx))
		require.ErrorIs(t, <-served, pgwire.ErrServerClosed)
		eng.Release()
		mem.AssertSize(t, 0)
		settleGoroutines(t, before)
	})
	return h
}

// settleGoroutines waits for the goroutine count to come back to its level
// before the test (clients' and servers' goroutines exit asynchronously).
func settleGoroutines(t testing.TB, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= before {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("goroutines leaked: %d before, %d after\n%s", before, n, buf)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func tSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		sqltypes.Int4Type.Field("id", false),
		sqltypes.TextType.Field("name", true),
		sqltypes.NumericType(10, 2).Field("price", true),
		sqltypes.TimestampTZType.Field("created", true),
	}, nil)
}

func tBatch(mem memory.Allocator) arrow.RecordBatch {
	schema := tSchema()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	rows := [][]string{
		{"1", "a", "1.50", "2024-01-02 03:04:05.123456+00"},
		{"2", "b", "-2.25", "2024-01-02 03:04:06+00"},
		{"3", "c", "", "2024-07-01 00:00:00+00"},
	}
	for _, r := range rows {
		for j, v := range r {
			ty, _ := sqltypes.FromField(schema.Field(j))
			if v == "" {
				b.Field(j).AppendNull()
				continue
			}
			if err := sqltypes.DecodeText(b.Field(j), ty, v, nil); err != nil {
				panic(err)
			}
		}
	}
	return b.NewRecordBatch()
}

// raw is a protocol-level client.
type raw struct {
	t  *testing.T
	nc net.Conn
	fe *pgproto3.Frontend
}

func dialRaw(t *testing.T, addr string) *raw {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	return &raw{t: t, nc: nc, fe: pgproto3.NewFrontend(nc, nc)}
}

// connect dials and completes the startup; it returns the startup replies.
func connect(t *testing.T, addr string, params map[string]string) (*raw, []string) {
	t.Helper()
	r := dialRaw(t, addr)
	if params == nil {
		params = map[string]string{"user": "alice", "database": "asofsql"}
	}
	r.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: params})
	require.NoError(t, r.fe.Flush())
	return r, r.untilReady()
}

func (r *raw) send(msgs ...pgproto3.FrontendMessage) {
	r.t.Helper()
	for _, m := range msgs {
		r.fe.Send(m)
	}
	require.NoError(r.t, r.fe.Flush())
}

// untilReady reads messages up to and including ReadyForQuery (or a FATAL
// error) and renders them compactly.
func (r *raw) untilReady() []string {
	r.t.Helper()
	var out []string
	for {
		m, err := r.fe.Receive()
		require.NoError(r.t, err, "after %v", out)
		out = append(out, render(m))
		switch m := m.(type) {
		case *pgproto3.ReadyForQuery:
			return out
		case *pgproto3.ErrorResponse:
			if m.Severity == "FATAL" {
				return out
			}
		}
	}
}

// recvN reads n messages.
func (r *raw) recvN(n int) []string {
	r.t.Helper()
	var out []string
	for range n {
		m, err := r.fe.Receive()
		require.NoError(r.t, err, "after %v", out)
		out = append(out, render(m))
	}
	return out
}

// query sends a simple Query and returns the replies.
func (r *raw) query(sql string) []string {
	r.t.Helper()
	r.send(&pgproto3.Query{String: sql})
	return r.untilReady()
}

func render(m pgproto3.BackendMessage) string {
	switch m := m.(type) {
	case *pgproto3.RowDescription:
		var parts []string
		for _, f := range m.Fields {
			parts = append(parts, fmt.Sprintf("%s:%d/%d/%d/%d", f.Name, f.DataTypeOID, f.DataTypeSize, f.TypeModifier, f.Format))
		}
		return "T " + strings.Join(parts, " ")
	case *pgproto3.DataRow:
		var parts []string
		for _, v := range m.Values {
			switch {
			case v == nil:
				parts = append(parts, "NULL")
			case isPrintable(v):
				parts = append(parts, string(v))
			default:
				parts = append(parts, "\\x"+hex.EncodeToString(v))
			}
		}
		return "D " + strings.Join(parts, "|")
	case *pgproto3.CommandComplete:
		return "C " + string(m.CommandTag)
	case *pgproto3.ReadyForQuery:
		return "Z " + string(m.TxStatus)
	case *pgproto3.ErrorResponse:
		return errString("E", m.Severity, m.Code, m.Message, m.Detail, m.Hint, m.Position)
	case *pgproto3.NoticeResponse:
		return errString("N", m.Severity, m.Code, m.Message, m.Detail, m.Hint, m.Position)
	case *pgproto3.ParameterStatus:
		return "S " + m.Name + "=" + m.Value
	case *pgproto3.ParameterDescription:
		return fmt.Sprintf("t %v", m.ParameterOIDs)
	case *pgproto3.BackendKeyData:
		return fmt.Sprintf("K %d/%d", m.ProcessID, len(m.SecretKey))
	case *pgproto3.AuthenticationOk:
		return "R ok"
	case *pgproto3.EmptyQueryResponse:
		return "I"
	case *pgproto3.ParseComplete:
		return "1"
	case *pgproto3.BindComplete:
		return "2"
	case *pgproto3.CloseComplete:
		return "3"
	case *pgproto3.NoData:
		return "n"
	case *pgproto3.PortalSuspended:
		return "s"
	case *pgproto3.NegotiateProtocolVersion:
		return fmt.Sprintf("v %d %v", m.NewestMinorProtocol, m.UnrecognizedOptions)
	case *pgproto3.CopyInResponse:
		return fmt.Sprintf("G %d %v", m.OverallFormat, m.ColumnFormatCodes)
	case *pgproto3.CopyOutResponse:
		return fmt.Sprintf("H %d %v", m.OverallFormat, m.ColumnFormatCodes)
	case *pgproto3.CopyData:
		return "d " + string(m.Data)
	case *pgproto3.CopyDone:
		return "c"
	}
	return fmt.Sprintf("%T", m)
}

func errString(kind, sev, code, msg, detail, hint string, pos int32) string {
	s := fmt.Sprintf("%s %s %s %s", kind, sev, code, msg)
	if detail != "" {
		s += " D=" + detail
	}
	if hint != "" {
		s += " H=" + hint
	}
	if pos != 0 {
		s += fmt.Sprintf(" P=%d", pos)
	}
	return s
}

func isPrintable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}
