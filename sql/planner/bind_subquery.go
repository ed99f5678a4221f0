package planner

import (
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/functions"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Subqueries in expressions.
//
// A subquery is bound as its own plan (optimized and validated on the
// spot) inside an expr.Subquery. A column the subquery cannot resolve in
// its own FROM clause is looked up in the enclosing query levels (Postgres'
// outer references): it becomes an OuterRef inside the subquery's plan and
// an entry of the Subquery's Args, an expression over the enclosing row.
// Execution (package lower) runs the plan once per distinct Args value.

// outerScope is an enclosing query level while a subquery is bound.
type outerScope struct {
	ctx    *exprCtx
	parent *outerScope
	args   []expr.Expr
	keys   []string
	// invisible: the FROM items left of a non-LATERAL item, which it may
	// not refer to; badKind: those left of a LATERAL item joined by RIGHT
	// or FULL JOIN (lateral.go).
	invisible, badKind bool
}

// arg returns the OuterRef for outer expression e, adding it to Args once.
func (o *outerScope) arg(e expr.Expr, name string) *expr.OuterRef {
	k := e.String()
	for i, have := range o.keys {
		if have == k {
			return &expr.OuterRef{N: i + 1, Name: name, T: e.Type()}
		}
	}
	o.args = append(o.args, e)
	o.keys = append(o.keys, k)
	return &expr.OuterRef{N: len(o.args), Name: name, T: e.Type()}
}

// outerColumn resolves x in the enclosing query levels after it failed
// with err in the current one. It returns err when no level has it, and
// 42803 when the level that has it is grouped by something else.
func (b *binder) outerColumn(x *ast.ColumnNameExpr, err error) (expr.Expr, error) {
	o := b.outer
	if o == nil {
		return nil, err
	}
	switch sqlerr.Code(err) {
	case sqlerr.UndefinedColumn, sqlerr.UndefinedTable:
	default:
		return nil, err
	}
	for o != nil && (o.invisible || o.badKind) {
		if b.visibleIn(x, o) {
			return nil, b.invalidFromRef(x, o) // lateral.go
		}
		o = o.parent
	}
	if o == nil {
		return nil, err
	}
	saved := b.outer
	b.outer = o.parent
	e, err2 := b.bindExpr(x, o.ctx)
	b.outer = saved
	if err2 != nil {
		if sqlerr.Code(err2) == sqlerr.GroupingError && o.ctx.agg != nil {
			col, rerr := o.ctx.agg.from.resolve(b, x)
			if rerr == nil {
				return nil, sqlerr.New(sqlerr.GroupingError, "subquery uses ungrouped column \"%s\" from outer query", col.display()).WithPosition(b.pos(x))
			}
		}
		if sqlerr.Code(err2) == sqlerr.GroupingError {
			return nil, err2
		}
		return nil, err
	}
	name := x.Name.Name.O
	if x.Name.Table.O != "" {
		name = x.Name.Table.O + "." + name
	}
	return o.arg(e, name), nil
}

// subquery binds the query of a subquery expression with c as its
// enclosing level. It returns the optimized plan and the outer scope that
// collected its outer references.
func (b *binder) subquery(q ast.ResultSetNode, c *exprCtx) (Node, *outerScope, error) {
	o := &outerScope{ctx: c, parent: b.outer}
	b.outer = o
	node, err := b.bindQuery(q, b.env)
	b.outer = o.parent
	if err != nil {
		return nil, nil, err
	}
	if node, err = optimize(node); err != nil {
		return nil, nil, err
	}
	if err := Validate(node); err != nil {
		return nil, nil, err
	}
	return node, o, nil
}

func (b *binder) newSub(kind expr.SubqueryKind, plan Node, o *outerScope, t sqltypes.Type) *expr.Subquery {
	b.nsub++
	return &expr.Subquery{Kind: kind, Plan: plan, Args: o.args, T: t, ID: b.nsub}
}

func subQuery(n ast.ExprNode) (ast.ResultSetNode, bool) {
	for {
		p, ok := n.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		n = p.Expr
	}
	s, ok := n.(*ast.SubqueryExpr)
	if !ok {
		return nil, false
	}
	return s.Query, true
}

func (b *binder) oneColumn(plan Node, at ast.ExprNode) error {
	if len(plan.Schema()) != 1 {
		return sqlerr.New(sqlerr.SyntaxError, "subquery must return only one column").WithPosition(b.pos(at))
	}
	return nil
}

// bindSubqueryExpr binds (SELECT ...), EXISTS (SELECT ...) and
// x op ANY/ALL (SELECT ...).
func (b *binder) bindSubqueryExpr(n ast.ExprNode, c *exprCtx) (expr.Expr, error) {
	switch x := n.(type) {
	case *ast.SubqueryExpr:
		if x.Exists {
			return b.bindExists(x.Query, false, c)
		}
		plan, o, err := b.subquery(x.Query, c)
		if err != nil {
			return nil, err
		}
		if err := b.oneColumn(plan, x); err != nil {
			return nil, err
		}
		return b.newSub(expr.ScalarSub, plan, o, plan.Schema()[0].Type), nil
	case *ast.ExistsSubqueryExpr:
		q, ok := subQuery(x.Sel)
		if !ok {
			return nil, sqlerr.New(sqlerr.SyntaxError, "syntax error at or near \"EXISTS\"").WithPosition(b.pos(x))
		}
		return b.bindExists(q, x.Not, c)
	case *ast.CompareSubqueryExpr:
		q, ok := subQuery(x.R)
		if !ok {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "this ANY/ALL form is not supported").WithPosition(b.pos(x))
		}
		op, ok := binOps[x.Op]
		if !ok || !op.IsComparison() {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "operator %s is not supported with ANY/ALL", x.Op).WithPosition(b.pos(x))
		}
		return b.bindQuantified(x.L, op, x.All, q, x.R, c)
	}
	return nil, sqlerr.New(sqlerr.InternalError, "planner: %T is not a subquery expression", n)
}

func (b *binder) bindExists(q ast.ResultSetNode, not bool, c *exprCtx) (expr.Expr, error) {
	plan, o, err := b.subquery(q, c)
	if err != nil {
		return nil, err
	}
	var e expr.Expr = b.newSub(expr.ExistsSub, plan, o, sqltypes.BoolType)
	if not {
		e = &expr.Unary{Op: expr.Not, X: e, T: sqltypes.BoolType}
	}
	return e, nil
}

// bindQuantified binds l op ANY/ALL (q): the subquery's plan gets one
// column, `outer(l) op y`, typed with the usual operator resolution.
func (b *binder) bindQuantified(ln ast.ExprNode, op expr.BinaryOp, all bool, q ast.ResultSetNode, at ast.ExprNode, c *exprCtx) (expr.Expr, error) {
	l, err := b.bindExpr(ln, c)
	if err != nil {
		return nil, err
	}
	plan, o, err := b.subquery(q, c)
	if err != nil {
		return nil, err
	}
	if err := b.oneColumn(plan, at); err != nil {
		return nil, err
	}
	y := plan.Schema()[0]
	cmp, err := b.binary(op, o.arg(l, columnName(l)), &expr.Column{Index: 0, Name: y.Name, T: y.Type}, at, ln, at)
	if err != nil {
		return nil, err
	}
	plan = &Project{Input: plan, Exprs: []expr.Expr{cmp}, Cols: []Column{{Name: "?column?", Type: sqltypes.BoolType, Nullable: true}}}
	kind := expr.AnySub
	if all {
		kind = expr.AllSub
	}
	return b.newSub(kind, plan, o, sqltypes.BoolType), nil
}

// bindInSubquery binds x [NOT] IN (SELECT ...) as x = ANY (...).
func (b *binder) bindInSubquery(x *ast.PatternInExpr, c *exprCtx) (expr.Expr, error) {
	q, ok := subQuery(x.Sel)
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "this IN form is not supported").WithPosition(b.pos(x))
	}
	e, err := b.bindQuantified(x.Expr, expr.Eq, false, q, x.Sel, c)
	if err != nil || !x.Not {
		return e, err
	}
	return &expr.Unary{Op: expr.Not, X: e, T: sqltypes.BoolType}, nil
}

// bindArraySubquery binds ARRAY(SELECT x ...): a typed array of x's
// values.
func (b *binder) bindArraySubquery(q ast.ResultSetNode, at ast.ExprNode, c *exprCtx) (expr.Expr, error) {
	plan, o, err := b.subquery(q, c)
	if err != nil {
		return nil, err
	}
	if err := b.oneColumn(plan, at); err != nil {
		return nil, err
	}
	y := plan.Schema()[0]
	if y.Type.Kind == sqltypes.Unknown {
		y.Type = sqltypes.TextType // the subquery's select list reads it as text
	}
	if !arrayElemOK(y.Type) {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "arrays of type %s are not supported", y.Type).WithPosition(b.pos(at))
	}
	return b.newSub(expr.ArraySub, plan, o, sqltypes.ArrayOf(y.Type)), nil
}

// bindArrayCast binds x::type[] (`#arraycast`(x, 'type')) to a typed
// array (bind_array.go).
func (b *binder) bindArrayCast(x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	e, ok, err := b.bindTypedArrayCast(x, c)
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "this array type is not supported").WithPosition(b.pos(x))
	}
	return e, err
}

// bindSubscript binds arr[i] (`#subscript`(arr, i)): on a typed array
// (bind_array.go), or on a text array of the virtual catalog, whose
// element is untyped text that the context types like a string literal
// (attnum = prattrs[s]).
func (b *binder) bindSubscript(x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	arr, err := b.bindExpr(x.Args[0], c)
	if err != nil {
		return nil, err
	}
	if arr.Type().IsArray() {
		return b.bindArrayElement(arr, x, c) // bind_array.go
	}
	if t := arr.Type(); !t.IsString() && t.Kind != sqltypes.Unknown {
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "cannot subscript type %s because it does not support subscripting", t).WithPosition(b.pos(x.Args[0]))
	}
	if arr, err = b.toText(arr, x.Args[0]); err != nil {
		return nil, err
	}
	idx, err := b.bindExpr(x.Args[1], c)
	if err != nil {
		return nil, err
	}
	if idx, err = b.coerce(idx, sqltypes.Int8Type, x.Args[1], "array subscript"); err != nil {
		return nil, err
	}
	return &expr.Func{Fn: functions.ArraySubscript, Args: []expr.Expr{arr, idx}, T: sqltypes.UnknownType}, nil
}

func unparen(n ast.ExprNode) ast.ExprNode {
	for {
		p, ok := n.(*ast.ParenthesesExpr)
		if !ok {
			return n
		}
		n = p.Expr
	}
}

// NodeSubqueries returns the subquery expressions of n's own expressions
// (not its children's), in the order EXPLAIN prints them.
func NodeSubqueries(n Node) []*expr.Subquery {
	var es []expr.Expr
	switch x := n.(type) {
	case *Filter:
		es = append(es, x.Cond)
	case *Project:
		es = append(es, x.Exprs...)
	case *Aggregate:
		es = append(es, x.GroupBy...)
		for _, a := range x.Aggs {
			es = append(es, a.Args...)
		}
	case *Join:
		es = append(es, x.Residual)
	case *LateralJoin:
		es = append(es, x.Args...)
		es = append(es, x.Cond)
	case *Values:
		for _, r := range x.Rows {
			es = append(es, r...)
		}
	case *Series:
		es = append(es, x.Start, x.Stop, x.Step)
	case *Unnest:
		es = append(es, x.Array)
		es = append(es, x.Matches...)
	}
	var out []*expr.Subquery
	for _, e := range es {
		expr.Walk(e, func(x expr.Expr) bool {
			if s, ok := x.(*expr.Subquery); ok {
				out = append(out, s)
			}
			return true
		})
	}
	return out
}
