package planner

import (
	"testing"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

func TestBindMoreAggregates(t *testing.T) {
	cat := newCatalog(t)
	num := sqltypes.NumericType(sqltypes.NoLimit, sqltypes.NoLimit)
	cols := schemaOf(t, cat, `SELECT stddev(price), variance(qty), stddev_pop(qty), var_samp(price), first(sym), last(qty),
		string_agg(sym, ','), std_dev_name.x FROM trades, (SELECT 1 AS x) std_dev_name GROUP BY std_dev_name.x`)
	require.Equal(t, []string{"stddev", "variance", "stddev_pop", "var_samp", "first", "last", "string_agg", "x"}, names(cols))
	require.Equal(t, []sqltypes.Type{sqltypes.Float8Type, num, num, sqltypes.Float8Type, sqltypes.TextType, sqltypes.Int4Type, sqltypes.TextType, sqltypes.Int4Type}, types(cols))

	// The names TiDB rewrites reach the plan as written.
	p, err := plan(t, cat, `SELECT stddev(qty), variance(qty) FROM trades`)
	require.NoError(t, err)
	var agg *Aggregate
	walk(p.(*Query).Root, func(n Node) {
		if a, ok := n.(*Aggregate); ok {
			agg = a
		}
	})
	require.Equal(t, "stddev", agg.Aggs[0].Func)
	require.Equal(t, "variance", agg.Aggs[1].Func)

	// ORDER BY inside aggregates sorts the Aggregate's input once.
	p, err = plan(t, cat, `SELECT sym, string_agg(sym, ',' ORDER BY price * 2 DESC), first(qty ORDER BY price * 2 DESC) FROM trades GROUP BY sym`)
	require.NoError(t, err)
	walk(p.(*Query).Root, func(n Node) {
		if a, ok := n.(*Aggregate); ok {
			agg = a
		}
	})
	s, ok := agg.Input.(*Sort)
	require.True(t, ok, "%T", agg.Input)
	require.Len(t, s.Keys, 1)
	require.True(t, s.Keys[0].Desc)
	require.Equal(t, len(s.Input.Schema())-1, s.Keys[0].Col)

	// An ordered table's scan already satisfies ORDER BY ts: no sort.
	p, err = plan(t, cat, `SELECT sym, last(price ORDER BY ts) FROM trades GROUP BY sym`)
	require.NoError(t, err)
	walk(p.(*Query).Root, func(n Node) {
		_, isSort := n.(*Sort)
		require.False(t, isSort, "%T", n)
	})

	errs := []struct{ sql, code, msg string }{
		{`SELECT std(qty) FROM trades`, sqlerr.UndefinedFunction, `function std(integer) does not exist`},
		{`SELECT string_agg(qty, ',') FROM trades`, sqlerr.UndefinedFunction, `function string_agg(integer, unknown) does not exist`},
		{`SELECT string_agg(sym, 1) FROM trades`, sqlerr.UndefinedFunction, `function string_agg(text, integer) does not exist`},
		{`SELECT string_agg(sym) FROM trades`, sqlerr.UndefinedFunction, `function string_agg(text) does not exist`},
		{`SELECT string_agg(DISTINCT sym, ',' ORDER BY qty) FROM trades`, "42P10", `ORDER BY expressions must appear in argument list`},
		{`SELECT string_agg(sym, ',' ORDER BY qty), string_agg(sym, ',' ORDER BY price) FROM trades`, sqlerr.FeatureNotSupported, `different ORDER BY`},
		{`SELECT first(sym), string_agg(sym, ',' ORDER BY qty) FROM trades`, sqlerr.FeatureNotSupported, `first() or last() without ORDER BY`},
		{`SELECT string_agg(sym, ',' ORDER BY qty), last(sym) FROM trades`, sqlerr.FeatureNotSupported, `first() or last() without ORDER BY`},
		{`SELECT first(x) FROM (VALUES (NULL)) v(x) WHERE false`, "", ``},
		{`SELECT 1.5 ^ 2`, "", ``}, // numeric power (functions.Power)
		{`SELECT sym ^ 2 FROM trades`, sqlerr.UndefinedFunction, `operator does not exist: text ^ integer`},
		{`VALUES (1), ('a'::text)`, sqlerr.DatatypeMismatch, `VALUES types integer and text cannot be matched`},
		{`SELECT position('a', 'b')`, sqlerr.SyntaxError, `syntax error`},
	}
	for _, e := range errs {
		_, err := plan(t, cat, e.sql)
		if e.code == "" {
			require.NoError(t, err, e.sql)
			continue
		}
		require.Equal(t, e.code, sqlerr.Code(err), "%s: %v", e.sql, err)
		require.Contains(t, err.Error(), e.msg, e.sql)
	}
}

func TestBindValuesAndFunctions(t *testing.T) {
	cat := newCatalog(t)
	cols := schemaOf(t, cat, `VALUES (1, 'a', NULL), (2.5, NULL, NULL)`)
	require.Equal(t, []string{"column1", "column2", "column3"}, names(cols))
	require.Equal(t, []sqltypes.Type{sqltypes.NumericType(sqltypes.NoLimit, sqltypes.NoLimit), sqltypes.TextType, sqltypes.TextType}, types(cols))
	cols = schemaOf(t, cat, `SELECT * FROM (VALUES (1, 'a')) AS v (n)`)
	require.Equal(t, []string{"n", "column2"}, names(cols))
	cols = schemaOf(t, cat, `SELECT replace(sym, 'a', 'b'), position('a' IN sym), strpos(sym, 'a'), left(sym, 2), lpad(sym, 3), split_part(sym, '.', 1),
		starts_with(sym, 'a'), pg_typeof(qty)::text, 2 ^ 3 FROM trades`)
	require.Equal(t, []string{"replace", "position", "strpos", "left", "lpad", "split_part", "starts_with", "pg_typeof", "?column?"}, names(cols))
	require.Equal(t, []sqltypes.Type{sqltypes.TextType, sqltypes.Int4Type, sqltypes.Int4Type, sqltypes.TextType, sqltypes.TextType, sqltypes.TextType,
		sqltypes.BoolType, sqltypes.TextType, sqltypes.Float8Type}, types(cols))
}

func walk(n Node, f func(Node)) {
	f(n)
	for _, c := range n.Children() {
		walk(c, f)
	}
}
