package parser

import (
	"strings"
	"testing"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/stretchr/testify/require"
)

// firstNode returns the first node of type T in st's AST (pre-order).
func firstNode[T ast.Node](st *Statement) T {
	var out T
	found := false
	st.AST.Accept(visitor(func(n ast.Node) bool {
		if x, ok := n.(T); ok && !found {
			out, found = x, true
		}
		return !found
	}))
	return out
}

func TestQueryForms(t *testing.T) {
	t.Run("first and last are function calls", func(t *testing.T) {
		st, err := ParseOne("SELECT first(x), LAST(y) FROM t ORDER BY a NULLS FIRST, b NULLS LAST")
		require.NoError(t, err)
		f := firstNode[*ast.FuncCallExpr](st)
		require.Equal(t, "first", f.FnName.L)
		require.Equal(t, "select first(`x`),last(`y`) from `t` order by `a`,`b`", restore(st.AST))
	})
	t.Run("aggregate ORDER BY", func(t *testing.T) {
		st, err := ParseOne("SELECT string_agg(DISTINCT x, ',' ORDER BY x DESC NULLS FIRST, y), count(*) OVER (PARTITION BY a ORDER BY b) FROM t")
		require.NoError(t, err)
		a := firstNode[*ast.AggregateFuncExpr](st)
		require.Equal(t, "string_agg", a.F)
		require.True(t, a.Distinct)
		require.Len(t, a.Args, 2)
		require.Equal(t, "`x`", restore(a.Args[0]))
		require.Equal(t, "','", restore(a.Args[1]))
		require.Len(t, a.Order.Items, 2)
		require.True(t, a.Order.Items[0].Desc)
		require.True(t, st.NullsFirst[a.Order.Items[0]])
		require.Equal(t, 8, st.Pos(a), "the call keeps the user's position")
		require.Equal(t, "string_agg", st.SourceName(a))
	})
	t.Run("DISTINCT in aggregates TiDB does not know", func(t *testing.T) {
		st, err := ParseOne("SELECT string_agg(DISTINCT x, ','), stddev(DISTINCT y), count(DISTINCT z) FROM t")
		require.NoError(t, err)
		var got []string
		st.AST.Accept(visitor(func(n ast.Node) bool {
			if a, ok := n.(*ast.AggregateFuncExpr); ok {
				require.True(t, a.Distinct)
				got = append(got, a.F+"/"+restore(a.Args[0]))
			}
			return true
		}))
		require.Equal(t, []string{"string_agg/`x`", "stddev/`y`", "count/`z`"}, got)
	})
	t.Run("ORDER BY in subqueries and windows is untouched", func(t *testing.T) {
		st, err := ParseOne("SELECT x FROM t WHERE x IN (SELECT y FROM u ORDER BY y) AND f((SELECT 1 ORDER BY 1)) > 0")
		require.NoError(t, err)
		require.NotContains(t, st.Rewritten, "group_concat")
	})
	t.Run("SEPARATOR is not Postgres", func(t *testing.T) {
		_, err := ParseOne("SELECT string_agg(x, ',' ORDER BY y SEPARATOR ';') FROM t")
		require.Equal(t, sqlerr.SyntaxError, sqlerr.Code(err))
		require.Contains(t, err.Error(), "SEPARATOR")
	})
	t.Run("VALUES as a query", func(t *testing.T) {
		for _, q := range []string{"VALUES (1, 'a'), (2, 'b') ORDER BY 1 LIMIT 1", "SELECT 1 UNION ALL VALUES (2)", "WITH c(x) AS (VALUES (1)) SELECT * FROM c"} {
			st, err := ParseOne(q)
			require.NoError(t, err, q)
			sel := firstNode[*ast.SelectStmt](st)
			require.NotNil(t, sel, q)
		}
		st, err := ParseOne("VALUES (1, 'a'), (2, 'b')")
		require.NoError(t, err)
		sel := st.AST.(*ast.SelectStmt)
		require.Equal(t, ast.SelectStmtKindValues, sel.Kind)
		require.Len(t, sel.Lists, 2)
		// INSERT ... VALUES keeps TiDB's own form.
		st, err = ParseOne("INSERT INTO t VALUES (1), (2)")
		require.NoError(t, err)
		require.Len(t, st.AST.(*ast.InsertStmt).Lists, 2)
	})
	t.Run("column alias lists on derived tables", func(t *testing.T) {
		st, err := ParseOne(`SELECT * FROM (VALUES (1, 2)) v(a, "B"), (SELECT 1) AS key (k) JOIN u ON true`)
		require.NoError(t, err)
		var srcs []*ast.TableSource
		st.AST.Accept(visitor(func(n ast.Node) bool {
			if ts, ok := n.(*ast.TableSource); ok {
				srcs = append(srcs, ts)
			}
			return true
		}))
		var names []string
		for _, ts := range srcs {
			require.False(t, ts.Lateral)
			for _, c := range ts.ColumnNames {
				names = append(names, ts.AsName.O+"."+c.O)
			}
		}
		require.Equal(t, []string{"v.a", "v.B", "key.k"}, names)
	})
	t.Run("a user's LATERAL stays LATERAL", func(t *testing.T) {
		st, err := ParseOne("SELECT * FROM t, LATERAL (SELECT 1) AS x(a)")
		require.NoError(t, err)
		var lateral bool
		st.AST.Accept(visitor(func(n ast.Node) bool {
			if ts, ok := n.(*ast.TableSource); ok && ts.AsName.O == "x" {
				lateral = ts.Lateral
			}
			return true
		}))
		require.True(t, lateral)
	})
	t.Run("caret keeps Postgres precedence", func(t *testing.T) {
		st, err := ParseOne("SELECT 2 * 3 ^ 2 ^ 2, -2 ^ 2")
		require.NoError(t, err)
		fields := st.AST.(*ast.SelectStmt).Fields.Fields
		mul := fields[0].Expr.(*ast.BinaryOperationExpr)
		require.Equal(t, opcode.Mul, mul.Op)
		pow := mul.R.(*ast.BinaryOperationExpr)
		require.Equal(t, opcode.Xor, pow.Op)
		require.Equal(t, opcode.Xor, pow.L.(*ast.BinaryOperationExpr).Op, "left-associative: (3 ^ 2) ^ 2")
		neg := fields[1].Expr.(*ast.BinaryOperationExpr)
		require.Equal(t, opcode.Xor, neg.Op, "unary minus binds tighter: (-2) ^ 2")
	})
	t.Run("source names", func(t *testing.T) {
		st, err := ParseOne(`SELECT stddev(x), "variance"(x), var_pop(x) FROM t`)
		require.NoError(t, err)
		var got []string
		st.AST.Accept(visitor(func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.AggregateFuncExpr:
				got = append(got, x.F+"="+st.SourceName(x))
			case *ast.FuncCallExpr:
				got = append(got, x.FnName.L+"="+st.SourceName(x))
			}
			return true
		}))
		require.Equal(t, []string{"stddev_pop=stddev", "variance=variance", "var_pop=var_pop"}, got)
	})
}

func TestDistinctOnRecovered(t *testing.T) {
	st, err := ParseOne("SELECT DISTINCT ON (sym, ts::date) *, px FROM q ORDER BY sym, ts DESC")
	require.NoError(t, err)
	sel := st.AST.(*ast.SelectStmt)
	require.False(t, sel.Distinct)
	require.Len(t, sel.Fields.Fields, 2)
	require.NotNil(t, sel.Fields.Fields[0].WildCard)
	on := st.DistinctOn[sel]
	require.Len(t, on, 2)
	require.Equal(t, 21, st.Pos(on[0]))
	require.Equal(t, 26, st.Pos(on[1]))
	require.Equal(t, "select *,`px` from `q` order by `sym`,`ts` desc", restore(st.AST))

	sub, err := ParseOne("SELECT * FROM (SELECT DISTINCT ON (a) a, b FROM t ORDER BY a, b DESC) s WHERE b > 0")
	require.NoError(t, err)
	require.Len(t, sub.DistinctOn, 1)
}

func TestAggregateFilter(t *testing.T) {
	for _, sql := range []string{
		"SELECT count(*) FILTER (WHERE a > 1) FROM t",
		"SELECT sum(DISTINCT a) FILTER (WHERE a::int > 1) FROM t",
		"SELECT string_agg(c, ',' ORDER BY b DESC) FILTER (WHERE b > 1) FROM t",
		"SELECT string_agg(DISTINCT c, ',') FILTER (WHERE b > 1) FROM t",
	} {
		st, err := Parse(sql)
		require.NoError(t, err, sql)
		require.Len(t, st[0].Filters, 1, sql)
		for agg, cond := range st[0].Filters {
			require.NotContains(t, strings.ToLower(agg.F), "group_concat", sql)
			for _, a := range agg.Args {
				if f, ok := a.(*ast.FuncCallExpr); ok {
					require.NotEqual(t, mkFilter, f.FnName.O, sql)
				}
			}
			if agg.Order != nil {
				require.Len(t, agg.Order.Items, 1, sql)
			}
			require.NotNil(t, cond, sql)
		}
	}
}
