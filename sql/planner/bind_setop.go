package planner

import (
	"fmt"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/ordering"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// bindSetOpr binds a chain of UNION, INTERSECT and EXCEPT [ALL] as
// Postgres does: INTERSECT binds tighter than UNION and EXCEPT, which are
// left-associative among themselves; a parenthesized branch is a unit.
//
// A run of UNION branches becomes one UnionAll whose inputs are cast
// once, when the run ends, to the column types resolved pairwise left to
// right (as Postgres resolves them), under a Distinct if a UNION joined
// any of them; a UNION ALL after a UNION, or an EXCEPT, ends the run.
// Casting each time a branch is added would be quadratic, nesting a
// Distinct per UNION too deep. INTERSECT and EXCEPT are SetOp nodes of
// two inputs.
func (b *binder) bindSetOpr(list *ast.SetOprSelectList, ob *ast.OrderByClause, lim *ast.Limit, env *cteEnv) (Node, error) {
	// terms are the operands of UNION/EXCEPT: INTERSECT chains folded.
	var terms []Node
	var ops []ast.SetOprType // ops[i] joins terms[i] and terms[i+1]
	what := "a UNION result"
	// Each INTERSECT or EXCEPT nests the plan one level deeper (every
	// later pass recurses through it): they count against MaxDepth.
	entered := 0
	defer func() {
		for ; entered > 0; entered-- {
			b.depth.Leave()
		}
	}()
	nest := func() error {
		if err := b.depth.Enter(); err != nil {
			return err
		}
		entered++
		return nil
	}
	for i, sel := range list.Selects {
		n, err := b.bindQuery(sel, env)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			terms = append(terms, n)
			continue
		}
		var op *ast.SetOprType
		switch x := sel.(type) {
		case *ast.SelectStmt:
			op = x.AfterSetOperator
		case *ast.SetOprSelectList:
			op = x.AfterSetOperator
		}
		if op == nil {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "this set operation is not supported")
		}
		switch *op {
		case ast.Intersect, ast.IntersectAll:
			if i == 1 {
				what = "an INTERSECT result"
			}
			if err := nest(); err != nil {
				return nil, err
			}
			last := len(terms) - 1
			if terms[last], err = b.setOp(Intersect, *op == ast.IntersectAll, terms[last], n); err != nil {
				return nil, err
			}
			continue
		case ast.Except, ast.ExceptAll:
			if i == 1 {
				what = "an EXCEPT result"
			}
		case ast.Union, ast.UnionAll:
		default:
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s is not supported", op.String())
		}
		terms = append(terms, n)
		ops = append(ops, *op)
	}
	var run unionRun
	run.start(terms[0])
	for i, n := range terms[1:] {
		op := ops[i]
		if op == ast.Except || op == ast.ExceptAll {
			if err := nest(); err != nil {
				return nil, err
			}
			acc, err := b.finishUnion(&run)
			if err != nil {
				return nil, err
			}
			if acc, err = b.setOp(Except, op == ast.ExceptAll, acc, n); err != nil {
				return nil, err
			}
			run.start(acc)
			continue
		}
		if op == ast.UnionAll && run.distinct {
			acc, err := b.finishUnion(&run)
			if err != nil {
				return nil, err
			}
			run.start(acc)
		}
		if err := run.add(n, "UNION"); err != nil {
			return nil, err
		}
		if op == ast.Union {
			// Distinct over everything so far, applied when the run
			// ends: one Distinct for a chain of UNIONs, not one nested
			// per UNION.
			run.distinct = true
		}
	}
	acc, err := b.finishUnion(&run)
	if err != nil {
		return nil, err
	}
	if err := b.setOpEquality(list, acc); err != nil {
		return nil, err
	}
	acc, err = b.sortOutputs(acc, ob, what)
	if err != nil {
		return nil, err
	}
	return b.limit(acc, lim)
}

// setOpEquality refuses a UNION, INTERSECT or EXCEPT (ALL or not, except
// UNION ALL) of a type without equality, as PostgreSQL does, at the first
// branch's select-list item.
func (b *binder) setOpEquality(list *ast.SetOprSelectList, acc Node) error {
	dedups := false
	for _, sel := range list.Selects[1:] {
		var op *ast.SetOprType
		switch x := sel.(type) {
		case *ast.SelectStmt:
			op = x.AfterSetOperator
		case *ast.SetOprSelectList:
			op = x.AfterSetOperator
		}
		if op != nil && *op != ast.UnionAll {
			dedups = true
		}
	}
	if !dedups {
		return nil
	}
	cols := acc.Schema()
	var fields []*ast.SelectField
	if first, ok := list.Selects[0].(*ast.SelectStmt); ok && first.Fields != nil && len(first.Fields.Fields) == len(cols) {
		fields = first.Fields.Fields
	}
	for i, c := range cols {
		var at ast.ExprNode
		if fields != nil {
			at = fields[i].Expr
		}
		if err := b.needEquality(c.Type, at); err != nil {
			return err
		}
	}
	return nil
}

// setOp is l INTERSECT|EXCEPT [ALL] r, both sides cast to the column
// types resolved as for UNION.
func (b *binder) setOp(kind SetOpKind, all bool, l, r Node) (Node, error) {
	var run unionRun
	run.start(l)
	if err := run.add(r, kind.String()); err != nil {
		return nil, err
	}
	types := make([]sqltypes.Type, len(run.cols))
	for i, c := range run.cols {
		types[i] = c.Type
	}
	l, err := b.castTo(l, types)
	if err != nil {
		return nil, err
	}
	if r, err = b.castTo(r, types); err != nil {
		return nil, err
	}
	return &SetOp{Kind: kind, All: all, Left: l, Right: r, Cols: run.cols}, nil
}

// sortOutputs applies an ORDER BY that may only name output columns (by
// name or position), as on a UNION or VALUES result.
func (b *binder) sortOutputs(acc Node, ob *ast.OrderByClause, what string) (Node, error) {
	if ob == nil {
		return acc, nil
	}
	cols := acc.Schema()
	var keys ordering.Lex
	for _, it := range ob.Items {
		idx := -1
		switch x := it.Expr.(type) {
		case *ast.PositionExpr:
			idx = x.N - 1
			if x.P != nil || idx < 0 || idx >= len(cols) {
				return nil, sqlerr.New(sqlerr.InvalidColumnReference, "ORDER BY position %d is not in select list", x.N).WithPosition(b.pos(x))
			}
		case *ast.ColumnNameExpr:
			if x.Name.Table.O == "" {
				for i, c := range cols {
					if c.Name == x.Name.Name.O {
						idx = i
						break
					}
				}
			}
		}
		if idx < 0 {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "ORDER BY on %s must name an output column", what).WithPosition(b.pos(it.Expr))
		}
		nf, ok := b.st.NullsFirst[it]
		if !ok {
			nf = it.Desc
		}
		keys = append(keys, ordering.Key{Col: idx, Desc: it.Desc, NullsFirst: nf})
	}
	return &Sort{Input: acc, Keys: keys}, nil
}

// bindValues binds VALUES (...), (...) used as a query: columns column1,
// column2, ... with each column's type resolved across the rows as UNION
// resolves them (untyped literals alone: text).
func (b *binder) bindValues(s *ast.SelectStmt) (Node, error) {
	v := &Values{}
	var at [][]ast.ExprNode
	for _, row := range s.Lists {
		var out []expr.Expr
		for _, e := range row.Values {
			be, err := b.bindExpr(e, &exprCtx{sc: &scope{}, clause: "VALUES"})
			if err != nil {
				return nil, err
			}
			out = append(out, be)
		}
		if len(v.Rows) > 0 && len(out) != len(v.Rows[0]) {
			var pos int
			if len(row.Values) > 0 {
				pos = b.pos(row.Values[0])
			}
			return nil, sqlerr.New(sqlerr.SyntaxError, "VALUES lists must all be the same length").WithPosition(pos)
		}
		v.Rows = append(v.Rows, out)
		at = append(at, row.Values)
	}
	if len(v.Rows) == 0 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "syntax error at or near \")\"")
	}
	for c := range v.Rows[0] {
		col := make([]expr.Expr, len(v.Rows))
		cat := make([]ast.ExprNode, len(v.Rows))
		for r := range v.Rows {
			col[r], cat[r] = v.Rows[r][c], at[r][c]
		}
		t, err := b.unify(col, cat, "VALUES")
		if err != nil {
			return nil, err
		}
		for r := range v.Rows {
			if v.Rows[r][c], err = b.coerce(v.Rows[r][c], t, cat[r], "VALUES"); err != nil {
				return nil, err
			}
		}
		v.Cols = append(v.Cols, Column{Name: fmt.Sprintf("column%d", c+1), Type: t, Nullable: true})
	}
	node, err := b.sortOutputs(v, s.OrderBy, "a VALUES result")
	if err != nil {
		return nil, err
	}
	return b.limit(node, s.Limit)
}

// unionRun is a run of UNION ALL branches being bound: the inputs and
// the result columns resolved so far.
type unionRun struct {
	inputs   []Node
	cols     []Column
	distinct bool // a UNION (not ALL) joined the run
}

func (r *unionRun) start(n Node) {
	r.distinct = false
	r.inputs = []Node{n}
	r.cols = r.cols[:0:0]
	for _, c := range n.Schema() {
		r.cols = append(r.cols, Column{Name: c.Name, Type: c.Type, Nullable: c.Nullable})
	}
}

// add appends a branch, resolving each column's type with the type so
// far; op names the set operation in errors.
func (r *unionRun) add(n Node, op string) error {
	nc := n.Schema()
	if len(r.cols) != len(nc) {
		return sqlerr.New(sqlerr.SyntaxError, "each %s query must have the same number of columns", op)
	}
	for i := range r.cols {
		c := &r.cols[i]
		t, ok := commonType(c.Type, nc[i].Type)
		if !ok {
			return errDatatype(0, "%s types %s and %s cannot be matched", op, c.Type, nc[i].Type)
		}
		if t.Kind == sqltypes.Unknown {
			t = sqltypes.TextType
		}
		c.Type, c.Nullable = t, c.Nullable || nc[i].Nullable
	}
	r.inputs = append(r.inputs, n)
	return nil
}

// finishUnion is the run's node: its one input, or a UnionAll of all
// inputs converted to the resolved types, under a Distinct for a UNION.
func (b *binder) finishUnion(r *unionRun) (Node, error) {
	if len(r.inputs) == 1 {
		return r.inputs[0], nil
	}
	if r.distinct {
		r.distinct = false
		u, err := b.finishUnion(r)
		if err != nil {
			return nil, err
		}
		return &Distinct{Input: u}, nil
	}
	types := make([]sqltypes.Type, len(r.cols))
	for i, c := range r.cols {
		types[i] = c.Type
	}
	u := &UnionAll{Cols: r.cols}
	for _, in := range r.inputs {
		if err := b.tick.Tick(); err != nil {
			return nil, err
		}
		conv, err := b.castTo(in, types)
		if err != nil {
			return nil, err
		}
		u.Inputs = append(u.Inputs, conv)
	}
	return u, nil
}

// castTo projects n to the given column types when any differs.
func (b *binder) castTo(n Node, types []sqltypes.Type) (Node, error) {
	cols := n.Schema()
	same := true
	for i, c := range cols {
		same = same && c.Type == types[i]
	}
	if same {
		return n, nil
	}
	p := &Project{Input: n}
	for i, c := range cols {
		e, err := b.coerce(&expr.Column{Index: i, Name: c.Name, T: c.Type}, types[i], nil, "UNION column")
		if err != nil {
			return nil, err
		}
		p.Exprs = append(p.Exprs, e)
		c.Type = types[i]
		p.Cols = append(p.Cols, c)
	}
	return p, nil
}
