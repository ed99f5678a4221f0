package planner

import (
	"testing"

	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
)

// FuzzBuild: whatever parses must plan to a Plan or a *sqlerr.Error,
// never panic. Seeds are the golden EXPLAIN queries.
func FuzzBuild(f *testing.F) {
	for _, c := range explainCases {
		f.Add(c.sql)
	}
	f.Add(`SELECT sym, count(*) FROM trades GROUP BY 1 HAVING count(*) > 1 ORDER BY 2 DESC LIMIT 3 OFFSET 1`)
	f.Add(`WITH a AS (SELECT * FROM events) SELECT * FROM a JOIN ticks USING (k) WHERE a.t > 3`)
	f.Add(`INSERT INTO names (t, code) SELECT t, v FROM events`)
	cat := newCatalogB(f, f)
	f.Fuzz(func(t *testing.T, sql string) {
		st, err := parser.ParseOne(sql)
		if err != nil || st == nil {
			return
		}
		p, err := Build(cat, st, nil)
		if err != nil {
			if _, ok := sqlerr.As(err); !ok {
				t.Fatalf("%q: untyped error %v", sql, err)
			}
			return
		}
		_ = ExplainText(p)
	})
}
