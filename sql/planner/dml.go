package planner

import (
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// KeyBound is one condition `key Op Value` on a table's first ordering
// column that a DELETE or UPDATE turns into the catalog's scan range:
// Value is a constant expression (literals, parameters, casts, now(); no
// column, subquery or volatile function) of exactly the column's type,
// evaluated once when the statement runs. Op is Eq, Lt, Le, Gt or Ge.
type KeyBound struct {
	Op    expr.BinaryOp
	Value expr.Expr
}

// Delete is DELETE FROM Table [WHERE ...]. The rows deleted are those
// whose first ordering column satisfies every Range bound (ordered tables;
// an empty Range is every row) and for which Where is true (nil: all of
// them). Range is exact, not a pre-filter: its conditions are not in
// Where, so a DELETE by key range alone drops whole segments unread
// (catalog.Tx.Delete). Where is over the table's columns in table order.
type Delete struct {
	Table  *catalog.TableInfo
	Range  []KeyBound
	Where  expr.Expr
	Params []sqltypes.Type
}

// Update is UPDATE Table SET ... [WHERE ...]: the rows Range and Where
// choose (as for Delete) are replaced by Set's values, one expression
// per table column over the old row (a column not assigned is the old
// value, a Column reference). Assigned marks the columns SET names.
type Update struct {
	Table    *catalog.TableInfo
	Range    []KeyBound
	Where    expr.Expr
	Set      []expr.Expr
	Assigned []bool
	Params   []sqltypes.Type
}

// Truncate is TRUNCATE [TABLE] names: every table exists (checked before
// any is emptied).
type Truncate struct {
	Tables []*catalog.TableInfo
}

func (p *Delete) Tag() string                 { return "DELETE" }
func (p *Update) Tag() string                 { return "UPDATE" }
func (*Truncate) Tag() string                 { return "TRUNCATE TABLE" }
func (p *Delete) Shape() Shape                { return Shape{Params: p.Params} }
func (p *Update) Shape() Shape                { return Shape{Params: p.Params} }
func (*Truncate) Shape() Shape                { return Shape{} }
func (*Truncate) Reads() []*catalog.TableInfo { return nil }

// Reads of DELETE and UPDATE are the target (read to find the rows) and
// the tables their subqueries read.
func (p *Delete) Reads() []*catalog.TableInfo {
	return exprReads([]*catalog.TableInfo{p.Table}, append(boundExprs(p.Range), p.Where)...)
}

func (p *Update) Reads() []*catalog.TableInfo {
	return exprReads([]*catalog.TableInfo{p.Table}, append(append(boundExprs(p.Range), p.Where), p.Set...)...)
}

func boundExprs(bs []KeyBound) []expr.Expr {
	out := make([]expr.Expr, len(bs))
	for i, b := range bs {
		out[i] = b.Value
	}
	return out
}

// exprReads appends the tables the subqueries of es scan.
func exprReads(out []*catalog.TableInfo, es ...expr.Expr) []*catalog.TableInfo {
	for _, e := range es {
		expr.Walk(e, func(x expr.Expr) bool {
			if s, ok := x.(*expr.Subquery); ok {
				if n, ok := s.Plan.(Node); ok {
					out = scans(out, n)
				}
			}
			return true
		})
	}
	return out
}

// dmlTarget resolves the single table of UPDATE or DELETE and its scope.
func (b *binder) dmlTarget(refs *ast.TableRefsClause, verb string) (*catalog.TableInfo, *scope, error) {
	if refs == nil || refs.TableRefs == nil || refs.TableRefs.Right != nil {
		return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s of several tables is not supported", verb)
	}
	ts, ok := refs.TableRefs.Left.(*ast.TableSource)
	var tn *ast.TableName
	if ok {
		tn, ok = ts.Source.(*ast.TableName)
	}
	if !ok {
		return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s target must be a table", verb)
	}
	info, err := b.table(tn.Schema.O, tn.Name.O, verbs[verb])
	if err != nil {
		return nil, nil, err
	}
	alias := ts.AsName.O
	if alias == "" {
		alias = info.Name
	}
	cols := make([]Column, len(info.Columns))
	for i, c := range info.Columns {
		cols[i] = Column{Name: c.Name, Table: alias, Type: c.Type, Nullable: !c.NotNull}
	}
	return info, newScope(alias, cols), nil
}

var verbs = map[string]string{"DELETE": "DELETE FROM", "UPDATE": "UPDATE"}

// where binds a DELETE or UPDATE's WHERE over the target and splits off
// the bounds on its first ordering column.
func (b *binder) where(info *catalog.TableInfo, sc *scope, w ast.ExprNode) ([]KeyBound, expr.Expr, error) {
	if w == nil {
		return nil, nil, nil
	}
	cond, err := b.bindExpr(w, &exprCtx{sc: sc, clause: "WHERE"})
	if err != nil {
		return nil, nil, err
	}
	if cond, err = b.boolClause(cond, w, "WHERE"); err != nil {
		return nil, nil, err
	}
	bounds, rest := keyBounds(info, cond)
	return bounds, rest, nil
}

// keyBounds splits the conjuncts `key op constant` on info's first
// ordering column off cond. They select exactly the rows the catalog's
// range selects: NULL keys match neither, and the catalog orders values
// as comparisons do (NaN above every number, text bytewise).
func keyBounds(info *catalog.TableInfo, cond expr.Expr) ([]KeyBound, expr.Expr) {
	if len(info.OrderKeys) == 0 || cond == nil {
		return nil, cond
	}
	key := info.OrderKeys[0]
	kt := info.Columns[key].Type
	var bounds []KeyBound
	var rest []expr.Expr
	for _, c := range expr.Conjuncts(cond) {
		bin, ok := c.(*expr.Binary)
		if ok && bin.Op.IsComparison() && bin.Op != expr.Ne {
			op, col, val := bin.Op, bin.L, bin.R
			if _, isCol := col.(*expr.Column); !isCol {
				op, col, val = flipCmp(op), bin.R, bin.L
			}
			if cc, isCol := col.(*expr.Column); isCol && cc.Index == key && val.Type() == kt && constant(val) {
				bounds = append(bounds, KeyBound{Op: op, Value: val})
				continue
			}
		}
		rest = append(rest, c)
	}
	if len(rest) == 0 {
		return bounds, nil
	}
	return bounds, expr.AndAll(rest...)
}

// constant reports an expression whose value is the same for every row of
// a statement: no column, outer reference or subquery, nothing volatile.
func constant(e expr.Expr) bool {
	ok := true
	expr.Walk(e, func(x expr.Expr) bool {
		switch x := x.(type) {
		case *expr.Column, *expr.OuterRef, *expr.Subquery:
			ok = false
		case *expr.Func:
			if isVolatile(x) {
				ok = false
			}
		}
		return ok
	})
	return ok
}

func (b *binder) delete(x *ast.DeleteStmt) (Plan, error) {
	if x.IsMultiTable || x.Order != nil || x.Limit != nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "this form of DELETE is not supported")
	}
	env, err := b.withEnv(x.With, nil)
	if err != nil {
		return nil, err
	}
	b.env = env
	info, sc, err := b.dmlTarget(x.TableRefs, "DELETE")
	if err != nil {
		return nil, err
	}
	bounds, where, err := b.where(info, sc, x.Where)
	if err != nil {
		return nil, err
	}
	return &Delete{Table: info, Range: bounds, Where: where, Params: b.finishParams()}, nil
}

func (b *binder) update(x *ast.UpdateStmt) (Plan, error) {
	if x.MultipleTable || x.Order != nil || x.Limit != nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "this form of UPDATE is not supported")
	}
	env, err := b.withEnv(x.With, nil)
	if err != nil {
		return nil, err
	}
	b.env = env
	info, sc, err := b.dmlTarget(x.TableRefs, "UPDATE")
	if err != nil {
		return nil, err
	}
	p := &Update{Table: info, Set: make([]expr.Expr, len(info.Columns)), Assigned: make([]bool, len(info.Columns))}
	for i, c := range info.Columns {
		p.Set[i] = &expr.Column{Index: i, Name: c.Name, T: c.Type}
	}
	for i, a := range x.List {
		pos := 0
		if i < len(b.st.SetPos) {
			pos = b.st.SetPos[i]
		}
		if a.Column.Table.O != "" {
			// SET t.a = ...: PostgreSQL reads t as the column and a as a
			// field of it (a composite type); there are none here.
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", a.Column.Table.O, info.Name).
				WithPosition(pos)
		}
		name := a.Column.Name.O
		ci := -1
		for i, c := range info.Columns {
			if c.Name == name {
				ci = i
			}
		}
		if ci < 0 {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", name, info.Name).
				WithPosition(pos)
		}
		if p.Assigned[ci] {
			return nil, sqlerr.New(sqlerr.SyntaxError, "multiple assignments to same column \"%s\"", name)
		}
		p.Assigned[ci] = true
		col := info.Columns[ci]
		var e expr.Expr
		if _, ok := a.Expr.(*ast.DefaultExpr); ok {
			if e, err = defaultValue(col); err != nil {
				return nil, err
			}
		} else {
			if e, err = b.bindExpr(a.Expr, &exprCtx{sc: sc, clause: "UPDATE"}); err != nil {
				return nil, err
			}
			if e, err = b.assign(e, col.Type, a.Expr, "column \""+col.Name+"\""); err != nil {
				return nil, err
			}
		}
		p.Set[ci] = e
	}
	if p.Range, p.Where, err = b.where(info, sc, x.Where); err != nil {
		return nil, err
	}
	p.Params = b.finishParams()
	return p, nil
}

// defaultValue is a column's DEFAULT as a literal of its type (NULL
// without one).
func defaultValue(c catalog.Column) (expr.Expr, error) {
	if c.Default == nil {
		return &expr.Literal{T: c.Type}, nil
	}
	// Defaults are stored in the text form of the default settings (UTC,
	// ISO), which reads back the same value whatever the session's.
	return decodeLiteral(c.Type, *c.Default, sqltypes.DefaultOptions())
}

func (b *binder) truncate(names []TableRef) (Plan, error) {
	p := &Truncate{}
	for _, n := range names {
		info, err := b.tableOnly(n, "truncate")
		if err != nil {
			return nil, err
		}
		p.Tables = append(p.Tables, info)
	}
	return p, nil
}

// TableRef is a possibly schema-qualified name and its 1-based position.
type TableRef struct {
	Schema, Name string
	Pos          int
}

// tableOnly resolves a table that TRUNCATE or ALTER TABLE names: a view
// is 42809 "... is not a table", as in PostgreSQL.
func (b *binder) tableOnly(n TableRef, _ string) (*catalog.TableInfo, error) {
	if err := writeTarget(n.Schema, n.Name); err != nil {
		return nil, err
	}
	r, err := b.relation(n.Schema, n.Name)
	if err != nil {
		return nil, err
	}
	if r.View != nil {
		return nil, sqlerr.New(codeWrongObjectType, "\"%s\" is not a table", n.Name)
	}
	return r.Table, nil
}
