package server_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// TestPsycopgPreparedStatementsAcrossRollback runs psycopg 3 as an
// ordinary Python program does: it prepares a query it has run five times
// (a Parse named _pg3_n), sends DEALLOCATE ALL as a simple query after
// conn.rollback(), and DEALLOCATE _pg3_n when a statement falls out of its
// cache (prepared_max). Each must work and the program go on.
func TestPsycopgPreparedStatementsAcrossRollback(t *testing.T) {
	python := "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import psycopg").Run(); err != nil {
		t.Skip("/usr/bin/python3 with psycopg 3 is not installed")
	}
	addr := start(t)
	host, port, _ := strings.Cut(addr, ":")
	script := `
import sys, psycopg
conn = psycopg.connect(host=sys.argv[1], port=sys.argv[2], user="py", dbname="asofsql")
conn.prepared_max = 2
names = lambda: sorted(n.decode() for n in conn._prepared._names.values())
q = "select %s::int + 1"
for i in range(8):
    assert conn.execute(q, (i,)).fetchone()[0] == i + 1
print("prepared", names())
# SQL EXECUTE runs the statement psycopg prepared over the protocol
print("execute", conn.execute("execute _pg3_0 (41)").fetchone())
conn.rollback()
print("after rollback", names())
for i in range(8):
    assert conn.execute(q, (i,)).fetchone()[0] == i + 1
for s in "abc":
    for i in range(7):
        assert conn.execute("select %s::text || '" + s + "'", (str(i),)).fetchone()[0] == str(i) + s
print("evicted", names())
print("kept", conn.execute("execute _pg3_4 ('z')").fetchone())
conn.commit()
for gone in ("_pg3_0", "_pg3_1"):  # by DEALLOCATE ALL, by eviction
    try:
        conn.execute("execute " + gone + " (1)")
    except psycopg.errors.InvalidSqlStatementName as e:
        print("error", e.sqlstate, e)
    conn.rollback()
print(conn.execute("select 'still here'").fetchone()[0])
`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "-c", script, host, port).CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, `prepared ['_pg3_0']
execute (42,)
after rollback []
evicted ['_pg3_2', '_pg3_3', '_pg3_4']
kept ('zc',)
error 26000 prepared statement "_pg3_0" does not exist
error 26000 prepared statement "_pg3_1" does not exist
still here
`, string(out))
}

// TestWireAndSQLStatementsShareANamespace checks that the statements the
// wire protocol's Parse names and those SQL PREPARE makes are one set, as
// in Postgres.
func TestWireAndSQLStatementsShareANamespace(t *testing.T) {
	c := dial(t, start(t), pgx.QueryExecModeSimpleProtocol)
	ctx := ctx(t)
	pc := c.PgConn()

	// Parse names a statement; SQL EXECUTE runs it.
	_, err := pc.Prepare(ctx, "wire_stmt", "SELECT $1::bigint * 2", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"42"}, rows(t, c, "EXECUTE wire_stmt (21)"))

	// SQL PREPARE names one; Describe and Bind find it, and Parse may not
	// take its name.
	_, err = c.Exec(ctx, "PREPARE sql_stmt (text) AS SELECT upper($1)")
	require.NoError(t, err)
	sd, err := pc.Prepare(ctx, "sql_stmt", "SELECT 1", nil)
	require.Nil(t, sd)
	var pe *pgconn.PgError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "42P05", pe.Code)
	res := pc.ExecPrepared(ctx, "sql_stmt", [][]byte{[]byte("shout")}, nil, nil).Read()
	require.NoError(t, res.Err)
	require.Equal(t, [][]byte{[]byte("SHOUT")}, res.Rows[0])

	// DEALLOCATE drops a Parse's statement: Bind then fails with 26000.
	_, err = c.Exec(ctx, "DEALLOCATE wire_stmt")
	require.NoError(t, err)
	res = pc.ExecPrepared(ctx, "wire_stmt", [][]byte{[]byte("1")}, nil, nil).Read()
	require.ErrorAs(t, res.Err, &pe)
	require.Equal(t, "26000", pe.Code)

	// The protocol's Close drops a SQL statement; closing an unknown name
	// is no error.
	require.NoError(t, pc.Deallocate(ctx, "sql_stmt"))
	require.NoError(t, pc.Deallocate(ctx, "sql_stmt"))
	_, err = c.Exec(ctx, "EXECUTE sql_stmt ('x')")
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "26000", pe.Code)

	// DEALLOCATE ALL drops both kinds; the names are free again.
	_, err = pc.Prepare(ctx, "a", "SELECT 'a'", nil)
	require.NoError(t, err)
	_, err = c.Exec(ctx, "PREPARE b AS SELECT 'b'")
	require.NoError(t, err)
	_, err = c.Exec(ctx, "DEALLOCATE ALL")
	require.NoError(t, err)
	_, err = pc.Prepare(ctx, "b", "SELECT 'b again'", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"b again"}, rows(t, c, "EXECUTE b"))
	_, err = c.Exec(ctx, "EXECUTE a")
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "26000", pe.Code)
}
