package flightsql_test

import (
	"context"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	afsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/asofsql/asofsql/flightsql"
)

func anyBytes(t testing.TB, m proto.Message) []byte {
	t.Helper()
	a, err := anypb.New(m)
	require.NoError(t, err)
	b, err := proto.Marshal(a)
	require.NoError(t, err)
	return b
}

// doAction runs an action and reads its results to the end.
func doAction(ctx context.Context, c *afsql.Client, typ string, body []byte) error {
	s, err := c.Client.DoAction(ctx, &flight.Action{Type: typ, Body: body})
	if err != nil {
		return err
	}
	for {
		if _, err := s.Recv(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// TestMalformedRequests: requests that do not decode, or name things
// that are not there, are errors with a SQLSTATE; the server keeps
// serving.
func TestMalformedRequests(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	c := e.client(t)
	ctx := context.Background()

	_, err := c.Client.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte("garbage")})
	requireState(t, err, "08P01")
	_, err = c.Client.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"x"}})
	requireState(t, err, "08P01")

	get := func(ticket []byte) error {
		_, bs, err := fetch(ctx, t, c, &flight.FlightInfo{Endpoint: []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: ticket}}}})
		release(bs)
		return err
	}
	requireState(t, get([]byte("garbage")), "08P01")
	requireState(t, get(anyBytes(t, &pb.TicketStatementQuery{StatementHandle: []byte("asof\x01short")})), "08P01")
	requireState(t, get(anyBytes(t, &pb.TicketStatementQuery{StatementHandle: append([]byte("asof\x01"), make([]byte, 17)...)})), "34000")

	requireState(t, doAction(ctx, c, "NoSuchAction", nil), "08P01")
	requireState(t, doAction(ctx, c, afsql.CreatePreparedStatementActionType, []byte("garbage")), "08P01")
	requireState(t, doAction(ctx, c, afsql.ClosePreparedStatementActionType,
		anyBytes(t, &pb.ActionClosePreparedStatementRequest{PreparedStatementHandle: []byte("nope")})), "08P01")
	requireState(t, doAction(ctx, c, afsql.EndTransactionActionType,
		anyBytes(t, &pb.ActionEndTransactionRequest{TransactionId: []byte("nope"), Action: pb.ActionEndTransactionRequest_END_TRANSACTION_COMMIT})), "25P01")
	requireState(t, doAction(ctx, c, flight.CancelFlightInfoActionType, []byte{0xff}), "08P01")
	cancelBody, err := proto.Marshal(&flight.CancelFlightInfoRequest{Info: &flight.FlightInfo{}})
	require.NoError(t, err)
	requireState(t, doAction(ctx, c, flight.CancelFlightInfoActionType, cancelBody), "08P01")

	// A DoPut whose first message carries no command.
	put, err := c.Client.DoPut(ctx)
	require.NoError(t, err)
	require.NoError(t, put.Send(&flight.FlightData{DataHeader: []byte("garbage")}))
	require.NoError(t, put.CloseSend())
	_, err = put.Recv()
	requireState(t, err, "08P01")

	// Random bytes everywhere a client sends bytes.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		junk := make([]byte, rng.IntN(64))
		for i := range junk {
			junk[i] = byte(rng.IntN(256))
		}
		if _, err := c.Client.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: junk}); err != nil {
			_, ok := flightsql.ErrorOf(err)
			require.True(t, ok, "%v", err)
		}
		if err := get(junk); err != nil {
			_, ok := flightsql.ErrorOf(err)
			require.True(t, ok, "%v", err)
		}
		for _, typ := range []string{afsql.CreatePreparedStatementActionType, afsql.BeginTransactionActionType, flight.RenewFlightEndpointActionType, flight.SetSessionOptionsActionType} {
			if err := doAction(ctx, c, typ, junk); err != nil {
				_, ok := flightsql.ErrorOf(err)
				require.True(t, ok, "%v", err)
			}
		}
	}
	require.Equal(t, [][]string{{"1"}}, query(t, c, `SELECT 1`))
}
