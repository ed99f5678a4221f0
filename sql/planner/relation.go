package planner

import (
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Relation is what a table name in a statement resolves to: a table or a
// view, permanent or temporary.
type Relation struct {
	Table *catalog.TableInfo
	View  *catalog.ViewDef
	// Temp: the relation is the session's (PostgreSQL's pg_temp schema).
	Temp bool
}

// Resolver is implemented by catalogs that resolve names as PostgreSQL's
// search path does: the session's temporary relations (schema pg_temp)
// shadow the permanent ones (schema public); an unqualified name looks in
// both, a qualified one in its schema only. A missing relation is 42P01.
// Catalogs without it resolve every name to their tables and views.
type Resolver interface {
	Relation(schema, name string) (Relation, error)
}

// ViewCatalog is implemented by catalogs that hold views
// (*catalog.Snapshot and *catalog.Catalog do).
type ViewCatalog interface {
	View(name string) (*catalog.ViewDef, error)
}

// TempSchema is the schema name of the session's temporary relations.
const TempSchema = "pg_temp"

// relation resolves schema.name to a table or view.
func (b *binder) relation(schema, name string) (Relation, error) {
	if r, ok := b.cat.(Resolver); ok {
		return r.Relation(schema, name)
	}
	if schema != "" && schema != "public" {
		return Relation{}, errNoRelation(schema, name)
	}
	info, err := b.cat.Table(name)
	if err == nil {
		return Relation{Table: info}, nil
	}
	if vc, ok := b.cat.(ViewCatalog); ok && sqlerr.Code(err) == sqlerr.UndefinedTable {
		if v, verr := vc.View(name); verr == nil {
			return Relation{View: v}, nil
		}
	}
	return Relation{}, err
}

func errNoRelation(schema, name string) error {
	if schema != "" {
		return sqlerr.New(sqlerr.UndefinedTable, "relation \"%s.%s\" does not exist", schema, name)
	}
	return sqlerr.New(sqlerr.UndefinedTable, "relation \"%s\" does not exist", name)
}

// table resolves the table a statement writes: 42P01 when missing; a
// view is 0A000 (PostgreSQL writes through simple views; asofsql does
// not yet), what naming the statement ("DELETE FROM", "UPDATE", "INSERT
// INTO").
func (b *binder) table(schema, name, what string) (*catalog.TableInfo, error) {
	if err := writeTarget(schema, name); err != nil {
		return nil, err
	}
	r, err := b.relation(schema, name)
	if err != nil {
		return nil, err
	}
	if r.View != nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s a view is not supported", what).
			WithDetail("\"%s\" is a view.", name).
			WithHint("Write to the tables the view reads.")
	}
	return r.Table, nil
}

// maxViewDepth bounds views reading views: a view redefined to read
// itself through others would otherwise expand forever.
const maxViewDepth = 32

// bindView binds a view where a query reads it: its stored query, planned
// afresh against the catalog, with the view's column names. The query
// keeps its ordering properties, so an ASOF JOIN over a view of an ordered
// table needs no sort.
func (b *binder) bindView(v *catalog.ViewDef, alias string) (Node, error) {
	if b.viewDepth >= maxViewDepth {
		return nil, sqlerr.New("42P17", "infinite recursion detected in rules for relation \"%s\"", v.Name)
	}
	st, err := parser.ParseOneContext(b.tick.Context(), v.SQL)
	if err == nil && st == nil {
		err = sqlerr.New(sqlerr.SyntaxError, "empty query")
	}
	var q ast.ResultSetNode
	if err == nil {
		var ok bool
		if q, ok = st.AST.(ast.ResultSetNode); !ok {
			err = sqlerr.New(sqlerr.SyntaxError, "view query is not a SELECT")
		}
	}
	if err != nil {
		return nil, viewError(v.Name, err)
	}
	sub := &binder{cat: b.cat, st: st, opts: &Options{Types: b.opts.Types, Database: b.opts.Database, User: b.opts.User},
		pgsrc: b.pgsrc, nsub: b.nsub, viewDepth: b.viewDepth + 1, depth: b.depth, steps: b.steps, tick: b.tick}
	node, err := sub.bindQuery(q, nil)
	b.nsub, b.steps = sub.nsub, sub.steps
	if err != nil {
		return nil, viewError(v.Name, err)
	}
	if st.NumParams > 0 {
		return nil, sqlerr.New("42P02", "there is no parameter $1")
	}
	cols := node.Schema()
	if len(cols) < len(v.Columns) {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "view \"%s\" has %d columns but its query now gives %d", v.Name, len(v.Columns), len(cols)).
			WithDetail("A column or table the view reads was dropped or changed since the view was created.").
			WithHint("Recreate the view with CREATE OR REPLACE VIEW.")
	}
	// Columns added since the view was made (a SELECT * over a table that
	// gained columns) are not the view's: PostgreSQL fixes the columns when
	// the view is created.
	p := &Project{Input: node}
	for i, name := range v.Columns {
		c := cols[i]
		p.Exprs = append(p.Exprs, &expr.Column{Index: i, Name: c.Name, T: c.Type})
		c.Name, c.Table = name, alias
		p.Cols = append(p.Cols, c)
	}
	return p, nil
}

// viewError reports an error met while binding a view's stored query:
// its position is in the view's text, not the statement's, so it is
// dropped and the view named instead.
func viewError(name string, err error) error {
	e, ok := sqlerr.As(err)
	if !ok {
		return err
	}
	out := *e
	out.Position = 0
	if out.Detail == "" {
		out.Detail = "While expanding view \"" + name + "\"."
	}
	return &out
}

// tablePos is the position of a table name in FROM, where Postgres
// points its 42P01.
func (b *binder) tablePos(t *ast.TableName) int {
	if b.st == nil {
		return 0
	}
	return b.st.RelationPos(t.Name.O)
}
