package server_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	// \dt+ needs pg_table_size, which asofsql does not have: psql prints
	// the error and the session goes on.
	script := "\\dt+\nselect 'still here' as s;\n"
	host, port, _ := strings.Cut(addr, ":")
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, "psql", "-X", "-h", host, "-p", port, "-U", "postgres", "-d", "asofsql")
	cmd.Env = append(os.Environ(), "PGSSLMODE=disable", "PGCONNECT_TIMEOUT=10")
	cmd.Stdin = strings.NewReader(script)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	want, err := os.ReadFile(filepath.Join("testdata", "psql", "dt_plus.out"))
	require.NoError(t, err)
	require.Equal(t, string(want), string(out))

	// psql exits 1 when \d finds nothing, after the same message as PG15.
	out2, err := psqlC(t, addr, `\d nosuch`)
	require.Error(t, err)
	want, err = os.ReadFile(filepath.Join("testdata", "psql", "d_nosuch.pg15"))
	require.NoError(t, err)
	require.Equal(t, string(want), out2)
}
