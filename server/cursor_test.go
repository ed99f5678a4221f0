package server_test

import (
	"context"
	"encoding/binary"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// TestPsycopgNamedCursors runs psycopg 3's server-side cursors: DECLARE
// through the extended protocol, Describe of the portal the cursor is,
// FETCH FORWARD n and MOVE for scroll(), WITH HOLD across a commit.
func TestPsycopgNamedCursors(t *testing.T) {
	python := "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import psycopg").Run(); err != nil {
		t.Skip("/usr/bin/python3 with psycopg 3 is not installed")
	}
	addr := start(t)
	host, port, _ := strings.Cut(addr, ":")
	script := `
import sys, psycopg
conn = psycopg.connect(host=sys.argv[1], port=sys.argv[2], user="py", dbname="asofsql")
conn.execute("CREATE TABLE pyc (a integer, b text) ORDER BY (a)")
conn.execute("INSERT INTO pyc SELECT i, 'r' || i FROM generate_series(1, 250) i")
conn.commit()
with conn.cursor(name="named") as cur:
    cur.itersize = 7
    cur.execute("SELECT a, b FROM pyc WHERE a > %s", (200,))
    print([d.name for d in cur.description])
    print(cur.fetchone(), cur.fetchmany(2))
    rows = list(cur)
    print(len(rows), rows[-1])
conn.commit()
with conn.cursor(name="bin", binary=True) as cur:
    cur.execute("SELECT a, b FROM pyc WHERE a <= %s", (3,))
    print(cur.fetchall())
with conn.cursor(name="scr", scrollable=True) as cur:
    cur.execute("SELECT a FROM pyc WHERE a <= 10")
    print(cur.fetchmany(4))
    cur.scroll(-2)
    print(cur.fetchone())
    cur.scroll(0, mode="absolute")
    print(cur.fetchone())
with conn.cursor(name="fwd", scrollable=False) as cur:
    cur.execute("SELECT a FROM pyc")
    cur.fetchmany(3)
    try:
        cur.scroll(-1)
    except psycopg.errors.ObjectNotInPrerequisiteState as e:
        print("error", e.sqlstate, e)
conn.rollback()
with conn.cursor(name="held", withhold=True) as cur:
    cur.execute("SELECT count(*) FROM pyc")
    conn.commit()
    print(cur.fetchone())
`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "-c", script, host, port).CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, `['a', 'b']
(201, 'r201') [(202, 'r202'), (203, 'r203')]
47 (250, 'r250')
[(1, 'r1'), (2, 'r2'), (3, 'r3')]
[(1,), (2,), (3,), (4,)]
(3,)
(1,)
error 55000 cursor can only scan forward
HINT:  Declare it with SCROLL option to enable backward scan.
(250,)
`, string(out))
}

// TestCursorsOverPgx declares and fetches in every pgx mode, as
// postgres_fdw does: DECLARE with parameters through the extended
// protocol, FETCH n as a simple query.
func TestCursorsOverPgx(t *testing.T) {
	addr := start(t)
	load(t, dial(t, addr, pgx.QueryExecModeCacheStatement))
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol} {
		c := dial(t, addr, mode)
		ctx := ctx(t)
		tx, err := c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		require.NoError(t, err)
		tag, err := tx.Exec(ctx, `DECLARE c1 CURSOR FOR SELECT ts, sym, price FROM public.trades WHERE ((price > $1::double precision)) ORDER BY ts ASC NULLS LAST`, 99.5)
		require.NoError(t, err)
		require.Equal(t, "DECLARE CURSOR", tag.String())
		require.Equal(t, []string{"5|A|100", "6|B|200"}, rows(t, c, `FETCH 2 FROM c1`))
		tag, err = tx.Exec(ctx, `MOVE 1 IN c1`)
		require.NoError(t, err)
		require.Equal(t, "MOVE 1", tag.String())
		res := c.PgConn().Exec(ctx, `FETCH 100 FROM c1`)
		results, err := res.ReadAll()
		require.NoError(t, err)
		require.Len(t, results[0].Rows, 2)
		require.Equal(t, "FETCH 2", results[0].CommandTag.String())
		tag, err = tx.Exec(ctx, `CLOSE c1`)
		require.NoError(t, err)
		require.Equal(t, "CLOSE CURSOR", tag.String())
		require.NoError(t, tx.Commit(ctx))
	}
}

// TestBinaryCursor fetches from a BINARY cursor with the simple protocol:
// the rows come in binary, as the RowDescription says.
func TestBinaryCursor(t *testing.T) {
	addr := start(t)
	c := dial(t, addr, pgx.QueryExecModeSimpleProtocol)
	load(t, c)
	pc := c.PgConn()
	results, err := pc.Exec(ctx(t), `BEGIN; DECLARE b BINARY CURSOR FOR SELECT ts FROM trades; FETCH 2 FROM b; COMMIT`).ReadAll()
	require.NoError(t, err)
	fetch := results[2]
	require.Equal(t, "FETCH 2", fetch.CommandTag.String())
	require.Equal(t, int16(1), fetch.FieldDescriptions[0].Format)
	require.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0, 3}, fetch.Rows[0][0])
	require.Equal(t, uint64(5), binary.BigEndian.Uint64(fetch.Rows[1][0]))

	// A cursor that is not there is 34000.
	_, err = pc.Exec(ctx(t), `BEGIN`).ReadAll()
	require.NoError(t, err)
	var pe *pgconn.PgError
	_, err = pc.Exec(ctx(t), `FETCH 1 FROM nosuch`).ReadAll()
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "34000", pe.Code)
	_, err = pc.Exec(ctx(t), `ROLLBACK`).ReadAll()
	require.NoError(t, err)
}
