package parser

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/asofsql/asofsql/sql/limits"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/stretchr/testify/require"
)

// nested builds prefix + n*open + core + n*close.
func nested(prefix, open, core, close string, n int) string {
	return prefix + strings.Repeat(open, n) + core + strings.Repeat(close, n)
}

// chain builds head + n*link.
func chain(head, link string, n int) string { return head + strings.Repeat(link, n) }

// flatShapes are the depthShapes whose tree stays shallow however long.
var flatShapes = map[string]bool{"union": true, "mixedset": true, "cte": true, "inlist": true, "caselong": true,
	"fields": true, "values": true, "orderby": true, "nulls": true}

// depthShapes are statements built from one construct repeated n times,
// nested or chained (flatShapes: listed).
var depthShapes = map[string]func(n int) string{
	"unary":      func(n int) string { return chain("SELECT ", "- ", n) + "1" },
	"not":        func(n int) string { return chain("SELECT ", "NOT ", n) + "true" },
	"parens":     func(n int) string { return nested("SELECT ", "(", "1", ")", n) },
	"plus":       func(n int) string { return chain("SELECT 1", " + 1", n) },
	"concat":     func(n int) string { return chain("SELECT 'a'", " || 'a'", n) },
	"and":        func(n int) string { return chain("SELECT true", " AND true", n) },
	"or":         func(n int) string { return chain("SELECT a FROM t WHERE false", " OR a = 1", n) },
	"between":    func(n int) string { return chain("SELECT 1", " BETWEEN 0 AND 2 = true", n) },
	"is":         func(n int) string { return chain("SELECT 1", " IS NULL", n) },
	"cast":       func(n int) string { return chain("SELECT 1", "::int", n) },
	"castfn":     func(n int) string { return nested("SELECT ", "CAST(", "1", " AS int)", n) },
	"rplus":      func(n int) string { return nested("SELECT ", "1 + (", "1", ")", n) },
	"func":       func(n int) string { return nested("SELECT ", "abs(", "1", ")", n) },
	"case":       func(n int) string { return nested("SELECT ", "CASE WHEN true THEN ", "1", " END", n) },
	"caseelse":   func(n int) string { return nested("SELECT ", "CASE WHEN false THEN 0 ELSE ", "1", " END", n) },
	"subscript":  func(n int) string { return nested("SELECT ", "(", "a", "[1])", n) + " FROM t" },
	"scalarsub":  func(n int) string { return nested("", "SELECT (", "SELECT 1", ")", n) },
	"fromsub":    func(n int) string { return nested("", "SELECT * FROM (", "SELECT 1", ") s", n) },
	"insub":      func(n int) string { return nested("SELECT 1", " IN (SELECT 1", "", ")", n) },
	"exists":     func(n int) string { return nested("", "SELECT 1 WHERE EXISTS (", "SELECT 1", ")", n) },
	"joins":      func(n int) string { return chain("SELECT 1 FROM t", " JOIN t ON true", n) },
	"commajoins": func(n int) string { return chain("SELECT 1 FROM t", ", t", n) },
	"leftjoins":  func(n int) string { return chain("SELECT 1 FROM t", " LEFT JOIN t USING (a)", n) },
	"parenjoins": func(n int) string { return nested("SELECT 1 FROM ", "(t JOIN ", "t", " ON true)", n) },
	"union":      func(n int) string { return chain("SELECT 1", " UNION ALL SELECT 1", n) },
	"mixedset":   func(n int) string { return chain("SELECT 1", " UNION SELECT 1 INTERSECT SELECT 1 EXCEPT SELECT 1", n) },
	"parenset":   func(n int) string { return nested("", "(SELECT 1 UNION ", "SELECT 1", ")", n) },
	"cte":        func(n int) string { return chain("WITH c0 AS (SELECT 1)", ", c AS (SELECT 1)", n) + " SELECT 1" },
	"ctenest":    func(n int) string { return nested("", "WITH c AS (", "SELECT 1", ") SELECT 1", n) },
	"inlist":     func(n int) string { return "SELECT 1 IN (" + chain("1", ", 1", n) + ")" },
	"caselong":   func(n int) string { return "SELECT CASE" + chain("", " WHEN false THEN 1", n) + " END" },
	"fields":     func(n int) string { return "SELECT " + chain("1", ", 1 + 1", n) },
	"values":     func(n int) string { return "VALUES " + chain("(1)", ", (1)", n) },
	"rowvalues":  func(n int) string { return nested("SELECT ", "ROW(1, ", "1", ")", n) },
	"any":        func(n int) string { return nested("SELECT 1 = ANY (", "ARRAY(SELECT ", "1", ")", n) + ")" },
	"orderby":    func(n int) string { return "SELECT 1 ORDER BY " + chain("1", ", 1", n) },
	"aggorder":   func(n int) string { return nested("SELECT ", "string_agg(x, ',' ORDER BY ", "x", ")", n) },
	"asof": func(n int) string {
		return chain("SELECT * FROM t", " ASOF JOIN u ON t.k = u.k AND t.ts >= u.ts", n)
	},
	"distinctfrom": func(n int) string { return chain("SELECT 1", " IS DISTINCT FROM 1", n) },
	"nulls":        func(n int) string { return "SELECT 1 ORDER BY " + chain("1 NULLS FIRST", ", 1 NULLS LAST", n) },
	"like":         func(n int) string { return chain("SELECT 'a'", " LIKE 'a' = true", n) },
}

// treeDepth is the depth of the tree TiDB built for st (no limit).
func treeDepth(st *Statement) int {
	v := &measure{}
	st.AST.Accept(v)
	return v.max
}

type measure struct{ depth, max int }

func (m *measure) Enter(n ast.Node) (ast.Node, bool) {
	m.depth++
	m.max = max(m.max, m.depth)
	return n, false
}
func (m *measure) Leave(n ast.Node) (ast.Node, bool) { m.depth--; return n, true }

// TestDepthBoundCoversTree checks that the token-level bound never falls
// short of the real tree depth (TiDB's own walk relies on it), and that it
// does not overestimate so much that a statement checkDepth would accept is
// refused before parsing.
func TestDepthBoundCoversTree(t *testing.T) {
	check := func(t *testing.T, sql string) (bound, depth int) {
		stmts, err := Parse(sql)
		if err != nil || len(stmts) == 0 || stmts[0].AST == nil {
			return -1, -1
		}
		st := stmts[0]
		toks, err := lex(st.Text)
		require.NoError(t, err)
		bound, _ = tokenDepth(toks, math.MaxInt)
		depth = treeDepth(st)
		require.GreaterOrEqual(t, bound, depth, "bound below the tree's depth for %.200s", sql)
		return bound, depth
	}
	for name, gen := range depthShapes {
		t.Run(name, func(t *testing.T) {
			b1, d1 := check(t, gen(10))
			b2, d2 := check(t, gen(200))
			if d1 < 0 || d2 < 0 {
				t.Fatalf("%s does not parse: %.200s", name, gen(10))
			}
			// Growth per step of n: the bound may overcount (BETWEEN's AND,
			// brackets) but must stay within coarseDepth/MaxDepth of it.
			if grow := float64(d2 - d1); grow > 0 {
				require.LessOrEqual(t, float64(b2-b1)/grow, float64(coarseDepth/limits.MaxDepth), "%s: bound grows much faster than the tree", name)
			}
		})
	}
	for _, c := range loadCorpus(t) {
		check(t, c.sql)
	}
	for _, s := range fuzzSeeds {
		check(t, s)
	}
}

// TestDepthLimits runs every nesting shape past both limits and well
// inside them: inside gives the statement, past gives a clean 54001 (past
// the tree limit after TiDB's parse, far past it before), and nothing
// recurses without bound whatever the size. (The flat shapes at large
// sizes are the root package's TestHugeStatements.)
func TestDepthLimits(t *testing.T) {
	for name, gen := range depthShapes {
		if flatShapes[name] {
			continue
		}
		t.Run(name, func(t *testing.T) {
			_, err := Parse(gen(50))
			require.NoError(t, err)
			for _, n := range []int{limits.MaxDepth + 10, 2 * coarseDepth} {
				_, err := Parse(gen(n))
				e, ok := sqlerr.As(err)
				require.True(t, ok, "%v", err)
				require.Equal(t, sqlerr.StatementTooComplex, e.Code, "%s at %d: %v", name, n, err)
				require.Equal(t, "stack depth limit exceeded", e.Message)
				require.Positive(t, e.Position)
			}
		})
	}
}

func TestParseObservesContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ParseContext(ctx, "SELECT 1 IN ("+chain("1", ", 1", 100_000)+")")
	require.True(t, errors.Is(err, context.Canceled), "%v", err)
	require.Equal(t, sqlerr.QueryCanceled, sqlerr.Code(err))
	_, err = ParseContext(ctx, "SELECT 1")
	require.Equal(t, sqlerr.QueryCanceled, sqlerr.Code(err))
}

func TestTooManyTokens(t *testing.T) {
	sql := "SELECT 1; SELECT 1 IN (" + chain("1", ",1", limits.MaxTokens/2) + ")"
	_, err := Parse(sql)
	e, ok := sqlerr.As(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, sqlerr.ProgramLimitExceeded, e.Code)
	require.Equal(t, 11, e.Position)
	// The limit is per statement: many statements may add up past it.
	many := strings.Repeat("SELECT 1 IN (1,1,1,1,1,1,1,1,1,1);", limits.MaxTokens/20+1)
	_, err = lex(many)
	require.NoError(t, err)
}
