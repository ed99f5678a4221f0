package flightsql_test

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	afsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/asofsql/asofsql/flightsql"
	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/server"
)

// partSQL makes an ordered table written in several statements (several
// segments whose keys interleave, merged by the scan), its right side,
// and an unordered one, each larger than a batch.
const partSQL = `
CREATE TABLE pt (ts BIGINT NOT NULL, sym TEXT, price DOUBLE PRECISION) ORDER BY (ts);
CREATE TABLE pq (ts BIGINT NOT NULL, sym TEXT, bid DOUBLE PRECISION) ORDER BY (ts);
CREATE TABLE heap (id BIGINT, tag TEXT);
INSERT INTO pt SELECT g * 2, 'S' || (g % 7), (g % 100) + 0.5 FROM generate_series(0, 9999) g;
INSERT INTO pt SELECT g * 2 + 1, 'S' || (g % 5), (g % 50) + 0.25 FROM generate_series(0, 9999) g;
INSERT INTO pq SELECT g * 3, 'S' || (g % 7), (g % 10) + 0.5 FROM generate_series(0, 6999) g;
INSERT INTO heap SELECT g, 't' || (g % 13) FROM generate_series(1, 15000) g;
INSERT INTO heap SELECT -g, NULL FROM generate_series(1, 5000) g;
`

// rowWiseQueries give several endpoints at a degree above 1.
var rowWiseQueries = []string{
	`SELECT * FROM pt`,
	`SELECT ts, upper(sym) AS s, price * 2 AS p FROM pt WHERE price > 20 AND sym <> 'S3'`,
	`SELECT t.ts, t.sym, t.price, q.bid FROM pt t ASOF LEFT JOIN pq q ON ts BETWEEN -7 AND 0 USING (sym)`,
	`SELECT t.ts, t.sym, q.bid, q.ts AS qts FROM pt t ASOF JOIN pq q ON t.sym = q.sym AND t.ts >= q.ts WHERE t.price < 30`,
	`SELECT q.ts, q.sym, t.ts AS tts, t.price FROM pq q ASOF LEFT JOIN pt t ON ts BETWEEN -3 AND 2 USING (sym) WHERE q.bid > 1`,
	`SELECT * FROM heap WHERE id % 3 <> 0`,
	`SELECT id * 10 AS x, coalesce(tag, '-') AS tag FROM heap`,
}

// withDegree connects a client whose session's degree of parallelism is n
// (set through Flight session options).
func withDegree(t *testing.T, e *env, n int, opts ...grpc.DialOption) *afsql.Client {
	t.Helper()
	c := e.client(t, opts...)
	// min_parallel_table_scan_size 0: the test tables are small, and the
	// parts are what is tested, not the planner's judgement of size.
	v, err := flight.NewSessionOptionValues(map[string]any{"max_parallel_workers_per_gather": int64(n),
		"min_parallel_table_scan_size": int64(0)})
	require.NoError(t, err)
	res, err := c.SetSessionOptions(context.Background(), &flight.SetSessionOptionsRequest{SessionOptions: v})
	require.NoError(t, err)
	require.Empty(t, res.Errors)
	return c
}

// textRows renders batches as text rows.
func textRows(bs []arrow.RecordBatch) [][]string {
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

// fetchEndpoint reads one endpoint on client c.
func fetchEndpoint(ctx context.Context, c *afsql.Client, ep *flight.FlightEndpoint) ([][]string, error) {
	rdr, err := c.DoGet(ctx, ep.Ticket)
	if err != nil {
		return nil, err
	}
	defer rdr.Release()
	var bs []arrow.RecordBatch
	for rdr.Next() {
		b := rdr.RecordBatch()
		b.Retain()
		bs = append(bs, b)
	}
	defer release(bs)
	return textRows(bs), rdr.Err()
}

// fetchParallel fetches every endpoint of info at once, each on its own
// client, starting with the last, and returns each endpoint's rows.
func fetchParallel(t *testing.T, clients []*afsql.Client, info *flight.FlightInfo) [][][]string {
	t.Helper()
	require.GreaterOrEqual(t, len(clients), len(info.Endpoint))
	out := make([][][]string, len(info.Endpoint))
	errs := make([]error, len(info.Endpoint))
	var wg sync.WaitGroup
	for i := len(info.Endpoint) - 1; i >= 0; i-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = fetchEndpoint(context.Background(), clients[i], info.Endpoint[i])
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	return out
}

func concat(parts [][][]string) [][]string {
	var all [][]string
	for _, p := range parts {
		all = append(all, p...)
	}
	return all
}

// pgRows runs sql over the Postgres wire (pgx, text format).
func pgRows(t *testing.T, pc *pgx.Conn, sql string) [][]string {
	t.Helper()
	rs, err := pc.Query(context.Background(), sql, pgx.QueryExecModeSimpleProtocol)
	require.NoError(t, err)
	defer rs.Close()
	var rows [][]string
	for rs.Next() {
		raw := rs.RawValues()
		row := make([]string, len(raw))
		for i, v := range raw {
			if v == nil {
				row[i] = "NULL"
			} else {
				row[i] = string(v)
			}
		}
		rows = append(rows, row)
	}
	require.NoError(t, rs.Err())
	return rows
}

// servePG serves e's database over the Postgres wire and connects pgx.
func servePG(t *testing.T, e *env) *pgx.Conn {
	t.Helper()
	srv, err := server.New(e.db, pgwire.Config{})
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go srv.Serve(l)
	ctx := context.Background()
	pc, err := pgx.Connect(ctx, "postgres://test@"+l.Addr().String()+"/asofsql?sslmode=disable")
	require.NoError(t, err)
	t.Cleanup(func() {
		pc.Close(ctx)
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	})
	return pc
}

// TestParallelFetch: at degree 4 a row-wise query lists 4 endpoints; they
// fetched concurrently on separate connections, last first, and
// concatenated in endpoint order are exactly the one-endpoint result (at
// degree 1) and pgwire's.
func TestParallelFetch(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	serial := e.client(t)
	exec(t, serial, partSQL)
	pc := servePG(t, e)
	par := withDegree(t, e, 4)
	// Two of the endpoints' clients with flightclient's options.
	clients := []*afsql.Client{e.client(t), e.fastClient(t), e.client(t), e.fastClient(t)}
	ctx := context.Background()
	for _, q := range rowWiseQueries {
		t.Run(q, func(t *testing.T) {
			one, err := serial.Execute(ctx, q)
			require.NoError(t, err)
			require.Len(t, one.Endpoint, 1)
			_, bs, err := fetch(ctx, t, serial, one)
			require.NoError(t, err)
			want := textRows(bs)
			release(bs)
			require.NotEmpty(t, want)
			require.Equal(t, pgRows(t, pc, q), want, "Flight SQL and pgwire differ")

			info, err := par.Execute(ctx, q)
			require.NoError(t, err)
			require.Len(t, info.Endpoint, 4)
			require.True(t, info.Ordered)
			parts := fetchParallel(t, clients, info)
			for i, p := range parts {
				require.NotEmpty(t, p, "endpoint %d", i)
			}
			require.Equal(t, want, concat(parts))
		})
	}
	// A prepared statement with parameters is partitioned the same way.
	st, err := par.Prepare(ctx, `SELECT ts, sym FROM pt WHERE price > $1`)
	require.NoError(t, err)
	defer st.Close(ctx)
	p := params(t, e, arrow.NewSchema([]arrow.Field{{Name: "p", Type: arrow.PrimitiveTypes.Float64}}, nil), `[{"p": 40.0}]`)
	st.SetParameters(p)
	p.Release()
	info, err := st.Execute(ctx)
	require.NoError(t, err)
	require.Len(t, info.Endpoint, 4)
	require.Equal(t, query(t, serial, `SELECT ts, sym FROM pt WHERE price > 40.0`), concat(fetchParallel(t, clients, info)))
}

// TestParallelFetchSnapshot: every endpoint reads the snapshot of the
// GetFlightInfo; writes committed between the fetches change nothing.
func TestParallelFetchSnapshot(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	w := e.client(t)
	exec(t, w, partSQL)
	par := withDegree(t, e, 3)
	q := rowWiseQueries[2]
	want := query(t, w, q)
	ctx := context.Background()
	info, err := par.Execute(ctx, q)
	require.NoError(t, err)
	require.Len(t, info.Endpoint, 3)
	last, err := fetchEndpoint(ctx, par, info.Endpoint[2])
	require.NoError(t, err)
	exec(t, w, `INSERT INTO pt SELECT g, 'S1', 1.5 FROM generate_series(-100, 40000, 7) g`)
	exec(t, w, `DELETE FROM pt WHERE ts % 4 = 0`)
	exec(t, w, `INSERT INTO pq VALUES (5, 'S5', 99.5)`)
	first, err := fetchEndpoint(ctx, par, info.Endpoint[0])
	require.NoError(t, err)
	mid, err := fetchEndpoint(ctx, par, info.Endpoint[1])
	require.NoError(t, err)
	require.Equal(t, want, concat([][][]string{first, mid, last}))
	require.NotEqual(t, want, query(t, w, q), "the writes changed the table")
}

// TestNotRowWise: queries whose result is not a row-wise function of one
// stored table's rows get one endpoint, whatever the degree.
func TestNotRowWise(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	c := withDegree(t, e, 4)
	exec(t, c, partSQL)
	ctx := context.Background()
	for _, q := range []string{
		`SELECT * FROM pt ORDER BY price`,
		`SELECT count(*) FROM pt`,
		`SELECT sym, max(price) FROM pt GROUP BY sym`,
		`SELECT * FROM pt LIMIT 10`,
		`SELECT * FROM pt OFFSET 5`,
		`SELECT DISTINCT sym FROM pt`,
		`SELECT ts, row_number() OVER () FROM pt`,
		`SELECT ts FROM pt UNION ALL SELECT ts FROM pq`,
		`SELECT * FROM pt JOIN pq USING (ts)`,
		`SELECT ts, random() FROM pt`,
		`SELECT * FROM pt WHERE random() < 2`,
		`SELECT ts, (SELECT max(bid) FROM pq) FROM pt`,
		`SELECT * FROM pt t ASOF FULL JOIN pq q ON ts BETWEEN -7 AND 0 USING (sym)`,
		`SELECT * FROM generate_series(1, 100000) g`,
		`SELECT 1`,
		`SELECT * FROM (SELECT * FROM pt LIMIT 5000) s WHERE ts > 3`,
	} {
		info, err := c.Execute(ctx, q)
		require.NoError(t, err, q)
		require.Len(t, info.Endpoint, 1, q)
		_, bs, err := fetch(ctx, t, c, info)
		release(bs)
		require.NoError(t, err, q)
	}
	// Inside a transaction: one endpoint.
	tx, err := c.BeginTransaction(ctx)
	require.NoError(t, err)
	info, err := tx.Execute(ctx, `SELECT * FROM pt`)
	require.NoError(t, err)
	require.Len(t, info.Endpoint, 1)
	_, bs, err := fetch(ctx, t, c, info)
	release(bs)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	// A table smaller than the degree: at most one part per row.
	exec(t, c, `CREATE TABLE two (x INT); INSERT INTO two VALUES (1), (2)`)
	info, err = c.Execute(ctx, `SELECT * FROM two`)
	require.NoError(t, err)
	require.Len(t, info.Endpoint, 2)
	require.Equal(t, [][]string{{"1"}, {"2"}}, concat(fetchParallel(t, []*afsql.Client{c, c}, info)))
}

// TestParallelFetchExpired: endpoints not fetched before their expiration
// time answer a clear error, whether the other endpoints were fetched or
// not.
func TestParallelFetchExpired(t *testing.T) {
	e := newEnv(t, flightsql.Config{ResultTTL: 300 * time.Millisecond})
	c := withDegree(t, e, 2)
	exec(t, c, partSQL)
	ctx := context.Background()
	for _, fetchFirst := range []bool{true, false} {
		info, err := c.Execute(ctx, `SELECT * FROM pt`)
		require.NoError(t, err)
		require.Len(t, info.Endpoint, 2)
		if fetchFirst {
			rows, err := fetchEndpoint(ctx, c, info.Endpoint[0])
			require.NoError(t, err)
			require.Len(t, rows, 10000)
		}
		time.Sleep(time.Until(info.Endpoint[1].ExpirationTime.AsTime()) + 500*time.Millisecond)
		_, err = fetchEndpoint(ctx, c, info.Endpoint[1])
		se := requireState(t, err, "34000")
		require.Contains(t, se.Message, "expired", fmt.Sprint(fetchFirst))
		_, err = c.RenewFlightEndpoint(ctx, &flight.RenewFlightEndpointRequest{Endpoint: info.Endpoint[1]})
		requireState(t, err, "34000")
	}
}

// TestParallelFetchCancelOne: a client cancelling its DoGet of one
// endpoint mid-stream stops that part alone: the other endpoints still
// give their rows, and then nothing is left: no memory beyond the
// table's own, no goroutine. (The checked allocator is back at zero once
// the database closes: newEnv.)
func TestParallelFetchCancelOne(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	c := withDegree(t, e, 3)
	exec(t, c, `CREATE TABLE wide (a BIGINT, b BIGINT, c BIGINT) ORDER BY (a);
		INSERT INTO wide SELECT g, g * 2, g * 3 FROM generate_series(1, 120000) g`)
	// Small fixed flow-control windows: a part's stream cannot all be in
	// flight, so the cancelled one is still running.
	small := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(64 << 10), grpc.WithInitialConnWindowSize(64 << 10)}
	clients := []*afsql.Client{e.client(t, small...), e.client(t, small...), e.client(t, small...)}
	ctx := context.Background()
	want := query(t, c, `SELECT * FROM wide`)
	for _, cl := range clients { // connected: their transports' goroutines are in the count
		require.Equal(t, [][]string{{"1"}}, query(t, cl, `SELECT 1`))
	}
	runtime.GC()
	held := e.mem.CurrentAlloc() // the table's own batches
	before := runtime.NumGoroutine()

	info, err := c.Execute(ctx, `SELECT * FROM wide`)
	require.NoError(t, err)
	require.Len(t, info.Endpoint, 3)
	cctx, cancel := context.WithCancel(ctx)
	rdr, err := clients[1].DoGet(cctx, info.Endpoint[1].Ticket)
	require.NoError(t, err)
	require.True(t, rdr.Next())
	cancel()
	for rdr.Next() {
	}
	require.Error(t, rdr.Err())
	rdr.Release()
	first, err := fetchEndpoint(ctx, clients[0], info.Endpoint[0])
	require.NoError(t, err)
	last, err := fetchEndpoint(ctx, clients[2], info.Endpoint[2])
	require.NoError(t, err)
	require.Equal(t, want[:40000], first)
	require.Equal(t, want[80000:], last)
	_, err = fetchEndpoint(ctx, clients[0], info.Endpoint[1])
	requireState(t, err, "34000")

	require.Eventually(t, func() bool { runtime.GC(); return e.mem.CurrentAlloc() == held }, 10*time.Second, 5*time.Millisecond,
		"the cancelled part still holds memory")
	for deadline := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines left: %d before, %d now\n%s", before, runtime.NumGoroutine(), goroutines())
		}
	}
}

func goroutines() string {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	s := string(buf[:n])
	if len(s) > 20000 {
		s = s[:20000]
	}
	return strings.TrimSpace(s)
}
