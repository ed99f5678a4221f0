//go:build linux

package scaleout

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// benchMarket is the benchmark's trading day: 12 symbols, 200,000 trades
// and 400,000 quotes.
var benchMarket = market{syms: 12, trades: 200_000, quotes: 400_000}

// BenchmarkCoordinator times the market-data ASOF aggregate (per symbol:
// trades, volume, notional at the prevailing bid, summed spread):
//
//   - direct: on one asofsql node holding everything, over pgx;
//   - dblink/nodes=N: PostgreSQL fans the ASOF aggregate's text out to N
//     nodes with dblink (one connection each, kept open) and appends the
//     per-symbol rows, which are final since every symbol lives on one
//     node;
//   - fdw/nodes=N: PostgreSQL aggregates the partitioned table tq, each
//     partition a node's ASOF view, over N nodes with postgres_fdw, async
//     scans and the aggregate pushed down per partition (each node runs
//     the ASOF join on its symbols per query); fdw-direct is the same
//     aggregate over the view on the one node, for comparison.
//
// Everything shares the machine: with fewer cores than nodes the figure
// is the coordinator's overhead, not a speedup.
func BenchmarkCoordinator(b *testing.B) {
	pg := startPostgres(b)
	all := startNode(b, benchMarket.nodeSQL(1, 0))
	direct := conn{b, connect(b, all.dsn())}
	coord := conn{b, connect(b, pg.dsn())}
	coord.exec(`CREATE EXTENSION IF NOT EXISTS dblink`)
	coord.exec(`SET enable_partitionwise_aggregate = on`)
	const preJoined = `SELECT sym, count(*), sum(qty), sum(qty * bid), sum(ask - bid) FROM %stq WHERE bid IS NOT NULL GROUP BY sym ORDER BY sym`
	want := direct.rows(asofAggregate)
	require.Equal(b, want, direct.rows(fmt.Sprintf(preJoined, "")))

	type setup struct{ dblink, fdw string }
	setups := map[int]setup{}
	for n := 1; n <= 3; n++ {
		var nodes []*node
		for i := range n {
			nodes = append(nodes, startNode(b, benchMarket.nodeSQL(n, i)))
		}
		schema := fmt.Sprintf("nodes%d", n)
		coordinate(b, coord.c, benchMarket, nodes, schema)
		perNode := strings.TrimSuffix(asofAggregate, " ORDER BY t.sym")
		var parts []string
		for i, nd := range nodes {
			name := fmt.Sprintf("%s_%d", schema, i+1)
			coord.exec(fmt.Sprintf(`SELECT dblink_connect('%s', '%s')`, name, nd.dsn()))
			parts = append(parts, fmt.Sprintf(`SELECT * FROM dblink('%s', $q$%s$q$)
				AS r(sym text, trades bigint, volume bigint, notional numeric, spread numeric)`, name, perNode))
		}
		s := setup{
			dblink: `SELECT * FROM (` + strings.Join(parts, " UNION ALL ") + `) x ORDER BY sym`,
			fdw:    fmt.Sprintf(preJoined, schema+"."),
		}
		require.Equal(b, want, coord.rows(s.dblink))
		require.Equal(b, want, coord.rows(s.fdw))
		setups[n] = s
	}
	run := func(name string, c conn, sql string) {
		b.Run(name, func(b *testing.B) {
			c.t = b
			for b.Loop() {
				if got := c.rows(sql); len(got) != benchMarket.syms {
					b.Fatalf("%d rows", len(got))
				}
			}
		})
	}
	run("direct", direct, asofAggregate)
	for n := 1; n <= 3; n++ {
		run(fmt.Sprintf("dblink/nodes=%d", n), coord, setups[n].dblink)
	}
	run("fdw-direct", direct, fmt.Sprintf(preJoined, ""))
	for n := 1; n <= 3; n++ {
		run(fmt.Sprintf("fdw/nodes=%d", n), coord, setups[n].fdw)
	}
}
