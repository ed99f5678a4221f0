package asofsql_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

const setup = `
CREATE TABLE trades (ts BIGINT, sym TEXT, qty INTEGER) ORDER BY (ts);
CREATE TABLE quotes (ts BIGINT, sym TEXT, bid DOUBLE PRECISION) ORDER BY (ts);
CREATE TABLE loose (ts BIGINT, sym TEXT, bid DOUBLE PRECISION);
CREATE TABLE ktrades (ts BIGINT, sym TEXT, qty INTEGER) ORDER BY (sym, ts);
CREATE TABLE kquotes (ts BIGINT, sym TEXT, bid DOUBLE PRECISION) ORDER BY (sym, ts);
INSERT INTO ktrades VALUES (10, 'a', 100), (13, 'b', 200), (25, 'a', 300), (1, 'a', 50);
INSERT INTO kquotes VALUES (12, 'b', 2.5), (5, 'a', 1.0), (9, 'a', 1.5), (20, 'a', 2.0);
INSERT INTO quotes VALUES (12, 'b', 2.5), (5, 'a', 1.0), (9, 'a', 1.5), (20, 'a', 2.0);
INSERT INTO trades VALUES (10, 'a', 100), (13, 'b', 200), (25, 'a', 300), (1, 'a', 50);
INSERT INTO loose VALUES (5, 'a', 1.0);
`

func openTest(t *testing.T) (*asofsql.DB, *memory.CheckedAllocator) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	db, err := asofsql.Open(":memory:", asofsql.WithAllocator(mem))
	require.NoError(t, err)
	_, err = db.Exec(context.Background(), setup)
	require.NoError(t, err)
	return db, mem
}

func queryRows(t *testing.T, db *asofsql.DB, mem memory.Allocator, sql string, args ...any) ([]string, error) {
	rdr, err := db.Query(context.Background(), sql, args...)
	if err != nil {
		return nil, err
	}
	defer rdr.Release()
	var parts []arrow.RecordBatch
	for rdr.Next() {
		b := rdr.RecordBatch()
		b.Retain()
		parts = append(parts, b)
	}
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	if err := rdr.Err(); err != nil {
		return nil, err
	}
	all, err := exectest.Concat(rdr.Schema(), parts, mem)
	require.NoError(t, err)
	defer all.Release()
	return exectest.Rows(all), nil
}

func TestEngineQueries(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	cases := []struct {
		name, sql string
		args      []any
		want      []string
		code      string
	}{
		{name: "prevailing quote", sql: `SELECT * FROM trades ASOF LEFT JOIN quotes ON ts BETWEEN -10 AND 0 USING (sym)`,
			want: []string{"a | 1 | 50 | NULL", "a | 10 | 100 | 1.5", "b | 13 | 200 | 2.5", "a | 25 | 300 | 2"}},
		{name: "inner drops unmatched", sql: `SELECT trades.ts, bid FROM trades ASOF JOIN quotes ON ts BETWEEN -3 AND 0 USING (sym)`,
			want: []string{"10 | 1.5", "13 | 2.5"}},
		{name: "DuckDB form", sql: `SELECT t.ts, q.ts, q.bid FROM trades t ASOF LEFT JOIN quotes q ON t.sym = q.sym AND t.ts >= q.ts`,
			want: []string{"1 | NULL | NULL", "10 | 9 | 1.5", "13 | 12 | 2.5", "25 | 20 | 2"}},
		{name: "forward with a parameter filter", sql: `SELECT t.ts, q.ts FROM trades t ASOF JOIN quotes q ON ts BETWEEN 1 AND 100 USING (sym) WHERE t.qty > $1`,
			args: []any{60}, want: []string{"10 | 20"}},
		{name: "aggregate over an ASOF join", sql: `SELECT sym, count(*), sum(qty) FROM trades ASOF LEFT JOIN quotes ON ts BETWEEN -100 AND 0 USING (sym) GROUP BY sym ORDER BY sym`,
			want: []string{"a | 3 | 450", "b | 1 | 200"}},
		{name: "unordered input is rejected", sql: `SELECT * FROM trades ASOF JOIN loose ON ts BETWEEN -1 AND 0 USING (sym)`,
			code: sqlerr.FeatureNotSupported},
		{name: "ordered by a subquery", sql: `SELECT t.ts, l.bid FROM trades t ASOF JOIN (SELECT * FROM loose ORDER BY ts) l ON ts BETWEEN -10 AND 0 USING (sym)`,
			want: []string{"10 | 1"}},
		{name: "unknown table", sql: `SELECT * FROM nosuch`, code: sqlerr.UndefinedTable},
		{name: "unknown column", sql: `SELECT nosuch FROM trades`, code: sqlerr.UndefinedColumn},
		{name: "ambiguous column", sql: `SELECT ts FROM trades t ASOF JOIN quotes q ON t.sym = q.sym AND t.ts >= q.ts`, code: sqlerr.AmbiguousColumn},
		{name: "bound of the wrong type", sql: `SELECT * FROM trades ASOF JOIN quotes ON ts BETWEEN INTERVAL '-1 second' AND 0 USING (sym)`, code: sqlerr.DatatypeMismatch},
		{name: "lo above hi", sql: `SELECT * FROM trades ASOF JOIN quotes ON ts BETWEEN 5 AND 1 USING (sym)`, code: sqlerr.InvalidParameterValue},
		{name: "unknown function", sql: `SELECT nosuch(ts) FROM trades`, code: sqlerr.UndefinedFunction},
		{name: "division by zero", sql: `SELECT qty / 0 FROM trades`, code: sqlerr.DivisionByZero},
		// A condition on both inputs decides eligibility per pair (spec
		// §2.5): 25 a's only quote in range, 20 (200 > 300 fails), is not
		// eligible.
		{name: "condition on both inputs", sql: `SELECT t.ts, q.ts FROM trades t ASOF JOIN quotes q ON ts BETWEEN -5 AND 0 AND q.bid * 100 > t.qty USING (sym)`,
			want: []string{"10 | 9", "13 | 12"}},
		{name: "right-only condition filters eligible rows", sql: `SELECT t.ts, q.ts FROM trades t ASOF JOIN quotes q ON ts BETWEEN -10 AND 0 AND q.bid < 1.2 USING (sym)`,
			want: []string{"10 | 5"}},
		{name: "nearest with PREFER LATER", sql: `SELECT t.ts, q.ts FROM trades t ASOF JOIN quotes q ON ts BETWEEN -5 AND 5 USING (sym) PREFER LATER`,
			want: []string{"1 | 5", "10 | 9", "13 | 12", "25 | 20"}},
		{name: "timestamp parameter with a $n text value", sql: `SELECT count(*) FROM trades WHERE ts > $1::bigint`, args: []any{"12"}, want: []string{"2"}},
		// Both inputs ordered by (sym, ts): the join runs key-major and the
		// output keeps the left order (by sym, then ts).
		// kquotes is ORDER BY (sym, ts): grouping by sym streams.
		{name: "aggregate over input ordered by the group key", sql: `SELECT sym, count(*), max(bid) FROM kquotes GROUP BY sym`,
			want: []string{"a | 3 | 2", "b | 1 | 2.5"}},
		{name: "keys-first ordering", sql: `SELECT * FROM ktrades ASOF LEFT JOIN kquotes ON ts BETWEEN -10 AND 0 USING (sym)`,
			want: []string{"a | 1 | 50 | NULL", "a | 10 | 100 | 1.5", "a | 25 | 300 | 2", "b | 13 | 200 | 2.5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := queryRows(t, db, mem, c.sql, c.args...)
			if c.code != "" {
				require.Error(t, err)
				require.Equal(t, c.code, sqlerr.Code(err), err.Error())
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

func TestEngineExplainAndExec(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	ctx := context.Background()
	plan, err := db.Explain(ctx, `SELECT * FROM trades ASOF LEFT JOIN quotes ON ts BETWEEN -10 AND 0 USING (sym)`)
	require.NoError(t, err)
	require.Contains(t, plan, "AsofJoin LEFT")
	res, err := db.Exec(ctx, `INSERT INTO trades VALUES (30, 'b', 1), (31, 'b', 2)`)
	require.NoError(t, err)
	require.Equal(t, "INSERT 0 2", res.Tag)
	res, err = db.Exec(ctx, `SELECT * FROM trades`)
	require.NoError(t, err)
	require.Equal(t, "SELECT 6", res.Tag)
	_, err = db.Exec(ctx, `CREATE TABLE trades (x INT)`)
	require.Equal(t, sqlerr.DuplicateTable, sqlerr.Code(err))
	_, err = db.Exec(ctx, `DROP TABLE loose`)
	require.NoError(t, err)
}
