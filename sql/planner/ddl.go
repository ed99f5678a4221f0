package planner

import (
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/ordering"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"slices"
)

// AlterKind is the kind of one ALTER TABLE action.
type AlterKind uint8

// ALTER TABLE actions.
const (
	AlterAddColumn AlterKind = iota + 1
	AlterDropColumn
	AlterRenameColumn
	AlterRenameTable
)

// AlterAction is one action of ALTER TABLE: ADD COLUMN Column (its
// Default is evaluated from DefaultExpr when the statement runs; IfExists
// is IF NOT EXISTS), DROP COLUMN Name [IF EXISTS], RENAME COLUMN Name TO
// NewName, RENAME TO NewName.
type AlterAction struct {
	Kind        AlterKind
	Column      catalog.Column
	DefaultExpr expr.Expr
	Name        string
	NewName     string
	IfExists    bool
}

// AlterTable is ALTER TABLE [IF EXISTS] Name actions. Table is nil when
// IF EXISTS found no table (PostgreSQL only notices it).
type AlterTable struct {
	Name    string
	Table   *catalog.TableInfo
	Actions []AlterAction
}

// CreateTableAs is CREATE [TEMP] TABLE name [(names)] [ORDER BY (...)] AS
// query [WITH [NO] DATA]: Def's columns are the query's (renamed by the
// names given, all nullable) and Def.OrderBy the declared ordering.
// Sorted reports that the query's rows are proven to arrive in that order
// (the plan's ordering properties): they are written without a sort;
// other rows are sorted stably. WithData false creates the table empty.
type CreateTableAs struct {
	Def         catalog.TableDef
	Temp        bool
	IfNotExists bool
	WithData    bool
	Sorted      bool
	Query       *Query
}

// CreateView is CREATE [OR REPLACE] [TEMP] VIEW: Def holds the query's
// text and the view's column names; Query is the query as bound now (it
// checks the view and gives its columns). Temp is set for TEMP views and
// for views reading temporary relations (as PostgreSQL does, with a
// notice).
type CreateView struct {
	Def       catalog.ViewDef
	OrReplace bool
	Temp      bool
	// TempImplied: the view is temporary because it reads temporary
	// relations, not because TEMP was written.
	TempImplied bool
	Query       *Query
}

// DropView is DROP VIEW [IF EXISTS] names; Temp[i] says Names[i] is a
// temporary view.
type DropView struct {
	Names    []string
	Temp     []bool
	IfExists bool
}

func (*AlterTable) Tag() string { return "ALTER TABLE" }
func (*CreateView) Tag() string { return "CREATE VIEW" }
func (*DropView) Tag() string   { return "DROP VIEW" }

// Tag of CREATE TABLE AS is "SELECT" completed with the row count, or
// "CREATE TABLE AS" WITH NO DATA (and when IF NOT EXISTS finds the table).
func (p *CreateTableAs) Tag() string {
	if !p.WithData {
		return "CREATE TABLE AS"
	}
	return "SELECT"
}

func (*AlterTable) Shape() Shape      { return Shape{} }
func (*CreateView) Shape() Shape      { return Shape{} }
func (*DropView) Shape() Shape        { return Shape{} }
func (p *CreateTableAs) Shape() Shape { return Shape{Params: p.Query.Params} }

func (*AlterTable) Reads() []*catalog.TableInfo { return nil }
func (*CreateView) Reads() []*catalog.TableInfo { return nil }
func (*DropView) Reads() []*catalog.TableInfo   { return nil }
func (p *CreateTableAs) Reads() []*catalog.TableInfo {
	if !p.WithData {
		return nil
	}
	return p.Query.Reads()
}

// sub returns a binder for another statement of the same text (a
// DEFAULT expression), sharing this one's catalog and options.
func (b *binder) sub(st *parser.Statement) *binder {
	return &binder{cat: b.cat, st: st, opts: b.opts, pgsrc: b.pgsrc}
}

// columnDefault binds a DEFAULT expression for a column of type t: a
// constant (no column, subquery or function call: asofsql stores the
// value, so a default like now() could not be evaluated per row).
func (b *binder) columnDefault(d *parser.Statement, c catalog.Column) (expr.Expr, error) {
	sb := b.sub(d)
	n := parser.DefaultExpr(d)
	e, err := sb.bindExpr(n, &exprCtx{sc: &scope{}, clause: "DEFAULT"})
	if err != nil {
		return nil, err
	}
	if d.NumParams > 0 {
		return nil, sqlerr.New("42P02", "there is no parameter $%d", d.Params[0]).WithPosition(sb.pos(n))
	}
	bad := false
	expr.Walk(e, func(x expr.Expr) bool {
		switch x.(type) {
		case *expr.Func, *expr.Subquery, *expr.Column, *expr.OuterRef:
			bad = true
		}
		return !bad
	})
	if bad {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "DEFAULT %s is not supported: a default must be a constant", d.Text).
			WithPosition(sb.pos(n)).
			WithHint("asofsql stores the default's value; write a literal, such as DEFAULT 0 or DEFAULT '2024-01-01'.")
	}
	return sb.assign(e, c.Type, n, "column \""+c.Name+"\"")
}

func (b *binder) alterTable(n *parser.AlterTableStmt) (Plan, error) {
	p := &AlterTable{Name: n.Table.Name}
	info, err := b.tableOnly(TableRef{Schema: n.Table.Schema, Name: n.Table.Name}, "alter")
	if err != nil {
		if n.IfExists && sqlerr.Code(err) == sqlerr.UndefinedTable {
			return p, nil
		}
		return nil, err
	}
	p.Table = info
	for _, a := range n.Actions {
		act := AlterAction{Name: a.Name, NewName: a.NewName, IfExists: a.IfExists}
		switch a.Kind {
		case parser.AlterAddColumn:
			act.Kind = AlterAddColumn
			act.Column = catalog.Column{Name: a.Column.Name, Type: a.Column.Type, NotNull: a.Column.NotNull}
			if a.Column.Default != nil {
				if act.DefaultExpr, err = b.columnDefault(a.Column.Default, act.Column); err != nil {
					return nil, err
				}
			}
		case parser.AlterDropColumn:
			act.Kind = AlterDropColumn
		case parser.AlterRenameColumn:
			act.Kind = AlterRenameColumn
		case parser.AlterRenameTable:
			act.Kind = AlterRenameTable
		}
		p.Actions = append(p.Actions, act)
	}
	return p, nil
}

func (b *binder) createTableAs(n *parser.CreateTableStmt) (Plan, error) {
	q, err := Build(b.cat, n.AsQuery, b.opts)
	if err != nil {
		return nil, err
	}
	qq, ok := q.(*Query)
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "CREATE TABLE AS needs a query")
	}
	if err := writeTarget(n.Table.Schema, n.Table.Name); err != nil {
		return nil, err
	}
	temp := n.Temporary || n.Table.Schema == TempSchema
	cols := qq.Root.Schema()
	if len(n.ColumnNames) > len(cols) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "too many column names were specified")
	}
	def := catalog.TableDef{Name: n.Table.Name}
	seen := map[string]bool{}
	for i, c := range cols {
		name := c.Name
		if i < len(n.ColumnNames) {
			name = n.ColumnNames[i]
		}
		if seen[name] {
			return nil, sqlerr.New("42701", "column \"%s\" specified more than once", name)
		}
		seen[name] = true
		if err := storable(name, c.Type); err != nil {
			return nil, err
		}
		t := c.Type
		if t.Kind == sqltypes.Unknown {
			t = sqltypes.TextType // as PostgreSQL 15 types an unknown result column
		}
		def.Columns = append(def.Columns, catalog.Column{Name: name, Type: t})
	}
	var want ordering.Lex
	for i, name := range n.OrderBy {
		k := -1
		for j, c := range def.Columns {
			if c.Name == name {
				k = j
			}
		}
		if k < 0 {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" named in ORDER BY does not exist", name).
				WithPosition(n.OrderByPos[i])
		}
		want = append(want, ordering.Key{Col: k})
		def.OrderBy = append(def.OrderBy, name)
	}
	p := &CreateTableAs{Def: def, Temp: temp, IfNotExists: n.IfNotExists, WithData: n.WithData, Query: qq}
	p.Sorted = len(want) > 0 && qq.Root.Ordering().Satisfies(want)
	return p, nil
}

func (b *binder) createView(n *parser.CreateViewStmt) (Plan, error) {
	if err := writeTarget(n.Name.Schema, n.Name.Name); err != nil {
		return nil, err
	}
	if n.Query.NumParams > 0 {
		return nil, sqlerr.New("42P02", "there is no parameter $%d", n.Query.Params[0])
	}
	q, err := Build(b.cat, n.Query, &Options{Types: b.opts.Types, Database: b.opts.Database, User: b.opts.User})
	if err != nil {
		return nil, err
	}
	qq, ok := q.(*Query)
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "CREATE VIEW needs a query")
	}
	cols := qq.Root.Schema()
	if len(n.Columns) > len(cols) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "CREATE VIEW specifies more column names than columns")
	}
	def := catalog.ViewDef{Name: n.Name.Name, SQL: n.Query.Text}
	seen := map[string]bool{}
	for i, c := range cols {
		name := c.Name
		if i < len(n.Columns) {
			name = n.Columns[i]
		}
		if seen[name] {
			return nil, sqlerr.New("42701", "column \"%s\" specified more than once", name)
		}
		seen[name] = true
		if err := storable(name, c.Type); err != nil {
			return nil, err
		}
		def.Columns = append(def.Columns, name)
	}
	def.Uses = viewUses(qq.Root)
	p := &CreateView{Def: def, OrReplace: n.OrReplace, Temp: n.Temporary || n.Name.Schema == TempSchema, Query: qq}
	if !p.Temp {
		for _, t := range qq.Reads() {
			if t.Temp {
				p.Temp, p.TempImplied = true, true
			}
		}
		if !p.Temp && b.readsTempView(n.Query) {
			p.Temp, p.TempImplied = true, true
		}
	}
	if n.OrReplace {
		if err := b.replaceable(p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// storable refuses a result column no table or view may have, as
// Postgres does before running the query: a void one (pg_sleep's).
func storable(name string, t sqltypes.Type) error {
	if t.Kind == sqltypes.Void {
		return sqlerr.New("42P16", "column \"%s\" has pseudo-type %s", name, t)
	}
	return nil
}

// viewUses lists the tables a view's plan scans (in subqueries and
// through the views it reads too) with the columns it reads of each, in
// the order first met: what DROP TABLE and DROP COLUMN must not remove
// while the view exists. Projection pruning has left each scan with only
// the columns the query uses.
func viewUses(root Node) []catalog.ViewUse {
	var uses []catalog.ViewUse
	at := map[string]int{}
	var walk func(n Node)
	walk = func(n Node) {
		if n == nil {
			return
		}
		if sc, ok := n.(*Scan); ok {
			name := sc.Table.Name
			i, seen := at[name]
			if !seen {
				i = len(uses)
				at[name] = i
				uses = append(uses, catalog.ViewUse{Table: name})
			}
			for _, c := range sc.Columns {
				if col := sc.Table.Columns[c].Name; !slices.Contains(uses[i].Columns, col) {
					uses[i].Columns = append(uses[i].Columns, col)
				}
			}
		}
		for _, s := range NodeSubqueries(n) {
			if sub, ok := s.Plan.(Node); ok {
				walk(sub)
			}
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(root)
	return uses
}

// readsTempView reports whether a view's query names a temporary view
// (whose tables may be permanent): the view must then be temporary too.
func (b *binder) readsTempView(st *parser.Statement) bool {
	r, ok := b.cat.(Resolver)
	if !ok {
		return false
	}
	found := false
	st.AST.Accept(visitorFunc(func(n ast.Node) bool {
		if tn, ok := n.(*ast.TableName); ok && !found {
			if rl, err := r.Relation(tn.Schema.O, tn.Name.O); err == nil && rl.View != nil && rl.Temp {
				found = true
			}
		}
		return !found
	}))
	return found
}

type visitorFunc func(ast.Node) bool

func (v visitorFunc) Enter(n ast.Node) (ast.Node, bool) { return n, !v(n) }
func (v visitorFunc) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// replaceable checks CREATE OR REPLACE VIEW against the view it replaces,
// as PostgreSQL does: a table of that name is 42809, and the new query
// must keep the old columns (names and types, in order), adding new ones
// only at the end (42P16).
func (b *binder) replaceable(p *CreateView) error {
	schema := "public"
	if p.Temp {
		schema = TempSchema
	}
	if _, ok := b.cat.(Resolver); !ok {
		schema = ""
	}
	r, err := b.relation(schema, p.Def.Name)
	if err != nil {
		return nil // a new view
	}
	if r.Table != nil {
		return sqlerr.New(codeWrongObjectType, "\"%s\" is not a view", p.Def.Name)
	}
	old, err := b.bindView(r.View, p.Def.Name)
	if err != nil {
		return nil // the old view no longer binds: nothing to keep
	}
	oc, nc := old.Schema(), p.Query.Root.Schema()
	if len(nc) < len(oc) {
		return sqlerr.New(codeInvalidTableDefinition, "cannot drop columns from view")
	}
	for i, o := range oc {
		if p.Def.Columns[i] != o.Name {
			return sqlerr.New(codeInvalidTableDefinition, "cannot change name of view column \"%s\" to \"%s\"", o.Name, p.Def.Columns[i]).
				WithHint("Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead.")
		}
		if nc[i].Type != o.Type {
			return sqlerr.New(codeInvalidTableDefinition, "cannot change data type of view column \"%s\" from %s to %s", o.Name, o.Type, nc[i].Type)
		}
	}
	return nil
}

const codeInvalidTableDefinition = "42P16"

func (b *binder) dropView(x *ast.DropTableStmt) (Plan, error) {
	p := &DropView{IfExists: x.IfExists}
	for _, t := range x.Tables {
		if err := writeTarget(t.Schema.O, t.Name.O); err != nil {
			return nil, err
		}
		temp := false
		if r, err := b.relation(t.Schema.O, t.Name.O); err == nil {
			temp = r.Temp
		}
		p.Names = append(p.Names, t.Name.O)
		p.Temp = append(p.Temp, temp)
	}
	return p, nil
}
