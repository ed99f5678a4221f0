package flightsql_test

import (
	"context"
	"log/slog"
	"net"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	afsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/flightsql"
	"github.com/asofsql/asofsql/sqlerr"
)

// env is a database served over Flight SQL on a loopback port.
type env struct {
	db   *asofsql.DB
	mem  *memory.CheckedAllocator
	addr string
	srv  *flightsql.Server
}

// newEnv opens an in-memory database with a checked allocator and serves
// it; everything stops (and the allocator must be back to zero) when t
// ends.
func newEnv(t testing.TB, cfg flightsql.Config) *env {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	db, err := asofsql.Open(":memory:", asofsql.WithAllocator(mem))
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, db.Close())
		settle(mem)
		mem.AssertSize(t, 0)
	})
	if cfg.Logger == nil && os.Getenv("FLIGHT_LOG") != "" {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if cfg.Allocator == nil {
		cfg.Allocator = mem
	}
	e := &env{db: db, mem: mem}
	e.addr, e.srv = serve(t, db, cfg)
	return e
}

// settle waits (at most 5 s) for mem to come back to zero, running the
// garbage collector: a result frame gRPC dropped without freeing it (a
// stream cancelled while the frame was being queued) gives its batch back
// when it is collected (codec.go).
func settle(mem *memory.CheckedAllocator) {
	for wait := 0; wait < 250 && mem.CurrentAlloc() != 0; wait++ {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
}

func serve(t testing.TB, db *asofsql.DB, cfg flightsql.Config) (string, *flightsql.Server) {
	t.Helper()
	srv, err := flightsql.New(db, cfg)
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, srv.Shutdown(ctx))
		require.ErrorIs(t, <-served, flightsql.ErrServerClosed)
	})
	return l.Addr().String(), srv
}

// client connects arrow-go's Flight SQL client (plain, no credentials
// unless opts say otherwise).
func (e *env) client(t testing.TB, opts ...grpc.DialOption) *afsql.Client {
	t.Helper()
	if len(opts) == 0 {
		opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	c, err := afsql.NewClient(e.addr, nil, nil, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// fetch reads every endpoint of info in order and returns the batches
// (the caller releases them) and the stream's schema.
func fetch(ctx context.Context, t testing.TB, c *afsql.Client, info *flight.FlightInfo) (*arrow.Schema, []arrow.RecordBatch, error) {
	t.Helper()
	var out []arrow.RecordBatch
	var schema *arrow.Schema
	for _, ep := range info.Endpoint {
		rdr, err := c.DoGet(ctx, ep.Ticket)
		if err != nil {
			return nil, out, err
		}
		schema = rdr.Schema()
		for rdr.Next() {
			b := rdr.RecordBatch()
			b.Retain()
			out = append(out, b)
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil {
			return schema, out, err
		}
	}
	return schema, out, nil
}

func release(bs []arrow.RecordBatch) {
	for _, b := range bs {
		b.Release()
	}
}

// query runs sql and returns its rows as strings (ValueStr per column).
func query(t testing.TB, c *afsql.Client, sql string) [][]string {
	t.Helper()
	ctx := context.Background()
	info, err := c.Execute(ctx, sql)
	require.NoError(t, err)
	_, bs, err := fetch(ctx, t, c, info)
	defer release(bs)
	require.NoError(t, err)
	var rows [][]string
	for _, b := range bs {
		for i := 0; i < int(b.NumRows()); i++ {
			row := make([]string, b.NumCols())
			for j, col := range b.Columns() {
				if col.IsNull(i) {
					row[j] = "NULL"
				} else {
					row[j] = col.ValueStr(i)
				}
			}
			rows = append(rows, row)
		}
	}
	return rows
}

func exec(t testing.TB, c *afsql.Client, sql string) int64 {
	t.Helper()
	n, err := c.ExecuteUpdate(context.Background(), sql)
	require.NoError(t, err, sql)
	return n
}

// requireState asserts that err carries the SQLSTATE code in its status.
func requireState(t testing.TB, err error, code string) *sqlerr.Error {
	t.Helper()
	require.Error(t, err)
	e, ok := flightsql.ErrorOf(err)
	require.True(t, ok, "no SQLSTATE in %v", err)
	require.Equal(t, code, e.Code, "%v", err)
	return e
}
