package planner

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// fixtureSQL creates the tables every planner test sees.
var fixtureSQL = []string{
	`CREATE TABLE trades (ts timestamp NOT NULL, sym text, price double precision, qty integer) ORDER BY (ts)`,
	`CREATE TABLE quotes (ts timestamp, sym text, bid double precision, ask double precision) ORDER BY (ts)`,
	`CREATE TABLE trades_by_sym (sym text, ts timestamp, price double precision) ORDER BY (sym, ts)`,
	`CREATE TABLE quotes_by_sym (sym text, ts timestamp, bid double precision) ORDER BY (sym, ts)`,
	`CREATE TABLE events (t bigint, k integer, v text) ORDER BY (t)`,
	`CREATE TABLE ticks (t bigint, k integer, x double precision, tag text) ORDER BY (t)`,
	`CREATE TABLE marks (t bigint, k bigint, m double precision) ORDER BY (t)`,
	`CREATE TABLE heap (t bigint, k integer, y double precision)`,
	`CREATE TABLE daily (d date, k integer, v double precision) ORDER BY (d)`,
	`CREATE TABLE daily2 (d date, k integer, w double precision) ORDER BY (d)`,
	`CREATE TABLE fl (f double precision, k integer, a text) ORDER BY (f)`,
	`CREATE TABLE fl2 (f double precision, k integer, b text) ORDER BY (f)`,
	`CREATE TABLE nums (n numeric(10,2), k integer) ORDER BY (n)`,
	`CREATE TABLE nums2 (n numeric(10,2), k integer, z integer) ORDER BY (n)`,
	`CREATE TABLE names (t bigint, name text, code varchar(4), small smallint)`,
	`CREATE TABLE words (w text, k integer, n integer) ORDER BY (w)`,
	`CREATE TABLE words2 (w varchar(10), k integer, m integer) ORDER BY (w)`,
	`CREATE TABLE words_by_k (k integer, w text, n integer) ORDER BY (k, w)`,
	`CREATE TABLE words2_by_k (k integer, w text, m integer) ORDER BY (k, w)`,
	`CREATE TABLE blobs (b bytea, k integer) ORDER BY (b)`,
	`CREATE TABLE flags (f boolean, k integer) ORDER BY (f)`,
	`CREATE TABLE spans (iv interval, k integer)`,
	`CREATE TABLE bignums (n numeric, k integer) ORDER BY (n)`,
	`CREATE TABLE bignums2 (n numeric, k integer, z integer) ORDER BY (n)`,
	`CREATE TABLE wide (n numeric(38,0), k integer) ORDER BY (n)`,
}

// newCatalog returns an in-memory catalog with the fixture tables, and
// checks at cleanup that it released every byte.
func newCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	return newCatalogB(t, t)
}

// newCatalogB is newCatalog for tests and benchmarks; assertions go to t.
func newCatalogB(tb testing.TB, t require.TestingT) *catalog.Catalog {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	ctx := context.Background()
	cat, err := catalog.Open(ctx, catalog.Memory, catalog.Options{Allocator: mem})
	require.NoError(t, err)
	tx := cat.Begin()
	for _, sql := range fixtureSQL {
		st, err := parser.ParseOne(sql)
		require.NoError(t, err, sql)
		p, err := Build(cat, st, nil)
		require.NoError(t, err, sql)
		require.NoError(t, tx.CreateTable(ctx, p.(*CreateTable).Def, false), sql)
	}
	require.NoError(t, tx.Commit(ctx))
	tb.Cleanup(func() {
		require.NoError(tb, cat.Close())
		mem.AssertSize(tb, 0)
	})
	return cat
}

// plan parses and plans one statement.
func plan(t *testing.T, cat Catalog, sql string) (Plan, error) {
	t.Helper()
	st, err := parser.ParseOne(sql)
	if err != nil {
		return nil, err
	}
	return Build(cat, st, &Options{Types: sqltypes.DefaultOptions()})
}

// errText renders an error with its SQLSTATE, position, detail and hint.
func errText(err error) string {
	e, ok := sqlerr.As(err)
	if !ok {
		return "ERROR (not a sqlerr): " + err.Error()
	}
	s := "ERROR " + e.Code + ": " + e.Message
	if e.Position > 0 {
		s += "\nPOSITION: " + itoa(e.Position)
	}
	if e.Detail != "" {
		s += "\nDETAIL: " + e.Detail
	}
	if e.Hint != "" {
		s += "\nHINT: " + e.Hint
	}
	return s + "\n"
}

func itoa(i int) string {
	const d = "0123456789"
	if i < 10 {
		return d[i : i+1]
	}
	return itoa(i/10) + d[i%10:i%10+1]
}
