package limits_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/tests/sqllogic"
	"github.com/stretchr/testify/require"
)

// fuzzSetup is the tiny database every fuzz input runs against: the
// tables the logic tests and the parser corpus use most.
const fuzzSetup = `
CREATE TABLE trades (ts BIGINT, sym TEXT, qty INTEGER, price DOUBLE PRECISION) ORDER BY (ts);
CREATE TABLE quotes (ts BIGINT, sym TEXT, bid DOUBLE PRECISION, ask DOUBLE PRECISION) ORDER BY (ts);
CREATE TABLE t (a INTEGER, b TEXT, ts TIMESTAMP);
INSERT INTO trades VALUES (1, 'a', 10, 1.5), (5, 'b', 20, 2.5), (9, 'a', 30, 3.5);
INSERT INTO quotes VALUES (0, 'a', 1.0, 1.1), (4, 'b', 2.0, 2.1), (8, 'a', 3.0, 3.1);
INSERT INTO t VALUES (1, 'x', '2024-01-01 00:00:00'), (NULL, NULL, NULL);
`

// fuzzSeeds are the statements and queries of every logic-test file and
// the parser's corpus, plus the shapes this package sizes up.
func fuzzSeeds(t testing.TB) []string {
	var out []string
	files, err := filepath.Glob("../sqllogic/testdata/*.slt")
	require.NoError(t, err)
	more, err := filepath.Glob("../sqllogic/testdata/*/*.slt")
	require.NoError(t, err)
	for _, name := range append(files, more...) {
		f, err := os.Open(name)
		require.NoError(t, err)
		recs, err := sqllogic.Parse(name, f)
		f.Close()
		require.NoError(t, err)
		for _, r := range recs {
			if r.SQL != "" {
				out = append(out, r.SQL)
			}
		}
	}
	f, err := os.Open("../../sql/parser/testdata/corpus.txt")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if _, sql, ok := strings.Cut(line, "\t"); ok && !strings.HasPrefix(line, "#") {
			out = append(out, strings.ReplaceAll(sql, "⏎", "\n"))
		}
	}
	require.NoError(t, sc.Err())
	for _, c := range constructs {
		out = append(out, c.sql(3))
	}
	return out
}

// FuzzStatement runs any input through the whole statement path (lexer,
// pre-pass, TiDB's parser, binding, optimizing, lowering and, on tiny
// tables, execution) with the stack limit lowered (TestMain): every input
// must end in a result or a *sqlerr.Error with a SQLSTATE, never a panic,
// a stack overflow or a hang (a statement_timeout of 10 s, far past what
// an input of this size needs, counts as one).
func FuzzStatement(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		if len(sql) > 16<<10 {
			return
		}
		ctx := context.Background()
		db, err := asofsql.Open(":memory:", asofsql.WithMemoryLimit(64<<20))
		require.NoError(t, err)
		defer db.Close()
		_, err = db.Exec(ctx, fuzzSetup)
		require.NoError(t, err)
		s := db.Session()
		defer s.Close()
		// A recursive query may run for ever, as in PostgreSQL (WITH
		// RECURSIVE r AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT
		// count(*) FROM r), and pg_sleep waits as long as it is told:
		// for those the timeout is the expected end.
		lower := strings.ToLower(sql)
		endless := strings.Contains(lower, "recursive") || strings.Contains(lower, "pg_sleep")
		timeout := "10s"
		if endless {
			timeout = "1s"
		}
		require.NoError(t, s.Set("statement_timeout", timeout))
		_, err = s.Exec(ctx, sql)
		if err == nil {
			return
		}
		e, ok := sqlerr.As(err)
		require.True(t, ok, "not a *sqlerr.Error: %T %v", err, err)
		require.Len(t, e.Code, 5, "%v", err)
		if !endless {
			require.NotEqual(t, sqlerr.QueryCanceled, e.Code, "timed out: %.300q", sql)
		}
	})
}
