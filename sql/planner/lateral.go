package planner

import (
	"strings"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/ordering"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// LATERAL.
//
// The right item of a join is bound with the left items' scope as an
// enclosing level (an outerScope), as a correlated subquery is: for a
// LATERAL subquery or a function in FROM (implicitly lateral, as in
// Postgres) a reference to a left column becomes an OuterRef inside the
// right plan and an entry of the LateralJoin's Args. For any other item
// the level is invisible: a reference to it is Postgres' 42P01 "invalid
// reference to FROM-clause entry", and lookup goes on to the enclosing
// query levels. A right item that makes no lateral reference is an
// ordinary join.

// LateralJoin is left JOIN LATERAL right ON Cond (INNER or LEFT): for each
// left row, Right runs with its OuterRefs bound to Args evaluated over the
// row (lowering caches the results per distinct Args values). Output: the
// left columns, then the right ones; in left order, each row's matches in
// Right's order.
type LateralJoin struct {
	Left, Right Node
	// Args are the outer values Right reads, over Left's columns
	// (OuterRef{N} reads Args[N-1]).
	Args []expr.Expr
	Kind JoinKind  // JoinInner or JoinLeft
	Cond expr.Expr // over the joined row; nil is ON true
	cols []Column
}

var _ Node = (*LateralJoin)(nil)

func (j *LateralJoin) Schema() []Column { return j.cols }
func (j *LateralJoin) Children() []Node { return []Node{j.Left, j.Right} }

// Ordering is the left input's: each left row's matches come together,
// in place.
func (j *LateralJoin) Ordering() ordering.Props         { return j.Left.Ordering() }
func (j *LateralJoin) RequiredOrdering() []ordering.Lex { return []ordering.Lex{nil, nil} }
func (j *LateralJoin) PreservesOrder() []bool           { return []bool{true, false} }

func (j *LateralJoin) describe() string {
	s := "LateralJoin " + j.Kind.String()
	var ps []string
	for i, a := range j.Args {
		_ = i
		ps = append(ps, exprSQL(a))
	}
	s += " params (" + strings.Join(ps, ", ") + ")"
	if j.Cond != nil {
		s += " filter " + exprSQL(j.Cond)
	}
	return s
}

// lateralItem reports whether a FROM item may refer to the items before
// it: a LATERAL subquery, or a function in FROM.
func lateralItem(n ast.ResultSetNode) bool {
	ts, ok := n.(*ast.TableSource)
	if !ok {
		return false
	}
	if ts.Lateral {
		return true
	}
	if s, ok := ts.Source.(*ast.SelectStmt); ok {
		_, _, fn := seriesCall(s)
		return fn
	}
	return false
}

// bindJoinRight binds the right item of a join with the left items as an
// enclosing level (see the top of this file). It returns the level, whose
// args are the lateral references made.
func (b *binder) bindJoinRight(right ast.ResultSetNode, l *rel, kind JoinKind, env *cteEnv) (*rel, *outerScope, error) {
	o := &outerScope{ctx: &exprCtx{sc: l.sc, clause: "FROM"}, parent: b.outer}
	if !lateralItem(right) {
		o.invisible = true
	} else if kind == JoinRight || kind == JoinFull {
		o.badKind = true
	}
	b.outer = o
	r, err := b.bindResultSet(right, env)
	b.outer = o.parent
	return r, o, err
}

// invalidFromRef is Postgres' error for a reference to a FROM item the
// referring item cannot see (o is the level that has it).
func (b *binder) invalidFromRef(x *ast.ColumnNameExpr, o *outerScope) error {
	table, name := x.Name.Table.O, x.Name.Name.O
	if o.badKind {
		if table == "" {
			if c, err := o.ctx.sc.lookup("", name, 0); err == nil {
				table = c.table
			}
		}
		return sqlerr.New(sqlerr.InvalidColumnReference, "invalid reference to FROM-clause entry for table \"%s\"", table).WithPosition(b.pos(x)).
			WithDetail("The combining JOIN type must be INNER or LEFT for a LATERAL reference.")
	}
	if table == "" {
		c, _ := o.ctx.sc.lookup("", name, 0)
		return sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" does not exist", name).WithPosition(b.pos(x)).
			WithHint("There is a column named \"%s\" in table \"%s\", but it cannot be referenced from this part of the query.", name, c.table)
	}
	return sqlerr.New(sqlerr.UndefinedTable, "invalid reference to FROM-clause entry for table \"%s\"", table).WithPosition(b.pos(x)).
		WithHint("There is an entry for table \"%s\", but it cannot be referenced from this part of the query.", table)
}

// visibleIn reports whether x names a column of level o's FROM items.
func (b *binder) visibleIn(x *ast.ColumnNameExpr, o *outerScope) bool {
	_, err := o.ctx.sc.resolve(b, x)
	return err == nil || sqlerr.Code(err) == sqlerr.AmbiguousColumn
}

// lateralJoin makes the join of l and a right item r that refers to it
// through level o.
func (b *binder) lateralJoin(j *ast.Join, l, r *rel, o *outerScope, kind JoinKind, sc *scope, out *rel) error {
	if len(j.Using) > 0 {
		return sqlerr.New(sqlerr.FeatureNotSupported, "JOIN LATERAL ... USING is not supported").WithHint("Use ON with the equalities.")
	}
	if kind == JoinCross {
		kind = JoinInner
	}
	lj := &LateralJoin{Left: l.node, Right: r.node, Args: o.args, Kind: kind, cols: joinColsOf(l.node.Schema(), r.node.Schema(), kind)}
	if j.On != nil {
		cond, err := b.bindExpr(j.On.Expr, &exprCtx{sc: sc, clause: "JOIN conditions"})
		if err != nil {
			return err
		}
		if cond, err = b.coerce(cond, sqltypes.BoolType, j.On.Expr, "argument of JOIN/ON"); err != nil {
			return err
		}
		if lit, ok := cond.(*expr.Literal); !ok || lit.Value != true {
			lj.Cond = cond
		}
	} else if kind != JoinInner {
		return sqlerr.New(sqlerr.SyntaxError, "%s JOIN requires an ON or USING condition", kind)
	}
	out.node = lj
	return nil
}

// pruneLateral keeps the left columns needed above, by Args and by Cond,
// and the right columns needed above and by Cond.
func pruneLateral(j *LateralJoin, need []bool) (Node, []int) {
	lw := len(j.Left.Schema())
	ln := append([]bool(nil), need[:lw]...)
	rn := append([]bool(nil), need[lw:]...)
	for _, a := range j.Args {
		orInto(ln, a)
	}
	left, right, lm, _, m := pruneSides(j.Left, j.Right, ln, rn, j.Cond)
	for i := range j.Args {
		j.Args[i] = remap(j.Args[i], lm)
	}
	if j.Cond != nil {
		j.Cond = remap(j.Cond, m)
	}
	j.Left, j.Right = left, right
	j.cols = joinColsOf(left.Schema(), right.Schema(), j.Kind)
	return j, m
}

// dmlFrom returns the join query of UPDATE ... FROM, which the parser
// turned into the WHERE EXISTS (SELECT 1 FROM items [WHERE c]) that
// selects the rows to update (parser.Statement.DMLFrom); nil otherwise.
func (b *binder) dmlFrom(where ast.ExprNode) *ast.SelectStmt {
	if !b.st.DMLFrom {
		return nil
	}
	ex, ok := where.(*ast.ExistsSubqueryExpr)
	if !ok {
		return nil
	}
	q, ok := subQuery(ex.Sel)
	if !ok {
		return nil
	}
	sel, _ := q.(*ast.SelectStmt)
	return sel
}

// setFrom binds the value of SET c = e in UPDATE t SET ... FROM items
// WHERE cond: (SELECT e FROM items WHERE cond LIMIT 1) with t as the
// outer level. Every SET runs the same query, so all take their values
// from one joined row, the first found; PostgreSQL too takes one of the
// rows when several match, without saying which.
func (b *binder) setFrom(e ast.ExprNode, from *ast.SelectStmt, sc *scope) (expr.Expr, error) {
	var agg ast.Node
	e.Accept(visitFn(func(n ast.Node) bool {
		switch n.(type) {
		case *ast.SubqueryExpr:
			return false
		case *ast.AggregateFuncExpr, *ast.WindowFuncExpr:
			if agg == nil {
				agg = n
			}
		}
		return true
	}))
	if agg != nil {
		what := "aggregate"
		if _, ok := agg.(*ast.WindowFuncExpr); ok {
			what = "window"
		}
		return nil, sqlerr.New(sqlerr.GroupingError, "%s functions are not allowed in UPDATE", what).WithPosition(b.pos(agg.(ast.ExprNode)))
	}
	q := *from
	q.Fields = &ast.FieldList{Fields: []*ast.SelectField{{Expr: e}}}
	o := &outerScope{ctx: &exprCtx{sc: sc, clause: "UPDATE"}, parent: b.outer}
	b.outer = o
	node, err := b.bindQuery(&q, b.env)
	b.outer = o.parent
	if err != nil {
		return nil, err
	}
	node = &Limit{Input: node, Count: &expr.Literal{Value: int64(1), T: sqltypes.Int8Type}}
	if node, err = optimize(node); err != nil {
		return nil, err
	}
	if err := Validate(node); err != nil {
		return nil, err
	}
	return b.newSub(expr.ScalarSub, node, o, node.Schema()[0].Type), nil
}

// checkDMLFrom applies PostgreSQL's name rules to UPDATE ... FROM and
// DELETE ... USING, which bind the items as a subquery (where an inner
// name would hide the target's): the target named again among the items
// is 42712, and an unqualified column both have is 42702. exprs are the
// expressions that see both (SET values; the WHERE is from's).
func (b *binder) checkDMLFrom(target *scope, alias string, from *ast.SelectStmt, exprs ...ast.ExprNode) error {
	if from.From == nil || from.From.TableRefs == nil {
		return nil
	}
	items, err := b.bindResultSet(from.From.TableRefs, b.env)
	if err != nil {
		return err
	}
	if items.sc.hasTable(alias) {
		return sqlerr.New("42712", "table name \"%s\" specified more than once", alias)
	}
	if from.Where != nil {
		exprs = append(exprs, from.Where)
	}
	var bad *ast.ColumnNameExpr
	visit := visitFn(func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SubqueryExpr:
			return false // its own FROM may hide either
		case *ast.ColumnNameExpr:
			if x.Name.Table.O == "" && bad == nil {
				_, terr := target.lookup("", x.Name.Name.O, 0)
				_, ierr := items.sc.lookup("", x.Name.Name.O, 0)
				if terr == nil && (ierr == nil || sqlerr.Code(ierr) == sqlerr.AmbiguousColumn) {
					bad = x
				}
			}
		}
		return true
	})
	for _, e := range exprs {
		if e == nil {
			continue
		}
		e.Accept(visit)
		if bad != nil {
			return sqlerr.New(sqlerr.AmbiguousColumn, "column reference \"%s\" is ambiguous", bad.Name.Name.O).WithPosition(b.pos(bad))
		}
	}
	return nil
}
