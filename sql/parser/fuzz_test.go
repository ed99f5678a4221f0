package parser

import (
	"fmt"
	"math"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// fuzzSeeds are inputs that reach every pass: ASOF forms, Postgres forms,
// our statements, lexer corner cases and errors.
var fuzzSeeds = []string{
	"SELECT * FROM trades ASOF LEFT JOIN quotes ON ts BETWEEN -10 AND -1 USING (sym) PREFER LATER",
	"SELECT * FROM l ASOF JOIN r ON l.k = r.k AND l.t >= r.t",
	"SELECT * FROM l ASOF JOIN r ON l.k = r.k AND r.ts BETWEEN l.t - 10 AND l.t + 1",
	"SELECT * FROM l ASOF JOIN r USING (k, t) ASOF JOIN s USING (t) PREFER EARLIER",
	"WITH x AS (SELECT * FROM a ASOF JOIN b USING (t)) SELECT * FROM x ASOF JOIN (c JOIN d ON c.i = d.i) ON t BETWEEN 0 AND 1",
	"SELECT a::int, CAST(b AS timestamp with time zone), INTERVAL '5 seconds', x IS DISTINCT FROM y FROM t ORDER BY a DESC NULLS LAST LIMIT ALL",
	"SELECT E'a\\n\\x41\\u00e9', $$x$$, $t$y$t$, 'it''s', \"Q\"\"x\" FROM t OFFSET 3",
	"SELECT $1, $2::text WHERE a IS NOT DISTINCT FROM $1",
	"BEGIN ISOLATION LEVEL SERIALIZABLE; SET TIME ZONE 'UTC'; SHOW ALL; COMMIT",
	"COPY t (a, b) FROM STDIN WITH (FORMAT csv, HEADER true, DELIMITER ';', NULL '')",
	"COPY (SELECT * FROM l ASOF JOIN r USING (t)) TO '/tmp/x' (FORMAT parquet)",
	"CREATE TABLE q (sym text NOT NULL, ts timestamptz, PRIMARY KEY (sym, ts)) ORDER BY (ts)",
	"EXPLAIN (ANALYZE, VERBOSE false) SELECT DATE '2024-01-01'::timestamp",
	"/* a /* b */ c */ -- x\n;;",
	"SELECT 'unterminated",
	"SELECT * FROM l ASOF JOIN r",
	"SELECT \"#asof\"(1)",
	"SELECT 1 +",
	"SELECT 'ÄÖÜ' FROM t WHERE WHERE",
	"select asof from asof asof join asof on asof.t >= asof.t",
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	for _, c := range loadCorpus(f) {
		f.Add(c.sql)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		if len(sql) > 4096 {
			return
		}
		// Go's fuzzer has no hang detection: a watchdog turns a parse
		// that never ends into a crash that records the input. The limit
		// is generous (inputs are at most 4 KiB; a parse takes µs).
		done := make(chan struct{})
		go func() {
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				panic(fmt.Sprintf("Parse hangs on %q", sql))
			}
		}()
		stmts, err := Parse(sql)
		close(done)
		nchars := utf8.RuneCountInString(sql)
		if err != nil {
			e, ok := sqlerr.As(err)
			if !ok {
				t.Fatalf("error is %T, not *sqlerr.Error: %v", err, err)
			}
			if e.Code == "" || e.Code == sqlerr.InternalError {
				t.Fatalf("error without a proper SQLSTATE: %s %q", e.Code, e.Message)
			}
			if e.Position < 0 || e.Position > nchars+1 {
				t.Fatalf("error position %d outside 1..%d: %s", e.Position, nchars+1, e.Message)
			}
			return
		}
		for _, st := range stmts {
			checkStatement(t, sql, nchars, st)
		}
	})
}

func checkStatement(t *testing.T, sql string, nchars int, st *Statement) {
	if st.Start < 0 || st.End > len(sql) || st.Start >= st.End || sql[st.Start:st.End] != st.Text {
		t.Fatalf("bad span %d..%d", st.Start, st.End)
	}
	if (st.AST == nil) == (st.Node == nil) {
		t.Fatalf("exactly one of AST and Node must be set")
	}
	inRange := func(p int) {
		if p < 1 || p > nchars+1 {
			t.Fatalf("position %d outside 1..%d", p, nchars+1)
		}
	}
	for _, a := range st.Asof {
		inRange(a.Pos)
		if a.Lo != nil {
			inRange(a.LoPos)
		}
	}
	if st.AST != nil {
		// The token-level bound TiDB's own walk relies on (depth.go) must
		// cover the tree it built.
		if toks, err := lex(st.Text); err == nil {
			if bound, _ := tokenDepth(toks, math.MaxInt); bound < treeDepth(st) {
				t.Fatalf("token depth bound %d below the tree's depth %d", bound, treeDepth(st))
			}
		}
		st.AST.Accept(visitFunc(func(n ast.Node) {
			if e, ok := n.(ast.ExprNode); ok {
				inRange(st.Pos(e))
			}
			if f, ok := n.(*ast.FuncCallExpr); ok && len(f.FnName.O) > 0 && f.FnName.O[0] == '#' {
				if (f.FnName.O != mkCast || st.Casts[f] == nil) && f.FnName.O != MarkerRegCast && f.FnName.O != MarkerAny && f.FnName.O != MarkerAll && f.FnName.O != MarkerArray && f.FnName.O != MarkerArrayCtor && f.FnName.O != MarkerArrayCast && f.FnName.O != MarkerSubscript && f.FnName.O != MarkerSeries && f.FnName.O != MarkerUnnest && f.FnName.O != mkExtract && f.FnName.O != MarkerNamed && f.FnName.O != MarkerJSONGet && f.FnName.O != MarkerJSONGetText && f.FnName.O != MarkerAtTimeZone {
					t.Fatalf("unresolved marker %s", f.FnName.O)
				}
			}
		}))
	}
	switch n := st.Node.(type) {
	case *ExplainStmt:
		checkStatement(t, sql, nchars, n.Stmt)
	case *CopyStmt:
		if n.Query != nil {
			checkStatement(t, sql, nchars, n.Query)
		}
	}
}
