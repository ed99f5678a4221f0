package pgwire_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/pgwire"
)

// TestBackpressure: a client that does not read stalls the query instead of
// letting the server buffer the result.
func TestBackpressure(t *testing.T) {
	h := start(t, nil)
	r, _ := connect(t, h.addr, nil)
	r.send(&pgproto3.Query{String: "select generate_series(1, 10000000)"})
	// The whole result is 2442 batches (80 MB); the query must stall once
	// the socket buffers are full, with only a batch in flight.
	var produced int64
	stalled := false
	for range 50 {
		produced = h.eng.Produced.Load()
		time.Sleep(200 * time.Millisecond)
		if h.eng.Produced.Load() == produced && produced > 0 {
			stalled = true
			break
		}
	}
	require.True(t, stalled, "the query kept running while the client read nothing")
	require.Less(t, produced, int64(500))
	require.Less(t, h.mem.CurrentAlloc(), 1<<20)
	// Reading resumes it; closing the socket ends it.
	for i := 0; i < 100 && h.eng.Produced.Load() == produced; i++ {
		for range 10000 {
			_, err := r.fe.Receive()
			require.NoError(t, err)
		}
	}
	require.Greater(t, h.eng.Produced.Load(), produced)
	r.nc.Close()
	require.Eventually(t, func() bool { return h.srv.ConnCount() == 0 }, 5*time.Second, 10*time.Millisecond)
}

// TestLoad runs 64 concurrent pgx clients doing queries, COPY, errors and
// transactions for ASOFSQL_LOAD_SECONDS (default 2) and checks that none
// fails and memory stays bounded.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	dur := 2 * time.Second
	if s := os.Getenv("ASOFSQL_LOAD_SECONDS"); s != "" {
		d, err := time.ParseDuration(s + "s")
		require.NoError(t, err)
		dur = d
	}
	h := start(t, func(c *pgwire.Config) { c.MaxConnections = 100 })
	ctx := context.Background()
	setup := pgxConnect(t, h, nil)
	_, err := setup.Exec(ctx, "create table load (k int8 not null, v text)")
	require.NoError(t, err)

	const clients = 64
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	var ops [clients]int
	var copies atomic.Int64
	deadline := time.Now().Add(dur)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				cfg, err := pgx.ParseConfig(h.dsn())
				if err != nil {
					return err
				}
				if i%2 == 1 {
					cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
				}
				c, err := pgx.ConnectConfig(ctx, cfg)
				if err != nil {
					return err
				}
				defer c.Close(ctx)
				for n := 0; time.Now().Before(deadline); n++ {
					switch n % 4 {
					case 0:
						var sum int64
						rows, err := c.Query(ctx, "select generate_series(1, 5000)")
						if err != nil {
							return err
						}
						for rows.Next() {
							var v int64
							if err := rows.Scan(&v); err != nil {
								return err
							}
							sum += v
						}
						if err := rows.Err(); err != nil {
							return err
						}
						if sum != 5000*5001/2 {
							return fmt.Errorf("client %d: sum %d", i, sum)
						}
					case 1:
						var id int64
						var s string
						if err := c.QueryRow(ctx, "select $1::int8, $2::text", int64(n), "x").Scan(&id, &s); err != nil {
							return err
						}
						if id != int64(n) || s != "x" {
							return fmt.Errorf("client %d: got %d %q", i, id, s)
						}
					case 2:
						rows := [][]any{{int64(i), "a"}, {int64(n), nil}}
						got, err := c.CopyFrom(ctx, pgx.Identifier{"load"}, []string{"k", "v"}, pgx.CopyFromRows(rows))
						if err != nil {
							return err
						}
						if got != 2 {
							return fmt.Errorf("client %d: copied %d", i, got)
						}
						copies.Add(1)
					case 3:
						if _, err := c.Exec(ctx, "select * from nosuch"); err == nil {
							return fmt.Errorf("client %d: expected an error", i)
						}
						tx, err := c.Begin(ctx)
						if err != nil {
							return err
						}
						if _, err := tx.Exec(ctx, "select 1"); err != nil {
							return err
						}
						if err := tx.Commit(ctx); err != nil {
							return err
						}
					}
					ops[i]++
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	total := 0
	for _, n := range ops {
		total += n
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("%d clients, %v: %d operations, heap in use %d MiB", clients, dur, total, ms.HeapInuse>>20)
	require.Equal(t, int64(2*copies.Load()), h.eng.Rows("load"))
	require.Less(t, ms.HeapInuse, uint64(1<<30))
}
