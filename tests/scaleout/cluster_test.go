//go:build linux

package scaleout

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/server"
)

// market sizes the generated data: symbols s0..s<syms-1>, trades every
// 250 ms and quotes every 120 ms, round robin over the symbols.
type market struct {
	syms, trades, quotes int
}

// nodeSQL creates and fills a node's tables with the symbols k where
// k % nodes == index (nodes 1: everything), and the view tq, the trades
// joined to their prevailing quotes by an ASOF join, which the
// coordinator's foreign table reads: each node runs the join on its own
// symbols.
func (m market) nodeSQL(nodes, index int) string {
	return fmt.Sprintf(`
CREATE TABLE trades (ts timestamp NOT NULL, sym text NOT NULL, qty integer, price bigint) ORDER BY (ts);
CREATE TABLE quotes (ts timestamp NOT NULL, sym text NOT NULL, bid bigint, ask bigint) ORDER BY (ts);
INSERT INTO trades SELECT timestamp '2024-01-02 09:30:00' + i * interval '250 milliseconds', 's' || CAST(i %% %[1]d AS text),
    1 + (i * 31) %% 100, 10000 + (CAST(i AS bigint) * 7919) %% 500
  FROM generate_series(1, %[3]d) i WHERE (i %% %[1]d) %% %[5]d = %[6]d;
INSERT INTO quotes SELECT timestamp '2024-01-02 09:29:59' + j * interval '120 milliseconds', 's' || CAST(j %% %[1]d AS text),
    9990 + (CAST(j AS bigint) * 104729) %% 400, 10400 + (j * 7) %% 9
  FROM generate_series(1, %[4]d) j WHERE (j %% %[1]d) %% %[5]d = %[6]d;
CREATE VIEW tq AS SELECT t.ts, t.sym, t.qty, t.price, q.bid, q.ask
  FROM trades t ASOF LEFT JOIN quotes q ON t.sym = q.sym AND t.ts >= q.ts;
`, m.syms, 0, m.trades, m.quotes, nodes, index)
}

// symbols lists the symbols node index of nodes holds, as SQL literals.
func (m market) symbols(nodes, index int) string {
	var out []string
	for k := range m.syms {
		if k%nodes == index {
			out = append(out, fmt.Sprintf("'s%d'", k))
		}
	}
	return strings.Join(out, ", ")
}

// asofAggregate is the market-data ASOF aggregate: per symbol, the trades,
// their volume and notional, and the prevailing quote's spread.
const asofAggregate = `SELECT t.sym, count(*) AS trades, sum(t.qty) AS volume, sum(t.qty * q.bid) AS notional,
  sum(q.ask - q.bid) AS spread
FROM trades t ASOF JOIN quotes q ON t.sym = q.sym AND t.ts >= q.ts
GROUP BY t.sym ORDER BY t.sym`

// node is an asofsql server on a loopback port.
type node struct {
	db   *asofsql.DB
	addr *net.TCPAddr
}

// startNode serves a fresh in-memory database on 127.0.0.1:0, set up
// with sql; it stops when tb ends.
func startNode(tb testing.TB, sql string) *node {
	tb.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	db, err := asofsql.Open(":memory:", asofsql.WithAllocator(mem))
	require.NoError(tb, err)
	ctx := context.Background()
	_, err = db.Exec(ctx, sql)
	require.NoError(tb, err)
	srv, err := server.New(db, pgwire.Config{Allocator: mem})
	require.NoError(tb, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(tb, srv.Shutdown(ctx))
		<-served
		require.NoError(tb, db.Close())
		mem.AssertSize(tb, 0)
	})
	return &node{db: db, addr: l.Addr().(*net.TCPAddr)}
}

func (n *node) dsn() string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=asofsql sslmode=disable", n.addr.Port)
}

// connect opens a simple-protocol pgx connection (text results, so that
// values compare as PostgreSQL prints them).
func connect(tb testing.TB, dsn string) *pgx.Conn {
	tb.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	require.NoError(tb, err)
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := pgx.ConnectConfig(ctx, cfg)
	require.NoError(tb, err)
	tb.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// textRows runs sql and returns its rows as tab-separated text, NULL as
// "NULL".
func textRows(tb testing.TB, c *pgx.Conn, sql string, args ...any) []string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rs, err := c.Query(ctx, sql, args...)
	require.NoError(tb, err, sql)
	var out []string
	for rs.Next() {
		var parts []string
		for _, v := range rs.RawValues() {
			if v == nil {
				parts = append(parts, "NULL")
			} else {
				parts = append(parts, string(v))
			}
		}
		out = append(out, strings.Join(parts, "\t"))
	}
	require.NoError(tb, rs.Err(), sql)
	return out
}

func mustExec(tb testing.TB, c *pgx.Conn, sql string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := c.Exec(ctx, sql)
	require.NoError(tb, err, sql)
}

// coordinate sets the coordinator up over nodes: one postgres_fdw server
// per node (async_capable), and the partitioned tables trades, quotes and
// tq whose partitions are the nodes' tables, by symbol lists. schema is
// where the tables go (created unless "public"); the servers are named
// <schema>_node<i>, the partitions <table>_<i>.
func coordinate(tb testing.TB, c *pgx.Conn, m market, nodes []*node, schema string) {
	tb.Helper()
	mustExec(tb, c, `CREATE EXTENSION IF NOT EXISTS postgres_fdw`)
	if schema != "public" {
		mustExec(tb, c, `CREATE SCHEMA `+schema)
	}
	tables := map[string]string{
		"trades": "ts timestamp NOT NULL, sym text NOT NULL, qty integer, price bigint",
		"quotes": "ts timestamp NOT NULL, sym text NOT NULL, bid bigint, ask bigint",
		"tq":     "ts timestamp NOT NULL, sym text NOT NULL, qty integer, price bigint, bid bigint, ask bigint",
	}
	for name, cols := range tables {
		mustExec(tb, c, fmt.Sprintf(`CREATE TABLE %s.%s (%s) PARTITION BY LIST (sym)`, schema, name, cols))
	}
	for i, n := range nodes {
		server := fmt.Sprintf("%s_node%d", schema, i+1)
		mustExec(tb, c, fmt.Sprintf(`CREATE SERVER %s FOREIGN DATA WRAPPER postgres_fdw
			OPTIONS (host '127.0.0.1', port '%d', dbname 'asofsql', async_capable 'true', fetch_size '1000')`, server, n.addr.Port))
		mustExec(tb, c, fmt.Sprintf(`CREATE USER MAPPING FOR CURRENT_USER SERVER %s OPTIONS (user 'postgres')`, server))
		for name := range tables {
			mustExec(tb, c, fmt.Sprintf(`CREATE FOREIGN TABLE %[4]s.%[1]s_%[2]d PARTITION OF %[4]s.%[1]s FOR VALUES IN (%[3]s)
				SERVER %[5]s OPTIONS (schema_name 'public', table_name '%[1]s')`, name, i+1, m.symbols(len(nodes), i), schema, server))
		}
	}
}
