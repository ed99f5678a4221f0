package planner

import (
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// codeInvalidRecursion is Postgres' invalid_recursion.
const codeInvalidRecursion = "42P19"

// recursion is a WITH RECURSIVE query whose recursive term is being
// bound: its name resolves to the working table.
type recursion struct {
	id   int
	name string
	cols []Column
}

// refersTo reports whether n names the table name (unqualified)
// anywhere, subqueries included.
func refersTo(n ast.Node, name string) bool {
	found := false
	n.Accept(visitFn(func(x ast.Node) bool {
		if t, ok := x.(*ast.TableName); ok && t.Schema.O == "" && t.Name.O == name {
			found = true
		}
		return !found
	}))
	return found
}

// bindRecursive binds a WITH RECURSIVE query that refers to itself, with
// PostgreSQL's rules (42P19): the form non-recursive-term UNION [ALL]
// recursive-term, one reference in the recursive term only, not inside a
// subquery expression or on the nullable side of an outer join, no
// aggregates there, and no ORDER BY, LIMIT or OFFSET.
func (b *binder) bindRecursive(c *cteEnv) (Node, error) {
	name := c.name
	q := c.cte.Query.Query
	var list *ast.SetOprSelectList
	var ob *ast.OrderByClause
	var lim *ast.Limit
	switch x := q.(type) {
	case *ast.SetOprStmt:
		list, ob, lim = x.SelectList, x.OrderBy, x.Limit
		if x.With != nil {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "a WITH clause inside recursive query \"%s\" is not supported", name)
		}
	}
	badForm := sqlerr.New(codeInvalidRecursion, "recursive query \"%s\" does not have the form non-recursive-term UNION [ALL] recursive-term", name)
	if list == nil || len(list.Selects) < 2 {
		return nil, badForm
	}
	last := list.Selects[len(list.Selects)-1]
	rec, ok := last.(*ast.SelectStmt)
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "a set operation in the recursive term of \"%s\" is not supported", name)
	}
	if rec.AfterSetOperator == nil || (*rec.AfterSetOperator != ast.Union && *rec.AfterSetOperator != ast.UnionAll) {
		return nil, badForm
	}
	distinct := *rec.AfterSetOperator == ast.Union
	if ob != nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "ORDER BY in a recursive query is not implemented").WithPosition(b.pos(ob.Items[0].Expr))
	}
	if lim != nil || rec.Limit != nil {
		what := "LIMIT"
		if l := lim; (l != nil && l.Count == nil) || (l == nil && rec.Limit.Count == nil) {
			what = "OFFSET"
		}
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s in a recursive query is not implemented", what)
	}
	if rec.OrderBy != nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "ORDER BY in a recursive query is not implemented").WithPosition(b.pos(rec.OrderBy.Items[0].Expr))
	}
	baseSel := list.Selects[:len(list.Selects)-1]
	for _, s := range baseSel {
		if refersTo(s, name) {
			return nil, sqlerr.New(codeInvalidRecursion, "recursive reference to query \"%s\" must not appear within its non-recursive term", name)
		}
	}
	if err := checkRecursiveTerm(rec, name); err != nil {
		return nil, err
	}

	// The non-recursive term fixes the columns and their types.
	saved := b.outer
	b.outer = c.outer
	defer func() { b.outer = saved }()
	var base Node
	var err error
	if len(baseSel) == 1 {
		base, err = b.bindQuery(baseSel[0], c.env)
	} else {
		base, err = b.bindSetOpr(&ast.SetOprSelectList{Selects: baseSel}, nil, nil, c.env)
	}
	if err != nil {
		return nil, err
	}
	cols := base.Schema()
	if n := len(c.cte.ColNameList); n > len(cols) {
		return nil, sqlerr.New(sqlerr.InvalidColumnReference, "WITH query \"%s\" has %d columns available but %d columns specified", name, len(cols), n)
	}
	r := &recursion{id: b.nrec, name: name}
	b.nrec++
	for i, col := range cols {
		if i < len(c.cte.ColNameList) {
			col.Name = c.cte.ColNameList[i].O
		}
		col.Table, col.Nullable = "", true
		r.cols = append(r.cols, col)
	}
	if b.recursing == nil {
		b.recursing = map[*cteEnv]*recursion{}
	}
	b.recursing[c] = r
	recNode, err := b.bindQuery(rec, c)
	delete(b.recursing, c)
	if err != nil {
		return nil, err
	}
	rc := recNode.Schema()
	if len(rc) != len(r.cols) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "each UNION query must have the same number of columns")
	}
	types := make([]sqltypes.Type, len(rc))
	for i := range rc {
		t, ok := commonType(r.cols[i].Type, rc[i].Type)
		if !ok {
			return nil, errDatatype(0, "UNION types %s and %s cannot be matched", r.cols[i].Type, rc[i].Type)
		}
		if t != r.cols[i].Type {
			return nil, errDatatype(0, "recursive query \"%s\" column %d has type %s in non-recursive term but type %s overall", name, i+1, r.cols[i].Type, t).
				WithHint("Cast the output of the non-recursive term to the correct type.")
		}
		types[i] = t
	}
	if recNode, err = b.castTo(recNode, types); err != nil {
		return nil, err
	}
	base = renameCols(base, func(i int) string { return r.cols[i].Name })
	return &RecursiveCTE{Name: name, ID: r.id, Base: base, Recursive: recNode, Distinct: distinct, cols: append([]Column(nil), r.cols...)}, nil
}

// checkRecursiveTerm applies Postgres' rules on where the recursive
// reference may stand in the recursive term.
func checkRecursiveTerm(rec *ast.SelectStmt, name string) error {
	refErr := func(where string) error {
		return sqlerr.New(codeInvalidRecursion, "recursive reference to query \"%s\" must not appear %s", name, where)
	}
	count := 0
	var err error
	var walkFrom func(n ast.ResultSetNode, nullable bool)
	walkFrom = func(n ast.ResultSetNode, nullable bool) {
		if err != nil || n == nil {
			return
		}
		switch x := n.(type) {
		case *ast.Join:
			walkFrom(x.Left, nullable || x.Tp == ast.RightJoin)
			walkFrom(x.Right, nullable || x.Tp == ast.LeftJoin)
			if x.On != nil && refersTo(x.On, name) {
				err = refErr("within a subquery")
			}
		case *ast.TableSource:
			switch s := x.Source.(type) {
			case *ast.TableName:
				if s.Schema.O == "" && s.Name.O == name {
					count++
					switch {
					case count > 1:
						err = refErr("more than once")
					case nullable:
						err = refErr("within an outer join")
					}
				}
			case *ast.SelectStmt:
				if refersTo(s, name) {
					if s.From != nil {
						walkFrom(s.From.TableRefs, nullable)
					}
					if err == nil && exprsRefer(s, name) {
						err = refErr("within a subquery")
					}
				}
			default:
				if refersTo(x.Source, name) {
					err = refErr("within a subquery")
				}
			}
		}
	}
	if rec.From != nil {
		walkFrom(rec.From.TableRefs, false)
	}
	if err != nil {
		return err
	}
	if exprsRefer(rec, name) {
		return refErr("within a subquery")
	}
	if count == 0 {
		return sqlerr.New(codeInvalidRecursion, "recursive query \"%s\" does not have the form non-recursive-term UNION [ALL] recursive-term", name)
	}
	aggErr := sqlerr.New(codeInvalidRecursion, "aggregate functions are not allowed in a recursive query's recursive term")
	for _, f := range rec.Fields.Fields {
		if f.Expr != nil && hasAggregate(f.Expr) {
			return aggErr
		}
	}
	if rec.Having != nil && hasAggregate(rec.Having.Expr) {
		return aggErr
	}
	return nil
}

// exprsRefer reports whether a subquery in s's own expressions (not its
// FROM items) names the table name.
func exprsRefer(s *ast.SelectStmt, name string) bool {
	var ns []ast.Node
	for _, f := range s.Fields.Fields {
		if f.Expr != nil {
			ns = append(ns, f.Expr)
		}
	}
	if s.Where != nil {
		ns = append(ns, s.Where)
	}
	if s.Having != nil {
		ns = append(ns, s.Having.Expr)
	}
	if s.GroupBy != nil {
		ns = append(ns, s.GroupBy)
	}
	for _, n := range ns {
		if refersTo(n, name) {
			return true
		}
	}
	return false
}
