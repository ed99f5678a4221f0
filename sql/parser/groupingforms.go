package parser

import "github.com/pingcap/tidb/pkg/parser/ast"

// Markers of the grouping-set forms of GROUP BY. TiDB has no grammar for
// GROUPING SETS, ROLLUP, CUBE or the empty grouping set (), so the
// pre-pass writes them as calls the planner expands:
//
//	GROUP BY GROUPING SETS ((a, b), a, ())  ->  GROUP BY `#grouping_sets`((a, b), a, `#empty`())
//	GROUP BY x, ROLLUP (a, b)               ->  GROUP BY x, `#rollup`(a, b)
//
// A parenthesized list inside them is TiDB's row expression. Users cannot
// write the markers (the pre-lexer rejects backticks).
const (
	MarkerGroupingSets = "#grouping_sets"
	MarkerRollup       = "#rollup"
	MarkerCube         = "#cube"
	MarkerEmptySet     = "#empty"
)

// groupingStops are keywords that end a search backwards for the GROUP BY
// a token belongs to.
var groupingStops = map[string]bool{
	"select": true, "from": true, "where": true, "having": true, "order": true, "limit": true,
	"window": true, "union": true, "except": true, "intersect": true, "on": true, "join": true,
	"values": true, "offset": true, "fetch": true, "set": true, "returning": true, "partition": true,
}

// groupingItemStart reports whether toks[i] starts an item of a GROUP BY
// list or of a grouping-set construct (whose open parens are in opens).
// commas memoizes the answer by the index of the comma before the item,
// so a long list costs one walk back, not one per item.
func groupingItemStart(toks []token, i int, opens map[int]bool, commas map[int]bool) bool {
	if i == 0 {
		return false
	}
	prev := toks[i-1]
	switch {
	case prev.isOp("("):
		return opens[i-1]
	case prev.is("by"):
		return i > 1 && toks[i-2].is("group")
	case !prev.isOp(","):
		return false
	}
	if r, ok := commas[i-1]; ok {
		return r
	}
	r := false
walk:
	for k := i - 2; k >= 0; k-- {
		t := toks[k]
		switch {
		case t.isOp(")"):
			p := partner(toks, k)
			if p < 0 {
				break walk
			}
			k = p
		case t.isOp(","):
			if m, ok := commas[k]; ok {
				r = m
				break walk
			}
		case t.isOp("("):
			r = opens[k]
			break walk
		case t.is("by"):
			r = k > 0 && toks[k-1].is("group")
			break walk
		case t.kind == tkIdent && groupingStops[t.val]:
			break walk
		}
	}
	commas[i-1] = r
	return r
}

// groupingForm rewrites the grouping-set construct starting at toks[i], if
// there is one, and returns the index of its last rewritten token.
func (p *pgPass) groupingForm(i int) (int, bool) {
	toks, e := p.toks, p.e
	if p.groupOpens == nil {
		p.groupOpens, p.groupCommas = map[int]bool{}, map[int]bool{}
	}
	t := toks[i]
	next := func(k int, w string) bool { return k < len(toks) && (toks[k].is(w) || toks[k].isOp(w)) }
	switch {
	case t.is("grouping") && next(i+1, "sets") && next(i+2, "(") && groupingItemStart(toks, i, p.groupOpens, p.groupCommas):
		e.replace(i, "`"+MarkerGroupingSets+"`")
		e.drop(i + 1)
		p.groupOpens[i+2] = true
		return i + 2, true
	case (t.is("rollup") || t.is("cube")) && next(i+1, "(") && groupingItemStart(toks, i, p.groupOpens, p.groupCommas):
		m := map[string]string{"rollup": MarkerRollup, "cube": MarkerCube}[t.val]
		e.replace(i, "`"+m+"`")
		p.groupOpens[i+1] = true
		return i + 1, true
	case t.isOp("(") && next(i+1, ")") && groupingItemStart(toks, i, p.groupOpens, p.groupCommas):
		e.replace(i, "`"+MarkerEmptySet+"`(")
		return i + 1, true
	}
	return i, false
}

// groupingMarkers returns the grouping-set marker calls that stand where
// the grammar allows them: as GROUP BY items or inside one another. Any
// other (GROUP BY ROLLUP (a) + 1) is a syntax error at the user's word.
func groupingMarkers(n ast.Node) map[*ast.FuncCallExpr]bool {
	ok := map[*ast.FuncCallExpr]bool{}
	var item func(e ast.ExprNode)
	item = func(e ast.ExprNode) {
		f, is := e.(*ast.FuncCallExpr)
		if !is || !IsGroupingMarker(f.FnName.O) {
			return
		}
		ok[f] = true
		if f.FnName.O == MarkerGroupingSets {
			for _, a := range f.Args {
				item(a)
			}
		}
	}
	n.Accept(visitor(func(x ast.Node) bool {
		if s, is := x.(*ast.SelectStmt); is && s.GroupBy != nil {
			for _, it := range s.GroupBy.Items {
				item(it.Expr)
			}
		}
		return true
	}))
	return ok
}

// IsGroupingMarker reports whether name is one of the grouping-set markers.
func IsGroupingMarker(name string) bool {
	switch name {
	case MarkerGroupingSets, MarkerRollup, MarkerCube, MarkerEmptySet:
		return true
	}
	return false
}
