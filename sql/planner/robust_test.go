package planner

import (
	"bufio"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

// TestParserCorpusNeverPanics plans every statement of the parser's
// corpus against generic tables: whatever happens, planning must end in
// a plan or a *sqlerr.Error, never a panic or an untyped error.
func TestParserCorpusNeverPanics(t *testing.T) {
	cat := newCatalog(t)
	ctx := context.Background()
	tx := cat.Begin()
	for _, sql := range []string{
		`CREATE TABLE t (a integer, b integer, c text, d double precision, s text, id integer, ts timestamp, k integer, x numeric(10,2)) ORDER BY (ts)`,
		`CREATE TABLE u (a integer, b integer, c text, id integer, ts timestamp, k integer) ORDER BY (ts)`,
		`CREATE TABLE l (t bigint, k integer, v text) ORDER BY (t)`,
		`CREATE TABLE r (t bigint, k integer, w text, ts bigint) ORDER BY (t)`,
	} {
		p, err := plan(t, cat, sql)
		require.NoError(t, err)
		require.NoError(t, tx.CreateTable(ctx, p.(*CreateTable).Def, false))
	}
	require.NoError(t, tx.Commit(ctx))

	f, err := os.Open("../parser/testdata/corpus.txt")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	planned, failed := 0, 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		_, sql, _ := strings.Cut(line, "\t")
		stmts, err := parser.Parse(strings.ReplaceAll(sql, "⏎", "\n"))
		if err != nil {
			continue
		}
		for _, st := range stmts {
			p, err := func() (p Plan, err error) {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("planning %q panicked: %v", st.Text, r)
					}
				}()
				return Build(cat, st, nil)
			}()
			if err != nil {
				_, ok := sqlerr.As(err)
				require.True(t, ok, "%q: untyped error %v", st.Text, err)
				failed++
				continue
			}
			_ = ExplainText(p)
			planned++
		}
	}
	require.NoError(t, sc.Err())
	t.Logf("planned %d statements, %d rejected with a SQLSTATE", planned, failed)
	require.Greater(t, planned, 100)
}
