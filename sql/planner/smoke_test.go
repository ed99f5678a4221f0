package planner

import (
	"testing"
)

func TestSmoke(t *testing.T) {
	cat := newCatalog(t)
	for _, q := range []string{
		`SELECT * FROM trades ASOF LEFT JOIN quotes ON ts BETWEEN INTERVAL '-10 seconds' AND INTERVAL '0 seconds' USING (sym)`,
		`SELECT t.price, q.bid FROM trades t ASOF JOIN quotes q ON t.sym = q.sym AND t.ts >= q.ts`,
		`SELECT * FROM events ASOF JOIN ticks ON t BETWEEN -10 AND 0 USING (k) ASOF JOIN marks ON t BETWEEN -5 AND 5 USING (k)`,
		`SELECT * FROM events e ASOF JOIN heap h ON t BETWEEN -10 AND 0`,
		`SELECT sym, count(*), avg(price) FROM trades WHERE price > 10 GROUP BY sym ORDER BY 2 DESC LIMIT 5`,
	} {
		p, err := plan(t, cat, q)
		if err != nil {
			t.Logf("%s\n%s", q, errText(err))
			continue
		}
		t.Logf("%s\n%s", q, ExplainText(p))
	}
}
