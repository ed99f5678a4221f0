package parser

import (
	"strings"
	"testing"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/stretchr/testify/require"
)

func TestAsofForms(t *testing.T) {
	tests := []struct {
		name, sql string
		want      []string // describeAsof of each ASOF join, in order
		on        []string // restored ON of each ASOF join after recovery
	}{
		{"range form with using and prefer",
			"SELECT * FROM trades ASOF LEFT JOIN quotes ON ts BETWEEN -10 AND -1 USING (sym) PREFER LATER",
			[]string{"LEFT range on=ts lo=-10 hi=-1 using=[sym] prefer=LATER"},
			[]string{"`ts` between -10 and -1"}},
		{"semi range form", "SELECT * FROM l ASOF SEMI JOIN r ON t BETWEEN -1 AND 0 USING (k)",
			[]string{"SEMI range on=t lo=-1 hi=0 using=[k]"}, nil},
		{"anti inequality form", "SELECT * FROM l ASOF ANTI JOIN r ON l.k = r.k AND l.t >= r.t",
			[]string{"ANTI inequality left=l.t right=r.t op=ge key=l.k=r.k"}, nil},
		{"anti using form", "SELECT * FROM l ASOF ANTI JOIN r USING (k, t) PREFER LATER",
			[]string{"ANTI using on=t using=[k] prefer=LATER"}, nil},
		{"right range form", "SELECT * FROM l ASOF RIGHT JOIN r ON t BETWEEN -1 AND 0 USING (k)",
			[]string{"RIGHT range on=t lo=-1 hi=0 using=[k]"}, nil},
		{"full outer inequality form", "SELECT * FROM l ASOF FULL OUTER JOIN r ON l.k = r.k AND l.t >= r.t",
			[]string{"FULL inequality left=l.t right=r.t op=ge key=l.k=r.k"}, nil},
		{"right outer using form", "SELECT * FROM l ASOF RIGHT OUTER JOIN r USING (k, t)",
			[]string{"RIGHT using on=t using=[k]"}, nil},
		{"range form minimal", "SELECT * FROM l ASOF JOIN r ON t BETWEEN 0 AND 10",
			[]string{"INNER range on=t lo=0 hi=10"}, nil},
		{"range form extra conditions", "SELECT * FROM l ASOF INNER JOIN r ON t BETWEEN -5 AND 5 AND r.v > 0 AND r.x = 'a' USING (k1, \"K2\")",
			[]string{"INNER range on=t lo=-5 hi=5 using=[k1,K2] extra=`r`.`v`>0 extra=`r`.`x`='a'"}, nil},
		{"range form intervals", "SELECT * FROM l ASOF LEFT OUTER JOIN r ON ts BETWEEN INTERVAL '-5 seconds' AND INTERVAL '0 seconds'",
			[]string{"LEFT range on=ts lo=#cast('-5 seconds', 'interval') hi=#cast('0 seconds', 'interval')"}, nil},
		{"range form params", "SELECT * FROM l ASOF JOIN r ON t BETWEEN $1 AND $2 USING (k)",
			[]string{"INNER range on=t lo=? hi=? using=[k]"}, nil},
		{"prefer earlier explicit", "SELECT * FROM l ASOF JOIN r ON t BETWEEN -1 AND 1 PREFER EARLIER",
			[]string{"INNER range on=t lo=-1 hi=1 prefer=EARLIER"}, nil},
		{"inequality form", "SELECT * FROM l ASOF JOIN r ON l.k = r.k AND l.t >= r.t",
			[]string{"INNER inequality left=l.t right=r.t op=ge key=l.k=r.k"},
			[]string{"`l`.`k`=`r`.`k` and `l`.`t`>=`r`.`t`"}},
		{"inequality reversed operands", "SELECT * FROM l ASOF LEFT JOIN r ON r.t < l.t AND l.a = r.a AND l.b = r.b",
			[]string{"LEFT inequality left=r.t right=l.t op=lt key=l.a=r.a key=l.b=r.b"}, nil},
		{"parenthesized on condition", "SELECT * FROM l ASOF JOIN r ON (l.k = r.k AND (l.t >= r.t))",
			[]string{"INNER inequality left=l.t right=r.t op=ge key=l.k=r.k"}, nil},
		{"parenthesized range", "SELECT * FROM l ASOF JOIN r ON (t BETWEEN -1 AND 0) USING (k)",
			[]string{"INNER range on=t lo=-1 hi=0 using=[k]"}, nil},
		{"is distinct from in extra", "SELECT * FROM l ASOF JOIN r ON t BETWEEN -1 AND 0 AND r.x IS DISTINCT FROM 1",
			[]string{"INNER range on=t lo=-1 hi=0 extra=not `r`.`x`<=>1"}, nil},
		{"inequality only", "SELECT * FROM l ASOF JOIN r ON l.t > r.t",
			[]string{"INNER inequality left=l.t right=r.t op=gt"}, nil},
		{"inequality with extra", "SELECT * FROM l ASOF JOIN r ON l.k = r.k AND l.t <= r.t AND r.ok",
			[]string{"INNER inequality left=l.t right=r.t op=le key=l.k=r.k extra=`r`.`ok`"}, nil},
		{"range on expression", "SELECT * FROM l ASOF JOIN r ON l.k = r.k AND r.ts BETWEEN l.t + 1 AND l.t + 10",
			[]string{"INNER range-on-expression left=l.t right=r.ts lo=1 hi=10 key=l.k=r.k"}, nil},
		{"range on expression minus and bare", "SELECT * FROM l ASOF JOIN r ON l.k = r.k AND r.ts BETWEEN l.t - 10 AND l.t",
			[]string{"INNER range-on-expression left=l.t right=r.ts lo=-10 hi=<nil> key=l.k=r.k"}, nil},
		{"match condition alone", "SELECT * FROM l ASOF JOIN r MATCH_CONDITION (l.t >= r.t)",
			[]string{"INNER inequality left=l.t right=r.t op=ge"}, []string{"<nil>"}},
		{"match condition with on and prefer", "SELECT * FROM l ASOF FULL JOIN r MATCH_CONDITION (r.t < l.t) ON l.k = r.k AND r.a = r.b AND l.x > r.y PREFER LATER",
			[]string{"FULL inequality left=r.t right=l.t op=lt key=l.k=r.k key=r.a=r.b extra=`l`.`x`>`r`.`y` prefer=LATER"},
			[]string{"`l`.`k`=`r`.`k` and `r`.`a`=`r`.`b` and `l`.`x`>`r`.`y`"}},
		{"match condition with using", "SELECT * FROM l ASOF LEFT JOIN r MATCH_CONDITION (l.t >= r.t) USING (k, j) PREFER EARLIER",
			[]string{"LEFT inequality left=l.t right=r.t op=ge using=[k,j] prefer=EARLIER"}, []string{"<nil>"}},
		{"match condition with parenthesized subquery right side", "SELECT * FROM l ASOF SEMI JOIN (SELECT * FROM r ORDER BY t) rr MATCH_CONDITION ((l.t >= rr.t)) ON l.k IS NOT DISTINCT FROM rr.k",
			[]string{"SEMI inequality left=l.t right=rr.t op=ge key=l.k<=>rr.k"}, nil},
		{"null-safe key", "SELECT * FROM l ASOF JOIN r ON l.k IS NOT DISTINCT FROM r.k AND l.t >= r.t",
			[]string{"INNER inequality left=l.t right=r.t op=ge key=l.k<=>r.k"}, nil},
		{"inequality with offset", "SELECT * FROM s1 ASOF JOIN s2 ON s1.k = s2.k AND s2.ends >= s1.ends - 5",
			[]string{"INNER inequality left=s2.ends right=s1.ends op=ge off=-5 key=s1.k=s2.k"}, nil},
		{"inequality with offset on the left operand", "SELECT * FROM l ASOF JOIN r ON l.t + 2 > r.t",
			[]string{"INNER inequality left=l.t right=r.t op=gt off=-2"}, nil},
		{"two candidates", "SELECT * FROM l ASOF JOIN r ON r.b <= r.a AND l.t >= r.t",
			[]string{"INNER inequality left=r.b right=r.a op=le cands=2"}, nil},
		{"using last column", "SELECT * FROM l ASOF JOIN r USING (k, t)",
			[]string{"INNER using on=t using=[k]"}, []string{"<nil>"}},
		{"using only time", "SELECT * FROM l ASOF LEFT JOIN r USING (t) PREFER LATER",
			[]string{"LEFT using on=t prefer=LATER"}, nil},
		{"two asof joins", "SELECT * FROM a ASOF JOIN b ON t BETWEEN -1 AND 0 ASOF LEFT JOIN c USING (k, t)",
			[]string{"INNER range on=t lo=-1 hi=0", "LEFT using on=t using=[k]"}, nil},
		{"mixed with ordinary joins", "SELECT * FROM a JOIN x ON a.id = x.id ASOF JOIN b ON t BETWEEN -1 AND 0 USING (k) LEFT JOIN y USING (id) CROSS JOIN z, w",
			[]string{"INNER range on=t lo=-1 hi=0 using=[k]"}, nil},
		{"subquery right side", "SELECT * FROM l ASOF JOIN (SELECT * FROM r ORDER BY t) rr ON t BETWEEN -1 AND 0",
			[]string{"INNER range on=t lo=-1 hi=0"}, nil},
		{"parenthesized join right side", "SELECT * FROM l ASOF JOIN (r JOIN s ON r.id = s.id) ON t BETWEEN -1 AND 0",
			[]string{"INNER range on=t lo=-1 hi=0"}, nil},
		{"inside cte and main query", "WITH x AS (SELECT * FROM a ASOF JOIN b USING (t)) SELECT * FROM x ASOF JOIN c ON t BETWEEN 0 AND 1",
			[]string{"INNER range on=t lo=0 hi=1", "INNER using on=t"}, nil},
		{"both sides of union", "SELECT * FROM a ASOF JOIN b USING (t) UNION ALL SELECT * FROM c ASOF LEFT JOIN d USING (k, t)",
			[]string{"INNER using on=t", "LEFT using on=t using=[k]"}, nil},
		{"in subquery predicate", "SELECT * FROM t WHERE id IN (SELECT l.id FROM l ASOF JOIN r USING (t))",
			[]string{"INNER using on=t"}, nil},
		{"comments between", "SELECT * FROM l asof /* c */ left -- x\n outer join r USING (t)",
			[]string{"LEFT using on=t"}, nil},
		{"left function in ON", "SELECT * FROM l ASOF JOIN r ON left(l.s, 2) = r.p AND l.t >= r.t",
			[]string{"INNER inequality left=l.t right=r.t op=ge extra=left(`l`.`s`, 2)=`r`.`p`"}, nil},
		{"later plain USING not stolen", "SELECT * FROM l ASOF JOIN r ON t BETWEEN -1 AND 0 JOIN s USING (id)",
			[]string{"INNER range on=t lo=-1 hi=0"}, nil},
		{"asof as column and alias", `SELECT asof, "asof" FROM t AS asof JOIN u ON asof.a = u.a WHERE asof > 1`, nil, nil},
		{"asof as table", "SELECT * FROM asof JOIN r ON asof.a = r.a", nil, nil},
		{"asof in strings and comments", "SELECT 'x ASOF JOIN y', $$ASOF JOIN$$, E'ASOF\\tJOIN' /* ASOF JOIN */ -- ASOF JOIN\n FROM t", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stmts, err := Parse(tt.sql)
			require.NoError(t, err)
			require.Len(t, stmts, 1)
			st := stmts[0]
			var got []string
			for _, a := range st.Asof {
				got = append(got, describeAsof(st, a))
				require.Same(t, a, st.AsofOf(a.Join))
				if a.Kind == AsofLeft {
					require.Equal(t, ast.LeftJoin, a.Join.Tp)
				} else {
					require.Equal(t, ast.CrossJoin, a.Join.Tp)
				}
			}
			require.ElementsMatch(t, tt.want, got)
			for i, on := range tt.on {
				a := st.Asof[i]
				if a.Join.On == nil {
					require.Equal(t, on, "<nil>")
				} else {
					require.Equal(t, on, restore(a.Join.On.Expr))
				}
			}
			require.NotContains(t, restore(st.AST), "#asof", "no ASOF marker may survive recovery")
		})
	}
}

func TestAsofPositions(t *testing.T) {
	sql := "SELECT *\n  FROM l ASOF JOIN r ON ts BETWEEN -10 AND 5"
	st, err := ParseOne(sql)
	require.NoError(t, err)
	a := st.Asof[0]
	require.Equal(t, 19, a.Pos)
	require.Equal(t, 45, a.LoPos)
	require.Equal(t, 53, a.HiPos)
}

func TestAsofErrors(t *testing.T) {
	tests := []struct {
		name, sql string
		code      string
		pos       int
		msg       string
	}{
		{"no on or using", "SELECT * FROM l ASOF JOIN r WHERE x", sqlerr.SyntaxError, 17, "requires an ON or USING"},
		{"no on or using at end", "SELECT * FROM l ASOF LEFT JOIN r", sqlerr.SyntaxError, 17, "requires an ON or USING"},
		{"qualified range column", "SELECT * FROM l ASOF JOIN r ON r.t BETWEEN -1 AND 0", sqlerr.SyntaxError, 32, "must be unqualified"},
		{"match condition not an inequality", "SELECT * FROM l ASOF JOIN r MATCH_CONDITION (l.k = r.k)", sqlerr.SyntaxError, 46, "MATCH_CONDITION takes one inequality"},
		{"match condition between", "SELECT * FROM l ASOF JOIN r MATCH_CONDITION (r.t BETWEEN l.t - 1 AND l.t)", sqlerr.SyntaxError, 46, "MATCH_CONDITION takes one inequality"},
		{"match condition unclosed", "SELECT * FROM l ASOF JOIN r MATCH_CONDITION (l.t >= r.t", sqlerr.SyntaxError, 56, ""},
		{"or at the top", "SELECT * FROM l ASOF JOIN r ON l.t >= r.t OR r.x", sqlerr.SyntaxError, 17, "conjunction"},
		{"no inequality", "SELECT * FROM l ASOF JOIN r ON l.k = r.k", sqlerr.SyntaxError, 17, "needs one inequality"},
		{"non-constant bound", "SELECT * FROM l ASOF JOIN r ON ts BETWEEN r.x AND 5", sqlerr.SyntaxError, 43, "bound must be a constant"},
		{"non-constant hi bound", "SELECT * FROM l ASOF JOIN r ON ts BETWEEN -1 AND (SELECT 1)", sqlerr.SyntaxError, 50, "bound must be a constant"},
		{"bounds of different columns", "SELECT * FROM l ASOF JOIN r ON r.ts BETWEEN l.a AND l.b + 1", sqlerr.SyntaxError, 53, "same column"},
		{"using with inequality", "SELECT * FROM l ASOF JOIN r ON l.t >= r.t USING (k)", sqlerr.SyntaxError, 43, "USING cannot be combined"},
		{"qualified using column", "SELECT * FROM l ASOF JOIN r USING (r.k, t)", sqlerr.SyntaxError, 36, "plain column names"},
		{"empty using", "SELECT * FROM l ASOF JOIN r USING ()", sqlerr.SyntaxError, 36, `at or near ")"`},
		{"bad prefer", "SELECT * FROM l ASOF JOIN r USING (t) PREFER NEWER", sqlerr.SyntaxError, 46, `at or near "NEWER"`},
		{"unparenthesized nested join", "SELECT * FROM l ASOF JOIN r JOIN s ON r.a = s.a ON t BETWEEN 0 AND 1", sqlerr.SyntaxError, 17, "requires an ON or USING"},
		{"forged marker", "SELECT \"#asof\"(1) FROM t", "42602", 8, "reserved"},
		{"backtick", "SELECT `#asof`(1) FROM t", sqlerr.SyntaxError, 8, "`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.sql)
			requireErr(t, err, tt.code, tt.pos, tt.msg)
		})
	}
}

// requireErr asserts an *sqlerr.Error's code, position and message part.
func requireErr(t *testing.T, err error, code string, pos int, msg string) {
	t.Helper()
	require.Error(t, err)
	e, ok := sqlerr.As(err)
	require.True(t, ok, "want *sqlerr.Error, got %T: %v", err, err)
	require.Equal(t, code, e.Code, "message: %s", e.Message)
	require.Contains(t, e.Message, msg)
	require.Equal(t, pos, e.Position, "message: %s", e.Message)
}

// TestAsofMarkerText pins the rewritten SQL, which the package
// documentation describes and error positions depend on.
func TestAsofMarkerText(t *testing.T) {
	tests := []struct{ sql, rewritten string }{
		{"SELECT * FROM l ASOF LEFT JOIN r ON t BETWEEN -1 AND 0 USING (k) PREFER LATER",
			"select * from l  left join r on `#asof`(1) or t between -1 and 0 or `#asof_using` (1, k)  "},
		{"SELECT * FROM l ASOF JOIN r USING (k, t) ASOF JOIN s ON l.t >= s.t",
			"select * from l  join r on `#asof`(1) or `#asof_using` (1, k, t)  join s on `#asof`(2) or l.t >= s.t"},
		{"SELECT * FROM l /* ASOF JOIN */ ASOF JOIN r USING (t) WHERE s = 'ASOF JOIN'",
			"select * from l" + strings.Repeat(" ", 18) + "join r on `#asof`(1) or `#asof_using` (1, t) where s = 'ASOF JOIN'"},
	}
	for _, tt := range tests {
		st, err := ParseOne(tt.sql)
		require.NoError(t, err)
		require.Equal(t, tt.rewritten, st.Rewritten)
	}
}

// TestAsofOnMatchesPlainJoin checks the claim the marker design rests on:
// after recovery, the ON expression of an ASOF join is exactly the tree
// TiDB builds for the same text in an ordinary join, whatever operators
// of whatever precedence it contains.
func TestAsofOnMatchesPlainJoin(t *testing.T) {
	conds := []string{
		"l.t >= r.t",
		"l.k = r.k AND l.t >= r.t",
		"l.k = r.k AND l.t >= r.t OR r.x = 1",
		"NOT r.flag AND l.t > r.t",
		"l.t >= r.t AND (r.a OR r.b) AND r.c IS NOT NULL",
		"l.t >= r.t AND r.v IN (1, 2, 3) AND r.s LIKE 'a%'",
		"l.t >= r.t AND CASE WHEN r.a > 0 THEN r.b ELSE r.c END = 1",
		"l.t >= r.t AND r.x BETWEEN 1 AND 2 AND r.y NOT BETWEEN 3 AND 4",
		"l.t >= r.t AND r.s || 'x' = 'yx'",
		"l.t >= r.t AND r.id IN (SELECT id FROM z WHERE z.a OR z.b)",
		"l.t >= r.t AND EXISTS (SELECT 1 FROM z) OR NOT r.q",
		"t BETWEEN -1 AND 0 AND r.a = 1 OR r.b = 2",
		"l.t >= r.t AND r.a IS DISTINCT FROM r.b",
		"l.t >= r.t AND r.ts >= TIMESTAMP '2024-01-01' AND r.x::int > 0",
	}
	compared := 0
	for _, c := range conds {
		asof, err := ParseOne("SELECT * FROM l ASOF JOIN r ON " + c)
		plain, perr := ParseOne("SELECT * FROM l JOIN r ON " + c)
		require.NoError(t, perr, c)
		if err != nil {
			// Shape errors (e.g. OR at the top) are fine; what must never
			// happen is a different tree.
			require.Equal(t, sqlerr.SyntaxError, sqlerr.Code(err), c)
			continue
		}
		require.Equal(t, restore(plain.AST), restore(asof.AST), c)
		compared++
	}
	require.Equal(t, len(conds)-3, compared, "only the three top-level ORs are shape errors")
}
