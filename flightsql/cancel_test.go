package flightsql_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/asofsql/asofsql/flightsql"
)

// bigQuery returns 2M rows of three bigints: 48 MB of Arrow data, more
// than gRPC's flow-control window (at most 16 MiB) and the sockets'
// buffers together, so a cancelled query is still running.
const bigQuery = `SELECT g, g * 2 AS h, g * 3 AS i FROM generate_series(1, 2000000) g`

// TestSlowReader: a client that stops reading holds the query back: while
// it waits the query is suspended (it still holds its current batch) and
// the server's memory stays at a few batches, far below the result's
// size; the stream completes when the client reads on.
func TestSlowReader(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	// A client with a fixed 64 KiB flow-control window (no BDP growth), so
	// that a modest result outgrows what the window and the sockets hold.
	c := e.client(t, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
	ctx := context.Background()
	info, err := c.Execute(ctx, `SELECT g, g * 2 AS h, g * 3 AS i FROM generate_series(1, 1000000) g`)
	require.NoError(t, err)
	rdr, err := c.DoGet(ctx, info.Endpoint[0].Ticket)
	require.NoError(t, err)
	defer rdr.Release()
	require.True(t, rdr.Next())
	rows := rdr.RecordBatch().NumRows()
	// Stall until the server is blocked: its memory stops moving (and is
	// not zero: the query still holds the batch it is trying to send).
	peak, last, still := 0, -1, 0
	require.Eventually(t, func() bool {
		m := e.mem.CurrentAlloc()
		peak = max(peak, m)
		if m == last && m > 0 {
			still++
		} else {
			still = 0
		}
		last = m
		return still >= 10
	}, 30*time.Second, 20*time.Millisecond, "the server did not settle while the client stalled")
	require.Less(t, peak, 8<<20, "server memory while the client stalls")
	for rdr.Next() {
		rows += rdr.RecordBatch().NumRows()
	}
	require.NoError(t, rdr.Err())
	require.EqualValues(t, 1_000_000, rows)
}

// TestCancelMidStream: a client that cancels its DoGet's context stops
// the query; the server releases everything.
func TestCancelMidStream(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	c := e.client(t)
	ctx, cancel := context.WithCancel(context.Background())
	info, err := c.Execute(ctx, bigQuery)
	require.NoError(t, err)
	rdr, err := c.DoGet(ctx, info.Endpoint[0].Ticket)
	require.NoError(t, err)
	require.True(t, rdr.Next())
	cancel()
	for rdr.Next() {
	}
	require.Error(t, rdr.Err())
	rdr.Release()
	// A frame gRPC dropped for the reset stream is released when it is
	// collected (codec.go), hence the collector in the loop.
	require.Eventually(t, func() bool { runtime.GC(); return e.mem.CurrentAlloc() == 0 }, 10*time.Second, 5*time.Millisecond,
		"the cancelled query still holds memory")
}

// TestCancelFlightInfo: cancelling before the DoGet drops the result;
// cancelling during it ends the stream with 57014.
func TestCancelFlightInfo(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	c := e.client(t)
	ctx := context.Background()

	info, err := c.Execute(ctx, bigQuery)
	require.NoError(t, err)
	res, err := c.CancelFlightInfo(ctx, &flight.CancelFlightInfoRequest{Info: info})
	require.NoError(t, err)
	require.Equal(t, flight.CancelStatusCancelled, res.Status)
	_, bs, err := fetch(ctx, t, c, info)
	release(bs)
	requireState(t, err, "34000")
	res, err = c.CancelFlightInfo(ctx, &flight.CancelFlightInfoRequest{Info: info})
	require.NoError(t, err)
	require.Equal(t, flight.CancelStatusNotCancellable, res.Status)

	info, err = c.Execute(ctx, bigQuery)
	require.NoError(t, err)
	rdr, err := c.DoGet(ctx, info.Endpoint[0].Ticket)
	require.NoError(t, err)
	defer rdr.Release()
	require.True(t, rdr.Next())
	res, err = c.CancelFlightInfo(ctx, &flight.CancelFlightInfoRequest{Info: info})
	require.NoError(t, err)
	require.Equal(t, flight.CancelStatusCancelled, res.Status)
	for rdr.Next() {
	}
	requireState(t, rdr.Err(), "57014")
	require.Equal(t, codes.Canceled, status.Code(rdr.Err()))

	// The deprecated CancelQuery action answers the same way.
	info, err = c.Execute(ctx, `SELECT 1`)
	require.NoError(t, err)
	cr, err := c.CancelQuery(ctx, info)
	require.NoError(t, err)
	require.EqualValues(t, 1, cr) // CANCEL_RESULT_CANCELLED
}

// TestResultExpires: a result nobody fetches is dropped at its expiration
// time; RenewFlightEndpoint pushes it back.
func TestResultExpires(t *testing.T) {
	e := newEnv(t, flightsql.Config{ResultTTL: 300 * time.Millisecond})
	c := e.client(t)
	ctx := context.Background()
	info, err := c.Execute(ctx, `SELECT 1`)
	require.NoError(t, err)
	ep := info.Endpoint[0]
	require.WithinDuration(t, time.Now().Add(300*time.Millisecond), ep.ExpirationTime.AsTime(), 250*time.Millisecond)
	renewed, err := c.RenewFlightEndpoint(ctx, &flight.RenewFlightEndpointRequest{Endpoint: ep})
	require.NoError(t, err)
	require.True(t, !renewed.ExpirationTime.AsTime().Before(ep.ExpirationTime.AsTime()))
	// Well past the expiration time (the server's timer has fired), the
	// result is gone.
	time.Sleep(time.Until(renewed.ExpirationTime.AsTime()) + time.Second)
	_, bs, err := fetch(ctx, t, c, info)
	release(bs)
	requireState(t, err, "34000")
}
