package flightsql_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	afsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/asofsql/asofsql/flightsql"
	"github.com/asofsql/asofsql/flightsql/flightclient"
)

// fastClient connects arrow-go's client with the dial options
// docs/clients.md recommends to Go clients (flightclient).
func (e *env) fastClient(t testing.TB) *afsql.Client {
	t.Helper()
	return e.client(t, append(flightclient.DialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
}

// TestFlightClientOptions: a client with flightclient's options receives
// exactly the batches a default client does (schema, every buffer's
// bytes), for results of many types over many frames and messages.
func TestFlightClientOptions(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	plain, fast := e.client(t), e.fastClient(t)
	exec(t, plain, partSQL)
	exec(t, plain, `CREATE TABLE wide (i BIGINT, s INT, t TEXT, f DOUBLE PRECISION, b BOOLEAN, n NUMERIC(12,3), d DATE, ts TIMESTAMP, tz TIMESTAMPTZ)`)
	exec(t, plain, `INSERT INTO wide SELECT g, CASE WHEN g % 7 = 0 THEN NULL ELSE g % 1000 END, repeat('x', (g % 40)::int) || g, g * 0.5,
		g % 3 = 0, (g % 100000) * 1.125, DATE '2024-01-01' + (g % 400)::int, TIMESTAMP '2024-01-01 00:00:00' + g * INTERVAL '1 second',
		TIMESTAMPTZ '2024-01-01 00:00:00+00' + g * INTERVAL '1 minute' FROM generate_series(1, 120000) AS g`)
	ctx := context.Background()
	queries := append([]string{`SELECT * FROM wide`, `SELECT t, i FROM wide WHERE i % 5 = 0`}, rowWiseQueries...)
	for _, q := range queries {
		t.Run(q, func(t *testing.T) {
			get := func(c *afsql.Client) (*arrow.Schema, []arrow.RecordBatch) {
				info, err := c.Execute(ctx, q)
				require.NoError(t, err)
				s, bs, err := fetch(ctx, t, c, info)
				require.NoError(t, err)
				return s, bs
			}
			ws, want := get(plain)
			defer release(want)
			gs, got := get(fast)
			defer release(got)
			require.True(t, ws.Equal(gs), "schemas differ:\n%s\n%s", ws, gs)
			require.Equal(t, len(want), len(got))
			for i := range want {
				require.True(t, array.RecordEqual(want[i], got[i]), "batch %d differs", i)
			}
		})
	}
}
