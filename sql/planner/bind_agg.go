package planner

import (
	"strings"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/ordering"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// tidbRenamed are the aggregate names TiDB's AST may hold for a call the
// user spelled differently: it reads stddev, std and variance with MySQL's
// meaning (the population versions), while in Postgres stddev and
// variance are the sample versions and std does not exist.
var tidbRenamed = map[string]bool{"stddev_pop": true, "var_pop": true, "stddev_samp": true, "var_samp": true}

// aggName is the aggregate's name as the user wrote it.
func (b *binder) aggName(n ast.ExprNode, name string) string {
	if _, ok := n.(*ast.AggregateFuncExpr); ok && tidbRenamed[name] {
		if src := b.st.SourceName(n); src != "" {
			return src
		}
	}
	return name
}

// moreAggTypes types the aggregates beyond the SQL-standard core: the
// stddev/variance family (numeric for exact inputs, double precision for
// floats, as Postgres) and first/last (our extension, as in DuckDB: the
// argument's type).
func (b *binder) moreAggTypes(name string, t sqltypes.Type) (sqltypes.Type, bool) {
	switch name {
	case "stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop":
		switch {
		case t.IsInteger() || t.Kind == sqltypes.Numeric:
			return sqltypes.NumericType(sqltypes.NoLimit, sqltypes.NoLimit), true
		case t.Kind == sqltypes.Float4 || t.Kind == sqltypes.Float8:
			return sqltypes.Float8Type, true
		}
	case "array_agg":
		if arrayElemOK(t) {
			return sqltypes.ArrayOf(t), true
		}
	case "first", "last":
		if t.Kind == sqltypes.Varchar {
			return sqltypes.TextType, true
		}
		if t.Kind != sqltypes.Unknown {
			return t, true
		}
	}
	return t, false
}

// stringAggType resolves string_agg(value, delimiter) as Postgres does:
// (text, text) or (bytea, bytea), an untyped literal taking the other
// argument's type (text when both are untyped).
func (b *binder) stringAggType(call *AggCall, at []ast.ExprNode, n ast.ExprNode) (sqltypes.Type, error) {
	v, d := call.Args[0].Type(), call.Args[1].Type()
	target := sqltypes.TextType
	switch {
	case v.Kind == sqltypes.Bytea || v.Kind == sqltypes.Unknown && d.Kind == sqltypes.Bytea:
		target = sqltypes.ByteaType
	case v.Kind == sqltypes.Text || v.Kind == sqltypes.Varchar || v.Kind == sqltypes.Unknown:
	default:
		return target, sqlerr.New(sqlerr.UndefinedFunction, "function string_agg(%s, %s) does not exist", v, d).WithPosition(b.pos(n)).
			WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
	}
	for i := range call.Args {
		t := call.Args[i].Type()
		if t == target || target.Kind == sqltypes.Text && t.Kind == sqltypes.Varchar {
			continue
		}
		if t.Kind != sqltypes.Unknown {
			return target, sqlerr.New(sqlerr.UndefinedFunction, "function string_agg(%s, %s) does not exist", v, d).WithPosition(b.pos(n)).
				WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
		}
		var err error
		if call.Args[i], err = b.coerce(call.Args[i], target, at[i], "argument"); err != nil {
			return target, err
		}
	}
	return target, nil
}

// aggOrder is the ORDER BY written inside the aggregate calls of one
// query level. The Aggregate's input is sorted by it (stably), so every
// aggregate sees each group's rows in that order.
type aggOrder struct {
	exprs []expr.Expr
	keys  ordering.Lex // Col indexes exprs
	key   string       // to compare the ORDER BY of different calls
	pos   int
	// soft: no call wrote this order; it is the implicit one of a
	// string_agg(DISTINCT x, ...), which gives x's values in ascending
	// order as Postgres' sort-based DISTINCT does. A written ORDER BY or a
	// first/last without one overrides it.
	soft bool
	// unordered is the position of a first/last call without ORDER BY,
	// whose input order the sort would change (0: none).
	unordered int
}

// aggOrderBy records the ORDER BY of one aggregate call (nil: none).
func (b *binder) aggOrderBy(n ast.ExprNode, ob *ast.OrderByClause, call *AggCall, a *aggState) error {
	soft := false
	if (ob == nil || len(ob.Items) == 0) && call.Distinct && call.Func == "string_agg" {
		ob, soft = &ast.OrderByClause{Items: []*ast.ByItem{{Expr: n.(*ast.AggregateFuncExpr).Args[0]}}}, true
	}
	if ob == nil || len(ob.Items) == 0 {
		if call.Func == "first" || call.Func == "last" {
			if a.order == nil {
				a.order = &aggOrder{}
			}
			if a.order.soft {
				a.order.exprs, a.order.keys, a.order.key, a.order.soft = nil, nil, "", false
			}
			if a.order.unordered == 0 {
				a.order.unordered = b.pos(n)
			}
			return b.checkAggOrder(a)
		}
		return nil
	}
	if call.Func != "first" && call.Func != "last" && call.Func != "string_agg" && call.Func != "array_agg" && !jsonAggs[call.Func] {
		// The result does not depend on the order: Postgres accepts and
		// ignores it.
		return nil
	}
	o := &aggOrder{pos: b.pos(n), soft: soft}
	var sb strings.Builder
	for _, it := range ob.Items {
		if _, ok := it.Expr.(*ast.PositionExpr); ok {
			continue // inside an aggregate, ORDER BY 1 orders by the constant 1
		}
		e, err := b.bindExpr(it.Expr, &exprCtx{sc: a.from, clause: "aggregate"})
		if err != nil {
			return err
		}
		e = resolveUnknown(e)
		if err := b.needOrdering(e.Type(), it.Expr); err != nil {
			return err
		}
		if call.Distinct {
			found := false
			for _, arg := range call.Args {
				if sameExpr(arg, e) {
					found = true
				}
			}
			if !found {
				return sqlerr.New(sqlerr.InvalidColumnReference, "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list").
					WithPosition(b.pos(it.Expr))
			}
		}
		nf, ok := b.st.NullsFirst[it]
		if !ok {
			nf = it.Desc
		}
		o.keys = append(o.keys, ordering.Key{Col: len(o.exprs), Desc: it.Desc, NullsFirst: nf})
		o.exprs = append(o.exprs, e)
		sb.WriteString(e.String())
		if it.Desc {
			sb.WriteString(" desc")
		}
		if nf {
			sb.WriteString(" nulls first")
		}
		sb.WriteString(", ")
	}
	o.key = sb.String()
	if len(o.exprs) == 0 {
		return nil
	}
	if !soft {
		call.ordered = true
	}
	switch {
	case a.order == nil || a.order.exprs == nil:
		if a.order != nil {
			if soft && a.order.unordered != 0 {
				return nil // first/last keep the input order
			}
			o.unordered = a.order.unordered
		}
		a.order = o
		return b.checkAggOrder(a)
	case a.order.key == o.key:
		a.order.soft = a.order.soft && soft
	case soft, a.order.soft:
		// string_agg(DISTINCT x) gives x's values sorted, as Postgres'
		// sort-based DISTINCT does; with another ORDER BY in force they
		// would come in that order instead, which Postgres never gives.
		return sqlerr.New(sqlerr.FeatureNotSupported, "string_agg(DISTINCT ...) beside an aggregate with a different ORDER BY is not supported").
			WithPosition(o.pos).WithHint("Give the string_agg the same ORDER BY as its argument (string_agg(DISTINCT x, ',' ORDER BY x)), or compute it in a separate subquery.")
	default:
		return sqlerr.New(sqlerr.FeatureNotSupported, "aggregates with different ORDER BY in one query are not supported").
			WithPosition(o.pos).WithHint("Compute them in separate subqueries.")
	}
	return nil
}

func (b *binder) checkAggOrder(a *aggState) error {
	if a.order.exprs != nil && a.order.unordered != 0 {
		return sqlerr.New(sqlerr.FeatureNotSupported, "first() or last() without ORDER BY cannot be combined with an aggregate ORDER BY").
			WithPosition(a.order.unordered).WithHint("Give it the same ORDER BY.")
	}
	return nil
}

// sortAggInput puts the sort an aggregate ORDER BY needs under the
// Aggregate: the order expressions are appended to the input's columns
// (so the existing column indexes stay valid) and the rows sorted by them.
func sortAggInput(node Node, a *aggState) Node {
	if a.order == nil || a.order.exprs == nil {
		return node
	}
	in := node.Schema()
	p := &Project{Input: node}
	for i, c := range in {
		p.Exprs = append(p.Exprs, &expr.Column{Index: i, Name: c.Name, T: c.Type})
		p.Cols = append(p.Cols, c)
	}
	keys := make(ordering.Lex, len(a.order.keys))
	for i, k := range a.order.keys {
		e := a.order.exprs[k.Col]
		k.Col = len(p.Exprs)
		p.Exprs = append(p.Exprs, e)
		p.Cols = append(p.Cols, Column{Name: columnName(e), Type: e.Type(), Nullable: true})
		keys[i] = k
	}
	if p.Ordering().Satisfies(keys) {
		return p // already in that order (an ordered table's scan)
	}
	return &Sort{Input: p, Keys: keys}
}

// isRegrAgg reports whether name is one of the two-argument statistics
// aggregates over (Y, X): corr, covar_pop/samp and the regr_ family.
func isRegrAgg(name string) bool {
	return name == "corr" || strings.HasPrefix(name, "covar_") || strings.HasPrefix(name, "regr_")
}

// regrAggType types corr(Y, X) and its family: Postgres has only the
// double precision versions, so both arguments are coerced to it (any
// number converts implicitly); the result is double precision but for
// regr_count's bigint.
func (b *binder) regrAggType(call *AggCall, at []ast.ExprNode, n ast.ExprNode) (sqltypes.Type, error) {
	for i, a := range call.Args {
		t := a.Type()
		if t.Kind != sqltypes.Unknown && !t.IsInteger() && t.Kind != sqltypes.Numeric && t.Kind != sqltypes.Float4 && t.Kind != sqltypes.Float8 {
			return sqltypes.Float8Type, sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s, %s) does not exist", call.Func, call.Args[0].Type(), call.Args[1].Type()).
				WithPosition(b.pos(n)).WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
		}
		var err error
		if call.Args[i], err = b.coerce(a, sqltypes.Float8Type, at[i], "argument"); err != nil {
			return sqltypes.Float8Type, err
		}
	}
	if call.Func == "regr_count" {
		return sqltypes.Int8Type, nil
	}
	return sqltypes.Float8Type, nil
}

// aggFilter applies an aggregate's FILTER (WHERE cond): every aggregate
// that takes it skips NULL inputs, so the filtered call is the call over
// CASE WHEN cond THEN arg END (count(*) counting CASE WHEN cond THEN 1
// END). string_agg's delimiter is left alone; the regression family's two
// arguments are both filtered. The parser refuses FILTER on first/last,
// which keep NULLs.
func (b *binder) aggFilter(n ast.ExprNode, call *AggCall, a *aggState) error {
	x, ok := n.(*ast.AggregateFuncExpr)
	if !ok || b.st.Filters[x] == nil {
		return nil
	}
	cn := b.st.Filters[x]
	if hasAggregate(cn) {
		return sqlerr.New(sqlerr.GroupingError, "aggregate functions are not allowed in FILTER").WithPosition(b.pos(cn))
	}
	cond, err := b.bindExpr(cn, &exprCtx{sc: a.from, clause: "FILTER"})
	if err != nil {
		return err
	}
	if t := cond.Type().Kind; t == sqltypes.Unknown {
		if cond, err = b.coerce(cond, sqltypes.BoolType, cn, "FILTER"); err != nil {
			return err
		}
	} else if t != sqltypes.Bool {
		return sqlerr.New(sqlerr.DatatypeMismatch, "argument of FILTER must be type boolean, not type %s", cond.Type()).WithPosition(b.pos(cn))
	}
	when := func(e expr.Expr) expr.Expr {
		return &expr.Case{Whens: []expr.When{{Cond: cond, Result: e}}, T: e.Type()}
	}
	if call.Func == "array_agg" || jsonAggs[call.Func] {
		// array_agg and the JSON aggregates keep NULLs: the condition is
		// their last argument.
		call.Args = append(call.Args, cond)
		return nil
	}
	if call.Star {
		call.Star = false
		call.Args = []expr.Expr{when(&expr.Literal{Value: int64(1), T: sqltypes.Int4Type})}
		return nil
	}
	last := len(call.Args)
	if call.Func == "string_agg" || orderedSetAggs[call.Func] {
		last = 1 // not the delimiter, not the fraction
	}
	for i := 0; i < last; i++ {
		call.Args[i] = when(call.Args[i])
	}
	return nil
}

// orderedSetAggs are the ordered-set aggregates, called f(direct args)
// WITHIN GROUP (ORDER BY x).
var orderedSetAggs = map[string]bool{"percentile_cont": true, "percentile_disc": true, "mode": true}

// bindOrderedSet binds percentile_cont(f), percentile_disc(f) and mode()
// WITHIN GROUP (ORDER BY x [DESC]). The AggCall's Args are x, then the
// fraction f (double precision, one value for the statement: a per-group
// fraction is 0A000). percentile_cont takes x as double precision (any
// number converts); percentile_disc and mode any sortable type, which is
// their result type. An array of fractions gives an array of results.
func (b *binder) bindOrderedSet(x *ast.AggregateFuncExpr, name string, a *aggState) (expr.Expr, error) {
	inner := &exprCtx{sc: a.from, clause: "aggregate"}
	var direct []expr.Expr
	for _, arg := range x.Args {
		e, err := b.bindExpr(arg, inner)
		if err != nil {
			return nil, err
		}
		direct = append(direct, e)
	}
	if x.Order == nil || len(x.Order.Items) != 1 || len(direct) != map[bool]int{true: 0, false: 1}[name == "mode"] || x.Distinct {
		ts := []string{}
		for _, d := range direct {
			ts = append(ts, d.Type().String())
		}
		if x.Order != nil {
			for range x.Order.Items {
				ts = append(ts, "...")
			}
		}
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s) does not exist", name, strings.Join(ts, ", ")).WithPosition(b.pos(x)).
			WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
	}
	item := x.Order.Items[0]
	key, err := b.bindExpr(item.Expr, inner)
	if err != nil {
		return nil, err
	}
	key = resolveUnknown(key)
	call := AggCall{Func: name, Desc: item.Desc}
	kt := key.Type()
	noFunc := func() error { return b.noOrderedSet(x, name, a) }
	switch {
	case name == "percentile_cont" && kt.Kind == sqltypes.Interval:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "percentile_cont over interval is not supported").WithPosition(b.pos(x)).
			WithHint("Take percentile_cont over extract(epoch FROM x) and convert back.")
	case name == "percentile_cont":
		if !kt.IsInteger() && kt.Kind != sqltypes.Numeric && kt.Kind != sqltypes.Float4 && kt.Kind != sqltypes.Float8 {
			return nil, noFunc()
		}
		if key, err = b.coerce(key, sqltypes.Float8Type, item.Expr, "argument"); err != nil {
			return nil, err
		}
		call.T = sqltypes.Float8Type
	default:
		if kt.Kind == sqltypes.Unknown {
			return nil, noFunc()
		}
		call.T = kt
		if kt.Kind == sqltypes.Varchar {
			call.T = sqltypes.TextType
		}
	}
	call.Args = []expr.Expr{key}
	if name != "mode" {
		f := direct[0]
		numeric := func(t sqltypes.Type) bool {
			return t.IsInteger() || t.Kind == sqltypes.Numeric || t.Kind == sqltypes.Float4 || t.Kind == sqltypes.Float8 || t.Kind == sqltypes.Unknown
		}
		fracType := sqltypes.Float8Type
		if t := f.Type(); t.IsArray() && numeric(t.ElemType()) {
			// An array of fractions: an array of percentiles.
			fracType = sqltypes.ArrayOf(sqltypes.Float8Type)
			call.T = sqltypes.ArrayOf(call.T)
		} else if !numeric(t) {
			return nil, noFunc()
		}
		if !constant(f) {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s with a fraction that is not a constant is not supported", name).WithPosition(b.pos(x.Args[0]))
		}
		if f, err = b.coerce(f, fracType, x.Args[0], "argument"); err != nil {
			return nil, err
		}
		call.Args = append(call.Args, f)
	}
	if err := b.aggFilter(x, &call, a); err != nil {
		return nil, err
	}
	return a.add(call, name), nil
}

// noOrderedSet is 42883 for f(direct args) WITHIN GROUP (ORDER BY keys)
// when no ordered-set aggregate takes those types, named as Postgres
// names it: the direct arguments' types, then the keys'.
func (b *binder) noOrderedSet(x *ast.AggregateFuncExpr, name string, a *aggState) error {
	inner := &exprCtx{sc: a.from, clause: "aggregate"}
	var ts []string
	nodes := append([]ast.ExprNode(nil), x.Args...)
	if x.Order != nil {
		for _, it := range x.Order.Items {
			nodes = append(nodes, it.Expr)
		}
	}
	for _, n := range nodes {
		e, err := b.bindExpr(n, inner)
		if err != nil {
			return err
		}
		ts = append(ts, e.Type().String())
	}
	return sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s) does not exist", name, strings.Join(ts, ", ")).WithPosition(b.pos(x)).
		WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

// jsonAggs are the json aggregates: their result follows the input order
// (an ORDER BY in the call sorts it), and a NULL input is a JSON null,
// so FILTER cannot be a NULLed argument.
var jsonAggs = map[string]bool{"json_agg": true, "jsonb_agg": true, "json_object_agg": true}
