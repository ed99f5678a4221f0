package server_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/server"
)

// start serves a fresh in-memory database on a loopback port. Cleanup
// shuts the server down, closes the database and checks that no Arrow
// memory is left.
func start(t *testing.T) string {
	t.Helper()
	addr, _ := startServer(t, pgwire.Config{})
	return addr
}

// startServer is start with a configuration (Allocator is set here) that
// also returns the server.
func startServer(t *testing.T, cfg pgwire.Config, opts ...asofsql.Option) (string, *pgwire.Server) {
	t.Helper()
	before := runtime.NumGoroutine()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	db, err := asofsql.Open(":memory:", append([]asofsql.Option{asofsql.WithAllocator(mem)}, opts...)...)
	require.NoError(t, err)
	cfg.Allocator = mem
	srv, err := server.New(db, cfg)
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		require.NoError(t, srv.Shutdown(ctx))
		require.ErrorIs(t, <-served, pgwire.ErrServerClosed)
		require.NoError(t, db.Close())
		mem.AssertSize(t, 0)
		// Every goroutine (connections, the adapter's context links) ends.
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Fatalf("goroutines leaked: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	return l.Addr().String(), srv
}

func dial(t *testing.T, addr string, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig("postgres://alice@" + addr + "/asofsql?sslmode=disable")
	require.NoError(t, err)
	cfg.DefaultQueryExecMode = mode
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.ConnectConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// ctx bounds a test's client calls: a hang guard, generous because loading
// 400k rows under -race on a loaded 2-core machine took over 20 s.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// load creates the market tables and fills them with pgx CopyFrom (the
// binary COPY FROM STDIN path).
func load(t *testing.T, c *pgx.Conn) {
	t.Helper()
	for _, ddl := range []string{
		`CREATE TABLE trades (ts BIGINT, sym TEXT, price DOUBLE PRECISION) ORDER BY (ts)`,
		`CREATE TABLE quotes (ts BIGINT, sym TEXT, bid DOUBLE PRECISION) ORDER BY (ts)`,
		`CREATE TABLE loose (ts BIGINT, sym TEXT, bid DOUBLE PRECISION)`,
	} {
		_, err := c.Exec(ctx(t), ddl)
		require.NoError(t, err, ddl)
	}
	trades := [][]any{{int64(3), "A", 99.0}, {int64(5), "A", 100.0}, {int64(6), "B", 200.0},
		{int64(8), "A", 101.0}, {int64(11), "C", 300.0}, {int64(13), "A", 102.0}}
	quotes := [][]any{{int64(1), "A", 10.0}, {int64(5), "A", 11.0}, {int64(7), "B", 20.0},
		{int64(10), "A", 12.0}, {int64(12), "B", 21.0}}
	for name, rows := range map[string][][]any{"trades": trades, "quotes": quotes} {
		col := "price"
		if name == "quotes" {
			col = "bid"
		}
		n, err := c.CopyFrom(ctx(t), pgx.Identifier{name}, []string{"ts", "sym", col}, pgx.CopyFromRows(rows))
		require.NoError(t, err, name)
		require.Equal(t, int64(len(rows)), n)
	}
}

// rows renders a query's result as "v|v|v" lines, NULL as "-".
func rows(t *testing.T, c *pgx.Conn, sql string, args ...any) []string {
	t.Helper()
	rs, err := c.Query(ctx(t), sql, args...)
	require.NoError(t, err, sql)
	var out []string
	for rs.Next() {
		vals, err := rs.Values()
		require.NoError(t, err)
		parts := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				parts[i] = "-"
			} else {
				parts[i] = fmtValue(v)
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	require.NoError(t, rs.Err(), sql)
	return out
}

func fmtValue(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int64:
		return itoa(v)
	case float64:
		return ftoa(v)
	}
	return "?"
}

func TestASOFQueriesOverPgx(t *testing.T) {
	addr := start(t)
	c := dial(t, addr, pgx.QueryExecModeCacheStatement)
	load(t, c)
	tests := []struct {
		name string
		sql  string
		want []string
	}{
		{"prevailing quote", `SELECT ts, sym, bid FROM trades ASOF LEFT JOIN quotes ON ts BETWEEN -100 AND 0 USING (sym)`,
			[]string{"3|A|10", "5|A|11", "6|B|-", "8|A|11", "11|C|-", "13|A|12"}},
		{"inner drops rows without a winner", `SELECT ts, sym, bid FROM trades ASOF JOIN quotes ON ts BETWEEN -100 AND 0 USING (sym)`,
			[]string{"3|A|10", "5|A|11", "8|A|11", "13|A|12"}},
		{"compatibility form", `SELECT t.ts, q.bid FROM trades t ASOF LEFT JOIN quotes q ON t.sym = q.sym AND t.ts >= q.ts`,
			[]string{"3|10", "5|11", "6|-", "8|11", "11|-", "13|12"}},
		{"exact match excluded", `SELECT ts, bid FROM trades ASOF LEFT JOIN quotes ON ts BETWEEN -100 AND -1 USING (sym)`,
			[]string{"3|10", "5|10", "6|-", "8|11", "11|-", "13|12"}},
		{"forward within 3", `SELECT ts, bid FROM trades ASOF LEFT JOIN quotes ON ts BETWEEN 0 AND 3 USING (sym)`,
			[]string{"3|11", "5|11", "6|20", "8|12", "11|-", "13|-"}},
		{"nearest, ties earlier", `SELECT ts, bid FROM trades ASOF LEFT JOIN quotes ON ts BETWEEN -2 AND 2 USING (sym)`,
			[]string{"3|10", "5|11", "6|20", "8|12", "11|-", "13|-"}},
		{"nearest, PREFER LATER", `SELECT ts, bid FROM trades ASOF LEFT JOIN quotes ON ts BETWEEN -2 AND 2 USING (sym) PREFER LATER`,
			[]string{"3|11", "5|11", "6|20", "8|12", "11|-", "13|-"}},
		{"slippage per symbol", `SELECT sym, count(*) FROM trades ASOF JOIN quotes ON ts BETWEEN -100 AND 0 USING (sym) GROUP BY sym`,
			[]string{"A|4"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, rows(t, c, tc.sql))
		})
	}
}

// TestParametersInEveryExecMode runs a parameterised ASOF query in each
// of pgx's modes: prepared and cached, described, unnamed, and the
// simple protocol with client-side interpolation.
func TestParametersInEveryExecMode(t *testing.T) {
	addr := start(t)
	load(t, dial(t, addr, pgx.QueryExecModeCacheStatement))
	modes := map[string]pgx.QueryExecMode{
		"cache statement": pgx.QueryExecModeCacheStatement,
		"cache describe":  pgx.QueryExecModeCacheDescribe,
		"describe exec":   pgx.QueryExecModeDescribeExec,
		"exec":            pgx.QueryExecModeExec,
		"simple":          pgx.QueryExecModeSimpleProtocol,
	}
	for name, mode := range modes {
		t.Run(name, func(t *testing.T) {
			c := dial(t, addr, mode)
			const q = `SELECT ts, bid FROM trades ASOF LEFT JOIN quotes ON ts BETWEEN -100 AND 0 USING (sym)
			           WHERE sym = $1 AND price > $2`
			for range 2 { // a second run reuses the cached statement
				require.Equal(t, []string{"8|11", "13|12"}, rows(t, c, q, "A", 100.5))
			}
			var n int64
			require.NoError(t, c.QueryRow(ctx(t), `SELECT count(*) FROM trades WHERE ts >= $1`, int64(6)).Scan(&n))
			require.Equal(t, int64(4), n)
		})
	}
}

func TestOrderingRejectionIsAnErrorResponse(t *testing.T) {
	addr := start(t)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		c := dial(t, addr, mode)
		if mode == pgx.QueryExecModeCacheStatement {
			load(t, c)
		}
		const q = `SELECT ts, bid FROM trades ASOF JOIN loose ON ts BETWEEN -10 AND 0 USING (sym)`
		_, err := c.Exec(ctx(t), q)
		var pe *pgconn.PgError
		require.True(t, errors.As(err, &pe), "%v", err)
		require.Equal(t, "0A000", pe.Code)
		require.Contains(t, pe.Message, "loose")
		require.Contains(t, pe.Hint, "ORDER BY")
		require.Positive(t, pe.Position)
		require.LessOrEqual(t, int(pe.Position), len(q))
		// The connection is still usable.
		require.Equal(t, []string{"6"}, rows(t, c, `SELECT count(*) FROM trades`))
	}
}

func TestTransactions(t *testing.T) {
	addr := start(t)
	c := dial(t, addr, pgx.QueryExecModeCacheStatement)
	load(t, c)

	tx, err := c.Begin(ctx(t))
	require.NoError(t, err)
	_, err = tx.Exec(ctx(t), `INSERT INTO quotes VALUES (20, 'A', 13)`)
	require.NoError(t, err)
	require.Equal(t, byte('T'), c.PgConn().TxStatus())
	require.NoError(t, tx.Rollback(ctx(t)))
	require.Equal(t, []string{"5"}, rows(t, c, `SELECT count(*) FROM quotes`))

	tx, err = c.Begin(ctx(t))
	require.NoError(t, err)
	_, err = tx.Exec(ctx(t), `INSERT INTO quotes VALUES (20, 'A', 13)`)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx(t)))
	require.Equal(t, []string{"6"}, rows(t, c, `SELECT count(*) FROM quotes`))

	// An error fails the block: 25P02 until ROLLBACK, and status 'E'.
	tx, err = c.Begin(ctx(t))
	require.NoError(t, err)
	_, err = tx.Exec(ctx(t), `SELECT * FROM missing`)
	require.Error(t, err)
	require.Equal(t, byte('E'), c.PgConn().TxStatus())
	_, err = tx.Exec(ctx(t), `SELECT 1`)
	var pe *pgconn.PgError
	require.True(t, errors.As(err, &pe))
	require.Equal(t, "25P02", pe.Code)
	require.NoError(t, tx.Rollback(ctx(t)))
	require.Equal(t, byte('I'), c.PgConn().TxStatus())
}

func TestSetTimeZoneReportsParameterStatus(t *testing.T) {
	addr := start(t)
	c := dial(t, addr, pgx.QueryExecModeCacheStatement)
	require.Equal(t, "UTC", c.PgConn().ParameterStatus("TimeZone"))
	_, err := c.Exec(ctx(t), `SET TimeZone = 'America/New_York'`)
	require.NoError(t, err)
	require.Equal(t, "America/New_York", c.PgConn().ParameterStatus("TimeZone"))
	require.Equal(t, []string{"America/New_York"}, rows(t, c, `SHOW TimeZone`))
	var s string
	require.NoError(t, c.QueryRow(ctx(t), `SELECT CAST(TIMESTAMPTZ '2024-01-02 12:00:00+00' AS TEXT)`).Scan(&s))
	require.Equal(t, "2024-01-02 07:00:00-05", s)
}

func TestStartupOptions(t *testing.T) {
	addr := start(t)
	cfg, err := pgx.ParseConfig("postgres://alice@" + addr + "/asofsql?sslmode=disable&options=-c%20TimeZone%3DEurope/Paris")
	require.NoError(t, err)
	cfg.RuntimeParams["application_name"] = "tester"
	c, err := pgx.ConnectConfig(ctx(t), cfg)
	require.NoError(t, err)
	defer c.Close(context.Background())
	require.Equal(t, "Europe/Paris", c.PgConn().ParameterStatus("TimeZone"))
	require.Equal(t, "tester", c.PgConn().ParameterStatus("application_name"))

	// An explicit parameter wins over the same setting in options.
	cfg.RuntimeParams["TimeZone"] = "Asia/Tokyo"
	c2, err := pgx.ConnectConfig(ctx(t), cfg)
	require.NoError(t, err)
	require.Equal(t, "Asia/Tokyo", c2.PgConn().ParameterStatus("TimeZone"))
	require.NoError(t, c2.Close(ctx(t)))

	cfg.RuntimeParams["no_such_setting"] = "1"
	_, err = pgx.ConnectConfig(ctx(t), cfg)
	var pe *pgconn.PgError
	require.True(t, errors.As(err, &pe), "%v", err)
	require.Equal(t, "42704", pe.Code)
}

// TestSuspendedPortal reads a query two rows per Execute: the engine's
// cursor must survive between Execute messages.
func TestSuspendedPortal(t *testing.T) {
	addr := start(t)
	load(t, dial(t, addr, pgx.QueryExecModeCacheStatement))
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	require.NoError(t, nc.SetDeadline(time.Now().Add(10*time.Second)))
	fe := pgproto3.NewFrontend(nc, nc)
	recvUntil := func(stop func(pgproto3.BackendMessage) bool) []pgproto3.BackendMessage {
		var got []pgproto3.BackendMessage
		for {
			m, err := fe.Receive()
			require.NoError(t, err)
			switch m := m.(type) {
			case *pgproto3.DataRow:
				vals := make([][]byte, len(m.Values))
				for i, v := range m.Values {
					vals[i] = append([]byte(nil), v...)
				}
				got = append(got, &pgproto3.DataRow{Values: vals})
			case *pgproto3.ErrorResponse:
				t.Fatalf("error: %s %s", m.Code, m.Message)
			default:
				got = append(got, m)
			}
			if stop(got[len(got)-1]) {
				return got
			}
		}
	}
	isReady := func(m pgproto3.BackendMessage) bool { _, ok := m.(*pgproto3.ReadyForQuery); return ok }
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "u", "database": "asofsql"}})
	require.NoError(t, fe.Flush())
	recvUntil(isReady)

	fe.Send(&pgproto3.Parse{Query: `SELECT ts, bid FROM trades ASOF LEFT JOIN quotes ON ts BETWEEN -100 AND 0 USING (sym)`})
	fe.Send(&pgproto3.Bind{})
	for range 4 {
		fe.Send(&pgproto3.Execute{MaxRows: 2})
	}
	fe.Send(&pgproto3.Sync{})
	require.NoError(t, fe.Flush())
	var data []string
	var suspended int
	var tag string
	for _, m := range recvUntil(isReady) {
		switch m := m.(type) {
		case *pgproto3.DataRow:
			data = append(data, string(m.Values[0])+"|"+string(m.Values[1]))
		case *pgproto3.PortalSuspended:
			suspended++
		case *pgproto3.CommandComplete:
			tag = string(m.CommandTag)
		}
	}
	require.Equal(t, []string{"3|10", "5|11", "6|", "8|11", "11|", "13|12"}, data)
	require.Equal(t, 3, suspended)
	require.Equal(t, "SELECT 0", tag)
}

func TestCopyToStdout(t *testing.T) {
	addr := start(t)
	c := dial(t, addr, pgx.QueryExecModeCacheStatement)
	load(t, c)
	var sb strings.Builder
	tag, err := c.PgConn().CopyTo(ctx(t), &sb, `COPY quotes TO STDOUT WITH (FORMAT csv)`)
	require.NoError(t, err)
	require.Equal(t, "COPY 5", tag.String())
	require.Equal(t, "1,A,10\n5,A,11\n7,B,20\n10,A,12\n12,B,21\n", sb.String())

	tag, err = c.PgConn().CopyFrom(ctx(t), strings.NewReader("20\tA\t13\n21\tB\t22\n"), `COPY quotes FROM STDIN`)
	require.NoError(t, err)
	require.Equal(t, "COPY 2", tag.String())
	require.Equal(t, []string{"7"}, rows(t, c, `SELECT count(*) FROM quotes`))
}

func TestPsqlScript(t *testing.T) {
	if _, err := exec.LookPath("psql"); err != nil {
		t.Skip("psql is not installed")
	}
	addr := start(t)
	host, port, _ := strings.Cut(addr, ":")
	script := `CREATE TABLE trades (ts BIGINT, sym TEXT, price DOUBLE PRECISION) ORDER BY (ts);
CREATE TABLE quotes (ts BIGINT, sym TEXT, bid DOUBLE PRECISION) ORDER BY (ts);
\copy quotes from stdin
1	A	10.5
5	A	11
7	B	20.25
\.
INSERT INTO trades VALUES (3, 'A', 99), (6, 'B', 200), (8, 'A', 101);
SELECT ts, sym, price, bid FROM trades ASOF LEFT JOIN quotes ON ts BETWEEN -100 AND 0 USING (sym);
`
	f := filepath.Join(t.TempDir(), "script.sql")
	require.NoError(t, os.WriteFile(f, []byte(script), 0o600))
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, "psql", "-X", "-v", "ON_ERROR_STOP=1", "-h", host, "-p", port, "-U", "alice", "-d", "asofsql", "-f", f)
	cmd.Env = append(os.Environ(), "PGSSLMODE=disable", "PGCONNECT_TIMEOUT=10")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, `CREATE TABLE
CREATE TABLE
COPY 3
INSERT 0 3
 ts | sym | price | bid  
----+-----+-------+------
  3 | A   |    99 | 10.5
  6 | B   |   200 |     
  8 | A   |   101 |   11
(3 rows)

`, string(out))
}

// bigQuotes loads n quotes (one symbol, ts 0..n-1).
func bigQuotes(t *testing.T, c *pgx.Conn, n int) {
	t.Helper()
	_, err := c.Exec(ctx(t), `CREATE TABLE big (ts BIGINT, sym TEXT, bid DOUBLE PRECISION) ORDER BY (ts)`)
	require.NoError(t, err)
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{int64(i), "A", float64(i)}
	}
	got, err := c.CopyFrom(ctx(t), pgx.Identifier{"big"}, []string{"ts", "sym", "bid"}, pgx.CopyFromRows(rows))
	require.NoError(t, err)
	require.Equal(t, int64(n), got)
}

// TestCancelRequestStopsAStreamingQuery reads one row of a large ASOF
// result, cancels with a CancelRequest, and expects 57014: the result is
// far larger than the socket buffers, so the query is still running
// (held back by the unread client) when the cancel arrives.
func TestCancelRequestStopsAStreamingQuery(t *testing.T) {
	addr := start(t)
	c := dial(t, addr, pgx.QueryExecModeCacheStatement)
	const n = 400_000
	bigQuotes(t, c, n)
	rs, err := c.Query(ctx(t), `SELECT b.ts, b.bid, q.bid FROM big b ASOF LEFT JOIN big q ON ts BETWEEN -1 AND -1 USING (sym)`)
	require.NoError(t, err)
	require.True(t, rs.Next())
	require.NoError(t, c.PgConn().CancelRequest(ctx(t)))
	read := 1
	for rs.Next() {
		read++
	}
	rs.Close()
	var pe *pgconn.PgError
	require.True(t, errors.As(rs.Err(), &pe), "%v after %d rows", rs.Err(), read)
	require.Equal(t, "57014", pe.Code)
	require.Less(t, read, n)
	// The session goes on.
	require.Equal(t, []string{"400000"}, rows(t, c, `SELECT count(*) FROM big`))
}

func TestStatementTimeout(t *testing.T) {
	addr := start(t)
	c := dial(t, addr, pgx.QueryExecModeCacheStatement)
	bigQuotes(t, c, 400_000)
	_, err := c.Exec(ctx(t), `SET statement_timeout = '1ms'`)
	require.NoError(t, err)
	// A slow reader: the statement outlives its timeout (or, on a loaded
	// machine, its parsing and planning already did, which ends it there).
	rs, err := c.Query(ctx(t), `SELECT b.ts, q.bid FROM big b ASOF LEFT JOIN big q ON ts BETWEEN -1 AND -1 USING (sym)`)
	if err == nil {
		time.Sleep(50 * time.Millisecond)
		for rs.Next() {
		}
		err = rs.Err()
	}
	var pe *pgconn.PgError
	require.True(t, errors.As(err, &pe), "%v", err)
	require.Equal(t, "57014", pe.Code)
	require.Contains(t, pe.Message, "statement timeout")
	// The SET that lifts the timeout runs under it (each phase looks at
	// it, as in Postgres), and parsing it may take a millisecond on a
	// loaded machine: try again until it gets through.
	for {
		_, err = c.Exec(ctx(t), `SET statement_timeout = 0`)
		if !errors.As(err, &pe) || pe.Code != "57014" {
			break
		}
	}
	require.NoError(t, err)
	require.Equal(t, []string{"400000"}, rows(t, c, `SELECT count(*) FROM big`))
}
