package pgwire_test

import (
	"context"
	"fmt"
	"net"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"

	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/pgwire/internal/memengine"
)

// A server on a loopback port in front of an engine, queried with pgx.
func Example() {
	eng := memengine.New(memory.DefaultAllocator)
	defer eng.Release()
	srv, err := pgwire.NewServer(pgwire.Config{Engine: eng})
	if err != nil {
		panic(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(l)
	defer srv.Shutdown(context.Background())

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, "postgres://me@"+l.Addr().String()+"/asofsql?sslmode=disable")
	if err != nil {
		panic(err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, "select $1::int8", 42).Scan(&n); err != nil {
		panic(err)
	}
	fmt.Println(n)
	fmt.Println(conn.PgConn().ParameterStatus("server_version"))
	// Output:
	// 42
	// 15.0 (asofsql 0.1)
}
