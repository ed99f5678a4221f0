// Package limits_test runs statements of every nesting and list construct
// from ten to a million elements through the embedded API and checks each
// gives the right answer or a clean 54001/54000/0A000. It runs with the
// goroutine stack limit lowered to stackBudget (TestMain), so a walk that
// recursed past what limits.MaxDepth promises would crash this test binary
// instead of passing.
package limits_test

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/sql/limits"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

// stackBudget is the goroutine stack any statement may use, at most,
// whatever its shape (the runtime's own limit is 1 GB; going past it is a
// fatal error that takes the whole server down). It holds under -race,
// whose frames are larger.
const stackBudget = 16 << 20

func TestMain(m *testing.M) {
	debug.SetMaxStack(stackBudget)
	os.Exit(m.Run())
}

// huge enables the sizes that take seconds each (flat constructs at a
// million elements): ASOFSQL_HUGE=1 go test ./tests/limits/.
var huge = os.Getenv("ASOFSQL_HUGE") != ""

// raceEnabled is set under -race (race_test.go).
var raceEnabled bool

func rep(s string, n int) string { return strings.Repeat(s, n) }

// list is "f(0), f(1), ..., f(n-1)" joined with sep.
func list(n int, sep string, f func(i int) string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(f(i))
	}
	return b.String()
}

// construct is a statement shape repeated n times and what it answers.
type construct struct {
	name string
	sql  func(n int) string
	want func(n int) string // the one value of the one row
	// flat constructs stay shallow at any size: they must answer, and are
	// only sized up to a million with ASOFSQL_HUGE.
	flat bool
	// code, when set, is the answer at every size (a refused feature).
	code string
}

func parity[T any](n int, even, odd T) T {
	if n%2 == 0 {
		return even
	}
	return odd
}

var constructs = []construct{
	{name: "unary minus", sql: func(n int) string { return "SELECT " + rep("- ", n) + "1" },
		want: func(n int) string { return parity(n, "1", "-1") }},
	{name: "NOT", sql: func(n int) string { return "SELECT " + rep("NOT ", n) + "true" },
		want: func(n int) string { return parity(n, "true", "false") }},
	{name: "parentheses", sql: func(n int) string { return "SELECT " + rep("(", n) + "1" + rep(")", n) },
		want: func(int) string { return "1" }},
	{name: "plus chain", sql: func(n int) string { return "SELECT 0" + rep(" + 1", n) },
		want: strconv.Itoa},
	{name: "nested plus", sql: func(n int) string { return "SELECT " + rep("1 + (", n) + "0" + rep(")", n) },
		want: strconv.Itoa},
	{name: "AND chain", sql: func(n int) string { return "SELECT true" + rep(" AND true", n) },
		want: func(int) string { return "true" }},
	{name: "OR chain", sql: func(n int) string { return "SELECT false" + rep(" OR false", n-1) + " OR true" },
		want: func(int) string { return "true" }},
	{name: "concat chain", sql: func(n int) string { return "SELECT length(''" + rep(" || 'a'", n) + ")" },
		want: strconv.Itoa},
	{name: "casts", sql: func(n int) string { return "SELECT 1" + rep("::int", n) },
		want: func(int) string { return "1" }},
	{name: "function calls", sql: func(n int) string { return "SELECT " + rep("abs(", n) + "-1" + rep(")", n) },
		want: func(int) string { return "1" }},
	{name: "CASE nesting", sql: func(n int) string { return "SELECT " + rep("CASE WHEN true THEN ", n) + "1" + rep(" END", n) },
		want: func(int) string { return "1" }},
	{name: "scalar subqueries", sql: func(n int) string { return rep("SELECT (", n) + "SELECT 1" + rep(")", n) },
		want: func(int) string { return "1" }},
	{name: "FROM subqueries", sql: func(n int) string { return rep("SELECT x FROM (", n) + "SELECT 1 AS x" + rep(") s", n) },
		want: func(int) string { return "1" }},
	{name: "CTE chain", sql: func(n int) string {
		return "WITH c0 AS (SELECT 1 AS x)" + list(n, "", func(i int) string { return fmt.Sprintf(", c%d AS (SELECT x FROM c%d)", i+1, i) }) +
			fmt.Sprintf(" SELECT x FROM c%d", n)
	}, want: func(int) string { return "1" }},
	{name: "joins", sql: func(n int) string {
		return "SELECT count(*) FROM one t0" + list(n, "", func(i int) string { return fmt.Sprintf(" JOIN one t%d ON true", i+1) })
	}, want: func(int) string { return "1" }},
	// More than 6 dimensions: PostgreSQL's 54000 (sizes here start at 10).
	{name: "array literal nesting", sql: func(n int) string {
		return "SELECT array_to_string('" + rep("{", n) + "1" + rep("}", n) + "'::int[], ',')"
	},
		code: sqlerr.ProgramLimitExceeded},
	{name: "ARRAY constructor", sql: func(n int) string { return "SELECT " + rep("ARRAY[", n) + "1" + rep("]", n) },
		code: sqlerr.FeatureNotSupported},
	{name: "IN list", flat: true, sql: func(n int) string { return "SELECT 7 IN (" + list(n, ",", strconv.Itoa) + ")" },
		want: func(n int) string { return strconv.FormatBool(n > 7) }},
	{name: "select list", flat: true, sql: func(n int) string { return "SELECT " + rep("1, ", n-1) + "2" },
		want: func(n int) string { return map[bool]string{true: "1", false: "2"}[n > 1] }},
	{name: "CASE WHEN list", flat: true, sql: func(n int) string {
		return "SELECT CASE 7" + list(n, "", func(i int) string { return fmt.Sprintf(" WHEN %d THEN %d", i, i) }) + " ELSE -1 END"
	}, want: func(n int) string { return map[bool]string{true: "7", false: "-1"}[n > 7] }},
	{name: "coalesce args", flat: true, sql: func(n int) string { return "SELECT coalesce(" + rep("NULL, ", n-1) + "3)" },
		want: func(int) string { return "3" }},
	{name: "array literal elements", flat: true, sql: func(n int) string {
		return "SELECT array_upper('{" + list(n, ",", strconv.Itoa) + "}'::int[], 1)"
	}, want: strconv.Itoa},
	{name: "UNION ALL chain", flat: true, sql: func(n int) string {
		return "SELECT count(*) FROM (SELECT 1 AS x" + rep(" UNION ALL SELECT 1", n-1) + ") u"
	}, want: strconv.Itoa},
	{name: "UNION chain", flat: true, sql: func(n int) string {
		return "SELECT count(*) FROM (SELECT 0 AS x" + list(n-1, "", func(i int) string { return fmt.Sprintf(" UNION SELECT %d", i%5) }) + ") u"
	}, want: func(n int) string { return strconv.Itoa(min(n, 5)) }},
	{name: "VALUES rows", flat: true, sql: func(n int) string { return "SELECT count(*) FROM (VALUES " + rep("(1), ", n-1) + "(1)) v" },
		want: strconv.Itoa},
	{name: "many CTEs", flat: true, sql: func(n int) string {
		return "WITH c0 AS (SELECT 1 AS x)" + list(n, "", func(i int) string { return fmt.Sprintf(", c%d AS (SELECT x + 1 AS x FROM c0)", i+1) }) +
			fmt.Sprintf(" SELECT x FROM c%d", n)
	}, want: func(int) string { return "2" }},
	// Each INTERSECT or EXCEPT nests the plan a level deeper, as in
	// PostgreSQL: chains are deep shapes.
	{name: "INTERSECT chain", sql: func(n int) string { return "SELECT 1" + rep(" INTERSECT SELECT 1", n) },
		want: func(int) string { return "1" }},
	{name: "EXCEPT chain", sql: func(n int) string { return "SELECT 1" + rep(" EXCEPT ALL SELECT 2", n) },
		want: func(int) string { return "1" }},
}

// sizes are the n each construct runs at. Deep shapes take three paths:
// accepted (up to about MaxDepth), refused after TiDB's parse (just past
// it) and refused right after lexing (far past it; a million unary minus
// signs or parentheses is the crash and the hang of issue 20). Flat ones
// must answer at every size. The sizes that take seconds under -race run
// with ASOFSQL_HUGE=1: a million everywhere, a hundred thousand for flat
// shapes.
func sizes(c construct) []int {
	var out []int
	switch {
	case c.code != "":
		out = []int{10, 1000}
	case c.flat && raceEnabled && !huge:
		out = []int{10, 1000, 5000}
	case c.flat:
		out = []int{10, 1000, 20_000}
		if huge {
			out = append(out, 100_000)
		}
	case c.name == "joins":
		// Thousands of join operators are slow to build; past the limit
		// the chain is refused like any other.
		out = []int{10, 100, limits.MaxDepth + 1}
	case raceEnabled && !huge:
		out = []int{10, 1000, limits.MaxDepth + 1}
		if c.name == "unary minus" || c.name == "parentheses" {
			out = append(out, 1_000_000)
		}
	default:
		out = []int{10, 1000, limits.MaxDepth + 1, 100_000}
		if c.name == "unary minus" || c.name == "parentheses" {
			out = append(out, 1_000_000)
		}
	}
	if huge && (c.flat || c.code != "" || c.name != "joins") && out[len(out)-1] != 1_000_000 {
		out = append(out, 1_000_000)
	}
	return out
}

// TestHugeStatements is the construct x size table. Each statement runs
// under a statement_timeout that only a hang would reach, so a regression
// to quadratic time fails as 57014 rather than stalling the suite.
func TestHugeStatements(t *testing.T) {
	ctx := context.Background()
	db, err := asofsql.Open(":memory:")
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(ctx, "CREATE TABLE one (a int); INSERT INTO one VALUES (1)")
	require.NoError(t, err)
	for _, c := range constructs {
		t.Run(c.name, func(t *testing.T) {
			for _, n := range sizes(c) {
				got, err := run(ctx, db, c.sql(n))
				switch {
				case c.code != "":
					require.Equal(t, c.code, sqlerr.Code(err), "n=%d: %v", n, err)
				case err == nil:
					require.Equal(t, c.want(n), got, "n=%d", n)
				default:
					code := sqlerr.Code(err)
					require.Contains(t, []string{sqlerr.StatementTooComplex, sqlerr.ProgramLimitExceeded}, code, "n=%d: %v", n, err)
					require.False(t, c.flat && code == sqlerr.StatementTooComplex, "n=%d: a flat construct is not deep: %v", n, err)
					require.Less(t, 100, n, "n=%d: refused at a small size: %v", n, err)
					if code == sqlerr.StatementTooComplex {
						e, _ := sqlerr.As(err)
						require.Equal(t, "stack depth limit exceeded", e.Message)
						require.NotEmpty(t, e.Hint)
					}
				}
			}
		})
	}
}

// run executes sql in a fresh session and returns the first value of the
// first row as text.
func run(ctx context.Context, db *asofsql.DB, sql string) (string, error) {
	s := db.Session()
	defer s.Close()
	if err := s.Set("statement_timeout", "5min"); err != nil {
		return "", err
	}
	rdr, err := s.Query(ctx, sql)
	if err != nil {
		return "", err
	}
	defer rdr.Release()
	out := ""
	if rdr.Next() && rdr.RecordBatch().NumRows() > 0 {
		out = rdr.RecordBatch().Column(0).ValueStr(0)
	}
	for rdr.Next() {
	}
	return out, rdr.Err()
}

// TestDeepAcceptedStatementsFitTheBudget runs (nearly) the deepest
// statement of each shape the limits accept, where stack use peaks, with
// the stack limit lowered to stackBudget.
func TestDeepAcceptedStatementsFitTheBudget(t *testing.T) {
	ctx := context.Background()
	db, err := asofsql.Open(":memory:")
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(ctx, "CREATE TABLE one (a int); INSERT INTO one VALUES (1)")
	require.NoError(t, err)
	for _, c := range constructs {
		if c.flat || c.code != "" || c.name == "joins" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			// Chains reach nearly MaxDepth, CASE and nested plus half (two
			// tree levels each), subqueries a quarter.
			lo := 0
			for _, n := range []int{limits.MaxDepth - 40, limits.MaxDepth/2 - 40, limits.MaxDepth/4 - 40} {
				_, err := run(ctx, db, c.sql(n))
				if err == nil {
					lo = n
					break
				}
				require.Equal(t, sqlerr.StatementTooComplex, sqlerr.Code(err), "n=%d: %v", n, err)
			}
			require.Positive(t, lo, "refused even at a quarter of the limit")
			got, err := run(ctx, db, c.sql(lo))
			require.NoError(t, err)
			require.Equal(t, c.want(lo), got)
			t.Logf("%s: deepest accepted n=%d", c.name, lo)
		})
	}
}

// TestTimeoutStopsPlanning: a statement that takes long to plan stops at
// statement_timeout, with 57014.
func TestTimeoutStopsPlanning(t *testing.T) {
	ctx := context.Background()
	db, err := asofsql.Open(":memory:")
	require.NoError(t, err)
	defer db.Close()
	s := db.Session()
	defer s.Close()
	require.NoError(t, s.Set("statement_timeout", "1ms"))
	_, err = s.Query(ctx, "SELECT count(*) FROM (SELECT 1 AS x"+rep(" UNION ALL SELECT 1", 50_000)+") u")
	require.Equal(t, sqlerr.QueryCanceled, sqlerr.Code(err), "%v", err)
	require.Contains(t, err.Error(), "statement timeout")
}
