package asofsql_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

func TestExplainThroughQuery(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	s := db.Session()
	defer s.Close()
	const q = `SELECT t.ts, q.bid FROM trades t ASOF LEFT JOIN quotes q ON ts BETWEEN -10 AND 0 USING (sym) WHERE t.qty > 60`
	plan, err := sessRows(t, s, `EXPLAIN `+q)
	require.NoError(t, err)
	want, err := db.Explain(t.Context(), q)
	require.NoError(t, err)
	require.Equal(t, strings.Split(strings.TrimRight(want, "\n"), "\n"), plan)
	require.Contains(t, strings.Join(plan, "\n"), "AsofJoin LEFT")

	c, err := s.Query(t.Context(), `EXPLAIN `+q)
	require.NoError(t, err)
	require.Equal(t, "QUERY PLAN", c.Columns()[0].Name)
	require.NoError(t, c.Close())

	got, err := sessRows(t, s, `EXPLAIN ANALYZE `+q)
	require.NoError(t, err)
	require.Len(t, got, len(plan)+1)
	actual := regexp.MustCompile(`^(.*) \(actual rows=(\d+) batches=(\d+) time=\d+\.\d{3} ms\)$`)
	for i, line := range got[:len(plan)] {
		m := actual.FindStringSubmatch(line)
		require.NotNil(t, m, line)
		require.Equal(t, plan[i], m[1], "EXPLAIN ANALYZE keeps the EXPLAIN line")
	}
	require.Regexp(t, `^Execution Time: \d+\.\d{3} ms$`, got[len(plan)])
	// 3 trades pass qty > 60; the join keeps them all (LEFT); the scans
	// read all 4 rows of each table.
	require.Equal(t, "3", actualRows(t, got, "Project"))
	require.Equal(t, "3", actualRows(t, got, "AsofJoin"))
	require.Equal(t, "4", actualRows(t, got, "Scan quotes"))

	// ANALYZE runs parameterized queries too.
	got, err = sessRows(t, s, `EXPLAIN ANALYZE SELECT * FROM trades WHERE qty > $1`, 150)
	require.NoError(t, err)
	require.Equal(t, "2", actualRows(t, got, "Filter"))

	_, err = sessRows(t, s, `EXPLAIN ANALYZE INSERT INTO trades VALUES (1, 'a', 1)`)
	require.Equal(t, sqlerr.FeatureNotSupported, sqlerr.Code(err))
	_, err = sessRows(t, s, `EXPLAIN SELECT * FROM trades ASOF JOIN loose ON ts BETWEEN -1 AND 0 USING (sym)`)
	require.Equal(t, sqlerr.FeatureNotSupported, sqlerr.Code(err))
}

// actualRows finds the first line whose node starts with prefix and
// returns its actual row count.
func actualRows(t *testing.T, lines []string, prefix string) string {
	t.Helper()
	re := regexp.MustCompile(`actual rows=(\d+)`)
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), prefix) {
			return re.FindStringSubmatch(l)[1]
		}
	}
	t.Fatalf("no %s line in %q", prefix, lines)
	return ""
}
