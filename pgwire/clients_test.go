package pgwire_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/pgwire"
)

func TestLibPQ(t *testing.T) {
	h := start(t, nil)
	db, err := sql.Open("postgres", h.dsn())
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	require.NoError(t, db.PingContext(ctx))

	var (
		i  int64
		s  string
		ts time.Time
		by []byte
	)
	require.NoError(t, db.QueryRowContext(ctx, "select $1::int8, $2::text, $3::timestamptz, $4::bytea", 7, "x'y", time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), []byte{1, 2}).
		Scan(&i, &s, &ts, &by))
	require.Equal(t, int64(7), i)
	require.Equal(t, "x'y", s)
	require.True(t, ts.Equal(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)))
	require.Equal(t, []byte{1, 2}, by)

	rows, err := db.QueryContext(ctx, "select * from t")
	require.NoError(t, err)
	n := 0
	for rows.Next() {
		n++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, 3, n)

	_, err = db.ExecContext(ctx, "select * from nosuch")
	var pqErr *pq.Error
	require.True(t, errors.As(err, &pqErr), "%v", err)
	require.Equal(t, pqerror.Code("42P01"), pqErr.Code)
	require.Equal(t, "15", pqErr.Position)

	// lib/pq cancels a context with a CancelRequest (then retires that
	// connection itself); the statement ends at once with 57014.
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	begin := time.Now()
	_, err = db.ExecContext(cctx, "select pg_sleep(30)")
	require.Error(t, err)
	if errors.As(err, &pqErr) {
		require.Equal(t, pqerror.Code("57014"), pqErr.Code)
	}
	require.Less(t, time.Since(begin), 5*time.Second)
	require.NoError(t, db.QueryRowContext(ctx, "select 'alive'").Scan(&s))
	require.Equal(t, "alive", s)

	// COPY FROM STDIN through lib/pq (a prepared COPY statement).
	txn, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	stmt, err := txn.Prepare(`COPY t (id, name, price, created) FROM STDIN`)
	require.NoError(t, err)
	for k := range 5 {
		_, err = stmt.Exec(100+k, "pq", "9.99", time.Date(2024, 5, 5, 0, 0, k, 0, time.UTC))
		require.NoError(t, err)
	}
	_, err = stmt.Exec()
	require.NoError(t, err)
	require.NoError(t, stmt.Close())
	require.NoError(t, txn.Commit())
	require.Equal(t, int64(8), h.eng.Rows("t"))
}

// psqlRun runs a psql 15 script against the server.
func psqlRun(t *testing.T, h *harness, script string, extra ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("psql"); err != nil {
		t.Skip("psql is not installed")
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "script.sql")
	require.NoError(t, os.WriteFile(f, []byte(script), 0o600))
	host, port, _ := strings.Cut(h.addr, ":")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := append([]string{"-X", "-v", "ON_ERROR_STOP=1", "-h", host, "-p", port, "-d", "asofsql", "-f", f}, extra...)
	cmd := exec.CommandContext(ctx, "psql", args...)
	env := []string{"PGSSLMODE=prefer", "PGUSER=alice", "PGCONNECT_TIMEOUT=10"}
	for _, k := range []string{"PGSSLMODE", "PGUSER", "PGPASSWORD"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestPsql(t *testing.T) {
	h := start(t, nil)
	out, err := psqlRun(t, h, `select * from t;
select 1 as a, 'x' as b \gx
\copy t from stdin
7	psql	0.10	2024-02-02 00:00:00+00
\.
copy t to stdout;
begin;
select 'in' as tx;
commit;
show timezone;
`)
	require.NoError(t, err, out)
	require.Equal(t, ` id | name | price |            created            
----+------+-------+-------------------------------
  1 | a    |  1.50 | 2024-01-02 03:04:05.123456+00
  2 | b    | -2.25 | 2024-01-02 03:04:06+00
  3 | c    |       | 2024-07-01 00:00:00+00
(3 rows)

-[ RECORD 1 ]
a | 1
b | x

COPY 1
1	a	1.50	2024-01-02 03:04:05.123456+00
2	b	-2.25	2024-01-02 03:04:06+00
3	c	\N	2024-07-01 00:00:00+00
7	psql	0.10	2024-02-02 00:00:00+00
BEGIN
 tx 
----
 in
(1 row)

COMMIT
 TimeZone 
----------
 UTC
(1 row)

`, out)

	// An error: psql draws the LINE/caret marker from the position and
	// stops (ON_ERROR_STOP).
	out, err = psqlRun(t, h, "select 1;\nselect *\n  from nosuch;\nselect 2;\n")
	require.Error(t, err)
	require.Contains(t, out, `ERROR:  relation "nosuch" does not exist
LINE 2:   from nosuch;
               ^`)
	require.NotContains(t, out, "?column?\n----------\n        2")

	// Catalog commands need pg_catalog, which the test engine lacks: a
	// clean error, and the session goes on.
	out, err = psqlRun(t, h, "\\dt\nselect 'still here' as s;\n", "-v", "ON_ERROR_STOP=0")
	require.NoError(t, err, out)
	require.Contains(t, out, "ERROR:  ")
	require.Contains(t, out, "still here")

	// \conninfo is answered by psql itself.
	out, err = psqlRun(t, h, "\\conninfo\n")
	require.NoError(t, err, out)
	require.Contains(t, out, `You are connected to database "asofsql" as user "alice"`)
}

// TestPsycopg runs psycopg 3 (Debian's python3-psycopg) when installed.
func TestPsycopg(t *testing.T) {
	// Debian's python3-psycopg is for the system interpreter; a python3
	// earlier on PATH (pyenv, a venv) may not have it.
	python := "python3"
	if err := exec.Command("/usr/bin/python3", "-c", "import psycopg").Run(); err == nil {
		python = "/usr/bin/python3"
	} else if err := exec.Command(python, "-c", "import psycopg").Run(); err != nil {
		t.Skip("python3 with psycopg 3 is not installed")
	}
	h := start(t, nil)
	host, port, _ := strings.Cut(h.addr, ":")
	script := `
import datetime, sys, psycopg
conn = psycopg.connect(host=sys.argv[1], port=sys.argv[2], user="py", dbname="asofsql")
with conn.cursor() as cur:
    cur.execute("select %s::int8 as n, %s::text as s, %s::timestamptz as ts, %s as u", (41, "x", datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc), "free"))
    print(cur.fetchone())
    cur.execute("select * from t")
    print(len(cur.fetchall()))
    with cur.copy("copy t (id, name, price, created) from stdin") as copy:
        copy.write_row((9, "py", "1.25", "2024-01-02 09:30:00+00"))
conn.commit()
with psycopg.connect(host=sys.argv[1], port=sys.argv[2], user="py", dbname="asofsql") as c2:
    cur = c2.cursor(binary=True)
    cur.execute("select * from t")
    print(cur.fetchall()[-1])
    try:
        cur.execute("select * from nosuch")
    except psycopg.errors.UndefinedTable as e:
        print("error", e.sqlstate, e.diag.statement_position)
`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "-c", script, host, port).CombinedOutput()
	require.NoError(t, err, string(out))
	// psycopg names the session's UTC zone ZoneInfo('UTC') or timezone.utc
	// depending on the interpreter's tz support: the same instant.
	got := strings.ReplaceAll(string(out), "zoneinfo.ZoneInfo(key='UTC')", "datetime.timezone.utc")
	require.Equal(t, `(41, 'x', datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc), 'free')
3
(9, 'py', Decimal('1.25'), datetime.datetime(2024, 1, 2, 9, 30, tzinfo=datetime.timezone.utc))
error 42P01 15
`, got)
}

// TestUnixSocket serves a Unix socket, where trust is allowed, to psql.
func TestUnixSocket(t *testing.T) {
	if _, err := exec.LookPath("psql"); err != nil {
		t.Skip("psql is not installed")
	}
	h := start(t, nil)
	dir := t.TempDir()
	l, err := net.Listen("unix", filepath.Join(dir, ".s.PGSQL.5433"))
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- h.srv.Serve(l) }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "psql", "-X", "-A", "-t", "-h", dir, "-p", "5433", "-U", "sock", "-d", "asofsql", "-c", "select 'over a socket'").CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, "over a socket\n", string(out))
	// Shutdown closes every listener (calling it twice is fine: the
	// harness calls it again).
	require.NoError(t, h.srv.Shutdown(ctx))
	require.ErrorIs(t, <-served, pgwire.ErrServerClosed)
}

// TestJDBC runs testdata/JdbcCheck.java with pgJDBC (Debian's
// libpostgresql-jdbc-java) when Java and the driver are installed.
func TestJDBC(t *testing.T) {
	const jar = "/usr/share/java/postgresql.jar"
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("java is not installed")
	}
	if _, err := os.Stat(jar); err != nil {
		t.Skip("pgJDBC is not installed (apt-get install libpostgresql-jdbc-java)")
	}
	h := start(t, nil)
	host, port, _ := strings.Cut(h.addr, ":")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "java", "-cp", jar, "testdata/JdbcCheck.java", host, port).CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, `server 15.0 (asofsql 0.1)
0 jdbc'0 2024-01-02T03:04:05.500Z 0.0 12.34
1 jdbc'1 2024-01-02T03:04:05.500Z 0.1 12.34
2 jdbc'2 2024-01-02T03:04:05.500Z 0.2 12.34
3 jdbc'3 2024-01-02T03:04:05.500Z 0.30000000000000004 12.34
4 jdbc'4 2024-01-02T03:04:05.500Z 0.4 12.34
5 jdbc'5 2024-01-02T03:04:05.500Z 0.5 12.34
6 jdbc'6 2024-01-02T03:04:05.500Z 0.6000000000000001 12.34
row 1 a 1.50
row 2 b -2.25
row 3 c null
rows 3
error 42P01 ERROR: relation "nosuch" does not exist |   Position: 15
application_name PostgreSQL JDBC Driver
`, string(out))
}
