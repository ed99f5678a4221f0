package pgwire_test

import (
	"context"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/sqltypes"
)

// faultyEngine misbehaves on purpose: "mismatch" describes an int4 column
// but yields text, "panic" panics in Execute.
type faultyEngine struct{ mem memory.Allocator }

type faultySession struct{ mem memory.Allocator }

func (e faultyEngine) Connect(context.Context, pgwire.StartupInfo) (pgwire.Session, error) {
	return &faultySession{e.mem}, nil
}

func (s *faultySession) Query(_ context.Context, sql string) (pgwire.Batch, error) {
	return &faultyBatch{s: s, sql: sql}, nil
}
func (s *faultySession) Prepare(context.Context, string, []sqltypes.Type) (pgwire.Statement, error) {
	return nil, nil
}
func (s *faultySession) Sync(context.Context, bool) error { return nil }
func (s *faultySession) TxStatus() byte                   { return 'I' }
func (s *faultySession) Setting(string) (string, bool)    { return "", false }
func (s *faultySession) ValueOptions() *sqltypes.Options  { return nil }
func (s *faultySession) Close() error                     { return nil }

type faultyBatch struct {
	s    *faultySession
	sql  string
	done bool
}

func (b *faultyBatch) Next(context.Context) (pgwire.Statement, error) {
	if b.done {
		return nil, io.EOF
	}
	b.done = true
	return faultyStmt{b.s, b.sql}, nil
}
func (b *faultyBatch) Close() error { return nil }

type faultyStmt struct {
	s   *faultySession
	sql string
}

func (st faultyStmt) ParamTypes() []sqltypes.Type { return nil }
func (st faultyStmt) Columns() []pgwire.Column {
	return []pgwire.Column{{Name: "x", Type: sqltypes.Int4Type}}
}
func (st faultyStmt) Close() error { return nil }
func (st faultyStmt) Execute(context.Context, arrow.RecordBatch) (pgwire.Result, error) {
	if st.sql == "panic" {
		panic("engine bug")
	}
	return &faultyResult{mem: st.s.mem}, nil
}

type faultyResult struct {
	mem  memory.Allocator
	sent bool
}

func (r *faultyResult) Next(context.Context) (arrow.RecordBatch, error) {
	if r.sent {
		return nil, io.EOF
	}
	r.sent = true
	b := array.NewStringBuilder(r.mem)
	defer b.Release()
	b.Append("not an int")
	a := b.NewArray()
	defer a.Release()
	return array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.BinaryTypes.String}}, nil), []arrow.Array{a}, 1), nil
}
func (r *faultyResult) Tag(int64) string { return "SELECT" }
func (r *faultyResult) Close() error     { return nil }

func TestFaultyEngine(t *testing.T) {
	h := start(t, func(c *pgwire.Config) { c.Engine = faultyEngine{mem: c.Allocator} })
	r, _ := connect(t, h.addr, nil)
	require.Equal(t, []string{"T x:23/4/-1/0", `E ERROR XX000 result column "x" is utf8, the statement described integer (int32)`, "Z I"}, r.query("mismatch"))
	require.Equal(t, []string{"T x:23/4/-1/0", "E FATAL XX000 internal error: engine bug"}, r.query("panic"))
	require.Empty(t, r.readToClose())
}
