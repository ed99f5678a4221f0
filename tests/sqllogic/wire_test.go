package sqllogic

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/server"
	"github.com/stretchr/testify/require"
)

func init() { wireServer = startWire }

// startWire serves db with the real pgwire server on a loopback port
// (trust authentication, which pgwire allows on loopback only) and
// returns a DSN for pgx; the server shuts down when t ends, before the
// database is closed (cleanups run last-registered first).
func startWire(t testing.TB, db *asofsql.DB) string {
	srv, err := server.New(db, pgwire.Config{})
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, srv.Shutdown(ctx))
		require.ErrorIs(t, <-served, pgwire.ErrServerClosed)
	})
	return "postgres://slt@" + l.Addr().String() + "/asofsql?sslmode=disable"
}
