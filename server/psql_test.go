package server_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// psqlTables are created in asofsql and, without ORDER BY, in a real
// PostgreSQL 15 to capture the *.pg15 files in testdata/psql.
var psqlTables = []string{
	`CREATE TABLE trades (ts timestamp NOT NULL, sym text, price double precision, qty integer) ORDER BY (ts)`,
	`CREATE TABLE quotes (ts timestamptz(3), sym varchar(8) NOT NULL, bid numeric(10,2), ask numeric, flag boolean,
		n smallint, b bigint, d date, iv interval, r real, raw bytea, vc varchar, t0 timestamp(0))`,
}

// psqlC runs one psql 15 command (-c) as user postgres, the owner name a
// default PostgreSQL install shows, and returns its output with the
// server's port replaced by PORT.
func psqlC(t *testing.T, addr, command string) (string, error) {
	t.Helper()
	host, port, _ := strings.Cut(addr, ":")
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, "psql", "-X", "-v", "ON_ERROR_STOP=1", "-h", host, "-p", port, "-U", "postgres", "-d", "asofsql", "-c", command)
	cmd.Env = append(os.Environ(), "PGSSLMODE=disable", "PGCONNECT_TIMEOUT=10")
	out, err := cmd.CombinedOutput()
	return strings.ReplaceAll(string(out), `"`+port+`"`, `"PORT"`), err
}

// TestPsqlMetaCommands runs psql 15's catalog meta-commands against the
// real engine. Outputs named *.pg15 were captured from PostgreSQL 15.18
// with the same tables and must match byte for byte; *.out are asofsql's
// own where Postgres' differs only by its other databases or owners.
func TestPsqlMetaCommands(t *testing.T) {
	if _, err := exec.LookPath("psql"); err != nil {
		t.Skip("psql is not installed")
	}
	addr := start(t)
	for _, ddl := range psqlTables {
		_, err := psqlC(t, addr, ddl)
		require.NoError(t, err, ddl)
	}
	for _, tc := range []struct{ command, golden string }{
		{`\dt`, "dt.pg15"},
		{`\d`, "d.pg15"},
		{`\dt t*`, "dt_pattern.pg15"},
		{`\dt public.*`, "dt_schema.pg15"},
		{`\dv`, "dv.pg15"},
		{`\d trades`, "d_trades.pg15"},
		{`\d quotes`, "d_quotes.pg15"},
		{`\d+ trades`, "d_plus_trades.pg15"},
		{`\d+ quotes`, "d_plus_quotes.pg15"},
		{`\dn`, "dn.out"},
		{`\l`, "l.out"},
		{`\conninfo`, "conninfo.out"},
	} {
		t.Run(tc.command, func(t *testing.T) {
			out, err := psqlC(t, addr, tc.command)
			require.NoError(t, err, out)
			want, err := os.ReadFile(filepath.Join("testdata", "psql", tc.golden))
			require.NoError(t, err)
			require.Equal(t, string(want), out)
		})
	}
	// \dt+, \d+ and \dt+ pattern show each table's stored size
	// (pg_table_size): an empty table stores nothing (Postgres shows 8192
	// bytes for its TOAST index here, so the files are asofsql's own), and
	// after an INSERT trades' Size is what pg_table_size reports, non-zero.
	for _, tc := range []struct{ command, golden string }{
		{`\dt+`, "dt_plus.out"},
		{`\d+`, "d_plus.out"},
		{`\dt+ t*`, "dt_plus_pattern.out"},
	} {
		t.Run(tc.command+" empty", func(t *testing.T) {
			out, err := psqlC(t, addr, tc.command)
			require.NoError(t, err, out)
			want, err := os.ReadFile(filepath.Join("testdata", "psql", tc.golden))
			require.NoError(t, err)
			require.Equal(t, string(want), out)
		})
	}
	c := dial(t, addr, pgx.QueryExecModeSimpleProtocol)
	_, err := c.Exec(ctx(t), `INSERT INTO trades VALUES ('2024-01-02 09:30:00', 'AAPL', 185.5, 100), ('2024-01-02 09:30:01', 'MSFT', 370.25, 20)`)
	require.NoError(t, err)
	var table, total, main, empty int64
	require.NoError(t, c.QueryRow(ctx(t), `select pg_table_size('trades'::regclass), pg_total_relation_size('trades'::regclass),
		pg_relation_size('trades'::regclass), pg_table_size('quotes'::regclass)`).Scan(&table, &total, &main, &empty))
	require.Equal(t, []int64{table, table, 0}, []int64{total, main, empty})
	require.Greater(t, table, int64(0))
	require.Less(t, table, int64(10240)) // printed in bytes
	out, err := psqlC(t, addr, `\dt+`)
	require.NoError(t, err, out)
	want, err := os.ReadFile(filepath.Join("testdata", "psql", "dt_plus.out"))
	require.NoError(t, err)
	gotLines, wantLines := strings.Split(out, "\n"), strings.Split(string(want), "\n")
	require.Len(t, gotLines, len(wantLines), out)
	sizes := map[string]string{"quotes": "0 bytes", "trades": fmt.Sprintf("%d bytes", table)}
	for i, line := range gotLines {
		cells, wcells := strings.Split(line, "|"), strings.Split(wantLines[i], "|")
		if len(cells) != 8 || i < 3 {
			// the title, header and rule are the width of the widest Size
			require.Equal(t, strings.Fields(strings.ReplaceAll(wantLines[i], "-", "")), strings.Fields(strings.ReplaceAll(line, "-", "")), out)
			continue
		}
		name := strings.TrimSpace(cells[1])
		require.Equal(t, sizes[name], strings.TrimSpace(cells[6]), out)
		cells[6], wcells[6] = "", ""
		require.Equal(t, wcells, cells, out)
	}

	// psql exits 1 when \d finds nothing, after the same message as PG15.
	out2, err := psqlC(t, addr, `\d nosuch`)
	require.Error(t, err)
	want, err = os.ReadFile(filepath.Join("testdata", "psql", "d_nosuch.pg15"))
	require.NoError(t, err)
	require.Equal(t, string(want), out2)
}

// TestPsqlTempTablesAndViewDef: in one psql session, \dt lists the
// session's temporary tables in its pg_temp_3 schema (as PostgreSQL 15
// prints them, checked against one) and \d+ of a view shows its
// definition (its query as written, where PostgreSQL prints its own
// reconstruction).
func TestPsqlTempTablesAndViewDef(t *testing.T) {
	if _, err := exec.LookPath("psql"); err != nil {
		t.Skip("psql is not installed")
	}
	addr := start(t)
	host, port, _ := strings.Cut(addr, ":")
	script := `CREATE TABLE perm (a int);
CREATE TEMP TABLE tt (x int, y text);
CREATE VIEW v AS SELECT a FROM perm WHERE a > 1;
\dt
\d+ v
`
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", host, "-p", port, "-U", "postgres", "-d", "asofsql")
	cmd.Env = append(os.Environ(), "PGSSLMODE=disable", "PGCONNECT_TIMEOUT=10")
	cmd.Stdin = strings.NewReader(script)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, `          List of relations
  Schema   | Name | Type  |  Owner   
-----------+------+-------+----------
 pg_temp_3 | tt   | table | postgres
 public    | perm | table | postgres
(2 rows)

                              View "public.v"
 Column |  Type   | Collation | Nullable | Default | Storage | Description 
--------+---------+-----------+----------+---------+---------+-------------
 a      | integer |           |          |         | plain   | 
View definition:
 SELECT a FROM perm WHERE a > 1;

`, string(out))
}
