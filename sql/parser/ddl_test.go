package parser

import (
	"testing"

	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/stretchr/testify/require"
)

func TestTruncateAndAlter(t *testing.T) {
	tests := []struct {
		sql  string
		want Node
	}{
		{"TRUNCATE t", &TruncateStmt{Tables: []TableName{{Name: "t"}}, Pos: []int{10}}},
		{"TRUNCATE TABLE ONLY a, public.b * RESTART IDENTITY CASCADE",
			&TruncateStmt{Tables: []TableName{{Name: "a"}, {Schema: "public", Name: "b"}}, Pos: []int{21, 24}}},
		{"ALTER TABLE t RENAME TO u", &AlterTableStmt{Table: TableName{Name: "t"},
			Actions: []AlterAction{{Kind: AlterRenameTable, NewName: "u", Pos: 15}}}},
		{"ALTER TABLE IF EXISTS t RENAME COLUMN a TO \"B\"", &AlterTableStmt{Table: TableName{Name: "t"}, IfExists: true,
			Actions: []AlterAction{{Kind: AlterRenameColumn, Name: "a", NewName: "B", Pos: 25}}}},
		{"ALTER TABLE t RENAME a TO b", &AlterTableStmt{Table: TableName{Name: "t"},
			Actions: []AlterAction{{Kind: AlterRenameColumn, Name: "a", NewName: "b", Pos: 15}}}},
		{"ALTER TABLE ONLY t DROP COLUMN IF EXISTS a CASCADE, DROP b, ADD c text NOT NULL",
			&AlterTableStmt{Table: TableName{Name: "t"}, Actions: []AlterAction{
				{Kind: AlterDropColumn, Name: "a", IfExists: true, Pos: 20},
				{Kind: AlterDropColumn, Name: "b", Pos: 53},
				{Kind: AlterAddColumn, Column: ColumnDef{Name: "c", Type: sqltypes.TextType, NotNull: true, Pos: 65}, Pos: 61},
			}}},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			st, err := ParseOne(tt.sql)
			require.NoError(t, err)
			require.Equal(t, tt.want, st.Node)
		})
	}
}

func TestColumnDefaults(t *testing.T) {
	st, err := ParseOne("ALTER TABLE t ADD COLUMN IF NOT EXISTS c numeric(10,2) DEFAULT -1.5 * (2 + 1) NOT NULL, ADD d text DEFAULT 'x'")
	require.NoError(t, err)
	alter := st.Node.(*AlterTableStmt)
	require.Len(t, alter.Actions, 2)
	c := alter.Actions[0]
	require.True(t, c.IfExists)
	require.True(t, c.Column.NotNull)
	require.Equal(t, "-1.5 * (2 + 1)", c.Column.Default.Text)
	_, ok := DefaultExpr(c.Column.Default).(*ast.BinaryOperationExpr)
	require.True(t, ok)
	require.Equal(t, 64, c.Column.Default.Pos(DefaultExpr(c.Column.Default)))
	require.Equal(t, "'x'", alter.Actions[1].Column.Default.Text)

	st, err = ParseOne("CREATE TABLE t (a int DEFAULT 0 NOT NULL, b timestamp DEFAULT TIMESTAMP '2024-01-01')")
	require.NoError(t, err)
	ct := st.Node.(*CreateTableStmt)
	require.True(t, ct.Columns[0].NotNull)
	require.Equal(t, "0", ct.Columns[0].Default.Text)
	require.Equal(t, "TIMESTAMP '2024-01-01'", ct.Columns[1].Default.Text)
}

func TestCreateTableAsAndView(t *testing.T) {
	st, err := ParseOne("CREATE TEMP TABLE IF NOT EXISTS t (a, b) ORDER BY (a) AS SELECT x, y FROM u ORDER BY x WITH NO DATA")
	require.NoError(t, err)
	ct := st.Node.(*CreateTableStmt)
	require.True(t, ct.Temporary)
	require.True(t, ct.IfNotExists)
	require.Equal(t, []string{"a", "b"}, ct.ColumnNames)
	require.Equal(t, []string{"a"}, ct.OrderBy)
	require.False(t, ct.WithData)
	require.Equal(t, "SELECT x, y FROM u ORDER BY x", ct.AsQuery.Text)
	_, ok := ct.AsQuery.AST.(*ast.SelectStmt)
	require.True(t, ok)

	for _, sql := range []string{"CREATE TABLE t AS VALUES (1)", "CREATE TABLE t AS TABLE u WITH DATA", "CREATE TABLE t AS (SELECT 1)",
		"CREATE TABLE t AS WITH w AS (SELECT 1) SELECT * FROM w"} {
		st, err := ParseOne(sql)
		require.NoError(t, err, sql)
		ct := st.Node.(*CreateTableStmt)
		require.True(t, ct.WithData, sql)
		require.NotNil(t, ct.AsQuery, sql)
	}

	st, err = ParseOne("CREATE OR REPLACE TEMPORARY VIEW v (p, q) AS SELECT a, b FROM t ASOF JOIN u USING (k, ts)")
	require.NoError(t, err)
	v := st.Node.(*CreateViewStmt)
	require.Equal(t, &CreateViewStmt{Name: TableName{Name: "v"}, OrReplace: true, Temporary: true, Columns: []string{"p", "q"}, Query: v.Query}, v)
	require.Equal(t, "SELECT a, b FROM t ASOF JOIN u USING (k, ts)", v.Query.Text)
	require.Len(t, v.Query.Asof, 1)
}

func TestDMLForms(t *testing.T) {
	st, err := ParseOne("UPDATE ONLY t SET a = 1 WHERE b IS DISTINCT FROM c")
	require.NoError(t, err)
	up := st.AST.(*ast.UpdateStmt)
	require.Equal(t, "t", up.TableRefs.TableRefs.Left.(*ast.TableSource).Source.(*ast.TableName).Name.O)
	st, err = ParseOne("DELETE FROM ONLY t WHERE a = (SELECT max(a) FROM u)")
	require.NoError(t, err)
	del := st.AST.(*ast.DeleteStmt)
	require.Equal(t, "t", del.TableRefs.TableRefs.Left.(*ast.TableSource).Source.(*ast.TableName).Name.O)
}
