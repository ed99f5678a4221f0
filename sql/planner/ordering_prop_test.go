package planner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

// TestOrderingProofExhaustive plans every combination of left input,
// right input and ASOF form, where each input is known to be ordered by
// t or not, and checks the planner accepts exactly the ordered pairs and
// otherwise names the first unordered input (spec §4). Accepted plans
// are checked against every node's RequiredOrdering.
func TestOrderingProofExhaustive(t *testing.T) {
	cat := newCatalog(t)
	inputs := []struct {
		sql     string // %s is the alias
		ordered bool   // by t
		byKeys  bool   // by (k, t)
	}{
		{"events %s", true, false},
		{"heap %s", false, false},
		{"(SELECT * FROM heap ORDER BY t) %s", true, false},
		{"(SELECT * FROM heap ORDER BY t DESC) %s", false, false},
		{"(SELECT * FROM heap ORDER BY t NULLS FIRST) %s", false, false},
		{"(SELECT * FROM heap ORDER BY k, t) %s", false, true},
		{"(SELECT t + 0 AS t, k FROM events) %s", false, false},
		{"(SELECT t, k FROM events WHERE k = 1 AND t > 5) %s", true, true},
		{"(SELECT k AS t, t AS k FROM events) %s", false, false},
		{"(SELECT * FROM events ORDER BY t LIMIT 100) %s", true, false},
		{"(SELECT DISTINCT t, k FROM events) %s", false, false},
		{"(SELECT t, k FROM events UNION ALL SELECT t, k FROM marks) %s", false, false},
		{"(SELECT e.t, e.k FROM events e ASOF JOIN marks m USING (k, t)) %s", true, false},
		{"(SELECT m.t, e.k FROM events e ASOF JOIN marks m USING (k, t)) %s", false, false},
		{"(SELECT * FROM (SELECT t, k FROM heap ORDER BY t) x WHERE k > 0) %s", true, false},
		{"(SELECT tt AS t, k FROM (SELECT t AS tt, k FROM marks) y) %s", true, false},
		{"(WITH w AS (SELECT * FROM heap ORDER BY t) SELECT * FROM w) %s", true, false},
		{"(SELECT t, count(*) AS k FROM events GROUP BY t) %s", false, false},
		{"(SELECT e.t, e.k FROM events e JOIN heap h ON e.k = h.k) %s", true, false},
		{"(SELECT h.t, h.k FROM events e JOIN heap h ON e.k = h.k) %s", false, false},
		{"(SELECT h.t, e.k FROM events e JOIN heap h ON e.t = h.t) %s", true, false}, // equivalent to e.t
	}
	forms := []struct {
		sql  string
		keys bool // joins on k
	}{
		{"ON t BETWEEN -10 AND 0 USING (k)", true},
		{"ON t BETWEEN 0 AND 0", false},
		{"ON a.k = b.k AND a.t >= b.t", true},
		{"ON b.t < a.t", false},
		{"USING (k, t)", true},
		{"ON a.k = b.k AND b.t BETWEEN a.t - 5 AND a.t + 5", true},
	}
	n := 0
	for li, l := range inputs {
		for ri, r := range inputs {
			for _, f := range forms {
				sql := fmt.Sprintf("SELECT * FROM %s ASOF LEFT JOIN %s %s", fmt.Sprintf(l.sql, "a"), fmt.Sprintf(r.sql, "b"), f.sql)
				p, err := plan(t, cat, sql)
				n++
				if l.ordered && r.ordered || l.byKeys && r.byKeys && f.keys {
					require.NoError(t, err, "%d/%d %s", li, ri, sql)
					checkRequirements(t, p.(*Query).Root, sql)
					continue
				}
				require.Error(t, err, sql)
				e, ok := sqlerr.As(err)
				require.True(t, ok)
				require.Equal(t, sqlerr.FeatureNotSupported, e.Code, "%s: %s", sql, e.Message)
				side := "right input"
				if !l.ordered {
					side = "left input"
				}
				require.Contains(t, e.Message, side, sql)
				require.True(t, strings.Contains(e.Hint, "ORDER BY"), "hint gives the fixes: %s", e.Hint)
				require.NotZero(t, e.Position)
			}
		}
	}
	t.Logf("%d combinations", n)
}

// checkRequirements asserts every node's children meet its requirements.
func checkRequirements(t *testing.T, n Node, sql string) {
	req := n.RequiredOrdering()
	for i, c := range n.Children() {
		if req != nil && req[i] != nil {
			require.True(t, c.Ordering().Satisfies(req[i]), "%s: child %d of %T", sql, i, n)
		}
		checkRequirements(t, c, sql)
	}
}
