package parser

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

// The corpus is testdata/corpus.txt: one case a line, "OUTCOME<TAB>SQL",
// where OUTCOME is "ok STATEMENTS ASOFJOINS" or "ERR SQLSTATE POSITION"
// and "⏎" in SQL stands for a newline. Lines starting with # are comments.
// -update-corpus rewrites the outcomes from the current parser (read the
// diff before committing it).
var updateCorpus = flag.Bool("update-corpus", false, "rewrite testdata/corpus.txt outcomes")

const corpusFile = "testdata/corpus.txt"

type corpusCase struct {
	line    int
	outcome string
	sql     string
}

func loadCorpus(t testing.TB) []corpusCase {
	f, err := os.Open(corpusFile)
	require.NoError(t, err)
	defer f.Close()
	var out []corpusCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		outcome, sql, ok := strings.Cut(line, "\t")
		require.True(t, ok, "line %d has no tab", n)
		out = append(out, corpusCase{line: n, outcome: outcome, sql: strings.ReplaceAll(sql, "⏎", "\n")})
	}
	require.NoError(t, sc.Err())
	return out
}

// outcomeOf renders what Parse does with sql in the corpus notation.
func outcomeOf(sql string) string {
	stmts, err := Parse(sql)
	if err != nil {
		e, ok := sqlerr.As(err)
		if !ok {
			return "NOT-SQLERR " + err.Error()
		}
		return fmt.Sprintf("ERR %s %d", e.Code, e.Position)
	}
	asof := 0
	var count func(st *Statement)
	count = func(st *Statement) {
		asof += len(st.Asof)
		switch n := st.Node.(type) {
		case *ExplainStmt:
			count(n.Stmt)
		case *CopyStmt:
			if n.Query != nil {
				count(n.Query)
			}
		}
	}
	for _, st := range stmts {
		count(st)
	}
	return fmt.Sprintf("ok %d %d", len(stmts), asof)
}

func TestCorpus(t *testing.T) {
	cases := loadCorpus(t)
	require.GreaterOrEqual(t, len(cases), 200)
	if *updateCorpus {
		var b strings.Builder
		b.WriteString("# Parser corpus: OUTCOME<TAB>SQL. OUTCOME is \"ok STATEMENTS ASOFJOINS\" or\n")
		b.WriteString("# \"ERR SQLSTATE POSITION\" (1-based character position). ⏎ is a newline.\n")
		for _, c := range cases {
			fmt.Fprintf(&b, "%s\t%s\n", outcomeOf(c.sql), strings.ReplaceAll(c.sql, "\n", "⏎"))
		}
		require.NoError(t, os.WriteFile(corpusFile, []byte(b.String()), 0o644))
		return
	}
	valid, invalid := 0, 0
	for _, c := range cases {
		got := outcomeOf(c.sql)
		require.Equal(t, c.outcome, got, "line %d: %q", c.line, c.sql)
		if strings.HasPrefix(c.outcome, "ok") {
			valid++
		} else {
			invalid++
		}
	}
	require.Greater(t, valid, 80)
	require.Greater(t, invalid, 80)
}
