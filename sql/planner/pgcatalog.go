package planner

import (
	"strconv"

	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/functions"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sql/pgcatalog"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// TableLister is implemented by catalogs that can list their tables;
// the virtual pg_catalog tables show only the tables a catalog lists
// (*catalog.Catalog and *catalog.Snapshot do).
type TableLister interface {
	Tables() []string
}

// TempTableLister is implemented by a Catalog with the session's
// temporary tables, which pg_class shows in the session's temporary
// schema (psql's \dt lists them there).
type TempTableLister interface {
	TempTables() []string
}

// DefaultDatabase and DefaultUser are what the virtual catalog shows when
// Options leave Database or User empty.
const (
	DefaultDatabase = "asofsql"
	DefaultUser     = "asofsql"
)

// pgSource builds (once per statement) the database description the
// virtual pg_catalog tables and catalog functions are built from.
func (b *binder) pgSource() (*pgcatalog.Source, error) {
	if b.pgsrc != nil {
		return b.pgsrc, nil
	}
	db, user := DefaultDatabase, DefaultUser
	if b.opts != nil && b.opts.Database != "" {
		db = b.opts.Database
	}
	if b.opts != nil && b.opts.User != "" {
		user = b.opts.User
	}
	var tables []*catalog.TableInfo
	if l, ok := b.cat.(TableLister); ok {
		for _, name := range l.Tables() {
			info, err := b.cat.Table(name)
			if err != nil {
				if e, ok := sqlerr.As(err); ok && e.Code == sqlerr.UndefinedTable {
					continue
				}
				return nil, err
			}
			tables = append(tables, info)
		}
	}
	src := pgcatalog.NewSource(db, user, tables)
	if l, ok := b.cat.(TempTableLister); ok {
		var temp []*catalog.TableInfo
		for _, name := range l.TempTables() {
			if rel, err := b.relation(TempSchema, name); err == nil && rel.Table != nil {
				temp = append(temp, rel.Table)
			}
		}
		src.AddTempTables(temp)
	}
	// Views' columns are their queries' columns, so each is bound. The
	// binders of those queries see the tables only (b.pgsrc is set
	// first): a view reading pg_class must not bind every view again.
	b.pgsrc = src
	if l, ok := b.cat.(ViewLister); ok {
		var views []pgcatalog.View
		for _, name := range l.Views() {
			rel, err := b.relation("public", name)
			if err != nil || rel.View == nil {
				continue
			}
			v := pgcatalog.View{Name: name, SQL: rel.View.SQL}
			// a view whose query no longer binds is listed without columns
			if node, err := b.bindView(rel.View, name); err == nil {
				for _, c := range node.Schema() {
					v.Columns = append(v.Columns, pgcatalog.Column{Name: c.Name, Type: c.Type})
				}
			}
			views = append(views, v)
		}
		src.AddViews(views)
	}
	return src, nil
}

// ViewLister is implemented by catalogs that can list their views, which
// the virtual pg_catalog then shows too.
type ViewLister interface {
	Views() []string
}

// isVirtualTable reports whether a FROM item names a pg_catalog or
// information_schema table: qualified by such a schema, or an unqualified
// pg_catalog table name (pg_catalog comes first on the search path).
func isVirtualTable(schema, name string) bool {
	if schema == "" {
		return pgcatalog.Has("", name)
	}
	return pgcatalog.IsVirtualSchema(schema)
}

// bindVirtual binds a virtual catalog table as a Values node built from
// the live catalog.
func (b *binder) bindVirtual(schema, name, alias string) (*rel, error) {
	src, err := b.pgSource()
	if err != nil {
		return nil, err
	}
	t, ok := src.Table(schema, name)
	if !ok {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation \"%s.%s\" does not exist", schema, name)
	}
	v := &Values{}
	for _, c := range t.Columns {
		v.Cols = append(v.Cols, Column{Name: c.Name, Table: alias, Type: c.Type, Nullable: true})
	}
	for _, row := range t.Rows {
		r := make([]expr.Expr, len(row))
		for i, val := range row {
			r[i] = &expr.Literal{Value: val, T: t.Columns[i].Type}
		}
		v.Rows = append(v.Rows, r)
	}
	var node Node = v
	if len(v.Rows) == 0 {
		// An empty table: one row of NULLs that a false filter removes
		// (the Values operator needs a row).
		row := make([]expr.Expr, len(v.Cols))
		for i, c := range v.Cols {
			row[i] = &expr.Literal{T: c.Type}
		}
		v.Rows = [][]expr.Expr{row}
		node = &Filter{Input: v, Cond: &expr.Literal{Value: false, T: sqltypes.BoolType}}
	}
	return &rel{node: node, sc: newScope(alias, v.Cols), desc: inputDesc{kind: "table", name: alias, table: name}}, nil
}

// bindRegexp binds `x ~ pattern` and `x !~ pattern` (the parser writes
// them as TiDB's REGEXP) as Postgres' textregexeq/textregexne.
func (b *binder) bindRegexp(x *ast.PatternRegexpExpr, c *exprCtx) (expr.Expr, error) {
	v, err := b.bindExpr(x.Expr, c)
	if err != nil {
		return nil, err
	}
	p, err := b.bindExpr(x.Pattern, c)
	if err != nil {
		return nil, err
	}
	op := "~"
	if x.Not {
		op = "!~"
	}
	for i, e := range []*expr.Expr{&v, &p} {
		at := []ast.ExprNode{x.Expr, x.Pattern}[i]
		if t := (*e).Type(); !t.IsString() && t.Kind != sqltypes.Unknown {
			return nil, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s %s %s", v.Type(), op, p.Type()).WithPosition(b.pos(x)).
				WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
		}
		if *e, err = b.coerce(*e, sqltypes.TextType, at, op); err != nil {
			return nil, err
		}
	}
	fn := functions.TextRegexEq
	if x.Not {
		fn = functions.TextRegexNe
	}
	return &expr.Func{Fn: fn, Args: []expr.Expr{v, p}, T: sqltypes.BoolType}, nil
}

// catalogFuncs are the functions Postgres answers from its catalogs; the
// planner expands them into expressions over the statement's
// pgcatalog.Source, so they agree with the virtual tables. (Set in init:
// the Source binds views' queries, which may call these functions.)
var catalogFuncs map[string]func(b *binder, args []expr.Expr, x *ast.FuncCallExpr) (expr.Expr, error)

func init() {
	catalogFuncs = map[string]func(b *binder, args []expr.Expr, x *ast.FuncCallExpr) (expr.Expr, error){
		"pg_table_is_visible": func(b *binder, args []expr.Expr, x *ast.FuncCallExpr) (expr.Expr, error) {
			return b.relPredicate(args, x, func(src *pgcatalog.Source, r *pgcatalog.Rel) bool { return src.Visible(r) })
		},
		// pg_relation_is_publishable: true for a user table (Postgres: an
		// ordinary permanent table outside the system catalogs), false for
		// other relations.
		"pg_relation_is_publishable": func(b *binder, args []expr.Expr, x *ast.FuncCallExpr) (expr.Expr, error) {
			return b.relPredicate(args, x, func(_ *pgcatalog.Source, r *pgcatalog.Rel) bool {
				return r.Kind == "r" && r.Namespace == int64(pgcatalog.NamespacePublic)
			})
		},
		"pg_get_userbyid": func(b *binder, args []expr.Expr, x *ast.FuncCallExpr) (expr.Expr, error) {
			src, err := b.pgSource()
			if err != nil {
				return nil, err
			}
			arg, err := b.oidArg(args, x)
			if err != nil {
				return nil, err
			}
			// Postgres prints "unknown (OID=n)" for an OID that is no role.
			unknown := &expr.Binary{Op: expr.Concat, T: sqltypes.TextType,
				L: &expr.Binary{Op: expr.Concat, T: sqltypes.TextType,
					L: &expr.Literal{Value: "unknown (OID=", T: sqltypes.TextType},
					R: &expr.Cast{X: arg, T: sqltypes.TextType}},
				R: &expr.Literal{Value: ")", T: sqltypes.TextType}}
			return &expr.Case{Operand: arg, T: sqltypes.TextType,
				Whens: []expr.When{{Cond: &expr.Literal{Value: int64(pgcatalog.RoleOID), T: sqltypes.Int8Type}, Result: &expr.Literal{Value: src.User, T: sqltypes.TextType}}},
				Else:  unknown}, nil
		},
		// pg_get_viewdef(oid [, pretty]): a view's query as it was written
		// (PostgreSQL prints its own reconstruction), NULL for other OIDs.
		"pg_get_viewdef": func(b *binder, args []expr.Expr, x *ast.FuncCallExpr) (expr.Expr, error) {
			return b.viewText(args, x, func(_ *pgcatalog.Source, r *pgcatalog.Rel) string { return " " + r.ViewSQL + ";" })
		},
		// pg_get_ruledef(oid [, pretty]): the "_RETURN" rule of the view
		// pg_rewrite lists under oid, as PostgreSQL prints it around the
		// view's query as written; NULL for other OIDs.
		"pg_get_ruledef": func(b *binder, args []expr.Expr, x *ast.FuncCallExpr) (expr.Expr, error) {
			return b.viewText(args, x, func(src *pgcatalog.Source, r *pgcatalog.Rel) string {
				return "CREATE RULE \"_RETURN\" AS\n    ON SELECT TO " + src.QualifiedName(r) + " DO INSTEAD  " + r.ViewSQL + ";"
			})
		},
		"current_database": func(b *binder, args []expr.Expr, x *ast.FuncCallExpr) (expr.Expr, error) {
			src, err := b.pgSource()
			if err != nil || len(args) != 0 {
				return nil, orFuncError(err, b, x, args)
			}
			return &expr.Literal{Value: src.Database, T: sqltypes.TextType}, nil
		},
		"current_user": func(b *binder, args []expr.Expr, x *ast.FuncCallExpr) (expr.Expr, error) {
			src, err := b.pgSource()
			if err != nil || len(args) != 0 {
				return nil, orFuncError(err, b, x, args)
			}
			return &expr.Literal{Value: src.User, T: sqltypes.TextType}, nil
		},
	}
}

func orFuncError(err error, b *binder, x *ast.FuncCallExpr, args []expr.Expr) error {
	if err != nil {
		return err
	}
	return funcError(b, x, args)
}

// oidArg checks a one-argument catalog function's argument: an OID
// (bigint here) or something that coerces to one.
func (b *binder) oidArg(args []expr.Expr, x *ast.FuncCallExpr) (expr.Expr, error) {
	if len(args) != 1 || !(args[0].Type().IsInteger() || args[0].Type().Kind == sqltypes.Unknown) {
		return nil, funcError(b, x, args)
	}
	return b.coerce(args[0], sqltypes.Int8Type, x.Args[0], "argument")
}

// bindCatalogCall binds a function Postgres answers from its catalogs
// (catalogFuncs), and checks a schema-qualified call: built-in functions
// live in pg_catalog. ok is false for calls bindFunc binds.
func (b *binder) bindCatalogCall(x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, bool, error) {
	f, ok := catalogFuncs[x.FnName.L]
	if !ok && (x.Schema.O == "" || x.Schema.O == pgcatalog.Catalog) {
		return nil, false, nil
	}
	args := make([]expr.Expr, len(x.Args))
	for i, a := range x.Args {
		var err error
		if args[i], err = b.bindExpr(a, c); err != nil {
			return nil, true, err
		}
	}
	if s := x.Schema.O; s != "" && s != pgcatalog.Catalog {
		err := funcError(b, x, args).(*sqlerr.Error)
		err.Message = "function " + s + "." + err.Message[len("function "):]
		return nil, true, err
	}
	e, err := f(b, args, x)
	return e, true, err
}

// bindRegCast binds x::regclass, ::regtype, ::regnamespace, ::regrole and
// ::oid. Postgres' OID alias types store an OID, print as a name and
// compare as OIDs; asofsql has no such types, so the cast takes the
// direction it is used for: a name (a constant string) becomes the OID
// (bigint) it resolves to in the virtual catalog, as in
// `attrelid = 'trades'::regclass`, and an OID becomes its name (text) for
// display, as in `c.oid::regclass` (an OID naming nothing prints as the
// number, as in Postgres). ::oid turns integers and numeric strings into
// bigint.
func (b *binder) bindRegCast(x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	return b.bindRegCastAs(x, c, false)
}

// bindRegCastAs binds an OID alias cast; asText is set when the cast is
// itself cast to text ('trades'::regclass::text), which prints the name
// whichever direction the inner cast took.
func (b *binder) bindRegCastAs(x *ast.FuncCallExpr, c *exprCtx, asText bool) (expr.Expr, error) {
	if len(x.Args) != 2 {
		return nil, sqlerr.New(sqlerr.InternalError, "regcast marker without its type").WithPosition(b.pos(x))
	}
	kind := ""
	if v, ok := x.Args[1].(ast.ValueExpr); ok {
		kind, _ = v.GetValue().(string)
	}
	arg, err := b.bindExpr(x.Args[0], c)
	if err != nil {
		return nil, err
	}
	src, err := b.pgSource()
	if err != nil {
		return nil, err
	}
	t := arg.Type()
	if kind == "oid" || t.IsInteger() {
		if !t.IsInteger() && t.Kind != sqltypes.Unknown {
			return nil, sqlerr.New(codeCannotCoerce, "cannot cast type %s to %s", t, kind).WithPosition(b.pos(x))
		}
		if arg, err = b.coerce(arg, sqltypes.Int8Type, x.Args[0], "cast"); err != nil {
			return nil, err
		}
		if kind == "oid" {
			return arg, nil
		}
		names := regNames(src, kind)
		out := &expr.Case{Operand: arg, T: sqltypes.TextType, Else: &expr.Cast{X: arg, T: sqltypes.TextType}}
		for _, n := range names {
			out.Whens = append(out.Whens, expr.When{Cond: &expr.Literal{Value: n.oid, T: sqltypes.Int8Type}, Result: &expr.Literal{Value: n.name, T: sqltypes.TextType}})
		}
		return out, nil
	}
	lit, ok := arg.(*expr.Literal)
	if !ok || !t.IsString() && t.Kind != sqltypes.Unknown {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "casting %s to %s is supported for constants only", t, kind).WithPosition(b.pos(x))
	}
	if lit.Value == nil {
		if asText {
			return &expr.Literal{T: sqltypes.TextType}, nil
		}
		return &expr.Literal{T: sqltypes.Int8Type}, nil
	}
	name := lit.Value.(string)
	names := regNames(src, kind)
	found := func(oid int64) expr.Expr {
		if asText {
			for _, n := range names {
				if n.oid == oid {
					return &expr.Literal{Value: n.name, T: sqltypes.TextType}
				}
			}
			return &expr.Literal{Value: strconv.FormatInt(oid, 10), T: sqltypes.TextType}
		}
		return &expr.Literal{Value: oid, T: sqltypes.Int8Type}
	}
	if n, err := strconv.ParseInt(name, 10, 64); err == nil && n >= 0 {
		return found(n), nil
	}
	for _, n := range names {
		if n.name == name || n.alt != "" && n.alt == name {
			return found(n.oid), nil
		}
	}
	what := map[string]string{"regclass": "relation", "regtype": "type", "regnamespace": "schema", "regrole": "role"}[kind]
	code := sqlerr.UndefinedObject
	if kind == "regclass" {
		code = sqlerr.UndefinedTable
	}
	if kind == "regnamespace" {
		code = codeInvalidSchemaName
	}
	return nil, sqlerr.New(code, "%s \"%s\" does not exist", what, name).WithPosition(b.pos(x.Args[0]))
}

const codeInvalidSchemaName = "3F000"

type regName struct {
	oid       int64
	name, alt string
}

// regNames lists the objects an OID alias type names, with the spelling
// Postgres prints (and alt, another spelling its input accepts).
func regNames(src *pgcatalog.Source, kind string) []regName {
	var out []regName
	switch kind {
	case "regclass":
		for _, r := range src.Rels() {
			out = append(out, regName{r.OID, src.QualifiedName(r), pgcatalog.NamespaceName(r.Namespace) + "." + r.Name})
		}
	case "regtype":
		for _, t := range pgcatalog.Types {
			out = append(out, regName{t.OID, t.Type.String(), t.Name})
		}
	case "regnamespace":
		for _, n := range []int64{pgcatalog.NamespaceCatalog, pgcatalog.NamespacePublic, pgcatalog.NamespaceInfo} {
			out = append(out, regName{n, pgcatalog.NamespaceName(n), ""})
		}
	case "regrole":
		out = append(out, regName{pgcatalog.RoleOID, src.User, ""})
	}
	return out
}

// regCastName names an unaliased x::regclass column as Postgres does:
// after the column it casts, else the type.
func (b *binder) regCastName(x *ast.FuncCallExpr) string {
	if len(x.Args) == 2 {
		switch a := x.Args[0].(type) {
		case *ast.ColumnNameExpr:
			return a.Name.Name.O
		case *ast.FuncCallExpr:
			if a.FnName.O == parser.MarkerRegCast || a.FnName.O == "#cast" {
				if n := b.derivedName(a, nil); n != "" {
					return n
				}
			}
		}
		if v, ok := x.Args[1].(ast.ValueExpr); ok {
			if s, ok := v.GetValue().(string); ok {
				return s
			}
		}
	}
	return "?column?"
}

// anyOps are the comparisons `x op ANY (array)` accepts.
var anyOps = map[opcode.Op]string{opcode.EQ: "=", opcode.NE: "<>", opcode.LT: "<", opcode.LE: "<=", opcode.GT: ">", opcode.GE: ">="}

// bindAny binds `x op ANY (array)`. Arrays exist in asofsql only as the
// text form of the virtual catalog's array columns (and literals such as
// '{a,b}'), so the array is text and its elements are read as x's type:
// text, an integer type or boolean. NULL semantics are Postgres': true if
// any comparison is true, else NULL if the array or x or an element is
// NULL (and the array is not empty), else false.
func (b *binder) bindAny(x *ast.BinaryOperationExpr, f *ast.FuncCallExpr, all bool, c *exprCtx) (expr.Expr, error) {
	op, ok := anyOps[x.Op]
	if !ok || len(f.Args) != 1 {
		word := "ANY"
		if all {
			word = "ALL"
		}
		return nil, sqlerr.New(sqlerr.SyntaxError, "syntax error at or near \"%s\"", word).WithPosition(b.pos(f))
	}
	l, err := b.bindExpr(x.L, c)
	if err != nil {
		return nil, err
	}
	arr, err := b.bindExpr(f.Args[0], c)
	if err != nil {
		return nil, err
	}
	if e, ok, err := b.bindTypedAny(l, arr, op, all, x, f); ok { // bind_array.go
		return e, err
	}
	if all {
		// A text array: x op ALL (a) is NOT (x negop ANY (a)), NULLs included.
		op = negatedOp[op]
	}
	if t := arr.Type(); !t.IsString() && t.Kind != sqltypes.Unknown {
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "op ANY/ALL (array) requires array on right side").WithPosition(b.pos(f))
	}
	if arr, err = b.coerce(arr, sqltypes.TextType, f.Args[0], "ANY"); err != nil {
		return nil, err
	}
	lt := l.Type()
	if lt.Kind == sqltypes.Unknown {
		if l, err = b.coerce(l, sqltypes.TextType, x.L, "ANY"); err != nil {
			return nil, err
		}
		lt = sqltypes.TextType
	}
	switch {
	case lt.IsString() || lt.IsInteger() || lt.Kind == sqltypes.Bool:
	default:
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s %s ANY (array of %s)", lt, op, lt).WithPosition(b.pos(x)).
			WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
	}
	e := &expr.Func{Fn: functions.ScalarOpAny, T: sqltypes.BoolType,
		Args: []expr.Expr{l, arr, &expr.Literal{Value: op, T: sqltypes.TextType}}}
	if all {
		return &expr.Unary{Op: expr.Not, X: e, T: sqltypes.BoolType}, nil
	}
	return e, nil
}

// noObjects is a catalog function about objects asofsql never has
// (indexes, constraints, extended statistics, comments): it checks its
// arguments like Postgres and returns NULL, which is what Postgres returns
// for an OID that names no such object.
func noObjects(lo int, params ...sqltypes.Type) func(b *binder, args []expr.Expr, x *ast.FuncCallExpr) (expr.Expr, error) {
	return func(b *binder, args []expr.Expr, x *ast.FuncCallExpr) (expr.Expr, error) {
		if len(args) < lo || len(args) > len(params) {
			return nil, funcError(b, x, args)
		}
		for i := range args {
			if _, err := b.coerce(args[i], params[i], x.Args[i], "argument"); err != nil {
				return nil, funcError(b, x, args)
			}
		}
		return &expr.Literal{T: sqltypes.TextType}, nil
	}
}

func init() {
	i4, i8, bl, tx := sqltypes.Int4Type, sqltypes.Int8Type, sqltypes.BoolType, sqltypes.TextType
	catalogFuncs["pg_get_indexdef"] = noObjects(1, i8, i4, bl)
	catalogFuncs["pg_get_constraintdef"] = noObjects(1, i8, bl)
	catalogFuncs["pg_get_statisticsobjdef_columns"] = noObjects(1, i8)
	catalogFuncs["obj_description"] = noObjects(1, i8, tx)
	catalogFuncs["col_description"] = noObjects(2, i8, i4)
	catalogFuncs["shobj_description"] = noObjects(2, i8, tx)
	catalogFuncs["pg_table_size"] = relSize
	catalogFuncs["pg_total_relation_size"] = relSize
	catalogFuncs["pg_relation_size"] = relSize
}

// relSize expands pg_table_size, pg_total_relation_size and
// pg_relation_size (main fork) of a relation OID into a CASE over the
// statement's relations: a user table's stored size in bytes
// (catalog.TableInfo.Bytes; asofsql has no TOAST, free-space or visibility
// maps, nor indexes, so the three agree), 0 for a virtual catalog table
// (no storage, like a Postgres view), NULL for an OID naming no relation,
// as in Postgres.
func relSize(b *binder, args []expr.Expr, x *ast.FuncCallExpr) (expr.Expr, error) {
	src, err := b.pgSource()
	if err != nil {
		return nil, err
	}
	arg, err := b.oidArg(args, x)
	if err != nil {
		return nil, err
	}
	out := &expr.Case{T: sqltypes.Int8Type}
	var none []expr.Expr
	for _, r := range src.Rels() {
		l := &expr.Literal{Value: r.OID, T: sqltypes.Int8Type}
		if r.Kind != "r" || r.Namespace != int64(pgcatalog.NamespacePublic) {
			none = append(none, l)
			continue
		}
		out.Whens = append(out.Whens, expr.When{Cond: &expr.In{X: arg, List: []expr.Expr{l}}, Result: &expr.Literal{Value: r.Bytes, T: sqltypes.Int8Type}})
	}
	if len(none) > 0 {
		out.Whens = append(out.Whens, expr.When{Cond: &expr.In{X: arg, List: none}, Result: &expr.Literal{Value: int64(0), T: sqltypes.Int8Type}})
	}
	return out, nil
}

// writeTarget checks the table an INSERT, COPY or DROP TABLE names: the
// virtual catalog tables are read-only (42809; read them with a query,
// COPY (SELECT ...) included), and user tables live in schema public.
func writeTarget(schema, name string) error {
	if isVirtualTable(schema, name) {
		if schema == "" {
			schema = pgcatalog.Catalog
		}
		if pgcatalog.Has(schema, name) {
			return sqlerr.New(codeWrongObjectType, "\"%s.%s\" is a read-only catalog table", schema, name).
				WithHint("Read it with a query, e.g. COPY (SELECT * FROM %s.%s) TO STDOUT.", schema, name)
		}
	}
	if schema != "" && schema != "public" && schema != TempSchema {
		return sqlerr.New(sqlerr.UndefinedTable, "relation \"%s.%s\" does not exist", schema, name)
	}
	return nil
}

const codeWrongObjectType = "42809"

// itemName is derivedName, plus the names of OID alias casts.
func (b *binder) itemName(n ast.ExprNode, e expr.Expr) string {
	if x, ok := n.(*ast.FuncCallExpr); ok && x.FnName.O == parser.MarkerRegCast {
		return b.regCastName(x)
	}
	return b.derivedName(n, e)
}

// relPredicate expands a boolean function of a relation OID into a CASE over
// the statement's relations: true where pred holds, false where it does not,
// NULL for an OID that names no relation, as in Postgres.
func (b *binder) relPredicate(args []expr.Expr, x *ast.FuncCallExpr, pred func(*pgcatalog.Source, *pgcatalog.Rel) bool) (expr.Expr, error) {
	src, err := b.pgSource()
	if err != nil {
		return nil, err
	}
	arg, err := b.oidArg(args, x)
	if err != nil {
		return nil, err
	}
	var yes, no []expr.Expr
	for _, r := range src.Rels() {
		l := &expr.Literal{Value: r.OID, T: sqltypes.Int8Type}
		if pred(src, r) {
			yes = append(yes, l)
		} else {
			no = append(no, l)
		}
	}
	out := &expr.Case{T: sqltypes.BoolType}
	if len(yes) > 0 {
		out.Whens = append(out.Whens, expr.When{Cond: &expr.In{X: arg, List: yes}, Result: &expr.Literal{Value: true, T: sqltypes.BoolType}})
	}
	if len(no) > 0 {
		out.Whens = append(out.Whens, expr.When{Cond: &expr.In{X: arg, List: no}, Result: &expr.Literal{Value: false, T: sqltypes.BoolType}})
	}
	return out, nil
}

// viewText is f(oid [, pretty]) for a function printing something of a
// view: text(view) for a view's OID, NULL for any other.
func (b *binder) viewText(args []expr.Expr, x *ast.FuncCallExpr, text func(*pgcatalog.Source, *pgcatalog.Rel) string) (expr.Expr, error) {
	src, err := b.pgSource()
	if err != nil {
		return nil, err
	}
	if len(args) == 2 {
		if k := args[1].Type().Kind; k != sqltypes.Bool && k != sqltypes.Unknown {
			return nil, funcError(b, x, args)
		}
		args = args[:1]
	}
	arg, err := b.oidArg(args, x)
	if err != nil {
		return nil, err
	}
	c := &expr.Case{Operand: arg, T: sqltypes.TextType, Else: &expr.Literal{T: sqltypes.TextType}}
	for _, r := range src.Rels() {
		if r.ViewSQL != "" {
			c.Whens = append(c.Whens, expr.When{Cond: &expr.Literal{Value: r.OID, T: sqltypes.Int8Type},
				Result: &expr.Literal{Value: text(src, r), T: sqltypes.TextType}})
		}
	}
	if len(c.Whens) == 0 {
		return c.Else, nil
	}
	return c, nil
}
