package sqllogic

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/flightsql"
)

func init() { flightServer = startFlight }

// startFlight serves db with the Flight SQL server on a loopback port
// (trust, allowed on loopback only); it shuts down when t ends, before
// the database is closed.
func startFlight(t testing.TB, db *asofsql.DB) string {
	srv, err := flightsql.New(db, flightsql.Config{})
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
	return l.Addr().String()
}
