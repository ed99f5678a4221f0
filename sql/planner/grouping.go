package planner

import (
	"strings"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// maxGroupingSets is Postgres' bound on the sets one GROUP BY expands to.
const maxGroupingSets = 4096

// setIndexKey is the group key of the set-index column: no bound
// expression prints as it, so nothing in the select list matches it.
const setIndexKey = "\x00grouping set"

// hasGroupingSets reports whether a GROUP BY uses GROUPING SETS, ROLLUP,
// CUBE or () (the parser's markers).
func hasGroupingSets(g *ast.GroupByClause) bool {
	for _, it := range g.Items {
		if f, ok := it.Expr.(*ast.FuncCallExpr); ok && parser.IsGroupingMarker(f.FnName.O) {
			return true
		}
	}
	return false
}

// bindGroupingSets expands a GROUP BY with grouping sets as Postgres
// does: each item is a list of sets (a plain expression is one set of
// itself) and the GROUP BY is their cross product, duplicates kept. The
// distinct expressions become agg.groups, followed by the set-index
// column.
func (b *binder) bindGroupingSets(g *ast.GroupByClause, fields []*ast.SelectField, agg *aggState) error {
	gb := &groupingBinder{b: b, fields: fields, agg: agg}
	sets := [][]int{{}}
	for _, it := range g.Items {
		item, err := gb.item(it.Expr, true)
		if err != nil {
			return err
		}
		if len(sets)*len(item) > maxGroupingSets {
			return sqlerr.New(sqlerr.ProgramLimitExceeded, "too many grouping sets present (maximum %d)", maxGroupingSets).WithPosition(b.pos(it.Expr))
		}
		var next [][]int
		for _, s := range sets {
			for _, t := range item {
				next = append(next, append(append([]int(nil), s...), t...))
			}
		}
		sets = next
	}
	agg.sets = sets
	agg.groups = append(agg.groups, &expr.Column{Index: len(agg.groups), Name: "grouping_set", T: sqltypes.Int4Type})
	agg.groupKey = append(agg.groupKey, setIndexKey)
	return nil
}

type groupingBinder struct {
	b      *binder
	fields []*ast.SelectField
	agg    *aggState
}

// expr binds one grouping expression, returning its index in agg.groups
// (equal expressions share one).
func (gb *groupingBinder) expr(n ast.ExprNode) (int, error) {
	a := gb.agg
	n = gb.b.groupItem(n, gb.fields, a.from)
	e, err := gb.b.bindExpr(n, &exprCtx{sc: a.from, clause: "GROUP BY"})
	if err != nil {
		return 0, err
	}
	if err := gb.b.needEquality(e.Type(), n); err != nil {
		return 0, err
	}
	k := e.String()
	for i, g := range a.groupKey {
		if g == k {
			return i, nil
		}
	}
	a.groups = append(a.groups, e)
	a.groupKey = append(a.groupKey, k)
	return len(a.groups) - 1, nil
}

// element binds an element of ROLLUP, CUBE or GROUPING SETS: a
// parenthesized list groups by all of its expressions together.
func (gb *groupingBinder) element(n ast.ExprNode) ([]int, error) {
	var list []ast.ExprNode
	switch x := n.(type) {
	case *ast.RowExpr:
		list = x.Values
	case *ast.ParenthesesExpr:
		list = []ast.ExprNode{x.Expr}
	default:
		list = []ast.ExprNode{n}
	}
	var out []int
	for _, e := range list {
		i, err := gb.expr(e)
		if err != nil {
			return nil, err
		}
		out = append(out, i)
	}
	return out, nil
}

// item returns the grouping sets one GROUP BY item (or GROUPING SETS
// element, top false) stands for.
func (gb *groupingBinder) item(n ast.ExprNode, top bool) ([][]int, error) {
	f, ok := n.(*ast.FuncCallExpr)
	if !ok || !parser.IsGroupingMarker(f.FnName.O) {
		if top {
			i, err := gb.expr(n)
			return [][]int{{i}}, err
		}
		s, err := gb.element(n)
		return [][]int{s}, err
	}
	var elems [][]int
	if f.FnName.O == parser.MarkerRollup || f.FnName.O == parser.MarkerCube {
		for _, a := range f.Args {
			s, err := gb.element(a)
			if err != nil {
				return nil, err
			}
			elems = append(elems, s)
		}
	}
	switch f.FnName.O {
	case parser.MarkerEmptySet:
		return [][]int{{}}, nil
	case parser.MarkerRollup:
		// ROLLUP (e1, ..., en): (e1..en), (e1..en-1), ..., ().
		var sets [][]int
		for k := len(elems); k >= 0; k-- {
			var s []int
			for _, e := range elems[:k] {
				s = append(s, e...)
			}
			sets = append(sets, s)
		}
		return sets, nil
	case parser.MarkerCube:
		// CUBE (e1, ..., en): every subset, the full one first.
		if len(elems) > 12 {
			return nil, sqlerr.New(sqlerr.ProgramLimitExceeded, "CUBE is limited to 12 elements").WithPosition(gb.b.pos(n))
		}
		var sets [][]int
		for mask := (1 << len(elems)) - 1; mask >= 0; mask-- {
			var s []int
			for i, e := range elems {
				if mask&(1<<(len(elems)-1-i)) != 0 {
					s = append(s, e...)
				}
			}
			sets = append(sets, s)
		}
		return sets, nil
	}
	// GROUPING SETS (...): the union of its elements' sets.
	var sets [][]int
	for _, a := range f.Args {
		s, err := gb.item(a, false)
		if err != nil {
			return nil, err
		}
		sets = append(sets, s...)
		if len(sets) > maxGroupingSets {
			return nil, sqlerr.New(sqlerr.ProgramLimitExceeded, "too many grouping sets present (maximum %d)", maxGroupingSets).WithPosition(gb.b.pos(n))
		}
	}
	return sets, nil
}

// bindGroupingFunc binds grouping(e1, ..., en): a bit mask with bit n-i
// set when ei is not grouped in the row's set. Its arguments must be
// GROUP BY expressions of this query level.
func (b *binder) bindGroupingFunc(f *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	if c.agg == nil {
		switch c.clause {
		case "SELECT", "ORDER BY", "DISTINCT ON":
		default:
			clause := c.clause
			if clause == "" {
				clause = "this context"
			}
			return nil, sqlerr.New(sqlerr.GroupingError, "grouping operations are not allowed in %s", clause).WithPosition(b.pos(f))
		}
	}
	if len(f.Args) == 0 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "syntax error at or near \")\"").WithPosition(b.pos(f))
	}
	if len(f.Args) > 31 {
		return nil, sqlerr.New("54023", "GROUPING must have fewer than 32 arguments").WithPosition(b.pos(f))
	}
	notGrouping := func(a ast.ExprNode) error {
		return sqlerr.New(sqlerr.GroupingError, "arguments to GROUPING must be grouping expressions of the associated query level").WithPosition(b.pos(a))
	}
	if c.agg == nil {
		return nil, notGrouping(f.Args[0])
	}
	a := c.agg
	idx := make([]int, len(f.Args))
	for i, arg := range f.Args {
		e, err := b.bindExpr(arg, &exprCtx{sc: a.from, clause: c.clause})
		if err != nil {
			return nil, err
		}
		idx[i] = -1
		for gi, k := range a.groupKey {
			if k == e.String() {
				idx[i] = gi
				break
			}
		}
		if idx[i] < 0 {
			return nil, notGrouping(arg)
		}
	}
	if a.sets == nil {
		return &expr.Literal{Value: int64(0), T: sqltypes.Int4Type}, nil
	}
	setCol := &expr.Column{Index: len(a.groups) - 1, Name: "grouping_set", T: sqltypes.Int4Type}
	cs := &expr.Case{Operand: setCol, Else: &expr.Literal{Value: int64(0), T: sqltypes.Int4Type}, T: sqltypes.Int4Type}
	for si, set := range a.sets {
		in := map[int]bool{}
		for _, g := range set {
			in[g] = true
		}
		var mask int64
		for _, g := range idx {
			mask <<= 1
			if !in[g] {
				mask |= 1
			}
		}
		if mask != 0 {
			cs.Whens = append(cs.Whens, expr.When{Cond: &expr.Literal{Value: int64(si), T: sqltypes.Int4Type}, Result: &expr.Literal{Value: mask, T: sqltypes.Int4Type}})
		}
	}
	if len(cs.Whens) == 0 {
		return cs.Else, nil
	}
	return cs, nil
}

// explainSets renders grouping sets over the GROUP BY expressions.
func explainSets(groups []expr.Expr, sets [][]int) string {
	var parts []string
	for _, s := range sets {
		var es []string
		for _, g := range s {
			es = append(es, exprSQL(groups[g]))
		}
		parts = append(parts, "("+strings.Join(es, ", ")+")")
	}
	return strings.Join(parts, ", ")
}
