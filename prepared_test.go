package asofsql_test

import (
	"context"
	"io"
	"testing"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// TestBatchPlansOnce checks that a Batch statement runs on the plan and
// snapshot its analysis made: a row committed by another session between
// Next and Execute is not seen (planning again at Execute would see it).
func TestBatchPlansOnce(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	ctx := context.Background()
	_, err := db.Exec(ctx, `CREATE TABLE once (x INT); INSERT INTO once VALUES (1)`)
	require.NoError(t, err)
	s := db.Session()
	defer s.Close()

	b, err := s.Batch(ctx, `SELECT count(*) FROM once; SELECT count(*) FROM once`)
	require.NoError(t, err)
	st, err := b.Next(ctx)
	require.NoError(t, err)
	_, err = db.Exec(ctx, `INSERT INTO once VALUES (2)`)
	require.NoError(t, err)
	cur, err := st.Execute(ctx)
	require.NoError(t, err)
	require.True(t, cur.Next())
	require.Equal(t, "1", cur.RecordBatch().Column(0).ValueStr(0))
	require.NoError(t, drain(cur))
	require.NoError(t, cur.Close())

	// A second Execute plans afresh.
	rows, err := func() ([]string, error) {
		cur, err := st.Execute(ctx)
		if err != nil {
			return nil, err
		}
		defer cur.Release()
		var out []string
		for cur.Next() {
			out = append(out, cur.RecordBatch().Column(0).ValueStr(0))
		}
		return out, cur.Err()
	}()
	require.NoError(t, err)
	require.Equal(t, []string{"2"}, rows)

	// The next statement is analysed when reached; one that never runs
	// is released by the next Next or by Close.
	_, err = b.Next(ctx)
	require.NoError(t, err)
	_, err = b.Next(ctx)
	require.Equal(t, io.EOF, err)
	require.NoError(t, b.Close())
}

// TestPreparedStatements covers the session's one namespace of prepared
// statements: SQL PREPARE and PrepareNamed (the wire protocol's Parse).
func TestPreparedStatements(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	ctx := context.Background()
	s := db.Session()
	defer s.Close()

	_, err := s.Exec(ctx, `PREPARE add1 (int) AS SELECT $1 + 1`)
	require.NoError(t, err)
	st, ok := s.Prepared("add1")
	require.True(t, ok)
	require.Equal(t, []sqltypes.Type{sqltypes.Int4Type}, st.ParamTypes())
	got, err := sessRows(t, s, `EXECUTE add1 ($1 * 2)`, 20)
	require.NoError(t, err)
	require.Equal(t, []string{"41"}, got)
	// The statement PREPARE made runs through the API as well.
	cur, err := st.Execute(ctx, 5)
	require.NoError(t, err)
	require.NoError(t, drain(cur))
	require.Equal(t, "SELECT 1", cur.Tag())
	require.NoError(t, cur.Close())

	// A name is taken once, whichever way it was prepared.
	_, err = s.PrepareNamed(ctx, "add1", `SELECT 1`, nil)
	require.Equal(t, sqlerr.DuplicatePreparedStatement, sqlerr.Code(err))
	named, err := s.PrepareNamed(ctx, "wire", `SELECT upper($1)`, []sqltypes.Type{sqltypes.TextType})
	require.NoError(t, err)
	require.Equal(t, "SELECT upper($1)", named.Text())
	_, err = s.Exec(ctx, `PREPARE wire AS SELECT 1`)
	require.Equal(t, sqlerr.DuplicatePreparedStatement, sqlerr.Code(err))
	got, err = sessRows(t, s, `EXECUTE wire ('abc')`)
	require.NoError(t, err)
	require.Equal(t, []string{"ABC"}, got)

	// The empty statement can be named too, and EXECUTE of it is an
	// error rather than a result.
	empty, err := s.PrepareNamed(ctx, "nothing", ` -- no statement`, nil)
	require.NoError(t, err)
	require.True(t, empty.Empty())
	_, err = s.Exec(ctx, `EXECUTE nothing`)
	require.Equal(t, sqlerr.SyntaxError, sqlerr.Code(err))

	// Query accepts an EXECUTE of a statement with rows only.
	_, err = s.Exec(ctx, `CREATE TABLE pt (x INT); PREPARE ins AS INSERT INTO pt VALUES ($1)`)
	require.NoError(t, err)
	_, err = s.Query(ctx, `EXECUTE ins (1)`)
	require.Equal(t, sqlerr.FeatureNotSupported, sqlerr.Code(err))
	res, err := s.Exec(ctx, `EXECUTE ins (1)`)
	require.NoError(t, err)
	require.Equal(t, "INSERT 0 1", res.Tag)
	require.Equal(t, int64(1), res.RowsAffected)

	// A statement whose result changed is refused at EXECUTE, as any
	// prepared statement whose plan changed shape.
	_, err = s.Exec(ctx, `PREPARE all_pt AS SELECT * FROM pt`)
	require.NoError(t, err)
	_, err = s.Exec(ctx, `DROP TABLE pt; CREATE TABLE pt (x TEXT)`)
	require.NoError(t, err)
	_, err = s.Exec(ctx, `EXECUTE all_pt`)
	require.Equal(t, sqlerr.FeatureNotSupported, sqlerr.Code(err))
	require.Equal(t, "cached plan must not change result type", err.Error())

	// Deallocate is DEALLOCATE.
	require.NoError(t, s.Deallocate("wire"))
	require.Equal(t, sqlerr.InvalidSQLStatementName, sqlerr.Code(s.Deallocate("wire")))
	_, err = s.Exec(ctx, `EXECUTE wire ('x')`)
	require.Equal(t, sqlerr.InvalidSQLStatementName, sqlerr.Code(err))

	// DISCARD ALL drops every statement and returns the settings to the
	// session defaults (a startup parameter's value, not the built-in
	// one).
	require.NoError(t, s.Set("application_name", "started"))
	_, err = s.Exec(ctx, `SET application_name = 'changed'; DISCARD ALL`)
	require.NoError(t, err)
	v, _ := s.Setting("application_name")
	require.Equal(t, "started", v)
	_, ok = s.Prepared("add1")
	require.False(t, ok)
}

// TestExecuteCycle checks that statements that EXECUTE each other in a
// cycle (possible with named wire statements) end with 54001, not a
// crash.
func TestExecuteCycle(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	ctx := context.Background()
	s := db.Session()
	defer s.Close()

	_, err := s.PrepareNamed(ctx, "y", `SELECT 1`, nil)
	require.NoError(t, err)
	_, err = s.PrepareNamed(ctx, "x", `EXECUTE y`, nil)
	require.NoError(t, err)
	require.NoError(t, s.Deallocate("y"))
	_, err = s.PrepareNamed(ctx, "y", `EXECUTE x`, nil)
	require.NoError(t, err)
	_, err = s.Exec(ctx, `EXECUTE y`)
	require.Equal(t, "54001", sqlerr.Code(err))
	// The session is usable afterwards.
	got, err := sessRows(t, s, `SELECT 'fine'`)
	require.NoError(t, err)
	require.Equal(t, []string{"fine"}, got)
}

// TestStmtNoRows checks which statements report NoRows: the wire server
// runs those on the call's context alone (nothing of them may outlive
// it), so a statement that can return rows must never report it.
func TestStmtNoRows(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	ctx := context.Background()
	_, err := db.Exec(ctx, `CREATE TABLE nr (x INT)`)
	require.NoError(t, err)
	s := db.Session()
	defer s.Close()
	_, err = s.Exec(ctx, `PREPARE ins AS INSERT INTO nr VALUES ($1)`)
	require.NoError(t, err)
	_, err = s.Exec(ctx, `PREPARE sel AS SELECT x FROM nr`)
	require.NoError(t, err)
	_, err = s.Exec(ctx, `BEGIN; DECLARE cur CURSOR FOR SELECT x FROM nr`)
	require.NoError(t, err)
	for _, c := range []struct {
		sql    string
		noRows bool
	}{
		{`INSERT INTO nr VALUES ($1)`, true},
		{`INSERT INTO nr SELECT x FROM nr`, true},
		{`SELECT x FROM nr`, false},
		{`SELECT 1`, false},
		{`EXECUTE ins (1)`, false}, // runs whatever ins names when it runs
		{`EXECUTE sel`, false},
		{`FETCH 1 FROM cur`, false},
		{`DELETE FROM nr`, false},
		{`COPY nr FROM STDIN`, false},
		{`SHOW TimeZone`, false},
	} {
		st, err := s.Prepare(ctx, c.sql, nil)
		require.NoError(t, err, c.sql)
		require.Equal(t, c.noRows, st.NoRows(), c.sql)
		require.NoError(t, st.Close())
	}
	_, err = s.Exec(ctx, `ROLLBACK`)
	require.NoError(t, err)
}
