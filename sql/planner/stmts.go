package planner

import (
	"context"
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/limits"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Plan is a planned statement: *Query, *CreateTable, *DropTable, *Insert,
// *Copy, *Set, *Show, *Transaction or *Explain.
type Plan interface{ isPlan() }

// Query is a SELECT (or set operation): Root's schema is the result.
type Query struct {
	Root Node
	// Params are the types of $1..$n (Unknown where nothing constrains
	// one, as Postgres reports "unknown").
	Params []sqltypes.Type
}

// CreateTable is CREATE TABLE with its validated definition.
type CreateTable struct {
	Def         catalog.TableDef
	IfNotExists bool
}

// DropTable is DROP TABLE [IF EXISTS] names.
type DropTable struct {
	Names    []string
	IfExists bool
}

// Insert is INSERT INTO Table: Input yields every table column, in table
// order and of the column's type (defaults are NULL), ready for
// catalog.Tx.Insert.
type Insert struct {
	Table  *catalog.TableInfo
	Input  Node
	Params []sqltypes.Type
}

// Copy is COPY, resolved: Columns are table column indexes (all when the
// statement lists none); Query is set for COPY (query) TO.
type Copy struct {
	Table   *catalog.TableInfo
	Columns []int
	Query   *Query
	Stmt    *parser.CopyStmt
}

// Set is SET; Show is SHOW; Transaction is BEGIN/COMMIT/ROLLBACK: the
// session executes them, the planner only passes them through.
type Set struct{ Stmt *parser.SetStmt }

// Show is SHOW name | ALL.
type Show struct{ Stmt *parser.ShowStmt }

// Transaction is BEGIN/START, COMMIT/END or ROLLBACK/ABORT.
type Transaction struct{ Stmt *parser.TransactionStmt }

// Explain is EXPLAIN [ANALYZE] of a planned statement.
type Explain struct {
	Analyze, Verbose bool
	Stmt             Plan
}

func (*Query) isPlan()       {}
func (*CreateTable) isPlan() {}
func (*DropTable) isPlan()   {}
func (*Insert) isPlan()      {}
func (*Copy) isPlan()        {}
func (*Set) isPlan()         {}
func (*Show) isPlan()        {}
func (*Transaction) isPlan() {}
func (*Explain) isPlan()     {}

// Build plans one parsed statement against cat: it binds names and
// types, turns ASOF joins into AsofJoin nodes, applies the rewrites, and
// validates ordering requirements (spec §4), all before any row is read.
// Errors are *sqlerr.Error with positions where the parser has them.
func Build(cat Catalog, st *parser.Statement, opts *Options) (Plan, error) {
	return BuildContext(context.Background(), cat, st, opts)
}

// BuildContext is Build observing ctx: planning a huge statement stops
// with 57014 once ctx is cancelled or past its deadline. Nesting deeper
// than limits.MaxDepth (WITH queries naming WITH queries count too) is
// 54001, and a statement whose WITH queries expand past maxBindSteps
// bound expressions is 54000.
func BuildContext(ctx context.Context, cat Catalog, st *parser.Statement, opts *Options) (Plan, error) {
	if opts == nil {
		opts = &Options{}
	}
	b := &binder{cat: cat, st: st, opts: opts, tick: limits.NewTicker(ctx)}
	b.params = append(b.params, opts.ParamTypes...)
	switch n := st.Node.(type) {
	case nil:
	case *parser.ShowStmt:
		return &Show{Stmt: n}, nil
	case *parser.SetStmt:
		return &Set{Stmt: n}, nil
	case *parser.TransactionStmt:
		return &Transaction{Stmt: n}, nil
	case *parser.CreateTableStmt:
		return createTable(n)
	case *parser.ExplainStmt:
		inner, err := BuildContext(ctx, cat, n.Stmt, opts)
		if err != nil {
			return nil, err
		}
		return &Explain{Analyze: n.Analyze, Verbose: n.Verbose, Stmt: inner}, nil
	case *parser.CopyStmt:
		return b.copyPlan(n)
	default:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "this statement is not supported")
	}
	switch x := st.AST.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		root, err := b.bindQuery(x, nil)
		if err != nil {
			return nil, err
		}
		root, err = optimize(root)
		if err != nil {
			return nil, err
		}
		if err := Validate(root); err != nil {
			return nil, err
		}
		return &Query{Root: root, Params: b.finishParams()}, nil
	case *ast.InsertStmt:
		return b.insert(x)
	case *ast.DropTableStmt:
		if x.IsView {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "DROP VIEW is not supported")
		}
		d := &DropTable{IfExists: x.IfExists}
		for _, t := range x.Tables {
			if err := writeTarget(t.Schema.O, t.Name.O); err != nil {
				return nil, err
			}
			d.Names = append(d.Names, t.Name.O)
		}
		return d, nil
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s is not supported", stmtKind(st.AST))
}

// stmtKind names an unsupported statement for messages.
func stmtKind(n ast.StmtNode) string {
	switch n.(type) {
	case *ast.UpdateStmt:
		return "UPDATE"
	case *ast.DeleteStmt:
		return "DELETE"
	case *ast.CreateViewStmt:
		return "CREATE VIEW"
	case *ast.CreateIndexStmt:
		return "CREATE INDEX"
	case *ast.CreateDatabaseStmt:
		return "CREATE DATABASE"
	case *ast.DropDatabaseStmt:
		return "DROP DATABASE"
	}
	return "this statement"
}

func createTable(n *parser.CreateTableStmt) (Plan, error) {
	if n.Temporary {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "temporary tables are not supported")
	}
	// A key the catalog would not enforce is refused: accepting it would let
	// duplicates in behind a constraint the user believes holds.
	if len(n.PrimaryKey) > 0 {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "PRIMARY KEY constraints are not supported").
			WithHint("asofsql enforces no keys. Declare the columns NOT NULL, and ORDER BY (...) if the table is queried in that order.")
	}
	def := catalog.TableDef{Name: n.Table.Name, OrderBy: n.OrderBy}
	for _, c := range n.Columns {
		def.Columns = append(def.Columns, catalog.Column{Name: c.Name, Type: c.Type, NotNull: c.NotNull})
	}
	return &CreateTable{Def: def, IfNotExists: n.IfNotExists}, nil
}

func (b *binder) copyPlan(n *parser.CopyStmt) (Plan, error) {
	if n.Query != nil {
		q, err := BuildContext(b.tick.Context(), b.cat, n.Query, b.opts)
		if err != nil {
			return nil, err
		}
		qq, ok := q.(*Query)
		if !ok {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY (query) needs a SELECT")
		}
		return &Copy{Query: qq, Stmt: n}, nil
	}
	if err := writeTarget(n.Table.Schema, n.Table.Name); err != nil {
		return nil, err
	}
	info, err := b.cat.Table(n.Table.Name)
	if err != nil {
		return nil, err
	}
	c := &Copy{Table: info, Stmt: n}
	cols, err := targetColumns(info, n.Columns)
	if err != nil {
		return nil, err
	}
	c.Columns = cols
	return c, nil
}

// targetColumns resolves a column list (nil: all columns in order).
func targetColumns(info *catalog.TableInfo, names []string) ([]int, error) {
	if len(names) == 0 {
		out := make([]int, len(info.Columns))
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	seen := map[int]bool{}
	var out []int
	for _, name := range names {
		i, err := info.ColumnIndex(name)
		if err != nil {
			return nil, err
		}
		if seen[i] {
			return nil, sqlerr.New("42701", "column \"%s\" specified more than once", name)
		}
		seen[i] = true
		out = append(out, i)
	}
	return out, nil
}

func (b *binder) insert(x *ast.InsertStmt) (Plan, error) {
	switch {
	case x.IsReplace:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "REPLACE is not supported")
	case len(x.OnDuplicate) > 0:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "ON DUPLICATE KEY UPDATE is not supported")
	case x.Setlist:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "INSERT ... SET is not supported")
	}
	ts, ok := x.Table.TableRefs.Left.(*ast.TableSource)
	tn, ok2 := (*ast.TableName)(nil), false
	if ok {
		tn, ok2 = ts.Source.(*ast.TableName)
	}
	if !ok2 {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "INSERT target must be a table")
	}
	if err := writeTarget(tn.Schema.O, tn.Name.O); err != nil {
		return nil, err
	}
	info, err := b.cat.Table(tn.Name.O)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, c := range x.Columns {
		names = append(names, c.Name.O)
	}
	cols, err := targetColumns(info, names)
	if err != nil {
		return nil, err
	}
	var src Node
	if x.Select != nil {
		if src, err = b.bindQuery(x.Select, nil); err != nil {
			return nil, err
		}
		if len(src.Schema()) > len(cols) {
			return nil, sqlerr.New(sqlerr.SyntaxError, "INSERT has more expressions than target columns")
		}
		if len(src.Schema()) < len(cols) {
			return nil, sqlerr.New(sqlerr.SyntaxError, "INSERT has more target columns than expressions")
		}
	} else {
		v := &Values{}
		for _, row := range x.Lists {
			if len(row) > len(cols) {
				return nil, sqlerr.New(sqlerr.SyntaxError, "INSERT has more expressions than target columns").WithPosition(b.pos(row[len(cols)]))
			}
			if len(row) < len(cols) {
				return nil, sqlerr.New(sqlerr.SyntaxError, "INSERT has more target columns than expressions")
			}
			var out []expr.Expr
			for i, e := range row {
				be, err := b.bindExpr(e, &exprCtx{sc: &scope{}, clause: "VALUES"})
				if err != nil {
					return nil, err
				}
				c := info.Columns[cols[i]]
				if be, err = b.assign(be, c.Type, e, "column \""+c.Name+"\""); err != nil {
					return nil, err
				}
				out = append(out, be)
			}
			v.Rows = append(v.Rows, out)
		}
		for _, i := range cols {
			c := info.Columns[i]
			v.Cols = append(v.Cols, Column{Name: c.Name, Type: c.Type, Nullable: true})
		}
		src = v
	}
	// Reorder into table column order; missing columns are NULL.
	p := &Project{Input: src}
	sch := src.Schema()
	for ti, c := range info.Columns {
		var e expr.Expr = &expr.Literal{T: c.Type}
		for si, i := range cols {
			if i == ti {
				e = &expr.Column{Index: si, Name: sch[si].Name, T: sch[si].Type}
				if e, err = b.assign(e, c.Type, nil, "column \""+c.Name+"\""); err != nil {
					return nil, err
				}
			}
		}
		if l, ok := e.(*expr.Literal); ok && l.Value == nil && c.NotNull {
			return nil, sqlerr.New(sqlerr.NotNullViolation, "null value in column \"%s\" of relation \"%s\" violates not-null constraint", c.Name, info.Name)
		}
		p.Exprs = append(p.Exprs, e)
		p.Cols = append(p.Cols, Column{Name: c.Name, Table: info.Name, Type: c.Type, Nullable: !c.NotNull})
	}
	root, err := optimize(p)
	if err != nil {
		return nil, err
	}
	if err := Validate(root); err != nil {
		return nil, err
	}
	return &Insert{Table: info, Input: root, Params: b.finishParams()}, nil
}
