package pgcatalog

import (
	"fmt"
	"testing"

	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

func testTables() []*catalog.TableInfo {
	return []*catalog.TableInfo{
		{ID: 3, Name: "trades", Rows: 7, Columns: []catalog.Column{
			{Name: "ts", Type: sqltypes.TimestampType, NotNull: true},
			{Name: "sym", Type: sqltypes.VarcharOf(8)},
			{Name: "px", Type: sqltypes.NumericType(10, 2)},
		}},
		{ID: 1, Name: "Quotes", Columns: []catalog.Column{{Name: "bid", Type: sqltypes.Float8Type}}},
		{ID: 0, Name: "pending", Columns: []catalog.Column{{Name: "x", Type: sqltypes.Int4Type}}},
		{ID: 0, Name: "another", Columns: []catalog.Column{{Name: "y", Type: sqltypes.TextType}}},
		{ID: 2, Name: "pg_class", Columns: []catalog.Column{{Name: "z", Type: sqltypes.BoolType}}},
	}
}

// Every row of every virtual table has one value per column, of the Go
// type expr.Literal uses for the column's type.
func TestRowsMatchColumns(t *testing.T) {
	s := NewSource("db", "me", testTables())
	for _, d := range defs {
		tab, ok := s.Table(d.schema, d.name)
		require.True(t, ok)
		for r, row := range tab.Rows {
			require.Len(t, row, len(tab.Columns), "%s row %d", d.name, r)
			for i, v := range row {
				if v == nil {
					continue
				}
				want := map[sqltypes.Kind]string{sqltypes.Int2: "int64", sqltypes.Int4: "int64", sqltypes.Int8: "int64",
					sqltypes.Float4: "float64", sqltypes.Text: "string", sqltypes.Bool: "bool"}[tab.Columns[i].Type.Kind]
				require.Equal(t, want, fmt.Sprintf("%T", v), "%s.%s row %d", d.name, tab.Columns[i].Name, r)
			}
		}
	}
	_, ok := s.Table(Catalog, "pg_nosuch")
	require.False(t, ok)
	require.True(t, Has("", "pg_class"))
	require.True(t, Has(Info, "columns"))
	require.False(t, Has("", "columns"))
}

// OIDs come from the catalog's table IDs; uncommitted tables follow the
// committed ones in name order; every table agrees on them.
func TestOIDsAreStableAndConsistent(t *testing.T) {
	s := NewSource("db", "me", testTables())
	oids := map[string]int64{}
	for _, r := range s.Rels() {
		if r.Namespace == NamespacePublic {
			oids[r.Name] = r.OID
		}
	}
	require.Equal(t, map[string]int64{"Quotes": 16385, "pg_class": 16386, "trades": 16387, "another": 16388, "pending": 16389}, oids)
	again := NewSource("db", "me", testTables())
	for name, oid := range oids {
		r, ok := again.Rel(oid)
		require.True(t, ok)
		require.Equal(t, name, r.Name)
	}
	class, _ := s.Table(Catalog, "pg_class")
	attr, _ := s.Table(Catalog, "pg_attribute")
	infoCols, _ := s.Table(Info, "columns")
	var tradesAttrs []string
	for _, row := range attr.Rows {
		if row[0] == oids["trades"] {
			tradesAttrs = append(tradesAttrs, fmt.Sprintf("%v %v %v %v %v", row[1], row[2], row[5], row[8], row[13]))
		}
	}
	require.Equal(t, []string{"ts 1114 1 -1 true", "sym 1043 2 12 false", "px 1700 3 655366 false"}, tradesAttrs)
	found := false
	for _, row := range class.Rows {
		if row[0] == oids["trades"] {
			found = true
			require.Equal(t, []any{"trades", int64(NamespacePublic), "r", int64(3), float64(7)}, []any{row[1], row[2], row[16], row[17], row[10]})
		}
	}
	require.True(t, found)
	var cols []string
	for _, row := range infoCols.Rows {
		if row[2] == "trades" {
			cols = append(cols, fmt.Sprintf("%v %v %v %v %v %v", row[3], row[6], row[7], row[8], row[10], row[11]))
		}
	}
	require.Equal(t, []string{"ts NO timestamp without time zone <nil> <nil> <nil>",
		"sym YES character varying 8 <nil> <nil>", "px YES numeric <nil> 10 10"}, cols)
}

func TestVisibilityAndNames(t *testing.T) {
	s := NewSource("db", "me", testTables())
	byName := func(nsp int64, name string) *Rel {
		for _, r := range s.Rels() {
			if r.Namespace == nsp && r.Name == name {
				return r
			}
		}
		t.Fatalf("no %s", name)
		return nil
	}
	require.True(t, s.Visible(byName(NamespacePublic, "trades")))
	require.True(t, s.Visible(byName(NamespaceCatalog, "pg_class")))
	// pg_catalog comes first on the search path: public.pg_class is hidden.
	require.False(t, s.Visible(byName(NamespacePublic, "pg_class")))
	require.False(t, s.Visible(byName(NamespaceInfo, "tables")))
	require.Equal(t, `"Quotes"`, s.QualifiedName(byName(NamespacePublic, "Quotes")))
	require.Equal(t, "public.pg_class", s.QualifiedName(byName(NamespacePublic, "pg_class")))
	require.Equal(t, "information_schema.tables", s.QualifiedName(byName(NamespaceInfo, "tables")))
	require.Equal(t, `"select"`, QuoteIdent("select"))
	require.Equal(t, `"a""b"`, QuoteIdent(`a"b`))
	require.Equal(t, "a_1$", QuoteIdent("a_1$"))
	require.Equal(t, `"1a"`, QuoteIdent("1a"))
}
