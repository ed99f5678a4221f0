package planner

import (
	"testing"

	"github.com/asofsql/asofsql/sql/ordering"
	"github.com/stretchr/testify/require"
)

// TestNodeOrdering checks what each node reports it provides, keeps and
// requires, on plans built from SQL.
func TestNodeOrdering(t *testing.T) {
	cat := newCatalog(t)
	root := func(sql string) Node {
		t.Helper()
		p, err := plan(t, cat, sql)
		require.NoError(t, err, sql)
		return p.(*Query).Root
	}

	// Filter col = constant makes the column constant.
	n := root(`SELECT sym, ts FROM trades_by_sym WHERE sym = 'A'`)
	props := n.Ordering()
	require.True(t, props.Satisfies(ordering.Lex{ordering.Asc(1)}), "sym is constant, so (sym, ts) orders ts: %+v", props)

	// A projection that drops the ordering column loses the order.
	n = root(`SELECT price FROM trades`)
	require.Empty(t, n.Ordering().Lex)

	// A rename keeps it.
	n = root(`SELECT ts AS time, price FROM trades`)
	require.Equal(t, ordering.Lex{ordering.Asc(0)}, n.Ordering().Lex)

	// Sort provides its keys with Postgres' NULLS defaults.
	n = root(`SELECT ts FROM trades ORDER BY ts DESC`)
	require.Equal(t, ordering.Lex{{Col: 0, Desc: true, NullsFirst: true}}, n.Ordering().Lex)
	n = root(`SELECT ts FROM trades ORDER BY ts NULLS FIRST`)
	require.Equal(t, ordering.Lex{{Col: 0, NullsFirst: true}}, n.Ordering().Lex)
	require.Equal(t, []bool{false}, n.PreservesOrder())

	// An inner equi-join makes its keys equivalent and keeps the left order.
	n = root(`SELECT * FROM events e JOIN ticks x ON e.t = x.t`)
	j := n.(*Project).Input.(*Join)
	p := j.Ordering()
	require.True(t, p.Satisfies(ordering.Lex{ordering.Asc(3)}), "x.t is equivalent to e.t")
	require.Equal(t, []bool{true, false}, j.PreservesOrder())

	// The ASOF node requires each input ordered by its on column and
	// keeps the left order.
	n = root(`SELECT * FROM events ASOF JOIN ticks ON t BETWEEN -1 AND 0 USING (k) ASOF JOIN marks USING (k, t)`)
	a := n.(*Project).Input.(*AsofJoin)
	require.Len(t, a.Rights, 2)
	req := a.RequiredOrdering()
	require.Len(t, req, 3)
	for i, c := range a.Children() {
		require.True(t, c.Ordering().Satisfies(req[i]), "child %d", i)
	}
	require.Equal(t, []bool{true, false, false}, a.PreservesOrder())
	require.Len(t, a.Requirements(), 4)
	require.False(t, a.Rights[0].KeysFirst)

	// Aggregates, unions and DISTINCT promise no order.
	for _, sql := range []string{
		`SELECT t, count(*) FROM ticks GROUP BY t`,
		`SELECT t FROM ticks UNION ALL SELECT t FROM marks`,
		`SELECT DISTINCT t FROM ticks`,
	} {
		require.Empty(t, root(sql).Ordering().Lex, sql)
	}
}

// TestValidateKeysFirst: inputs both ordered by (keys..., t) are accepted
// and flagged; one side ordered that way and the other by t is not.
func TestValidateKeysFirst(t *testing.T) {
	cat := newCatalog(t)
	p, err := plan(t, cat, `SELECT * FROM trades_by_sym ASOF JOIN quotes_by_sym USING (sym, ts)`)
	require.NoError(t, err)
	a := p.(*Query).Root.(*Project).Input.(*AsofJoin)
	require.True(t, a.Rights[0].KeysFirst)
	req := a.RequiredOrdering()
	require.Len(t, req[0], 2, "keys then t")
	for i, c := range a.Children() {
		require.True(t, c.Ordering().Satisfies(req[i]), "child %d", i)
	}

	_, err = plan(t, cat, `SELECT * FROM trades ASOF JOIN quotes_by_sym USING (sym, ts)`)
	require.Error(t, err)
	require.Contains(t, err.Error(), `right input table "quotes_by_sym" is not ordered by quotes_by_sym.ts`)
}
