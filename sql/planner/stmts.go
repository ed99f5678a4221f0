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
// *Copy, *Set, *Show, *Transaction, *SetTransaction, *Explain, *Prepare,
// *Execute, *Deallocate, *Discard, *Declare, *Fetch or *CloseCursor. Plans are plain data the planner owns (no
// parser types); each answers what callers must know before it runs, so
// the only switch over statement kinds a caller needs is the one that
// executes them.
type Plan interface {
	// Tag is the command tag the statement completes with, before any
	// count: "SELECT", "INSERT" and "COPY" are completed with their row
	// counts ("SELECT 5", "INSERT 0 5", "COPY 5"); the others as they are
	// ("CREATE TABLE", "SET", "RESET", "BEGIN", "DEALLOCATE ALL", ...).
	Tag() string
	// Shape is what the statement takes and returns.
	Shape() Shape
	// Reads are the tables whose rows running the plan reads (scans of
	// the plan and of its subqueries), in plan order.
	Reads() []*catalog.TableInfo
}

// Shape is what a statement takes and returns: Params are the types of
// $1..$n (Unknown where nothing constrains one, as Postgres reports
// "unknown"); a statement that returns rows has Rows set and its result
// Columns (none for SELECT without a select list).
type Shape struct {
	Params  []sqltypes.Type
	Columns []Column
	Rows    bool
}

// Query is a SELECT (or set operation): Root's schema is the result.
type Query struct {
	Root Node
	// Params are the types of $1..$n (Unknown where nothing constrains
	// one, as Postgres reports "unknown").
	Params []sqltypes.Type
	// Sizes are the Scans whose sizes chose the degrees of its gathers
	// (parallel_degree.go; empty for a serial plan or with
	// MinParallelBytes 0): SizesHold says whether they still do.
	Sizes []ScanSize
}

// CreateTable is CREATE [TEMP] TABLE with its validated definition.
// Defaults, when not nil, has one entry per column: the DEFAULT expression
// (a constant; nil for none), whose value the session evaluates into the
// column's catalog.Column.Default when the statement runs.
type CreateTable struct {
	Def         catalog.TableDef
	Defaults    []expr.Expr
	IfNotExists bool
	Temp        bool
}

// DropTable is DROP TABLE [IF EXISTS] names; Temp[i] says Names[i] is
// the session's temporary table (which shadows a permanent one of that
// name).
type DropTable struct {
	Names    []string
	Temp     []bool
	IfExists bool
}

// Insert is INSERT INTO Table: Input yields every table column, in table
// order and of the column's type (a column not given takes its DEFAULT,
// NULL without one), ready for catalog.Tx.Insert.
type Insert struct {
	Table  *catalog.TableInfo
	Input  Node
	Params []sqltypes.Type
}

// CopyFormat is the data format of COPY.
type CopyFormat string

// COPY formats.
const (
	CopyText    CopyFormat = "text"
	CopyCSV     CopyFormat = "csv"
	CopyBinary  CopyFormat = "binary"
	CopyParquet CopyFormat = "parquet"
)

// Copy is COPY table [(cols)] FROM {STDIN | 'path'} or COPY {table
// [(cols)] | (query)} TO {STDOUT | 'path'}, resolved: Table and Columns
// (table column indexes, all of them when the statement lists none) for a
// table, Query for COPY (query) TO. ColumnNames are the names as written
// (nil without a list). Path is "" for STDIN/STDOUT. Delimiter and Null
// are nil unless given (the format's defaults apply).
type Copy struct {
	Table       *catalog.TableInfo
	Columns     []int
	ColumnNames []string
	Query       *Query
	From        bool
	Path        string
	Format      CopyFormat
	Header      bool
	Delimiter   *string
	Null        *string
}

// Set is SET name {TO | =} value [, ...] (Values as text: strings decoded,
// identifiers lowercased, numbers as written) or SET name TO DEFAULT
// (Default). RESET name is Set with Reset and Default; RESET ALL has All
// and no Name. Local is SET LOCAL. The session runs it; the planner only
// names it.
type Set struct {
	Name    string
	Values  []string
	Default bool
	Local   bool
	Reset   bool
	All     bool
}

// Show is SHOW name | ALL. Name is the setting as Options.SettingName
// spells it (the result column's name); empty when All.
type Show struct {
	Name string
	All  bool
}

// TxnKind is the kind of a transaction-control statement.
type TxnKind uint8

const (
	// TxnBegin is BEGIN [WORK | TRANSACTION] or START TRANSACTION.
	TxnBegin TxnKind = iota + 1
	// TxnCommit is COMMIT or END.
	TxnCommit
	// TxnRollback is ROLLBACK or ABORT.
	TxnRollback
)

// Transaction is BEGIN/START, COMMIT/END or ROLLBACK/ABORT with BEGIN's
// modes: Isolation is "" or one of "serializable", "repeatable read",
// "read committed", "read uncommitted"; ReadOnly and Deferrable are nil
// unless written.
type Transaction struct {
	Kind       TxnKind
	Start      bool // START TRANSACTION: tagged so, not BEGIN
	Isolation  string
	ReadOnly   *bool
	Deferrable *bool
}

// Ends reports COMMIT and ROLLBACK, the statements a failed transaction
// block accepts.
func (t *Transaction) Ends() bool { return t.Kind == TxnCommit || t.Kind == TxnRollback }

// Explain is EXPLAIN [ANALYZE] of a planned statement.
type Explain struct {
	Analyze, Verbose bool
	Stmt             Plan
}

// Prepare is PREPARE Name [(types)] AS statement: Stmt is the statement
// as planned now (the session plans it again at each EXECUTE, against the
// catalog as it is then), Params its parameter types, every one known.
type Prepare struct {
	Name   string
	Params []sqltypes.Type
	Stmt   Plan
}

// Prepared is what planning EXECUTE needs to know of a prepared
// statement (Options.Prepared): its tag and shape.
type Prepared struct {
	Tag   string
	Shape Shape
}

// Execute is EXECUTE Name [(args)]. Args is one row (nil for no
// arguments): a column per parameter of the prepared statement (Target),
// each of its parameter's type (or as written, for a parameter of Unknown
// type). Params are the types of the arguments' own $n.
type Execute struct {
	Name   string
	Args   Node
	Params []sqltypes.Type
	Target Prepared
}

// Deallocate is DEALLOCATE [PREPARE] {Name | ALL}.
type Deallocate struct {
	Name string
	All  bool
}

// Discard is DISCARD {ALL | PLANS | SEQUENCES | TEMP}: What is the word,
// as its tag spells it.
type Discard struct {
	What string
}

func (*Query) Tag() string       { return "SELECT" }
func (*CreateTable) Tag() string { return "CREATE TABLE" }
func (*DropTable) Tag() string   { return "DROP TABLE" }
func (*Insert) Tag() string      { return "INSERT" }
func (*Copy) Tag() string        { return "COPY" }
func (*Show) Tag() string        { return "SHOW" }
func (*Explain) Tag() string     { return "EXPLAIN" }
func (*Prepare) Tag() string     { return "PREPARE" }
func (p *Execute) Tag() string   { return p.Target.Tag }
func (p *Discard) Tag() string   { return "DISCARD " + p.What }

func (p *Set) Tag() string {
	if p.Reset {
		return "RESET"
	}
	return "SET"
}

func (p *Transaction) Tag() string {
	switch p.Kind {
	case TxnCommit:
		return "COMMIT"
	case TxnRollback:
		return "ROLLBACK"
	}
	if p.Start {
		return "START TRANSACTION"
	}
	return "BEGIN"
}

func (p *Deallocate) Tag() string {
	if p.All {
		return "DEALLOCATE ALL"
	}
	return "DEALLOCATE"
}

func (p *Query) Shape() Shape {
	return Shape{Params: p.Params, Columns: p.Root.Schema(), Rows: true}
}
func (p *Insert) Shape() Shape    { return Shape{Params: p.Params} }
func (*CreateTable) Shape() Shape { return Shape{} }
func (*DropTable) Shape() Shape   { return Shape{} }
func (*Set) Shape() Shape         { return Shape{} }
func (*Transaction) Shape() Shape { return Shape{} }
func (*Prepare) Shape() Shape     { return Shape{} }
func (*Deallocate) Shape() Shape  { return Shape{} }
func (*Discard) Shape() Shape     { return Shape{} }

func (p *Copy) Shape() Shape {
	if p.Query != nil {
		return Shape{Params: p.Query.Params}
	}
	return Shape{}
}

func (p *Show) Shape() Shape {
	if p.All {
		return Shape{Columns: []Column{{Name: "name", Type: sqltypes.TextType}, {Name: "setting", Type: sqltypes.TextType},
			{Name: "description", Type: sqltypes.TextType}}, Rows: true}
	}
	return Shape{Columns: []Column{{Name: p.Name, Type: sqltypes.TextType}}, Rows: true}
}

func (p *Explain) Shape() Shape {
	return Shape{Params: p.Stmt.Shape().Params, Columns: []Column{{Name: "QUERY PLAN", Type: sqltypes.TextType}}, Rows: true}
}

func (p *Execute) Shape() Shape {
	return Shape{Params: p.Params, Columns: p.Target.Shape.Columns, Rows: p.Target.Shape.Rows}
}

func (p *Query) Reads() []*catalog.TableInfo  { return scans(nil, p.Root) }
func (p *Insert) Reads() []*catalog.TableInfo { return scans(nil, p.Input) }
func (*CreateTable) Reads() []*catalog.TableInfo {
	return nil
}
func (*DropTable) Reads() []*catalog.TableInfo   { return nil }
func (*Set) Reads() []*catalog.TableInfo         { return nil }
func (*Show) Reads() []*catalog.TableInfo        { return nil }
func (*Transaction) Reads() []*catalog.TableInfo { return nil }
func (*Prepare) Reads() []*catalog.TableInfo     { return nil }
func (*Deallocate) Reads() []*catalog.TableInfo  { return nil }
func (*Discard) Reads() []*catalog.TableInfo     { return nil }

// Reads of EXECUTE are none of its own: its arguments scan nothing, and
// the prepared statement's plan is made when it runs.
func (*Execute) Reads() []*catalog.TableInfo { return nil }

func (p *Copy) Reads() []*catalog.TableInfo {
	switch {
	case p.Query != nil:
		return p.Query.Reads()
	case !p.From:
		return []*catalog.TableInfo{p.Table}
	}
	return nil
}

// Reads of EXPLAIN are those of the statement when ANALYZE runs it.
func (p *Explain) Reads() []*catalog.TableInfo {
	if p.Analyze {
		return p.Stmt.Reads()
	}
	return nil
}

// scans appends the tables n and its subqueries scan.
func scans(out []*catalog.TableInfo, n Node) []*catalog.TableInfo {
	if n == nil {
		return out
	}
	if sc, ok := n.(*Scan); ok {
		out = append(out, sc.Table)
	}
	for _, s := range NodeSubqueries(n) {
		if sub, ok := s.Plan.(Node); ok {
			out = scans(out, sub)
		}
	}
	for _, c := range n.Children() {
		out = scans(out, c)
	}
	return out
}

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
		name := n.Name
		if opts.SettingName != nil && !n.All {
			name = opts.SettingName(name)
		}
		return &Show{Name: name, All: n.All}, nil
	case *parser.SetStmt:
		return &Set{Name: n.Name, Values: n.Values, Default: n.Default, Local: n.Local, Reset: n.Reset, All: n.All}, nil
	case *parser.TransactionStmt:
		t := &Transaction{Kind: TxnBegin, Start: n.Start, Isolation: n.Isolation, ReadOnly: n.ReadOnly, Deferrable: n.Deferrable}
		switch n.Kind {
		case parser.TxnCommit:
			t.Kind = TxnCommit
		case parser.TxnRollback:
			t.Kind = TxnRollback
		}
		return t, nil
	case *parser.CreateTableStmt:
		if n.AsQuery != nil {
			return b.createTableAs(n) // ddl.go
		}
		return b.createTable(n)
	case *parser.CreateViewStmt:
		return b.createView(n)
	case *parser.AlterTableStmt:
		return b.alterTable(n)
	case *parser.TruncateStmt:
		refs := make([]TableRef, len(n.Tables))
		for i, t := range n.Tables {
			refs[i] = TableRef{Schema: t.Schema, Name: t.Name, Pos: n.Pos[i]}
		}
		return b.truncate(refs)
	case *parser.ExplainStmt:
		inner, err := BuildContext(ctx, cat, n.Stmt, opts)
		if err != nil {
			return nil, err
		}
		return &Explain{Analyze: n.Analyze, Verbose: n.Verbose, Stmt: inner}, nil
	case *parser.CopyStmt:
		return b.copyPlan(n)
	case *parser.PrepareStmt:
		return prepare(cat, n, opts)
	case *parser.ExecuteStmt:
		return b.execute(n)
	case *parser.DeallocateStmt:
		return &Deallocate{Name: n.Name, All: n.All}, nil
	case *parser.DiscardStmt:
		return &Discard{What: n.What}, nil
	case *parser.DeclareStmt:
		return declare(cat, n, opts)
	case *parser.FetchStmt:
		return fetch(n, opts)
	case *parser.CloseStmt:
		return &CloseCursor{Name: n.Name, All: n.All}, nil
	case *parser.SetTransactionStmt:
		return &SetTransaction{Session: n.Session, Isolation: n.Isolation, ReadOnly: n.ReadOnly, Deferrable: n.Deferrable}, nil
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
		if opts.Workers > 1 {
			// The orderings Repartition and Merge state are proven again:
			// the plan that runs is the one checked.
			d := &degrees{max: opts.Workers, min: opts.MinParallelBytes}
			root = parallelize(root, d)
			if err := Validate(root); err != nil {
				return nil, err
			}
			return &Query{Root: root, Params: b.finishParams(), Sizes: d.sizes}, nil
		}
		return &Query{Root: root, Params: b.finishParams()}, nil
	case *ast.InsertStmt:
		return b.insert(x)
	case *ast.DeleteStmt:
		return b.delete(x) // dml.go
	case *ast.UpdateStmt:
		return b.update(x)
	case *ast.DropTableStmt:
		if x.IsView {
			return b.dropView(x) // ddl.go
		}
		d := &DropTable{IfExists: x.IfExists}
		for _, t := range x.Tables {
			if err := writeTarget(t.Schema.O, t.Name.O); err != nil {
				return nil, err
			}
			temp := t.Schema.O == TempSchema
			if r, err := b.relation(t.Schema.O, t.Name.O); err == nil {
				temp = r.Temp
			}
			d.Names = append(d.Names, t.Name.O)
			d.Temp = append(d.Temp, temp)
		}
		return d, nil
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s is not supported", stmtKind(st.AST))
}

// stmtKind names an unsupported statement for messages.
func stmtKind(n ast.StmtNode) string {
	switch n.(type) {
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

func (b *binder) createTable(n *parser.CreateTableStmt) (Plan, error) {
	if err := writeTarget(n.Table.Schema, n.Table.Name); err != nil {
		return nil, err
	}
	// A key the catalog would not enforce is refused: accepting it would let
	// duplicates in behind a constraint the user believes holds.
	if len(n.PrimaryKey) > 0 {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "PRIMARY KEY constraints are not supported").
			WithHint("asofsql enforces no keys. Declare the columns NOT NULL, and ORDER BY (...) if the table is queried in that order.")
	}
	def := catalog.TableDef{Name: n.Table.Name, OrderBy: n.OrderBy}
	p := &CreateTable{IfNotExists: n.IfNotExists, Temp: n.Temporary || n.Table.Schema == TempSchema}
	for _, c := range n.Columns {
		col := catalog.Column{Name: c.Name, Type: c.Type, NotNull: c.NotNull}
		var d expr.Expr
		if c.Default != nil {
			var err error
			if d, err = b.columnDefault(c.Default, col); err != nil { // ddl.go
				return nil, err
			}
			if p.Defaults == nil {
				p.Defaults = make([]expr.Expr, len(n.Columns))
			}
			p.Defaults[len(def.Columns)] = d
		}
		def.Columns = append(def.Columns, col)
	}
	p.Def = def
	return p, nil
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
		c := copyOf(n)
		c.Query = qq
		return c, nil
	}
	if err := writeTarget(n.Table.Schema, n.Table.Name); err != nil {
		return nil, err
	}
	r, err := b.relation(n.Table.Schema, n.Table.Name)
	if err != nil {
		return nil, err
	}
	if r.View != nil {
		if n.From {
			return nil, sqlerr.New(codeWrongObjectType, "cannot copy to view \"%s\"", n.Table.Name)
		}
		return nil, sqlerr.New(codeWrongObjectType, "cannot copy from view \"%s\"", n.Table.Name).
			WithHint("Try the COPY (SELECT ...) TO variant.")
	}
	info := r.Table
	c := copyOf(n)
	c.Table = info
	cols, err := targetColumns(info, n.Columns)
	if err != nil {
		return nil, err
	}
	c.Columns = cols
	return c, nil
}

// copyOf carries COPY's options over.
func copyOf(n *parser.CopyStmt) *Copy {
	return &Copy{ColumnNames: n.Columns, From: n.From, Path: n.Path, Format: CopyFormat(n.Format), Header: n.Header,
		Delimiter: n.Delimiter, Null: n.Null}
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
	info, err := b.table(tn.Schema.O, tn.Name.O, "INSERT INTO")
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
		if len(names) == 0 && len(src.Schema()) < len(cols) {
			cols = cols[:len(src.Schema())] // PostgreSQL: the first columns, the rest take their defaults
		}
		if len(src.Schema()) < len(cols) {
			return nil, sqlerr.New(sqlerr.SyntaxError, "INSERT has more target columns than expressions")
		}
	} else {
		v := &Values{}
		if len(names) == 0 && len(x.Lists) > 0 && len(x.Lists[0]) < len(cols) {
			cols = cols[:len(x.Lists[0])] // PostgreSQL: the first columns, the rest take their defaults
		}
		for _, row := range x.Lists {
			if len(row) != len(x.Lists[0]) && len(row) > 0 {
				return nil, sqlerr.New(sqlerr.SyntaxError, "VALUES lists must all be the same length").WithPosition(b.pos(row[0]))
			}
			if len(row) > len(cols) {
				return nil, sqlerr.New(sqlerr.SyntaxError, "INSERT has more expressions than target columns").WithPosition(b.pos(row[len(cols)]))
			}
			if len(row) < len(cols) {
				return nil, sqlerr.New(sqlerr.SyntaxError, "INSERT has more target columns than expressions")
			}
			var out []expr.Expr
			for i, e := range row {
				c := info.Columns[cols[i]]
				if _, ok := e.(*ast.DefaultExpr); ok {
					d, err := defaultValue(c) // dml.go
					if err != nil {
						return nil, err
					}
					out = append(out, d)
					continue
				}
				be, err := b.bindExpr(e, &exprCtx{sc: &scope{}, clause: "VALUES"})
				if err != nil {
					return nil, err
				}
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
		e, err := defaultValue(c) // missing columns take their DEFAULT
		if err != nil {
			return nil, err
		}
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
