package parser

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Markers of the query-form rewrites (see queryForms).
const (
	// mkAggOrder is the extra last argument of a group_concat call that
	// stands for an aggregate with ORDER BY: `#agg`('string_agg').
	mkAggOrder = "#agg"
	// aliasMark prefixes the alias of a derived table whose column alias
	// list rides on TiDB's LATERAL syntax.
	aliasMark = "#as:"
	// mkDistinctOn is the first select field standing for DISTINCT ON:
	// `#distinct_on`(a, b), x, y. Recovery moves its arguments to
	// Statement.DistinctOn and drops the field.
	mkDistinctOn = "#distinct_on"
)

// queryStarts are the words that open a query inside parentheses.
var queryStarts = map[string]bool{"select": true, "with": true, "values": true, "table": true}

// queryForms rewrites Postgres query forms TiDB's grammar spells
// differently:
//
//   - VALUES (..), (..) used as a query (a statement, a FROM item, a
//     set-operation branch, a CTE body) becomes TiDB's VALUES ROW(..), ROW(..);
//   - a derived table with a column alias list, (query) [AS] v(a, b),
//     becomes LATERAL (query) AS `#as:v`(a, b), the only place TiDB takes
//     such a list; recovery clears Lateral and restores the alias;
//   - an aggregate call with ORDER BY, f(args ORDER BY keys), becomes
//     group_concat(args, `#agg`('f') ORDER BY keys), the one aggregate TiDB
//     gives an ORDER BY; recovery restores f and drops the separator. So
//     does f(DISTINCT args) for aggregates TiDB has no DISTINCT for
//     (string_agg, stddev, bool_and, ...);
//   - SELECT DISTINCT ON (a, b) x, y becomes SELECT `#distinct_on`(a, b),
//     x, y; recovery takes the field off again into Statement.DistinctOn;
//   - first(...) and last(...) (TiDB keywords) are quoted so they parse as
//     function calls.
func queryForms(src string, toks []token, e *edits) error {
	for i, t := range toks {
		switch {
		case t.is("distinct") && i > 0 && toks[i-1].is("select") && i+2 < len(toks) && toks[i+1].is("on") && toks[i+2].isOp("("):
			m := matchParen(toks, i+2)
			if m < 0 || m+1 >= len(toks) {
				return syntaxErrAt(src, toks, len(toks))
			}
			e.replace(i, "`"+mkDistinctOn+"`")
			e.drop(i + 1)
			e.replace(m, "),")
		case t.is("values") && (i == 0 || toks[i-1].isOp("(") || toks[i-1].is("union") || toks[i-1].is("intersect") ||
			toks[i-1].is("except") || toks[i-1].is("all") || toks[i-1].is("distinct") && i > 1 && (toks[i-2].is("union") || toks[i-2].is("intersect") || toks[i-2].is("except"))):
			for k := i + 1; k < len(toks) && toks[k].isOp("("); {
				e.prepend(k, "row ")
				m := matchParen(toks, k)
				if m < 0 || m+2 >= len(toks) || !toks[m+1].isOp(",") {
					break
				}
				k = m + 2
			}
		case t.isOp(")"):
			if err := aliasList(src, toks, e, i); err != nil {
				return err
			}
		case t.is("order") && i+1 < len(toks) && toks[i+1].is("by"):
			if err := aggOrder(src, toks, e, i); err != nil {
				return err
			}
		case t.is("distinct") && i > 1 && toks[i-1].isOp("(") && (toks[i-2].kind == tkIdent || toks[i-2].kind == tkQIdent) &&
			!tidbDistinctAggs[toks[i-2].val] && !notFunctionNames[toks[i-2].val] && !(i > 2 && toks[i-3].isOp(".")):
			// TiDB takes DISTINCT only in its own aggregates: route the
			// others through group_concat as for ORDER BY.
			if m := matchParen(toks, i-1); m > 0 && !orderInside(toks, i, m) {
				e.replace(i-2, "group_concat")
				e.prepend(m, ", `"+mkAggOrder+"`("+quoteString(toks[i-2].val)+")")
			}
		}
	}
	for i, t := range toks {
		if (t.is("first") || t.is("last")) && i+1 < len(toks) && toks[i+1].isOp("(") && !e.hasRep[i] &&
			!(i > 0 && (toks[i-1].is("nulls") || toks[i-1].is("fetch") || toks[i-1].isOp("."))) {
			e.replace(i, quoteIdent(t.val))
		}
	}
	return nil
}

// tidbDistinctAggs are the aggregates whose DISTINCT TiDB's grammar
// takes as they are.
var tidbDistinctAggs = map[string]bool{"count": true, "sum": true, "avg": true, "min": true, "max": true, "group_concat": true}

// orderInside reports whether ORDER BY occurs at the top level of the
// argument list toks(from, m).
func orderInside(toks []token, from, m int) bool {
	for k := from; k < m; k++ {
		switch {
		case toks[k].isOp("("):
			if k = partner(toks, k); k < 0 {
				return false
			}
		case toks[k].is("order") && k+1 < m && toks[k+1].is("by"):
			return true
		}
	}
	return false
}

// openParen returns the index of the "(" matching the ")" at m, or -1.
func openParen(toks []token, m int) int {
	if !toks[m].isOp(")") {
		return -1
	}
	return partner(toks, m)
}

// aliasList rewrites `(query) [AS] v(a, b)` whose query closes at m.
func aliasList(src string, toks []token, e *edits, m int) error {
	o := openParen(toks, m)
	if o < 0 || o+1 >= m || !(queryStarts[toks[o+1].val] && toks[o+1].kind == tkIdent) {
		return nil
	}
	if o > 0 && (toks[o-1].kind == tkQIdent || toks[o-1].kind == tkIdent && !toks[o-1].is("from") && !toks[o-1].is("join") && !toks[o-1].is("lateral")) {
		return nil // a function's argument, IN (...), EXISTS (...) and the like
	}
	a := m + 1
	as := a < len(toks) && toks[a].is("as")
	if as {
		a++
	}
	if a+1 >= len(toks) || !toks[a+1].isOp("(") || (toks[a].kind != tkIdent && toks[a].kind != tkQIdent) {
		return nil
	}
	if toks[a].kind == tkIdent && (clauseEnd[toks[a].val] || notFunctionNames[toks[a].val]) {
		return nil
	}
	if !as {
		e.prepend(a, "as ")
	}
	if o > 0 && toks[o-1].is("lateral") {
		return nil // the user's LATERAL: TiDB takes the list as it is
	}
	e.prepend(o, "lateral ")
	e.replace(a, "`"+aliasMark+strings.ReplaceAll(toks[a].val, "`", "")+"`")
	return nil
}

// aggOrder rewrites the aggregate call whose argument list holds the
// ORDER BY at i.
func aggOrder(src string, toks []token, e *edits, i int) error {
	o := enclosing(toks, i)
	if o < 1 || o+1 == i || e.hasRep[o-1] {
		// Not in a call, or the call is rewritten already (a second
		// ORDER BY in one argument list is TiDB's syntax error to report).
		return nil
	}
	name := toks[o-1]
	if name.kind != tkIdent && name.kind != tkQIdent || name.kind == tkIdent && (notFunctionNames[name.val] || queryStarts[name.val]) ||
		(o > 1 && toks[o-2].isOp(".")) || toks[o+1].kind == tkIdent && queryStarts[toks[o+1].val] || toks[o+1].isOp("(") && o+2 < len(toks) && queryStarts[toks[o+2].val] {
		return nil
	}
	m := matchParen(toks, o)
	if m < 0 {
		return nil
	}
	for k := i; k < m; k++ {
		if toks[k].isOp("(") {
			if k = partner(toks, k); k < 0 {
				break
			}
		} else if toks[k].is("separator") {
			return syntaxErrAt(src, toks, k)
		}
	}
	e.replace(o-1, "group_concat")
	e.prepend(i, ", `"+mkAggOrder+"`("+quoteString(name.val)+") ")
	return nil
}

// queryRecovery undoes the rewrites of queryForms after TiDB's parse.
type queryRecovery struct {
	st  *Statement
	err error
}

func (v *queryRecovery) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.TableSource:
		if name, ok := strings.CutPrefix(x.AsName.O, aliasMark); ok && x.Lateral {
			x.Lateral = false
			x.AsName = ast.NewCIStr(name)
		}
	case *ast.SelectStmt:
		if x.Fields == nil || len(x.Fields.Fields) == 0 {
			break
		}
		if f, ok := markerCall(x.Fields.Fields[0].Expr, mkDistinctOn); ok && x.Fields.Fields[0].AsName.O == "" {
			if v.st.DistinctOn == nil {
				v.st.DistinctOn = map[*ast.SelectStmt][]ast.ExprNode{}
			}
			v.st.DistinctOn[x] = f.Args
			x.Fields.Fields = x.Fields.Fields[1:]
		}
	case *ast.AggregateFuncExpr:
		if x.F != ast.AggFuncGroupConcat || len(x.Args) < 2 {
			break
		}
		f, ok := markerCall(x.Args[len(x.Args)-2], mkAggOrder)
		if !ok || len(f.Args) != 1 {
			break
		}
		name, _ := f.Args[0].(ast.ValueExpr)
		s, isStr := "", false
		if name != nil {
			s, isStr = name.GetValue().(string)
		}
		if !isStr {
			break
		}
		x.F = s
		x.Args = x.Args[:len(x.Args)-2]
	}
	return n, false
}

func (v *queryRecovery) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// SourceName returns the function name the user wrote at the start of the
// call n, lowercased unless quoted, or "" when it cannot be read. TiDB
// renames some functions (stddev becomes stddev_pop); the planner reads
// the user's spelling here.
func (s *Statement) SourceName(n ast.ExprNode) string {
	off := n.OriginTextPosition()
	if s.pm == nil || off < 0 || off >= len(s.Rewritten) {
		return ""
	}
	o := s.pm.toOrig(off)
	if o < 0 || o >= len(s.src) {
		return ""
	}
	t, ok := firstToken(s.src[o:max(o, s.End)])
	if !ok || (t.kind != tkIdent && t.kind != tkQIdent) {
		return ""
	}
	return t.val
}
