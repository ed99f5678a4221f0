package parser

import (
	"testing"

	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/stretchr/testify/require"
)

func TestPreparedStatementForms(t *testing.T) {
	st, err := ParseOne(`PREPARE ins (integer, varchar(3)) AS INSERT INTO t VALUES ($1, $2, $3)`)
	require.NoError(t, err)
	p := st.Node.(*PrepareStmt)
	require.Equal(t, "ins", p.Name)
	require.Equal(t, []sqltypes.Type{sqltypes.Int4Type, {Kind: sqltypes.Varchar, Precision: sqltypes.NoLimit, Scale: sqltypes.NoLimit, Length: 3}}, p.Types)
	require.IsType(t, &ast.InsertStmt{}, p.Stmt.AST)
	require.Equal(t, 3, p.Stmt.NumParams)
	// The parameters are the prepared statement's, not the PREPARE's.
	require.Zero(t, st.NumParams)

	st, err = ParseOne(`PREPARE "Q" AS (SELECT 1)`)
	require.NoError(t, err)
	require.Equal(t, "Q", st.Node.(*PrepareStmt).Name)

	// EXECUTE's arguments are expressions with their own parameters and
	// positions in the EXECUTE's text.
	st, err = ParseOne(`EXECUTE ins (1 + $2, 'a' || $1, x IS DISTINCT FROM y)`)
	require.NoError(t, err)
	e := st.Node.(*ExecuteStmt)
	require.Equal(t, "ins", e.Name)
	fields := e.Args.AST.(*ast.SelectStmt).Fields.Fields
	require.Len(t, fields, 3)
	require.Equal(t, 2, st.NumParams)
	require.Equal(t, 14, e.Args.Pos(fields[0].Expr))
	require.Equal(t, 22, e.Args.Pos(fields[1].Expr))

	st, err = ParseOne(`EXECUTE ins`)
	require.NoError(t, err)
	require.Nil(t, st.Node.(*ExecuteStmt).Args)

	for sql, want := range map[string]*DeallocateStmt{
		`DEALLOCATE p`: {Name: "p"}, `DEALLOCATE PREPARE p`: {Name: "p"}, `DEALLOCATE ALL`: {All: true},
		`DEALLOCATE PREPARE ALL`: {All: true}, `DEALLOCATE "all"`: {Name: "all"}, `DEALLOCATE prepare`: {Name: "prepare"},
	} {
		st, err := ParseOne(sql)
		require.NoError(t, err, sql)
		require.Equal(t, want, st.Node, sql)
	}
	for sql, want := range map[string]string{
		`DISCARD ALL`: "ALL", `discard plans`: "PLANS", `DISCARD SEQUENCES`: "SEQUENCES", `DISCARD TEMP`: "TEMP",
		`DISCARD TEMPORARY`: "TEMP",
	} {
		st, err := ParseOne(sql)
		require.NoError(t, err, sql)
		require.Equal(t, &DiscardStmt{What: want}, st.Node, sql)
	}
}
