package planner

import (
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// scopeCol is one name visible in a FROM clause.
type scopeCol struct {
	name, table string
	idx         int // column of the relation's node
	typ         sqltypes.Type
	nullable    bool
	// hidden: not found by an unqualified name (the right copy of a USING
	// or ASOF on column: the merged name means the left one).
	hidden bool
}

func (c scopeCol) display() string {
	if c.table != "" {
		return c.table + "." + c.name
	}
	return c.name
}

// scope is the names of a FROM clause (or a subquery's output).
type scope struct {
	cols []scopeCol
	// star is the order of SELECT * (indexes into cols).
	star []int
}

// newScope makes the scope of a node's output under one qualifier.
func newScope(table string, cols []Column) *scope {
	s := &scope{}
	for i, c := range cols {
		s.cols = append(s.cols, scopeCol{name: c.Name, table: table, idx: i, typ: c.Type, nullable: c.Nullable})
		s.star = append(s.star, i)
	}
	return s
}

func (s *scope) hasTable(t string) bool {
	for _, c := range s.cols {
		if c.table == t {
			return true
		}
	}
	return false
}

// lookup finds a column by optional qualifier and name: 42703 when there
// is none, 42702 when an unqualified name matches several, 42P01 for an
// unknown qualifier.
func (s *scope) lookup(table, name string, pos int) (scopeCol, error) {
	var found []scopeCol
	for _, c := range s.cols {
		if c.name != name {
			continue
		}
		if table == "" && c.hidden {
			continue
		}
		if table != "" && c.table != table {
			continue
		}
		found = append(found, c)
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		n := name
		if table != "" {
			n = table + "." + name
		}
		return scopeCol{}, sqlerr.New(sqlerr.AmbiguousColumn, "column reference %q is ambiguous", n).WithPosition(pos)
	case table != "" && !s.hasTable(table):
		return scopeCol{}, sqlerr.New(sqlerr.UndefinedTable, "missing FROM-clause entry for table %q", table).WithPosition(pos)
	case table != "":
		return scopeCol{}, sqlerr.New(sqlerr.UndefinedColumn, "column %s.%s does not exist", table, name).WithPosition(pos)
	}
	return scopeCol{}, sqlerr.New(sqlerr.UndefinedColumn, "column %q does not exist", name).WithPosition(pos)
}

// resolve finds the column an AST column reference names.
func (s *scope) resolve(b *binder, x *ast.ColumnNameExpr) (scopeCol, error) {
	n := x.Name
	if n.Schema.O != "" {
		return scopeCol{}, sqlerr.New(sqlerr.FeatureNotSupported, "schema-qualified column references are not supported").WithPosition(b.pos(x))
	}
	return s.lookup(n.Table.O, n.Name.O, b.pos(x))
}
