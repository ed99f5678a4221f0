package parser

import (
	"testing"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

func strp(s string) *string { return &s }
func boolp(b bool) *bool    { return &b }

func TestOwnStatements(t *testing.T) {
	tests := []struct {
		sql  string
		want Node
	}{
		{"SHOW server_version", &ShowStmt{Name: "server_version"}},
		{"show ALL", &ShowStmt{All: true}},
		{"SHOW TIME ZONE", &ShowStmt{Name: "timezone"}},
		{"SHOW TRANSACTION ISOLATION LEVEL", &ShowStmt{Name: "transaction_isolation"}},
		{"SHOW asofsql.batch_size", &ShowStmt{Name: "asofsql.batch_size"}},
		{`SHOW "DateStyle"`, &ShowStmt{Name: "DateStyle"}},
		{"SET search_path TO public, \"$user\"", &SetStmt{Name: "search_path", Values: []string{"public", "$user"}}},
		{"SET application_name = 'psql'", &SetStmt{Name: "application_name", Values: []string{"psql"}}},
		{"SET extra_float_digits = -3", &SetStmt{Name: "extra_float_digits", Values: []string{"-3"}}},
		{"SET LOCAL statement_timeout TO 5000", &SetStmt{Name: "statement_timeout", Values: []string{"5000"}, Local: true}},
		{"SET SESSION datestyle TO DEFAULT", &SetStmt{Name: "datestyle", Default: true}},
		{"SET TIME ZONE 'UTC'", &SetStmt{Name: "timezone", Values: []string{"UTC"}}},
		{"SET TIME ZONE LOCAL", &SetStmt{Name: "timezone", Default: true}},
		{"SET client_encoding TO UTF8", &SetStmt{Name: "client_encoding", Values: []string{"utf8"}}},
		{"SET NAMES 'UTF8'", &SetStmt{Name: "client_encoding", Values: []string{"UTF8"}}},
		{"RESET application_name", &SetStmt{Name: "application_name", Default: true, Reset: true}},
		{"reset TIME ZONE", &SetStmt{Name: "timezone", Default: true, Reset: true}},
		{"RESET ALL", &SetStmt{Default: true, Reset: true, All: true}},
		{"RESET asofsql.batch_size", &SetStmt{Name: "asofsql.batch_size", Default: true, Reset: true}},
		{"BEGIN", &TransactionStmt{Kind: TxnBegin}},
		{"BEGIN TRANSACTION", &TransactionStmt{Kind: TxnBegin}},
		{"begin work", &TransactionStmt{Kind: TxnBegin}},
		{"BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", &TransactionStmt{Kind: TxnBegin, Isolation: "repeatable read", ReadOnly: boolp(true)}},
		{"START TRANSACTION READ WRITE NOT DEFERRABLE", &TransactionStmt{Kind: TxnBegin, Start: true, ReadOnly: boolp(false), Deferrable: boolp(false)}},
		{"COMMIT", &TransactionStmt{Kind: TxnCommit}},
		{"END", &TransactionStmt{Kind: TxnCommit}},
		{"END TRANSACTION", &TransactionStmt{Kind: TxnCommit}},
		{"ROLLBACK", &TransactionStmt{Kind: TxnRollback}},
		{"ABORT WORK", &TransactionStmt{Kind: TxnRollback}},
		{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", &SetTransactionStmt{Isolation: "serializable"}},
		{"SET LOCAL TRANSACTION READ ONLY DEFERRABLE", &SetTransactionStmt{ReadOnly: boolp(true), Deferrable: boolp(true)}},
		{"SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED, READ WRITE",
			&SetTransactionStmt{Session: true, Isolation: "read committed", ReadOnly: boolp(false)}},
		{"FETCH c1", &FetchStmt{Name: "c1", Count: 1}},
		{"FETCH 100 FROM c1", &FetchStmt{Name: "c1", Count: 100}},
		{"fetch forward all in \"C\"", &FetchStmt{Name: "C", Count: FetchAll}},
		{"FETCH BACKWARD 3 c", &FetchStmt{Name: "c", Direction: FetchBackward, Count: 3}},
		{"FETCH -2 FROM c", &FetchStmt{Name: "c", Count: -2}},
		{"FETCH PRIOR FROM c", &FetchStmt{Name: "c", Direction: FetchBackward, Count: 1}},
		{"FETCH LAST c", &FetchStmt{Name: "c", Direction: FetchAbsolute, Count: -1}},
		{"FETCH ABSOLUTE -3 IN c", &FetchStmt{Name: "c", Direction: FetchAbsolute, Count: -3}},
		{"FETCH RELATIVE 0 c", &FetchStmt{Name: "c", Direction: FetchRelative}},
		{"MOVE ALL IN c", &FetchStmt{Name: "c", Count: FetchAll, Move: true}},
		{"MOVE FROM c", &FetchStmt{Name: "c", Count: 1, Move: true}},
		{"CLOSE c1", &CloseStmt{Name: "c1"}},
		{"CLOSE ALL", &CloseStmt{All: true}},
		{"COPY trades FROM STDIN", &CopyStmt{Table: &TableName{Name: "trades"}, From: true, Format: CopyText}},
		{"COPY s.trades (a, \"B\") FROM '/tmp/x.csv' WITH (FORMAT csv, HEADER, DELIMITER ';', NULL 'NA')",
			&CopyStmt{Table: &TableName{Schema: "s", Name: "trades"}, Columns: []string{"a", "B"}, From: true, Path: "/tmp/x.csv", Format: CopyCSV, Header: true, Delimiter: strp(";"), Null: strp("NA")}},
		{"COPY t TO STDOUT (FORMAT binary)", &CopyStmt{Table: &TableName{Name: "t"}, Format: CopyBinary}},
		{"COPY t TO '/tmp/t.parquet' WITH (FORMAT 'parquet')", &CopyStmt{Table: &TableName{Name: "t"}, Path: "/tmp/t.parquet", Format: CopyParquet}},
		{"COPY t FROM STDIN WITH (HEADER false, FORMAT csv)", &CopyStmt{Table: &TableName{Name: "t"}, From: true, Format: CopyCSV}},
		{"COPY t FROM STDIN CSV HEADER DELIMITER AS '|'", &CopyStmt{Table: &TableName{Name: "t"}, From: true, Format: CopyCSV, Header: true, Delimiter: strp("|")}},
		{"CREATE TABLE quotes (sym text NOT NULL, ts timestamptz NOT NULL, bid double precision, ok boolean, n numeric(10,2), v varchar, b bytea) ORDER BY (ts)",
			&CreateTableStmt{Table: TableName{Name: "quotes"}, Columns: []ColumnDef{
				{Name: "sym", Type: sqltypes.TextType, NotNull: true, Pos: 22},
				{Name: "ts", Type: sqltypes.TimestampTZType, NotNull: true, Pos: 41},
				{Name: "bid", Type: sqltypes.Float8Type, Pos: 66},
				{Name: "ok", Type: sqltypes.BoolType, Pos: 88},
				{Name: "n", Type: sqltypes.NumericType(10, 2), Pos: 100},
				{Name: "v", Type: sqltypes.VarcharType, Pos: 117},
				{Name: "b", Type: sqltypes.ByteaType, Pos: 128},
			}, OrderBy: []string{"ts"}, OrderByPos: []int{147}}},
		{"CREATE TABLE IF NOT EXISTS s.\"T\" (id bigint PRIMARY KEY, t timestamp(3), d date, x int2, y real, z smallint)",
			&CreateTableStmt{Table: TableName{Schema: "s", Name: "T"}, IfNotExists: true, Columns: []ColumnDef{
				{Name: "id", Type: sqltypes.Int8Type, NotNull: true, Pos: 35},
				{Name: "t", Type: sqltypes.Type{Kind: sqltypes.Timestamp, Precision: 3, Scale: sqltypes.NoLimit, Length: sqltypes.NoLimit}, Pos: 58},
				{Name: "d", Type: sqltypes.DateType, Pos: 74},
				{Name: "x", Type: sqltypes.Int2Type, Pos: 82},
				{Name: "y", Type: sqltypes.Float4Type, Pos: 90},
				{Name: "z", Type: sqltypes.Int2Type, Pos: 98},
			}, PrimaryKey: []string{"id"}}},
		{"CREATE TEMP TABLE t (k int, t int, PRIMARY KEY (k, t)) ORDER BY k, t",
			&CreateTableStmt{Table: TableName{Name: "t"}, Temporary: true, Columns: []ColumnDef{
				{Name: "k", Type: sqltypes.Int4Type, NotNull: true, Pos: 22},
				{Name: "t", Type: sqltypes.Int4Type, NotNull: true, Pos: 29},
			}, PrimaryKey: []string{"k", "t"}, OrderBy: []string{"k", "t"}, OrderByPos: []int{65, 68}}},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			st, err := ParseOne(tt.sql)
			require.NoError(t, err)
			require.Nil(t, st.AST)
			require.Equal(t, tt.want, st.Node)
			require.Equal(t, tt.sql, st.Text)
		})
	}
}

func TestExplainAndCopyQuery(t *testing.T) {
	st, err := ParseOne("EXPLAIN ANALYZE SELECT * FROM l ASOF JOIN r USING (k, t) WHERE l.x = $1")
	require.NoError(t, err)
	ex := st.Node.(*ExplainStmt)
	require.True(t, ex.Analyze)
	require.False(t, ex.Verbose)
	require.NotNil(t, ex.Stmt.AST)
	require.Len(t, ex.Stmt.Asof, 1)
	require.Equal(t, 1, ex.Stmt.NumParams)
	require.Equal(t, 1, st.NumParams, "EXPLAIN reports the wrapped statement's parameters")
	require.Equal(t, 33, ex.Stmt.Asof[0].Pos, "positions stay relative to the whole input")

	st, err = ParseOne("EXPLAIN (ANALYZE false, VERBOSE, FORMAT TEXT) SELECT 1")
	require.NoError(t, err)
	ex = st.Node.(*ExplainStmt)
	require.False(t, ex.Analyze)
	require.True(t, ex.Verbose)

	st, err = ParseOne("EXPLAIN CREATE TEMP TABLE c (x) ORDER BY (x) AS SELECT a FROM l WHERE a > $1")
	require.NoError(t, err)
	ex = st.Node.(*ExplainStmt)
	ct := ex.Stmt.Node.(*CreateTableStmt)
	require.Equal(t, "SELECT a FROM l WHERE a > $1", ct.AsQuery.Text)
	require.Equal(t, 1, st.NumParams)

	// PostgreSQL explains CREATE TABLE AS only, not a plain CREATE TABLE
	// (an AS inside a column's parentheses does not count)
	st, err = ParseOne("EXPLAIN CREATE TABLE c (a text DEFAULT CAST(1 AS text))")
	requireErr(t, err, sqlerr.SyntaxError, 9, `at or near "CREATE"`)
	require.Nil(t, st)

	st, err = ParseOne("EXPLAIN EXPLAIN SELECT 1")
	requireErr(t, err, sqlerr.SyntaxError, 9, `at or near "EXPLAIN"`)
	require.Nil(t, st)

	st, err = ParseOne("COPY (SELECT * FROM l ASOF JOIN r USING (t) ORDER BY t) TO STDOUT WITH (FORMAT csv)")
	require.NoError(t, err)
	cp := st.Node.(*CopyStmt)
	require.Nil(t, cp.Table)
	require.Len(t, cp.Query.Asof, 1)
	require.Equal(t, CopyCSV, cp.Format)
	require.Equal(t, "SELECT * FROM l ASOF JOIN r USING (t) ORDER BY t", cp.Query.Text)
}

func TestOwnStatementErrors(t *testing.T) {
	tests := []struct {
		sql  string
		code string
		pos  int
		msg  string
	}{
		{"SHOW", sqlerr.SyntaxError, 5, "end of input"},
		{"SHOW a b", sqlerr.SyntaxError, 8, `at or near "b"`},
		{"SET x", sqlerr.SyntaxError, 6, "end of input"},
		{"SET x TO", sqlerr.SyntaxError, 9, "end of input"},
		{"SET TRANSACTION SNAPSHOT '00000003-0000001B-1'", sqlerr.FeatureNotSupported, 17, "SET TRANSACTION SNAPSHOT"},
		{"SET TRANSACTION", sqlerr.SyntaxError, 16, "end of input"},
		{"SET CHARACTERISTICS AS TRANSACTION READ ONLY", sqlerr.SyntaxError, 21, `at or near "AS"`},
		{"BEGIN ISOLATION LEVEL CHAOS", sqlerr.SyntaxError, 23, `at or near "CHAOS"`},
		{"ROLLBACK TO SAVEPOINT a", sqlerr.FeatureNotSupported, 10, "SAVEPOINT"},
		{"COPY t FROM STDIN WITH (FORMAT xml)", sqlerr.InvalidParameterValue, 32, `COPY format "xml" not recognized`},
		{"COPY t FROM STDIN WITH (FORMAT csv, FORMAT text)", sqlerr.SyntaxError, 37, "conflicting or redundant options"},
		{"COPY t FROM STDIN WITH (DELIMITER ',,')", sqlerr.InvalidParameterValue, 25, "single one-byte character"},
		{"COPY t FROM STDIN WITH (BOGUS 1)", sqlerr.SyntaxError, 25, `option "bogus" not recognized`},
		{"COPY t FROM STDIN WITH (QUOTE '\"')", sqlerr.FeatureNotSupported, 25, "QUOTE"},
		{"COPY t FROM STDIN WITH (FORMAT binary, HEADER)", sqlerr.SyntaxError, 1, "cannot specify HEADER in BINARY mode"},
		{"COPY t FROM STDIN WITH (HEADER maybe)", sqlerr.InvalidParameterValue, 32, "Boolean"},
		{"COPY t FROM STDIN WITH (NULL 1)", sqlerr.SyntaxError, 30, "requires a string"},
		{"COPY (SELECT 1) FROM STDIN", sqlerr.SyntaxError, 17, "can only be copied TO"},
		{"COPY t FROM PROGRAM 'ls'", sqlerr.FeatureNotSupported, 13, "PROGRAM"},
		{"COPY t FROM ''", sqlerr.InvalidParameterValue, 13, "file name must not be empty"},
		{"COPY t TO STDIN", sqlerr.SyntaxError, 11, `at or near "STDIN"`},
		{"COPY t", sqlerr.SyntaxError, 7, "end of input"},
		{"COPY t TO", sqlerr.SyntaxError, 10, "end of input"},
		{"COPY (DELETE FROM t) TO STDOUT", sqlerr.SyntaxError, 7, `at or near "DELETE"`},
		{"CREATE TABLE t (a int, a text)", sqlerr.Code(sqlerr.New("42701", "")), 24, "specified more than once"},
		{"CREATE TABLE t (a serial)", sqlerr.UndefinedObject, 19, "serial"},
		{"CREATE TABLE t (a int DEFAULT 1 DEFAULT 2)", sqlerr.SyntaxError, 33, "multiple default values"},
		{"CREATE TABLE t (a int DEFAULT)", sqlerr.SyntaxError, 30, `at or near ")"`},
		{"CREATE TABLE t (a int) AS SELECT 1", sqlerr.SyntaxError, 24, `at or near "AS"`},
		{"CREATE TABLE t ORDER BY (a)", sqlerr.SyntaxError, 28, "end of input"},
		{"CREATE TABLE t AS DELETE FROM u", sqlerr.SyntaxError, 19, `at or near "DELETE"`},
		{"CREATE TABLE t AS EXECUTE p", sqlerr.FeatureNotSupported, 19, "CREATE TABLE AS EXECUTE"},
		{"CREATE VIEW v AS SELECT 1 WITH CHECK OPTION", sqlerr.FeatureNotSupported, 27, "CHECK OPTION"},
		{"CREATE RECURSIVE VIEW v AS SELECT 1", sqlerr.FeatureNotSupported, 8, "RECURSIVE"},
		{"CREATE VIEW v", sqlerr.SyntaxError, 14, "end of input"},
		{"ALTER VIEW v RENAME TO w", sqlerr.FeatureNotSupported, 1, "ALTER VIEW is not supported"},
		{"ALTER TABLE t ALTER COLUMN a TYPE text", sqlerr.FeatureNotSupported, 15, "ALTER COLUMN"},
		{"ALTER TABLE t ADD COLUMN a int, RENAME TO u", sqlerr.SyntaxError, 33, `at or near "RENAME"`},
		{"ALTER TABLE t RENAME a", sqlerr.SyntaxError, 23, "end of input"},
		{"ALTER TABLE t ADD CONSTRAINT c CHECK (a > 0)", sqlerr.FeatureNotSupported, 19, "ADD CONSTRAINT"},
		{"ALTER TABLE t SET SCHEMA s", sqlerr.FeatureNotSupported, 15, "ALTER TABLE SET"},
		{"ALTER TABLE t ADD COLUMN b int UNIQUE", sqlerr.FeatureNotSupported, 32, "UNIQUE"},
		{"TRUNCATE", sqlerr.SyntaxError, 9, "end of input"},
		{"TRUNCATE t u", sqlerr.SyntaxError, 12, `at or near "u"`},
		{"UPDATE t SET a = 1 FROM u WHERE t.k = u.k", sqlerr.FeatureNotSupported, 20, "UPDATE ... FROM"},
		{"UPDATE t SET a = 1 WHERE b IS DISTINCT FROM c RETURNING a", sqlerr.FeatureNotSupported, 47, "RETURNING"},
		{"UPDATE t SET (a, b) = (1, 2)", sqlerr.FeatureNotSupported, 14, "multiple-column assignment"},
		{"UPDATE t SET a = 1 LIMIT 1", sqlerr.SyntaxError, 20, `at or near "LIMIT"`},
		{"DELETE FROM t USING u WHERE t.k = u.k", sqlerr.FeatureNotSupported, 15, "DELETE ... USING"},
		{"DELETE t FROM t", sqlerr.SyntaxError, 8, `at or near "t"`},
		{"DELETE FROM t ORDER BY a", sqlerr.SyntaxError, 15, `at or near "ORDER"`},
		{"DELETE FROM t WHERE CURRENT OF c", sqlerr.FeatureNotSupported, 21, "WHERE CURRENT OF"},
		{"CREATE TABLE t (a int) ORDER BY (b)", sqlerr.UndefinedColumn, 34, `column "b" named in ORDER BY`},
		{"CREATE TABLE t (a int) ORDER BY (a DESC)", sqlerr.FeatureNotSupported, 36, "descending"},
		{"CREATE TABLE t (a int, PRIMARY KEY (b))", sqlerr.UndefinedColumn, 1, `column "b" named in key`},
		{"CREATE TABLE t (a int, UNIQUE (a))", sqlerr.FeatureNotSupported, 24, "UNIQUE"},
		{"CREATE TABLE t (a numeric(50))", sqlerr.InvalidParameterValue, 19, "precision"},
		{"EXPLAIN (FORMAT JSON) SELECT 1", sqlerr.FeatureNotSupported, 17, "json"},
		{"EXPLAIN (BOGUS) SELECT 1", sqlerr.SyntaxError, 10, "unrecognized EXPLAIN option"},
		{"EXPLAIN", sqlerr.SyntaxError, 8, "end of input"},
		{"VACUUM", sqlerr.FeatureNotSupported, 1, "VACUUM is not supported"},
		{"FROB x", sqlerr.SyntaxError, 1, `at or near "FROB"`},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			_, err := Parse(tt.sql)
			requireErr(t, err, tt.code, tt.pos, tt.msg)
		})
	}
}

func TestParseOne(t *testing.T) {
	st, err := ParseOne(" -- nothing\n")
	require.NoError(t, err)
	require.Nil(t, st)
	_, err = ParseOne("SELECT 1; SELECT 2")
	requireErr(t, err, sqlerr.SyntaxError, 0, "multiple commands")
}

func TestBatches(t *testing.T) {
	stmts, err := Parse("")
	require.NoError(t, err)
	require.Empty(t, stmts)
	stmts, err = Parse("  -- just a comment\n /* and /* nested */ one */ ; ;")
	require.NoError(t, err)
	require.Empty(t, stmts)

	sql := "BEGIN; SELECT $1::int; COMMIT;\nSELECT * FROM l ASOF JOIN r USING (t)"
	stmts, err = Parse(sql)
	require.NoError(t, err)
	require.Len(t, stmts, 4)
	require.Equal(t, "BEGIN", stmts[0].Text)
	require.Equal(t, "SELECT $1::int", stmts[1].Text)
	require.Equal(t, 7, stmts[1].Start)
	require.Equal(t, 1, stmts[1].NumParams)
	require.Equal(t, "COMMIT", stmts[2].Text)
	require.Len(t, stmts[3].Asof, 1)
	require.Equal(t, 48, stmts[3].Asof[0].Pos)

	// An error in the second statement is positioned in the whole string.
	_, err = Parse("SELECT 1; SELECT 1 FROM FROM")
	requireErr(t, err, sqlerr.SyntaxError, 25, `at or near "FROM"`)
}

func TestDeclare(t *testing.T) {
	st, err := ParseOne("DECLARE c1 NO SCROLL BINARY CURSOR WITH HOLD FOR SELECT a FROM t WHERE b = $2")
	require.NoError(t, err)
	d := st.Node.(*DeclareStmt)
	require.Equal(t, "c1", d.Name)
	require.Equal(t, boolp(false), d.Scroll)
	require.True(t, d.Binary)
	require.True(t, d.Hold)
	require.Equal(t, "SELECT a FROM t WHERE b = $2", d.Query.Text)
	require.Equal(t, 2, st.NumParams, "DECLARE reports its query's parameters")

	st, err = ParseOne("DECLARE c INSENSITIVE SCROLL CURSOR WITHOUT HOLD FOR VALUES (1)")
	require.NoError(t, err)
	d = st.Node.(*DeclareStmt)
	require.Equal(t, boolp(true), d.Scroll)
	require.False(t, d.Hold)

	st, err = ParseOne("DECLARE c CURSOR FOR (SELECT 1)")
	require.NoError(t, err)
	require.Nil(t, st.Node.(*DeclareStmt).Scroll)

	for _, tt := range []struct {
		sql, code string
		pos       int
		msg       string
	}{
		{"DECLARE c SCROLL NO SCROLL CURSOR FOR SELECT 1", "42P11", 0, "cannot specify both SCROLL and NO SCROLL"},
		{"DECLARE c ASENSITIVE INSENSITIVE CURSOR FOR SELECT 1", "42P11", 0, "cannot specify both ASENSITIVE and INSENSITIVE"},
		{"DECLARE c CURSOR FOR INSERT INTO t VALUES (1)", sqlerr.SyntaxError, 22, `at or near "INSERT"`},
		{"DECLARE c CURSOR SELECT 1", sqlerr.SyntaxError, 18, `at or near "SELECT"`},
		{"DECLARE c CURSOR FOR", sqlerr.SyntaxError, 21, "end of input"},
		{"FETCH 3000000000 FROM c", sqlerr.SyntaxError, 7, `at or near "3000000000"`},
		{"FETCH FORWARD FROM", sqlerr.SyntaxError, 19, "end of input"},
		{"CLOSE", sqlerr.SyntaxError, 6, "end of input"},
	} {
		_, err := ParseOne(tt.sql)
		requireErr(t, err, tt.code, tt.pos, tt.msg)
	}
}

func TestFdwForms(t *testing.T) {
	for _, sql := range []string{
		"SELECT ts FROM public.trades WHERE ((sym ~~ 'A%')) AND ((sym !~~ 'B%')) AND ((sym ~~* 'a%')) AND ((sym !~~* 'b%'))",
		"SELECT ts FROM public.trades ORDER BY ts DESC NULLS FIRST LIMIT 3::bigint",
		"SELECT ts FROM public.trades ORDER BY ts ASC NULLS LAST LIMIT $1::bigint OFFSET 2::bigint",
	} {
		_, err := ParseOne(sql)
		require.NoError(t, err, sql)
	}
	_, err := ParseOne("SELECT ts FROM t LIMIT 3::text")
	require.Error(t, err)
}
