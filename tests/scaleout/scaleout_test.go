//go:build linux

package scaleout

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

var testMarket = market{syms: 7, trades: 6000, quotes: 12000}

// cluster starts PostgreSQL, three asofsql nodes holding a partition of
// the market each and one holding all of it, and sets the coordinator up.
func cluster(t *testing.T) (pg *postgres, all *node, nodes []*node) {
	pg = startPostgres(t)
	for i := range 3 {
		nodes = append(nodes, startNode(t, testMarket.nodeSQL(3, i)))
	}
	all = startNode(t, testMarket.nodeSQL(1, 0))
	coordinate(t, connect(t, pg.dsn()), testMarket, nodes, "public")
	return pg, all, nodes
}

// TestCoordinator runs PostgreSQL over three asofsql nodes: postgres_fdw
// partitions, and dblink fanning ASOF query text out.
func TestCoordinator(t *testing.T) {
	pg, all, nodes := cluster(t)
	t.Run("postgres_fdw", func(t *testing.T) {
		testPostgresFDW(t, conn{t, connect(t, pg.dsn())}, conn{t, connect(t, all.dsn())}, nodes)
	})
	t.Run("dblink", func(t *testing.T) {
		testDblink(t, conn{t, connect(t, pg.dsn())}, conn{t, connect(t, all.dsn())}, nodes)
	})
}

// conn is a connection of a test, to the coordinator or a node.
type conn struct {
	t testing.TB
	c *pgx.Conn
}

func (c conn) rows(sql string) []string { return textRows(c.t, c.c, sql) }
func (c conn) exec(sql string)          { mustExec(c.t, c.c, sql) }

// testPostgresFDW runs queries through a PostgreSQL coordinator whose
// partitioned tables are postgres_fdw foreign tables on three asofsql
// nodes, and checks each against one node holding all the data.
func testPostgresFDW(t *testing.T, coord, all conn, nodes []*node) {
	same := func(name, viaCoord, direct string) {
		t.Helper()
		want := all.rows(direct)
		require.NotEmpty(t, want, name)
		require.Equal(t, want, coord.rows(viaCoord), name)
	}
	both := func(name, sql string) { t.Helper(); same(name, sql, sql) }

	both("count", `SELECT count(*) FROM tq`)
	perKey := `SELECT sym, count(*), sum(qty), sum(qty * bid), avg(qty), min(ts), max(ts), min(bid), max(ask), count(bid)
		FROM tq GROUP BY sym ORDER BY sym`
	both("per-key aggregates, computed by the coordinator", perKey)
	coord.exec(`SET enable_partitionwise_aggregate = on`)
	both("per-key aggregates, pushed down per node", perKey)
	plan := strings.Join(coord.rows(`EXPLAIN (VERBOSE, COSTS OFF) `+perKey), "\n")
	require.Contains(t, plan, "Async Foreign Scan", plan)
	require.Contains(t, plan, "GROUP BY", "the aggregate runs on the nodes:\n%s", plan)

	both("filtered row set", `SELECT ts, sym, qty, price, bid FROM tq
		WHERE sym IN ('s1', 's2', 's5') AND ts >= '2024-01-02 09:31:00' AND ts < '2024-01-02 09:33:00' AND qty > 50
		ORDER BY ts, sym`)
	both("LIKE and IS NULL", `SELECT ts, sym, qty FROM tq WHERE sym LIKE 's6%' AND bid IS NOT NULL ORDER BY ts LIMIT 40`)
	both("ORDER BY and LIMIT across nodes", `SELECT ts, sym, price FROM tq ORDER BY price DESC, ts, sym LIMIT 25`)
	both("LIMIT and OFFSET", `SELECT ts, sym FROM tq WHERE sym = 's3' ORDER BY ts LIMIT 10 OFFSET 20`)
	both("an expression filter", `SELECT sym, count(*) FROM tq WHERE price - bid > 5 AND qty % 7 = 1 GROUP BY sym ORDER BY sym`)
	coord.exec(`SET enable_partitionwise_join = on`)
	// The nodes' EXPLAIN estimates make the remote join the cheaper plan.
	for i := range nodes {
		coord.exec(fmt.Sprintf(`ALTER SERVER public_node%d OPTIONS (ADD use_remote_estimate 'true')`, i+1))
	}
	both("join of two foreign tables on each node", `SELECT t.sym, count(*), sum(q.bid), max(t.price)
		FROM trades t JOIN quotes q ON t.sym = q.sym AND t.ts = q.ts GROUP BY t.sym ORDER BY t.sym`)
	plan = strings.Join(coord.rows(`EXPLAIN (VERBOSE, COSTS OFF) SELECT t.ts, q.bid FROM trades t JOIN quotes q ON t.sym = q.sym AND t.ts = q.ts`), "\n")
	require.Contains(t, plan, "INNER JOIN", "the join runs on the nodes:\n%s", plan)

	// The nodes' own ASOF join, in the view tq on each node.
	same("the ASOF join on each node", `SELECT sym, count(*), sum(qty), sum(qty * bid), sum(ask - bid) FROM tq WHERE bid IS NOT NULL GROUP BY sym ORDER BY sym`,
		asofAggregate)

	// A generic plan sends $n parameters with DECLARE.
	coord.exec(`SET plan_cache_mode = force_generic_plan`)
	coord.exec(`PREPARE by_sym (text, integer) AS SELECT count(*), sum(price) FROM tq WHERE sym = $1 AND qty > $2`)
	same("parameters", `EXECUTE by_sym ('s4', 30)`, `SELECT count(*), sum(price) FROM tq WHERE sym = 's4' AND qty > 30`)

	// One snapshot per remote transaction: REPEATABLE READ on the nodes.
	coord.exec(`BEGIN`)
	both("two scans in one coordinator transaction", `SELECT (SELECT count(*) FROM tq WHERE sym = 's0'), (SELECT count(*) FROM tq)`)
	coord.exec(`COMMIT`)

	// Rows inserted through the coordinator go to the node of their key.
	const late = `('2030-01-01 00:00:00', 's1', 1, 1), ('2030-01-01 00:00:01', 's2', 2, 2)`
	coord.exec(`INSERT INTO trades VALUES ` + late)
	all.exec(`INSERT INTO trades VALUES ` + late) // the nodes and the one node stay alike
	node2 := conn{t, connect(t, nodes[1].dsn())}
	require.Equal(t, []string{"s1"}, node2.rows(`SELECT sym FROM trades WHERE ts >= '2030-01-01'`))
	require.Equal(t, []string{"2"}, coord.rows(`SELECT count(*) FROM trades WHERE ts >= '2030-01-01'`))
	// The views join what was just written: no refresh step.
	require.Equal(t, []string{"2"}, coord.rows(`SELECT count(*) FROM tq WHERE ts >= '2030-01-01'`))

	// ANALYZE samples every partition; IMPORT FOREIGN SCHEMA reads the
	// node's catalog.
	coord.exec(`ANALYZE tq`)
	require.Equal(t, []string{"6"}, coord.rows(`SELECT count(*) FROM pg_stats WHERE tablename = 'tq_1'`), "a statistics row per column")
	coord.exec(`CREATE SCHEMA n1`)
	coord.exec(`IMPORT FOREIGN SCHEMA public LIMIT TO (trades, quotes) FROM SERVER public_node1 INTO n1`)
	same("an imported foreign table", `SELECT count(*) FROM n1.trades`, `SELECT count(*) FROM trades WHERE sym IN (`+testMarket.symbols(3, 0)+`)`)
}

// testDblink fans the ASOF query text out to each node with dblink and
// combines the results on the coordinator.
func testDblink(t *testing.T, coord, all conn, nodes []*node) {
	coord.exec(`CREATE EXTENSION IF NOT EXISTS dblink`)
	fanOut := func(query, columns string) string {
		var parts []string
		for _, n := range nodes {
			parts = append(parts, fmt.Sprintf(`SELECT * FROM dblink('%s', $q$%s$q$) AS r(%s)`, n.dsn(), query, columns))
		}
		return strings.Join(parts, "\nUNION ALL\n")
	}
	// Every key is on one node, so a node's per-key aggregate is final.
	aggCols := "sym text, trades bigint, volume bigint, notional numeric, spread numeric"
	perNode := strings.TrimSuffix(asofAggregate, " ORDER BY t.sym")
	require.Equal(t, all.rows(asofAggregate), coord.rows(`SELECT * FROM (`+fanOut(perNode, aggCols)+`) x ORDER BY sym`))

	// The coordinator aggregates rows the nodes' ASOF joins return.
	rowsQuery := `SELECT t.ts, t.sym, t.qty, q.bid FROM trades t ASOF LEFT JOIN quotes q ON t.sym = q.sym AND t.ts >= q.ts
		WHERE t.qty > 90`
	rowCols := "ts timestamp, sym text, qty integer, bid bigint"
	require.Equal(t, all.rows(rowsQuery+` ORDER BY t.ts, t.sym`), coord.rows(`SELECT * FROM (`+fanOut(rowsQuery, rowCols)+`) x ORDER BY ts, sym`))
	require.Equal(t,
		all.rows(`SELECT count(*), sum(qty * bid), max(bid) FROM (`+rowsQuery+`) x`),
		coord.rows(`SELECT count(*), sum(qty * bid), max(bid) FROM (`+fanOut(rowsQuery, rowCols)+`) x`))

	// A cursor through dblink_open/dblink_fetch (BEGIN, DECLARE, FETCH,
	// CLOSE, COMMIT on the node).
	coord.exec(fmt.Sprintf(`SELECT dblink_connect('n1', '%s')`, nodes[0].dsn()))
	coord.exec(`SELECT dblink_open('n1', 'cur', 'SELECT ts, sym FROM trades ORDER BY ts')`)
	require.Equal(t, nodesFirst(t, all, 3, 0), coord.rows(`SELECT * FROM dblink_fetch('n1', 'cur', 3) AS r(ts timestamp, sym text)`))
	coord.exec(`SELECT dblink_close('n1', 'cur')`)
	coord.exec(`SELECT dblink_disconnect('n1')`)
}

// nodesFirst is the first n trades of node index of 3, from the node
// holding everything.
func nodesFirst(t *testing.T, all conn, n, index int) []string {
	return all.rows(fmt.Sprintf(`SELECT ts, sym FROM trades WHERE sym IN (%s) ORDER BY ts LIMIT %d`, testMarket.symbols(3, index), n))
}
