package parser

import (
	"strings"
	"sync"
	"testing"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/stretchr/testify/require"
)

func TestPostgresForms(t *testing.T) {
	tests := []struct {
		name, sql string
		ast       string // restored AST
		casts     string // castList
	}{
		{"double colon casts", "SELECT a::int, b::bigint, c::double precision, d::numeric(10,2) FROM t",
			"select #cast(`a`, 'integer'),#cast(`b`, 'bigint'),#cast(`c`, 'double precision'),#cast(`d`, 'numeric(10,2)') from `t`",
			"`a`::integer; `b`::bigint; `c`::double precision; `d`::numeric(10,2)"},
		{"chained and qualified casts", "SELECT t.a::text::varchar(5), f(x)::real, (a + 1)::smallint, '1'::boolean FROM t",
			"select #cast(#cast(`t`.`a`, 'text'), 'character varying(5)'),#cast(f(`x`), 'real'),#cast((`a`+1), 'smallint'),#cast('1', 'boolean') from `t`",
			"#cast(`t`.`a`, 'text')::character varying(5); '1'::boolean literal; (`a`+1)::smallint; `t`.`a`::text; f(`x`)::real"},
		{"cast binds tighter than minus", "SELECT -1::int",
			"select -#cast(1, 'integer')", "1::integer literal"},
		{"CAST to postgres types", "SELECT CAST(a AS TIMESTAMP WITH TIME ZONE), CAST(b AS bytea), CAST(c AS date), CAST(d AS interval), CAST(CAST(e AS int) AS text)",
			"select #cast(`a`, 'timestamp with time zone'),#cast(`b`, 'bytea'),#cast(`c`, 'date'),#cast(`d`, 'interval'),#cast(#cast(`e`, 'integer'), 'text')",
			"#cast(`e`, 'integer')::text; `a`::timestamp with time zone; `b`::bytea; `c`::date; `d`::interval; `e`::integer"},
		{"timestamptz shorthand", "SELECT x::timestamptz, y::timestamp(3)",
			"select #cast(`x`, 'timestamp with time zone'),#cast(`y`, 'timestamp(3) without time zone')",
			"`x`::timestamp with time zone; `y`::timestamp(3) without time zone"},
		{"typed literals", "SELECT INTERVAL '5 seconds', INTERVAL '-1 day 02:00:00', TIMESTAMP '2024-01-01 00:00:00', DATE '2024-01-02', TIMESTAMPTZ '2024-01-01 00:00+02'",
			"select #cast('5 seconds', 'interval'),#cast('-1 day 02:00:00', 'interval'),#cast('2024-01-01 00:00:00', 'timestamp without time zone'),#cast('2024-01-02', 'date'),#cast('2024-01-01 00:00+02', 'timestamp with time zone')",
			"'-1 day 02:00:00'::interval literal; '2024-01-01 00:00+02'::timestamp with time zone literal; '2024-01-01 00:00:00'::timestamp without time zone literal; '2024-01-02'::date literal; '5 seconds'::interval literal"},
		{"typed literal then cast", "SELECT DATE '2024-01-01'::timestamp",
			"select #cast(#cast('2024-01-01', 'date'), 'timestamp without time zone')",
			"#cast('2024-01-01', 'date')::timestamp without time zone; '2024-01-01'::date literal"},
		{"is distinct from", "SELECT * FROM t WHERE a IS DISTINCT FROM b AND c IS NOT DISTINCT FROM d + 1",
			"select * from `t` where not `a`<=>`b` and `c`<=>`d`+1", ""},
		{"is distinct from cast operand", "SELECT a IS DISTINCT FROM b::int FROM t",
			"select not `a`<=>#cast(`b`, 'integer') from `t`", "`b`::integer"},
		{"escape and dollar strings", "SELECT E'a\\nb''c', $$it's$$, $tag$x$y$tag$, 'back\\slash'",
			"select 'a\nb''c','it''s','x$y','back\\slash'", ""},
		{"boolean literals", "SELECT TRUE, false, a IS TRUE, b IS NOT FALSE FROM t WHERE c = true",
			"select #cast(true, 'boolean'),#cast(false, 'boolean'),`a` is true,`b` is not false from `t` where `c`=#cast(true, 'boolean')",
			"false::boolean literal; true::boolean literal; true::boolean literal"},
		{"regular expression match", "SELECT a ~ '^x', a !~ 'y' FROM t WHERE b OPERATOR(pg_catalog.~) '^(t)$' COLLATE pg_catalog.default AND c OPERATOR(!~) 'z'",
			"select `a` regexp '^x',`a` not regexp 'y' from `t` where `b` regexp '^(t)$' and `c` not regexp 'z'", ""},
		{"no-op collations", `SELECT a COLLATE "C", b COLLATE "default", c COLLATE pg_catalog."POSIX" FROM t ORDER BY a COLLATE "C"`,
			"select `a`,`b`,`c` from `t` order by `a`", ""},
		{"oid alias casts", "SELECT c.oid::pg_catalog.regclass::pg_catalog.text, 'trades'::regclass, x::regtype, 1::oid FROM t",
			"select #cast(#regcast(`c`.`oid`, 'regclass'), 'text'),#regcast('trades', 'regclass'),#regcast(`x`, 'regtype'),#regcast(1, 'oid') from `t`",
			"#regcast(`c`.`oid`, 'regclass')::text"},
		{"op ANY (array)", "SELECT 'd' = any(stxkind), oid <> SOME (pol.polroles), x = ANY (SELECT 1) FROM t",
			"select 'd'=#any(`stxkind`),`oid`!=#any(`pol`.`polroles`),`x`=any (select 1) from `t`", ""},
		{"pipes concatenate", "SELECT 'a' || 'b'", "select concat('a', 'b')", ""},
		{"limit all and offset alone", "SELECT * FROM t LIMIT ALL OFFSET 3",
			"select * from `t` limit 3,18446744073709551615", ""},
		{"offset alone", "SELECT * FROM t ORDER BY a OFFSET 5",
			"select * from `t` order by `a` limit 5,18446744073709551615", ""},
		{"offset before limit", "SELECT * FROM t OFFSET 2 ROWS LIMIT 5", "select * from `t` limit 2,5", ""},
		{"case end cast", "SELECT CASE WHEN a THEN 1 END::text FROM t", "select #cast(case when `a` then 1 end, 'text') from `t`", "case when `a` then 1 end::text"},
		{"quoted identifiers keep case, unquoted fold", `SELECT "MyCol", MyOther FROM "MyTable"`,
			"select `MyCol`,`myother` from `MyTable`", ""},
		{"tidb-only reserved words are names", "SELECT key, t.index, rank, \"read\" FROM t AS lock ORDER BY key",
			"select `key`,`t`.`index`,`rank`,`read` from `t` as `lock` order by `key`", ""},
		{"window and string functions keep working", "SELECT rank() OVER (ORDER BY a), mod(a, 2), replace(s, 'a', 'b') FROM t",
			"select rank() over (order by `a`),`a`%2,replace(`s`, 'a', 'b') from `t`", ""},
		{"count star with space", "SELECT count (*) FROM t", "select count(1) from `t`", ""},
		{"comments blanked", "SELECT /*! 1, */ 2 # x", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := ParseOne(tt.sql)
			if tt.name == "comments blanked" {
				// "#" is an operator in Postgres and refused; "/*!" is a comment.
				requireErr(t, err, sqlerr.FeatureNotSupported, 20, "operator #")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.ast, restore(st.AST))
			require.Equal(t, tt.casts, castList(st))
		})
	}
}

func TestNullsOrdering(t *testing.T) {
	st, err := ParseOne("SELECT * FROM t ORDER BY a DESC NULLS LAST, b NULLS FIRST, c, d ASC NULLS LAST")
	require.NoError(t, err)
	sel := st.AST.(*ast.SelectStmt)
	items := sel.OrderBy.Items
	require.Len(t, items, 4)
	got := map[string]bool{}
	for it, first := range st.NullsFirst {
		got[restore(it.Expr)] = first
	}
	require.Equal(t, map[string]bool{"`a`": false, "`b`": true, "`d`": false}, got)
	require.True(t, items[0].Desc)

	st, err = ParseOne("SELECT rank() OVER (ORDER BY x NULLS FIRST) FROM t")
	require.NoError(t, err)
	require.Len(t, st.NullsFirst, 1)
}

func TestParams(t *testing.T) {
	st, err := ParseOne("SELECT * FROM t WHERE a = $2 AND b = $1 AND c = $2 LIMIT $3")
	require.NoError(t, err)
	require.Equal(t, []int{2, 1, 2, 3}, st.Params)
	require.Equal(t, 3, st.NumParams)
	var orders []int
	st.AST.Accept(visitFunc(func(n ast.Node) {
		if p, ok := n.(*test_driver.ParamMarkerExpr); ok {
			orders = append(orders, p.Order)
		}
	}))
	require.Equal(t, []int{1, 0, 1, 2}, orders, "Order is $n-1 for each ? in text order")
}

func TestParamsMovedWithOffset(t *testing.T) {
	st, err := ParseOne("SELECT * FROM t OFFSET $1 LIMIT $2")
	require.NoError(t, err)
	require.Equal(t, "select * from t limit ? offset ?", st.Rewritten)
	require.Equal(t, []int{2, 1}, st.Params)
	sel := st.AST.(*ast.SelectStmt)
	require.Equal(t, 1, sel.Limit.Count.(*test_driver.ParamMarkerExpr).Order)
	require.Equal(t, 0, sel.Limit.Offset.(*test_driver.ParamMarkerExpr).Order)
}

// visitFunc adapts a function to ast.Visitor.
type visitFunc func(ast.Node)

func (f visitFunc) Enter(n ast.Node) (ast.Node, bool) { f(n); return n, false }
func (f visitFunc) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func TestTypesAreExact(t *testing.T) {
	for sql, want := range map[string]sqltypes.Type{
		"SELECT x::smallint":                         sqltypes.Int2Type,
		"SELECT x::integer":                          sqltypes.Int4Type,
		"SELECT x::bigint":                           sqltypes.Int8Type,
		"SELECT x::real":                             sqltypes.Float4Type,
		"SELECT x::double precision":                 sqltypes.Float8Type,
		"SELECT x::numeric(12,3)":                    sqltypes.NumericType(12, 3),
		"SELECT x::text":                             sqltypes.TextType,
		"SELECT x::varchar(20)":                      sqltypes.VarcharOf(20),
		"SELECT x::varchar":                          sqltypes.VarcharType,
		"SELECT x::boolean":                          sqltypes.BoolType,
		"SELECT x::bytea":                            sqltypes.ByteaType,
		"SELECT x::date":                             sqltypes.DateType,
		"SELECT x::timestamp":                        sqltypes.TimestampType,
		"SELECT x::timestamptz":                      sqltypes.TimestampTZType,
		"SELECT CAST(x AS timestamp with time zone)": sqltypes.TimestampTZType,
		"SELECT x::interval":                         sqltypes.IntervalType,
	} {
		st, err := ParseOne(sql)
		require.NoError(t, err, sql)
		require.Len(t, st.Casts, 1, sql)
		for _, c := range st.Casts {
			require.Equal(t, want, c.Type, sql)
		}
	}
}

func TestPostgresFormErrors(t *testing.T) {
	tests := []struct {
		name, sql string
		code      string
		pos       int
		msg       string
	}{
		{"unknown cast type", "SELECT x::regproc", sqlerr.UndefinedObject, 11, "regproc"},
		{"array slice", "SELECT x[1:2]", sqlerr.FeatureNotSupported, 11, "array slices"},
		{"function in FROM", "SELECT * FROM json_each(a)", sqlerr.FeatureNotSupported, 15, "json_each in FROM"},
		{"interval field qualifier", "SELECT INTERVAL '1' DAY", sqlerr.FeatureNotSupported, 21, "field qualifiers"},
		{"mysql interval", "SELECT now() + INTERVAL 1 SECOND", sqlerr.SyntaxError, 25, `at or near "1"`},
		{"cast without as", "SELECT CAST(x) FROM t", sqlerr.SyntaxError, 14, `at or near ")"`},
		{"mysql div operator", "SELECT 7 div 2", sqlerr.SyntaxError, 14, `at or near "2"`},
		{"mysql xor operator", "SELECT a xor b FROM t", sqlerr.SyntaxError, 14, `at or near "b"`},
		{"filter on last", "SELECT last(a) FILTER (WHERE a) FROM t", sqlerr.FeatureNotSupported, 16, "FILTER on last()"},
		{"rollup inside an expression", "SELECT a FROM t GROUP BY ROLLUP (a) + 1", sqlerr.SyntaxError, 26, `at or near "ROLLUP"`},
		{"filter in a window", "SELECT sum(a) FILTER (WHERE a) OVER () FROM t", sqlerr.FeatureNotSupported, 15, "FILTER in a window function"},
		{"returning", "DELETE FROM t RETURNING a", sqlerr.FeatureNotSupported, 15, "RETURNING"},
		{"at time zone with a cast zone", "SELECT now() AT TIME ZONE z::text FROM t", sqlerr.FeatureNotSupported, 28, "zone of AT TIME ZONE"},
		{"at time zone without an operand", "SELECT AT TIME ZONE 'UTC'", sqlerr.SyntaxError, 16, `at or near "ZONE"`},
		{"at time zone without a zone", "SELECT now() AT TIME ZONE , 1", sqlerr.SyntaxError, 27, `at or near ","`},
		{"collate", "SELECT 'a' COLLATE \"en_US\"", sqlerr.FeatureNotSupported, 12, "COLLATE"},
		{"prefix tilde", "SELECT ~ 5", sqlerr.FeatureNotSupported, 8, "operator ~"},
		{"operator from another schema", "SELECT a OPERATOR(public.~) 'x' FROM t", sqlerr.SyntaxError, 10, "OPERATOR"},
		{"charset introducer", "SELECT _utf8mb4'x'", sqlerr.UndefinedObject, 8, "_utf8mb4"},
		{"asof cross join", "SELECT * FROM l ASOF CROSS JOIN r", sqlerr.FeatureNotSupported, 17, "ASOF CROSS JOIN"},
		{"double nulls", "SELECT * FROM t ORDER BY a NULLS FIRST NULLS LAST", sqlerr.SyntaxError, 40, `at or near "NULLS"`},
		{"nulls in group by", "SELECT a FROM t GROUP BY a NULLS FIRST", sqlerr.SyntaxError, 28, `at or near "NULLS"`},
		{"huge literal", "SELECT 1" + strings.Repeat("0", 80), sqlerr.NumericValueOutOfRange, 8, "digits"},
		{"float overflow", "SELECT 1.5e400", sqlerr.NumericValueOutOfRange, 8, "out of range"},
		{"hash is xor in postgres", "SELECT 2 # 3", sqlerr.FeatureNotSupported, 10, "operator #"},
		{"question mark", "SELECT * FROM t WHERE a = ?", sqlerr.SyntaxError, 27, `at or near "?"`},
		{"parameter zero", "SELECT $0", "42P02", 8, "no parameter $0"},
		{"unterminated string", "SELECT 'abc", sqlerr.SyntaxError, 8, "unterminated quoted string"},
		{"unterminated comment", "SELECT 1 /* a /* b */", sqlerr.SyntaxError, 10, "unterminated /* comment"},
		{"unterminated dollar", "SELECT $x$abc", sqlerr.SyntaxError, 8, "unterminated dollar-quoted"},
		{"trailing junk", "SELECT 1_000", sqlerr.SyntaxError, 8, "trailing junk"},
		{"bad numeric typmod", "SELECT x::numeric(50,2)", sqlerr.InvalidParameterValue, 11, "precision"},
		{"multibyte before error", "SELECT 'ÄÖÜ', 1 +", sqlerr.SyntaxError, 18, "end of input"},
		{"multibyte token", "SELECT 'ÄÖÜ' FROM t WHERE WHERE", sqlerr.SyntaxError, 27, `at or near "WHERE"`},
		{"error after rewrite on later line", "SELECT a::int,\n  b::text\nFROM t\nWHERE x = = 1", sqlerr.SyntaxError, 43, `at or near "="`},
		{"nul in escape string", `SELECT E'\x00'`, "22021", 10, "0x00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.sql)
			requireErr(t, err, tt.code, tt.pos, tt.msg)
		})
	}
}

func TestConcurrentParse(t *testing.T) {
	queries := []string{
		"SELECT * FROM l ASOF JOIN r ON t BETWEEN -1 AND 0 USING (k)",
		"SELECT a::int FROM t WHERE b = $1",
		"SELECT 1; SELECT 2",
	}
	want := make([]string, len(queries))
	for i, q := range queries {
		stmts, err := Parse(q)
		require.NoError(t, err)
		want[i] = restore(stmts[0].AST)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for k := 0; k < 50; k++ {
				i := (g + k) % len(queries)
				stmts, err := Parse(queries[i])
				if err != nil || restore(stmts[0].AST) != want[i] {
					errs <- queries[i]
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for q := range errs {
		t.Errorf("concurrent parse of %q differed", q)
	}
}
