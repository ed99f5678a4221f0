package parser

import (
	"testing"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/stretchr/testify/require"
)

func TestWindowFrames(t *testing.T) {
	frame := func(t *testing.T, sql string) (*Statement, *ast.FrameClause) {
		st, err := ParseOne(sql)
		require.NoError(t, err, sql)
		var fc *ast.FrameClause
		st.AST.Accept(visitor(func(n ast.Node) bool {
			if f, ok := n.(*ast.FrameClause); ok && fc == nil {
				fc = f
			}
			return true
		}))
		return st, fc
	}
	t.Run("interval offset", func(t *testing.T) {
		st, fc := frame(t, `SELECT avg(px) OVER (PARTITION BY s ORDER BY ts RANGE BETWEEN INTERVAL '5 minutes' PRECEDING AND CURRENT ROW) FROM t`)
		require.NotNil(t, fc)
		require.Equal(t, FrameOffsetUnit, fc.Extent.Start.Unit)
		c, ok := fc.Extent.Start.Expr.(*ast.FuncCallExpr)
		require.True(t, ok)
		require.Equal(t, "#cast", c.FnName.O)
		require.Empty(t, st.FrameExclude)
	})
	t.Run("number offset stays TiDB's", func(t *testing.T) {
		_, fc := frame(t, `SELECT sum(x) OVER (ORDER BY ts ROWS 3 PRECEDING) FROM t`)
		require.Equal(t, ast.TimeUnitInvalid, fc.Extent.Start.Unit)
		require.Equal(t, ast.FrameType(ast.Rows), fc.Type)
	})
	for _, tc := range []struct {
		sql  string
		want int
		part int
	}{
		{`SELECT sum(x) OVER (ORDER BY ts GROUPS BETWEEN 1 PRECEDING AND -1 FOLLOWING EXCLUDE TIES) FROM t`, ExcludeTies, 0},
		{`SELECT sum(x) OVER (PARTITION BY a, b ORDER BY ts ROWS UNBOUNDED PRECEDING EXCLUDE CURRENT ROW) FROM t`, ExcludeCurrentRow, 2},
		{`SELECT sum(x) OVER (w ROWS UNBOUNDED PRECEDING EXCLUDE GROUP) FROM t WINDOW w AS (ORDER BY ts)`, ExcludeGroup, 0},
		{`SELECT sum(x) OVER w FROM t WINDOW w AS (ORDER BY ts ROWS UNBOUNDED PRECEDING EXCLUDE NO OTHERS)`, 0, 0},
	} {
		st, fc := frame(t, tc.sql)
		require.NotNil(t, fc, tc.sql)
		require.Equal(t, tc.want, st.FrameExclude[fc], tc.sql)
		var parts []int
		st.AST.Accept(visitor(func(n ast.Node) bool {
			if w, ok := n.(*ast.WindowFuncExpr); ok {
				p := 0
				if w.Spec.PartitionBy != nil {
					p = len(w.Spec.PartitionBy.Items)
				}
				parts = append(parts, p)
			}
			return true
		}))
		require.Equal(t, []int{tc.part}, parts, tc.sql)
	}
	_, err := ParseOne(`SELECT sum(x) OVER (ORDER BY ts ROWS 1 PRECEDING EXCLUDE OTHERS) FROM t`)
	require.Equal(t, sqlerr.SyntaxError, sqlerr.Code(err))
}
