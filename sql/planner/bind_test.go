package planner

import (
	"testing"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

func TestBindErrors(t *testing.T) {
	cat := newCatalog(t)
	tests := []struct {
		name, sql, code string
		pos             int    // 0: not checked
		msg             string // substring of the message
	}{
		{"unknown table", `SELECT * FROM nope`, sqlerr.UndefinedTable, 0, `"nope"`},
		{"unknown column", `SELECT nope FROM trades`, sqlerr.UndefinedColumn, 8, `column "nope" does not exist`},
		{"unknown qualifier", `SELECT x.ts FROM trades`, sqlerr.UndefinedTable, 8, `missing FROM-clause entry for table "x"`},
		{"unknown qualified column", `SELECT trades.nope FROM trades`, sqlerr.UndefinedColumn, 8, `column trades.nope does not exist`},
		{"ambiguous column", `SELECT k FROM events, ticks`, sqlerr.AmbiguousColumn, 8, `column reference "k" is ambiguous`},
		{"ambiguous in where", `SELECT 1 FROM events e JOIN ticks x ON e.k = x.k WHERE t > 0`, sqlerr.AmbiguousColumn, 56, `"t"`},
		{"operator missing", `SELECT sym + 1 FROM trades`, sqlerr.UndefinedFunction, 8, `operator does not exist: text + integer`},
		{"bad literal for column type", `SELECT * FROM trades WHERE price = 'abc'`, sqlerr.InvalidTextRepresentation, 36, `double precision`},
		{"where not boolean", `SELECT * FROM trades WHERE price`, sqlerr.DatatypeMismatch, 28, `argument of WHERE must be type boolean, not type double precision`},
		{"ungrouped column", `SELECT sym, price FROM trades GROUP BY sym`, sqlerr.GroupingError, 13, `column "trades.price" must appear in the GROUP BY clause`},
		{"aggregate in where", `SELECT 1 FROM trades WHERE count(*) > 1`, sqlerr.GroupingError, 28, `aggregate functions are not allowed in WHERE`},
		{"nested aggregate", `SELECT sum(sum(price)) FROM trades`, sqlerr.GroupingError, 12, `cannot be nested`},
		{"unknown function", `SELECT nofunc(1)`, sqlerr.UndefinedFunction, 8, `function nofunc(integer) does not exist`},
		{"aggregate of wrong type", `SELECT sum(sym) FROM trades`, sqlerr.UndefinedFunction, 8, `function sum(text) does not exist`},
		{"insert bad value", `INSERT INTO events VALUES (1, 'x', 'y')`, sqlerr.InvalidTextRepresentation, 31, `integer`},
		{"insert too many values", `INSERT INTO events (t) VALUES (1, 2)`, sqlerr.SyntaxError, 35, `more expressions than target columns`},
		{"insert too few values", `INSERT INTO events (t, k) VALUES (1)`, sqlerr.SyntaxError, 0, `more target columns than expressions`},
		{"insert ragged values", `INSERT INTO events VALUES (1), (2, 3)`, sqlerr.SyntaxError, 33, `VALUES lists must all be the same length`},
		{"insert unknown column", `INSERT INTO events (nope) VALUES (1)`, sqlerr.UndefinedColumn, 0, `"nope"`},
		{"insert type mismatch", `INSERT INTO events (t) VALUES (true)`, sqlerr.DatatypeMismatch, 32, `column "t" is of type bigint but expression is of type boolean`},
		{"insert null into not null", `INSERT INTO trades (sym) VALUES ('a')`, sqlerr.NotNullViolation, 0, `"ts"`},
		{"subquery without alias", `SELECT * FROM (SELECT 1)`, sqlerr.SyntaxError, 0, `must have an alias`},
		{"order by position", `SELECT ts FROM trades ORDER BY 5`, sqlerr.InvalidColumnReference, 0, `ORDER BY position 5 is not in select list`},
		{"distinct order by", `SELECT DISTINCT sym FROM trades ORDER BY price`, sqlerr.InvalidColumnReference, 42, `must appear in select list`},
		{"union arity", `SELECT 1 UNION ALL SELECT 1, 2`, sqlerr.SyntaxError, 0, `same number of columns`},
		{"union types", `SELECT 1 UNION ALL SELECT 'a'::text`, sqlerr.DatatypeMismatch, 0, `UNION types integer and text cannot be matched`},
		{"case types", `SELECT CASE WHEN true THEN 1 ELSE 'a'::text END`, sqlerr.DatatypeMismatch, 0, `CASE types integer and text cannot be matched`},
		{"using missing", `SELECT * FROM events JOIN daily USING (t)`, sqlerr.UndefinedColumn, 0, `specified in USING clause does not exist in right table`},
		{"except arity", `SELECT 1 EXCEPT SELECT 1, 2`, sqlerr.SyntaxError, 0, `each EXCEPT query must have the same number of columns`},
		{"intersect types", `SELECT 1 UNION SELECT 1 INTERSECT SELECT 'a'::text`, sqlerr.DatatypeMismatch, 0, `INTERSECT types integer and text cannot be matched`},
		{"subquery of two columns", `SELECT (SELECT 1, 2)`, sqlerr.SyntaxError, 0, `subquery must return only one column`},
		{"IN subquery of two columns", `SELECT 1 IN (SELECT 1, 2)`, sqlerr.SyntaxError, 0, `subquery must return only one column`},
		{"unknown column in a subquery", `SELECT (SELECT nope FROM events) FROM trades`, sqlerr.UndefinedColumn, 16, `column "nope" does not exist`},
		{"a CTE does not see the subquery's outer query", `WITH c AS (SELECT sym FROM events) SELECT (SELECT count(*) FROM c) FROM trades`, sqlerr.UndefinedColumn, 19, `column "sym" does not exist`},
		{"ungrouped outer column", `SELECT (SELECT price) FROM trades GROUP BY sym`, sqlerr.GroupingError, 16, `subquery uses ungrouped column "trades.price" from outer query`},
		{"IN subquery types", `SELECT sym IN (SELECT t FROM events) FROM trades`, sqlerr.UndefinedFunction, 0, `operator does not exist: text = bigint`},
		{"generate_series types", `SELECT * FROM generate_series('a'::text, 2)`, sqlerr.UndefinedFunction, 0, `function generate_series(text, integer) does not exist`},
		{"cannot cast", `SELECT true::date`, "42846", 0, `cannot cast type boolean to date`},
		{"update", `UPDATE events SET nope = 'a'`, sqlerr.UndefinedColumn, 19, `column "nope" of relation "events" does not exist`},
		{"row constructor", `SELECT (1, 2) = (1, 2)`, sqlerr.FeatureNotSupported, 0, `row constructors`},
		{"unknown relation", `SELECT * FROM events, nosuch`, sqlerr.UndefinedTable, 23, `relation "nosuch" does not exist`},
		{"unknown qualified relation", `SELECT * FROM events JOIN public.nope ON true`, sqlerr.UndefinedTable, 27, `does not exist`},
		{"unknown aggregate in a grouped query", `SELECT k, median(t) FROM events GROUP BY k`, sqlerr.UndefinedFunction, 11, `function median(bigint) does not exist`},
		{"window in where", `SELECT 1 FROM ticks WHERE row_number() OVER () > 1`, "42P20", 27, `window functions are not allowed in WHERE`},
		{"window in grouped query", `SELECT k, rank() OVER (ORDER BY k) FROM ticks GROUP BY k`, sqlerr.FeatureNotSupported, 0, `grouped query`},
		{"window frame", `SELECT sum(x) OVER (ORDER BY t ROWS BETWEEN CURRENT ROW AND 1 PRECEDING) FROM ticks`, "42P20", 8, `frame starting from current row cannot have preceding rows`},
		{"window on expression", `SELECT rank() OVER (ORDER BY t + 1) FROM ticks`, sqlerr.FeatureNotSupported, 30, `ORDER BY on an expression`},
		{"window variable offset", `SELECT sum(x) OVER (ORDER BY t ROWS t PRECEDING) FROM ticks`, "42P10", 37, `argument of ROWS must not contain variables`},
		{"bad unknown function argument", `SELECT abs('abc')`, sqlerr.InvalidTextRepresentation, 0, `double precision`},
		{"bad unknown timestamp argument", `SELECT date_trunc('day', 'garbage')`, sqlerr.InvalidDatetimeFormat, 0, `garbage`},
		{"bad unknown in coalesce", `SELECT coalesce(qty, 'x') FROM trades`, sqlerr.InvalidTextRepresentation, 0, `integer`},
		{"duplicate cte", `WITH a AS (SELECT 1), a AS (SELECT 2) SELECT 1`, "42712", 0, `"a" specified more than once`},
		{"duplicate table", `SELECT 1 FROM trades JOIN trades ON true`, "42712", 0, `table name "trades" specified more than once`},
		{"duplicate alias in an ASOF join", `SELECT 1 FROM trades q ASOF JOIN quotes q ON ts BETWEEN -1 AND 0`, "42712", 0, `table name "q" specified more than once`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := plan(t, cat, tt.sql)
			require.Error(t, err)
			e, ok := sqlerr.As(err)
			require.True(t, ok, "not a sqlerr: %v", err)
			require.Equal(t, tt.code, e.Code, e.Message)
			require.Contains(t, e.Message, tt.msg)
			if tt.pos > 0 {
				require.Equal(t, tt.pos, e.Position, e.Message)
			}
		})
	}
}

// schemaOf plans a query and returns its result columns.
func schemaOf(t *testing.T, cat Catalog, sql string) []Column {
	t.Helper()
	p, err := plan(t, cat, sql)
	require.NoError(t, err, sql)
	return p.(*Query).Root.Schema()
}

func names(cols []Column) []string {
	var out []string
	for _, c := range cols {
		out = append(out, c.Name)
	}
	return out
}

func types(cols []Column) []sqltypes.Type {
	var out []sqltypes.Type
	for _, c := range cols {
		out = append(out, c.Type)
	}
	return out
}

func TestStarExpansion(t *testing.T) {
	cat := newCatalog(t)
	tests := []struct {
		name, sql string
		want      []string
	}{
		// Spec §2.6: range form and USING (k..., t): keys, t, other left, other right.
		{"range form", `SELECT * FROM ticks ASOF JOIN marks ON t BETWEEN -1 AND 0 USING (k)`, []string{"k", "t", "x", "tag", "m"}},
		{"using form", `SELECT * FROM ticks ASOF JOIN marks USING (k, t)`, []string{"k", "t", "x", "tag", "m"}},
		{"range no keys", `SELECT * FROM ticks ASOF JOIN marks ON t BETWEEN -1 AND 0`, []string{"t", "k", "x", "tag", "k", "m"}},
		// ON forms: every left column then every right column.
		{"on form", `SELECT * FROM ticks a ASOF JOIN marks b ON a.k = b.k AND a.t >= b.t`, []string{"t", "k", "x", "tag", "t", "k", "m"}},
		// Qualified names stay addressable in every form.
		{"qualified right t", `SELECT marks.t, ticks.t, t, marks.k FROM ticks ASOF JOIN marks ON t BETWEEN -1 AND 0 USING (k)`, []string{"t", "t", "t", "k"}},
		{"table star", `SELECT marks.* FROM ticks ASOF JOIN marks ON t BETWEEN -1 AND 0 USING (k)`, []string{"t", "k", "m"}},
		// A chain applies the rule step by step.
		{"chain", `SELECT * FROM events ASOF JOIN ticks ON t BETWEEN -1 AND 0 USING (k) ASOF JOIN marks ON t BETWEEN -1 AND 0 USING (k)`, []string{"k", "t", "v", "x", "tag", "m"}},
		{"plain using join", `SELECT * FROM events JOIN ticks USING (k)`, []string{"k", "t", "v", "t", "x", "tag"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, names(schemaOf(t, cat, tt.sql)))
		})
	}

	// The right copy of t is addressable and distinct from the merged t.
	p, err := plan(t, cat, `SELECT marks.t, t FROM ticks ASOF LEFT JOIN marks ON t BETWEEN -1 AND 0 USING (k)`)
	require.NoError(t, err)
	proj := p.(*Query).Root.(*Project)
	j := proj.Input.(*AsofJoin)
	sch := j.Schema()
	first, second := sch[proj.Exprs[0].(*expr.Column).Index], sch[proj.Exprs[1].(*expr.Column).Index]
	require.Equal(t, Column{Name: "t", Table: "marks", Type: sqltypes.Int8Type, Nullable: true}, first, "LEFT makes right columns nullable")
	require.Equal(t, "ticks", second.Table)
	require.Equal(t, AsofLeft, j.Rights[0].Kind)
	// Pruning kept only the right on column in the payload.
	rs := j.Rights[0].Input.Schema()
	require.Len(t, j.Rights[0].Payload, 1)
	require.Equal(t, "t", rs[j.Rights[0].Payload[0]].Name)
	require.Equal(t, "t", rs[j.Rights[0].On].Name)
	require.Equal(t, "k", rs[j.Rights[0].Keys[0]].Name)
}

func TestTypes(t *testing.T) {
	cat := newCatalog(t)
	tests := []struct {
		name, sql string
		want      []sqltypes.Type
	}{
		{"literals", `SELECT 1, 3000000000, 1.5, 'a', true, 1e3, NULL::date`, []sqltypes.Type{sqltypes.Int4Type, sqltypes.Int8Type, sqltypes.NumericDisplay(1), sqltypes.TextType, sqltypes.BoolType, sqltypes.Float8Type, sqltypes.DateType}},
		{"int widths", `SELECT small + 1, small + t, t * 2 FROM names`, []sqltypes.Type{sqltypes.Int4Type, sqltypes.Int8Type, sqltypes.Int8Type}},
		{"varchar and text", `SELECT code || name, code = 'ab', lower(code) FROM names`, []sqltypes.Type{sqltypes.TextType, sqltypes.BoolType, sqltypes.TextType}},
		{"datetime arithmetic", `SELECT ts + INTERVAL '1 day', ts - ts, ts + '1 hour', d + 1, d - d FROM trades, daily`, []sqltypes.Type{sqltypes.TimestampType, sqltypes.IntervalType, sqltypes.TimestampType, sqltypes.DateType, sqltypes.Int4Type}},
		{"aggregates", `SELECT count(*), sum(qty), avg(price), min(sym), max(ts), sum(price) FROM trades`, []sqltypes.Type{sqltypes.Int8Type, sqltypes.Int8Type, sqltypes.Float8Type, sqltypes.TextType, sqltypes.TimestampType, sqltypes.Float8Type}},
		{"union", `SELECT 1 UNION ALL SELECT 2.5`, []sqltypes.Type{sqltypes.NumericType(sqltypes.NoLimit, sqltypes.NoLimit)}},
		{"coalesce", `SELECT coalesce(qty, 0), coalesce(price, qty) FROM trades`, []sqltypes.Type{sqltypes.Int4Type, sqltypes.Float8Type}},
		{"case", `SELECT CASE WHEN qty > 1 THEN price ELSE 0 END FROM trades`, []sqltypes.Type{sqltypes.Float8Type}},
		{"window", `SELECT row_number() OVER (), lag(price) OVER (ORDER BY ts), sum(qty) OVER (PARTITION BY sym), count(*) OVER () FROM trades`, []sqltypes.Type{sqltypes.Int8Type, sqltypes.Float8Type, sqltypes.Int8Type, sqltypes.Int8Type}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, types(schemaOf(t, cat, tt.sql)))
		})
	}
}

func TestParamInference(t *testing.T) {
	cat := newCatalog(t)
	tests := []struct {
		name, sql string
		want      []sqltypes.Type
	}{
		{"comparisons and limit", `SELECT * FROM events WHERE t > $1 AND v = $2 LIMIT $3`, []sqltypes.Type{sqltypes.Int8Type, sqltypes.TextType, sqltypes.Int8Type}},
		{"unconstrained", `SELECT $1`, []sqltypes.Type{sqltypes.UnknownType}},
		{"insert", `INSERT INTO events VALUES ($1, $2, $3)`, []sqltypes.Type{sqltypes.Int8Type, sqltypes.Int4Type, sqltypes.TextType}},
		{"gap", `SELECT * FROM events WHERE t = $2`, []sqltypes.Type{sqltypes.UnknownType, sqltypes.Int8Type}},
		{"cast", `SELECT $1::date`, []sqltypes.Type{sqltypes.DateType}},
		{"asof bounds", `SELECT * FROM trades ASOF JOIN quotes ON ts BETWEEN $1 AND $2`, []sqltypes.Type{sqltypes.IntervalType, sqltypes.IntervalType}},
		{"timestamp arithmetic", `SELECT * FROM trades WHERE ts > $1`, []sqltypes.Type{sqltypes.TimestampType}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := plan(t, cat, tt.sql)
			require.NoError(t, err)
			var got []sqltypes.Type
			switch x := p.(type) {
			case *Query:
				got = x.Params
			case *Insert:
				got = x.Params
			}
			require.Equal(t, tt.want, got)
		})
	}

	// Declared parameter types win over inference.
	st, err := parser.ParseOne(`SELECT * FROM events WHERE t > $1`)
	require.NoError(t, err)
	p, err := Build(cat, st, &Options{ParamTypes: []sqltypes.Type{sqltypes.Int4Type}})
	require.NoError(t, err)
	require.Equal(t, []sqltypes.Type{sqltypes.Int4Type}, p.(*Query).Params)
}

func TestInsertPlan(t *testing.T) {
	cat := newCatalog(t)
	p, err := plan(t, cat, `INSERT INTO events (v, t) VALUES ('a', 1), ('b', 2)`)
	require.NoError(t, err)
	ins := p.(*Insert)
	require.Equal(t, "events", ins.Table.Name)
	cols := ins.Input.Schema()
	require.Equal(t, []string{"t", "k", "v"}, names(cols))
	require.Equal(t, []sqltypes.Type{sqltypes.Int8Type, sqltypes.Int4Type, sqltypes.TextType}, types(cols))
	proj := ins.Input.(*Project)
	require.Equal(t, &expr.Column{Index: 1, Name: "t", T: sqltypes.Int8Type}, proj.Exprs[0])
	require.Equal(t, &expr.Literal{T: sqltypes.Int4Type}, proj.Exprs[1], "a missing column is NULL")
	vals := proj.Input.(*Values)
	// 1 is folded to bigint at plan time, 'a' read as text.
	require.Equal(t, &expr.Literal{Value: int64(1), T: sqltypes.Int8Type}, vals.Rows[0][1])
	require.Equal(t, &expr.Literal{Value: "a", T: sqltypes.TextType}, vals.Rows[0][0])

	// A narrowing cast of a literal is left to run time (it rounds).
	p, err = plan(t, cat, `SELECT 1.5::integer, '7'::smallint, 5::numeric(4,1)`)
	require.NoError(t, err)
	proj = p.(*Query).Root.(*Project)
	require.IsType(t, &expr.Cast{}, proj.Exprs[0])
	require.Equal(t, &expr.Literal{Value: int64(7), T: sqltypes.Int2Type}, proj.Exprs[1])
	require.Equal(t, sqltypes.NumericType(4, 1), proj.Exprs[2].Type())
	require.IsType(t, &expr.Literal{}, proj.Exprs[2])

	// INSERT ... SELECT casts by assignment (bigint into smallint).
	p, err = plan(t, cat, `INSERT INTO names (small, t) SELECT t, t FROM events`)
	require.NoError(t, err)
	proj = p.(*Insert).Input.(*Project)
	require.Equal(t, &expr.Cast{X: &expr.Column{Index: 0, Name: "t", T: sqltypes.Int8Type}, T: sqltypes.Int2Type}, proj.Exprs[3])
	// varchar(4) from text: an assignment cast that checks the length.
	p, err = plan(t, cat, `INSERT INTO names (code) SELECT v FROM events`)
	require.NoError(t, err)
	proj = p.(*Insert).Input.(*Project)
	require.Equal(t, &expr.Cast{X: &expr.Column{Index: 0, Name: "v", T: sqltypes.TextType}, T: sqltypes.VarcharOf(4), Assign: true}, proj.Exprs[2])
}

func TestStatementPlans(t *testing.T) {
	cat := newCatalog(t)
	p, err := plan(t, cat, `CREATE TABLE x (a bigint NOT NULL, b text) ORDER BY (a)`)
	require.NoError(t, err)
	ct := p.(*CreateTable)
	require.Equal(t, "x", ct.Def.Name)
	require.Equal(t, []string{"a"}, ct.Def.OrderBy)
	require.True(t, ct.Def.Columns[0].NotNull)

	p, err = plan(t, cat, `DROP TABLE IF EXISTS x, y`)
	require.NoError(t, err)
	require.Equal(t, &DropTable{Names: []string{"x", "y"}, Temp: []bool{false, false}, IfExists: true}, p)

	p, err = plan(t, cat, `COPY events (v, t) FROM STDIN (FORMAT csv)`)
	require.NoError(t, err)
	cp := p.(*Copy)
	require.Equal(t, []int{2, 0}, cp.Columns)
	require.True(t, cp.From)
	require.Equal(t, CopyCSV, cp.Format)

	_, err = plan(t, cat, `COPY events (nope) TO STDOUT`)
	require.Equal(t, sqlerr.UndefinedColumn, sqlerr.Code(err))

	p, err = plan(t, cat, `COPY (SELECT * FROM events ASOF JOIN ticks USING (k, t)) TO STDOUT`)
	require.NoError(t, err)
	require.IsType(t, &AsofJoin{}, p.(*Copy).Query.Root.(*Project).Input)

	for sql, typ := range map[string]Plan{
		`SET TimeZone = 'UTC'`: &Set{}, `SHOW search_path`: &Show{}, `BEGIN`: &Transaction{}, `COMMIT`: &Transaction{},
	} {
		p, err := plan(t, cat, sql)
		require.NoError(t, err, sql)
		require.IsType(t, typ, p, sql)
	}

	p, err = plan(t, cat, `EXPLAIN ANALYZE SELECT * FROM events ASOF JOIN ticks USING (k, t)`)
	require.NoError(t, err)
	ex := p.(*Explain)
	require.True(t, ex.Analyze)
	require.IsType(t, &Query{}, ex.Stmt)

	// EXPLAIN of an unordered ASOF input fails like the query would.
	_, err = plan(t, cat, `EXPLAIN SELECT * FROM heap ASOF JOIN ticks USING (k, t)`)
	require.Equal(t, sqlerr.FeatureNotSupported, sqlerr.Code(err))
}

func TestWindowNames(t *testing.T) {
	cat := newCatalog(t)
	require.Equal(t, []string{"row_number", "s", "lag"}, names(schemaOf(t, cat, `SELECT row_number() OVER (), sum(x) OVER (PARTITION BY k) AS s, lag(x) OVER (ORDER BY t) FROM ticks`)))
}

func TestGroupedQueries(t *testing.T) {
	cat := newCatalog(t)
	for _, sql := range []string{
		`SELECT sym, count(*) FROM trades GROUP BY sym HAVING sum(qty) > 10 ORDER BY count(*) DESC`,
		`SELECT sym AS s, max(price) - min(price) FROM trades GROUP BY s`,
		`SELECT sym FROM trades GROUP BY 1`,
		`SELECT count(DISTINCT sym) FROM trades`,
		`SELECT lower(sym), count(*) FROM trades GROUP BY lower(sym)`,
		`SELECT e.k, avg(x.x) FROM events e ASOF JOIN ticks x USING (k, t) GROUP BY e.k`,
	} {
		_, err := plan(t, cat, sql)
		require.NoError(t, err, sql)
	}
	p, err := plan(t, cat, `SELECT sym, count(*) FROM trades GROUP BY sym HAVING sum(qty) > 10`)
	require.NoError(t, err)
	agg := p.(*Query).Root.(*Project).Input.(*Filter).Input.(*Aggregate)
	require.Len(t, agg.Aggs, 2)
	require.True(t, agg.Aggs[0].Star)
	require.Equal(t, "sum", agg.Aggs[1].Func)
}
