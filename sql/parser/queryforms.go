package parser

import (
	"strings"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
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
	// mkFilter carries an aggregate's FILTER (WHERE cond) inside its
	// group_concat form: `#filter`(cond), an argument or (after an ORDER
	// BY) a last sort key. Recovery moves cond to Statement.Filters.
	mkFilter = "#filter"
	// mkWithin stands for an ordered-set aggregate's WITHIN GROUP:
	// `#within`('percentile_cont') in place of `#agg`.
	mkWithin = "#within"
	// mkFullJoin marks a FULL JOIN written as TiDB's LEFT JOIN: its ON
	// becomes `#full_join`(0) OR cond, and recovery takes the marker off
	// into Statement.FullJoins.
	mkFullJoin = "#full_join"
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
		case t.is("full") && i+1 < len(toks) && (toks[i+1].is("join") || toks[i+1].is("outer") && i+2 < len(toks) && toks[i+2].is("join")):
			if i > 0 {
				if _, _, ok := isAsofKeyword(toks, i-1); ok {
					continue // ASOF FULL JOIN is the ASOF kind
				}
			}
			if err := fullJoin(src, toks, e, i); err != nil {
				return err
			}
		case t.is("within") && i+3 < len(toks) && toks[i+1].is("group") && toks[i+2].isOp("(") && toks[i+3].is("order"):
			if err := withinGroup(src, toks, e, i); err != nil {
				return err
			}
		case t.is("filter") && i+2 < len(toks) && toks[i+1].isOp("(") && toks[i+2].is("where"):
			if err := aggFilter(src, toks, e, i); err != nil {
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
		if (t.is("first") || t.is("last") || t.is("mode")) && i+1 < len(toks) && toks[i+1].isOp("(") && !e.hasRep[i] &&
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

// aggFilter rewrites f(args) FILTER (WHERE cond), FILTER at i, into
// group_concat(args, `#filter`(cond), `#agg`('f')): cond stays where it
// is, between the call's ")" (now a comma) and FILTER's ")". A call that
// an ORDER BY or DISTINCT rewrite made a group_concat already keeps its
// marker, and the filter follows it (after an ORDER BY, as a last key).
func aggFilter(src string, toks []token, e *edits, i int) error {
	m := i - 1
	if m < 1 || !toks[m].isOp(")") {
		return syntaxErrAt(src, toks, i)
	}
	o := partner(toks, m)
	if o > 2 && toks[o-1].is("group") && toks[o-2].is("within") && toks[o-3].isOp(")") {
		o = partner(toks, o-3) // f(args) WITHIN GROUP (...) FILTER: the call is f
	}
	closing := matchParen(toks, i+1)
	if o < 1 || closing < 0 || toks[o-1].kind != tkIdent && toks[o-1].kind != tkQIdent {
		return syntaxErrAt(src, toks, i)
	}
	name := toks[o-1].val
	switch {
	case name == "first" || name == "last":
		// They keep NULL values, so a filter cannot be a CASE inside.
		return posError(src, toks[i].start, sqlerr.FeatureNotSupported, "FILTER on %s() is not supported", name).
			WithHint("Filter in a subquery, or use a CASE only if NULLs should count.")
	case closing+1 < len(toks) && toks[closing+1].is("over"):
		return posError(src, toks[i].start, sqlerr.FeatureNotSupported, "FILTER in a window function is not supported").
			WithHint("Write the aggregate over CASE WHEN cond THEN x END instead.")
	}
	if !e.hasRep[o-1] {
		e.replace(o-1, "group_concat")
		if o+2 == m && toks[o+1].isOp("*") {
			e.replace(o+1, "1") // count(*): group_concat needs an argument
		}
		e.appendAfter(closing, ", `"+mkAggOrder+"`("+quoteString(name)+"))")
	} else {
		e.appendAfter(closing, ")")
	}
	e.replace(m, ",")
	e.replace(i, "`"+mkFilter+"`")
	e.drop(i + 2)
	return nil
}

// fullJoin rewrites FULL [OUTER] JOIN r ON cond, FULL at i, to LEFT JOIN r
// ON `#full_join`(0) OR cond: the marker is the leftmost operand of the
// leftmost OR, whatever cond holds, so recovery finds it there.
func fullJoin(src string, toks []token, e *edits, i int) error {
	j := i + 1
	if toks[j].is("outer") {
		j++
	}
	e.replace(i, "left")
	for k := j + 1; k < len(toks); k++ {
		switch t := toks[k]; {
		case t.isOp("("):
			if k = partner(toks, k); k < 0 {
				return syntaxErrAt(src, toks, len(toks))
			}
		case t.is("on"):
			e.appendAfter(k, " `"+mkFullJoin+"`(0) OR")
			return nil
		case t.is("using"):
			// USING (a, b) rides as ON `#full_join`(a, b); recovery
			// turns it back into the join's Using list.
			if k+1 >= len(toks) || !toks[k+1].isOp("(") {
				return syntaxErrAt(src, toks, k)
			}
			e.replace(k, "on `"+mkFullJoin+"`")
			return nil
		case t.isOp(")") || t.isOp(";") || t.is("join") || t.is("where") || t.is("group") || t.is("order") || t.is("limit"):
			return syntaxErrAt(src, toks, k)
		}
	}
	return syntaxErrAt(src, toks, len(toks))
}

// usingNames reads a FULL JOIN's USING list back from its marker's
// arguments: plain column names only.
func usingNames(args []ast.ExprNode) ([]*ast.ColumnName, error) {
	var out []*ast.ColumnName
	for _, a := range args {
		c, ok := a.(*ast.ColumnNameExpr)
		if !ok || c.Name.Table.O != "" {
			return nil, sqlerr.New(sqlerr.SyntaxError, "syntax error in USING: a column name expected")
		}
		out = append(out, c.Name)
	}
	return out, nil
}

// takeFullJoin removes the FULL JOIN marker from on, the ON condition of
// a join: it is the leftmost operand of its leftmost OR.
func takeFullJoin(on ast.ExprNode) (ast.ExprNode, bool) {
	b, ok := on.(*ast.BinaryOperationExpr)
	if !ok || b.Op != opcode.LogicOr {
		return on, false
	}
	if _, ok := markerCall(b.L, mkFullJoin); ok {
		return b.R, true
	}
	l, found := takeFullJoin(b.L)
	if found {
		b.L = l
	}
	return on, found
}

// withinGroup rewrites f(args) WITHIN GROUP (ORDER BY key), WITHIN at i,
// into group_concat(args, `#within`('f') ORDER BY key): the call's ")"
// becomes the comma (or nothing, for mode()), WITHIN GROUP ( goes.
func withinGroup(src string, toks []token, e *edits, i int) error {
	m := i - 1
	if m < 1 || !toks[m].isOp(")") {
		return syntaxErrAt(src, toks, i)
	}
	o := partner(toks, m)
	if o < 1 || toks[o-1].kind != tkIdent && toks[o-1].kind != tkQIdent || e.hasRep[o-1] {
		return syntaxErrAt(src, toks, i)
	}
	name := toks[o-1].val
	e.replace(o-1, "group_concat")
	if o+1 == m {
		e.drop(m)
	} else {
		e.replace(m, ",")
	}
	e.replace(i, "`"+mkWithin+"`("+quoteString(name)+")")
	e.drop(i + 1)
	e.drop(i + 2)
	return nil
}

// takeFilter removes a `#filter`(cond) marker from x's arguments or last
// ORDER BY key, returning cond.
func takeFilter(x *ast.AggregateFuncExpr) ast.ExprNode {
	for k, a := range x.Args {
		if f, ok := markerCall(a, mkFilter); ok && len(f.Args) == 1 {
			x.Args = append(x.Args[:k:k], x.Args[k+1:]...)
			return f.Args[0]
		}
	}
	if x.Order != nil && len(x.Order.Items) > 0 {
		last := x.Order.Items[len(x.Order.Items)-1]
		if f, ok := markerCall(last.Expr, mkFilter); ok && len(f.Args) == 1 {
			x.Order.Items = x.Order.Items[:len(x.Order.Items)-1]
			return f.Args[0]
		}
	}
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
	case *ast.Join:
		if x.On != nil {
			if f, ok := markerCall(x.On.Expr, mkFullJoin); ok {
				using, err := usingNames(f.Args)
				if err != nil {
					v.err = err
					return n, true
				}
				x.On, x.Using = nil, using
				if v.st.FullJoins == nil {
					v.st.FullJoins = map[*ast.Join]bool{}
				}
				v.st.FullJoins[x] = true
				break
			}
			if on, ok := takeFullJoin(x.On.Expr); ok {
				x.On.Expr = on
				if v.st.FullJoins == nil {
					v.st.FullJoins = map[*ast.Join]bool{}
				}
				v.st.FullJoins[x] = true
			}
		}
	case *ast.AggregateFuncExpr:
		if x.F != ast.AggFuncGroupConcat || len(x.Args) < 2 {
			break
		}
		if cond := takeFilter(x); cond != nil {
			if v.st.Filters == nil {
				v.st.Filters = map[*ast.AggregateFuncExpr]ast.ExprNode{}
			}
			v.st.Filters[x] = cond
		}
		f, ok := markerCall(x.Args[len(x.Args)-2], mkAggOrder)
		if !ok {
			if f, ok = markerCall(x.Args[len(x.Args)-2], mkWithin); ok {
				if v.st.WithinGroup == nil {
					v.st.WithinGroup = map[*ast.AggregateFuncExpr]bool{}
				}
				v.st.WithinGroup[x] = true
			}
		}
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
