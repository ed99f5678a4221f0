package parser

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/stretchr/testify/require"
)

func TestGroupingForms(t *testing.T) {
	tests := []struct{ sql, group string }{
		{"SELECT a FROM t GROUP BY GROUPING SETS ((a, b), a, ())", "#grouping_sets(row(`a`,`b`), `a`, #empty())"},
		{"SELECT a FROM t GROUP BY x, ROLLUP (a, b), cube(c)", "`x`, #rollup(`a`, `b`), #cube(`c`)"},
		{"SELECT a FROM t GROUP BY grouping sets (rollup(a), cube((a, b)), ())", "#grouping_sets(#rollup(`a`), #cube(row(`a`,`b`)), #empty())"},
		{"SELECT a FROM t GROUP BY ()", "#empty()"},
		{"SELECT a FROM t GROUP BY f(a) + 1, (a), ROLLUP(b)", "f(`a`)+1, (`a`), #rollup(`b`)"},
		// cube() elsewhere stays an ordinary (unknown) function call.
		{"SELECT a, cube(b) FROM t GROUP BY a", "`a`"},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			sts, err := Parse(tt.sql)
			require.NoError(t, err)
			sel := sts[0].AST.(*ast.SelectStmt)
			var items []string
			for _, it := range sel.GroupBy.Items {
				items = append(items, restore(it.Expr))
			}
			require.Equal(t, tt.group, joinComma(items))
		})
	}
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}
