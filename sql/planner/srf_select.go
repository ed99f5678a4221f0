package planner

import (
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// A set-returning function in the select list (SELECT a, unnest(arr) FROM
// t) yields, for each row of FROM, one output row per row of the
// function, and drops a row for which it yields none (PostgreSQL 10 and
// later). That is the lateral join of FROM with the function in FROM, so
// such a query is bound as SELECT a, f.f FROM t, unnest(t.arr) AS f(f):
// one function, in a query without grouping, aggregates or window
// functions (where PostgreSQL evaluates it after them) and without an
// unqualified * (which would show the function's column). Anything else
// keeps the 0A000 of the call (bind_call.go).

// selectSRFs are the set-returning functions the rewrite moves, by the
// marker that names them in FROM.
var selectSRFs = map[string]string{"unnest": parser.MarkerUnnest, "generate_series": parser.MarkerSeries, "regexp_matches": parser.MarkerRegexpMatches}

// srfItem is the name of the FROM item (and its one column) a moved call
// becomes: not a name a query can write unquoted.
const srfItem = "?srf?"

// moveSelectSRF rewrites s in place as described above when it applies;
// rewriting again finds nothing to move, so binding s twice (a re-planned
// prepared statement) gives the same plan.
func moveSelectSRF(s *ast.SelectStmt) {
	if s.Fields == nil || s.GroupBy != nil || s.Having != nil || hasWindow(s.Fields.Fields, s.OrderBy) {
		return
	}
	var call *ast.FuncCallExpr
	var field *ast.SelectField
	calls := 0
	for _, f := range s.Fields.Fields {
		if f.WildCard != nil && f.WildCard.Table.L == "" {
			return
		}
		if f.Expr == nil {
			continue
		}
		if hasAggregate(f.Expr) {
			return
		}
		f.Expr.Accept(visitFn(func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SubqueryExpr:
				return false
			case *ast.FuncCallExpr:
				if selectSRFs[x.FnName.L] != "" {
					call, field = x, f
					calls++
				}
			}
			return true
		}))
	}
	if calls != 1 {
		return
	}
	marker := &ast.FuncCallExpr{FnName: ast.NewCIStr(selectSRFs[call.FnName.L]), Args: call.Args}
	marker.SetOriginTextPosition(call.OriginTextPosition())
	item := &ast.TableSource{
		Source: &ast.SelectStmt{Kind: ast.SelectStmtKindSelect, Fields: &ast.FieldList{Fields: []*ast.SelectField{
			{Expr: marker, AsName: ast.NewCIStr(srfItem)}}}},
		AsName: ast.NewCIStr(srfItem),
	}
	ref := &ast.ColumnNameExpr{Name: &ast.ColumnName{Table: ast.NewCIStr(srfItem), Name: ast.NewCIStr(srfItem)}}
	ref.SetOriginTextPosition(call.OriginTextPosition())
	if field.Expr == ast.ExprNode(call) {
		if field.AsName.L == "" {
			field.AsName = ast.NewCIStr(call.FnName.L) // Postgres names the column after the function
		}
		field.Expr = ref
	} else {
		n, _ := field.Expr.Accept(replaceNode{from: call, to: ref})
		field.Expr = n.(ast.ExprNode)
	}
	if s.From == nil {
		s.From = &ast.TableRefsClause{TableRefs: &ast.Join{Left: item}}
	} else {
		s.From.TableRefs = &ast.Join{Left: s.From.TableRefs, Right: item, Tp: ast.CrossJoin}
	}
}

// replaceNode replaces one node of a tree.
type replaceNode struct{ from, to ast.Node }

func (r replaceNode) Enter(n ast.Node) (ast.Node, bool) {
	_, sub := n.(*ast.SubqueryExpr)
	return n, sub || n == r.from
}

func (r replaceNode) Leave(n ast.Node) (ast.Node, bool) {
	if n == r.from {
		return r.to, true
	}
	return n, true
}
