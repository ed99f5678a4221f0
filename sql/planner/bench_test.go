package planner

import (
	"testing"

	"github.com/asofsql/asofsql/sql/parser"
)

// BenchmarkBuild measures planning (bind, rewrite, validate) of typical
// statements, parsing excluded.
func BenchmarkBuild(b *testing.B) {
	cat := newCatalogB(b, b)
	for _, bc := range []struct{ name, sql string }{
		{"asof_range", `SELECT trades.ts, sym, price, bid, ask FROM trades ASOF LEFT JOIN quotes ON ts BETWEEN INTERVAL '-5 seconds' AND INTERVAL '0 seconds' USING (sym) WHERE price > 10`},
		{"asof_chain", `SELECT * FROM events ASOF JOIN ticks ON t BETWEEN -10 AND 0 USING (k) ASOF LEFT JOIN marks ON t BETWEEN -5 AND 5 USING (k)`},
		{"grouped", `SELECT sym, count(*), avg(price) FROM trades WHERE ts > TIMESTAMP '2024-01-01' GROUP BY sym ORDER BY 2 DESC LIMIT 5`},
	} {
		st, err := parser.ParseOne(bc.sql)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Build(cat, st, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
