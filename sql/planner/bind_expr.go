package planner

import (
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/functions"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// exprCtx is where an expression is bound.
type exprCtx struct {
	sc *scope
	// clause names the clause for "not allowed in" errors ("WHERE").
	clause string
	// agg, when set, maps grouped expressions and aggregate calls to the
	// Aggregate node's output (select list, HAVING, ORDER BY of a grouped
	// query).
	agg *aggState
	// win, when set, maps window function calls to Window outputs.
	win *windowState
}

// aggState collects the grouping and aggregates of one query level.
type aggState struct {
	from     *scope
	groups   []expr.Expr
	groupKey []string
	calls    []AggCall
	callKey  []string
	order    *aggOrder // the ORDER BY inside aggregate calls (bind_agg.go)
	// sets are the grouping sets (indexes into groups), nil for a plain
	// GROUP BY; then the last of groups is the set-index column
	// (grouping.go).
	sets [][]int
}

// codeWindowingError is Postgres' windowing_error, which sqlerr lacks.
const codeWindowingError = "42P20"

var aggFuncs = map[string]bool{"count": true, "sum": true, "avg": true, "min": true, "max": true, "bool_and": true, "bool_or": true, "every": true,
	// bind_agg.go
	"first": true, "last": true, "string_agg": true, "array_agg": true, "json_agg": true, "jsonb_agg": true, "json_object_agg": true, "stddev": true, "stddev_samp": true, "stddev_pop": true,
	"variance": true, "var_samp": true, "var_pop": true,
	"corr": true, "covar_pop": true, "covar_samp": true, "regr_avgx": true, "regr_avgy": true, "regr_count": true,
	"regr_intercept": true, "regr_r2": true, "regr_slope": true, "regr_sxx": true, "regr_syy": true, "regr_sxy": true,
	"percentile_cont": true, "percentile_disc": true, "mode": true}

func (b *binder) pos(n ast.ExprNode) int { return b.st.Pos(n) }

// bindExpr binds an expression to a typed expr.Expr.
func (b *binder) bindExpr(n ast.ExprNode, c *exprCtx) (expr.Expr, error) {
	if err := b.guard(); err != nil {
		if e, ok := sqlerr.As(err); ok && e.Position == 0 && e.Code == sqlerr.StatementTooComplex {
			return nil, e.WithPosition(b.pos(n))
		}
		return nil, err
	}
	defer b.depth.Leave()
	if f, ok := n.(*ast.FuncCallExpr); ok && f.FnName.L == "grouping" {
		return b.bindGroupingFunc(f, c) // grouping.go
	}
	if c.agg != nil {
		if e, ok, err := b.bindGrouped(n, c); ok || err != nil {
			return e, err
		}
	}
	switch x := n.(type) {
	case *ast.ParenthesesExpr:
		return b.bindExpr(x.Expr, c)
	case *ast.ColumnNameExpr:
		if c.agg != nil {
			col, err := c.agg.from.resolve(b, x)
			if err != nil {
				return b.outerColumn(x, err) // bind_subquery.go
			}
			return nil, sqlerr.New(sqlerr.GroupingError, "column %q must appear in the GROUP BY clause or be used in an aggregate function", col.display()).WithPosition(b.pos(x))
		}
		col, err := c.sc.resolve(b, x)
		if err != nil {
			return b.outerColumn(x, err) // bind_subquery.go
		}
		return &expr.Column{Index: col.idx, Name: col.display(), T: col.typ}, nil
	case *test_driver.ParamMarkerExpr:
		return b.param(x.Order+1, sqltypes.UnknownType), nil
	case *test_driver.ValueExpr:
		return b.literal(x)
	case *ast.UnaryOperationExpr:
		return b.bindUnary(x, c)
	case *ast.BinaryOperationExpr:
		if f, ok := x.R.(*ast.FuncCallExpr); ok && (f.FnName.O == parser.MarkerAny || f.FnName.O == parser.MarkerAll) {
			return b.bindAny(x, f, f.FnName.O == parser.MarkerAll, c)
		}
		if l, ok := x.L.(*ast.BinaryOperationExpr); ok && x.Op == opcode.Or && l.Op == opcode.Or {
			if f, ok := l.R.(*ast.FuncCallExpr); ok && (f.FnName.O == parser.MarkerJSONGet || f.FnName.O == parser.MarkerJSONGetText) {
				return b.bindJSONGet(x, l.L, x.R, f.FnName.O == parser.MarkerJSONGetText, c)
			}
		}
		return b.bindBinary(x, c)
	case *ast.IsNullExpr:
		e, err := b.bindExpr(x.Expr, c)
		if err != nil {
			return nil, err
		}
		return &expr.IsNull{X: e, Not: x.Not}, nil
	case *ast.IsTruthExpr:
		e, err := b.bindExpr(x.Expr, c)
		if err != nil {
			return nil, err
		}
		if e, err = b.coerce(e, sqltypes.BoolType, x.Expr, "IS TRUE"); err != nil {
			return nil, err
		}
		op := expr.IsNotDistinctFrom
		if x.Not {
			op = expr.IsDistinctFrom
		}
		return &expr.Binary{Op: op, L: e, R: &expr.Literal{Value: x.True != 0, T: sqltypes.BoolType}, T: sqltypes.BoolType}, nil
	case *ast.BetweenExpr:
		return b.bindBetween(x, c)
	case *ast.PatternInExpr:
		return b.bindIn(x, c)
	case *ast.PatternLikeOrIlikeExpr:
		return b.bindLike(x, c)
	case *ast.PatternRegexpExpr:
		return b.bindRegexp(x, c)
	case *ast.CaseExpr:
		return b.bindCase(x, c)
	case *ast.FuncCallExpr:
		if x.FnName.O == "#cast" {
			return b.bindCast(x, c)
		}
		switch x.FnName.O {
		case parser.MarkerArrayCast:
			return b.bindArrayCast(x, c) // bind_subquery.go
		case parser.MarkerSubscript:
			return b.bindSubscript(x, c)
		case parser.MarkerArrayCtor:
			return b.bindArrayCtor(x, c) // bind_array.go
		}
		if x.FnName.O == parser.MarkerArray {
			if q, ok := subQuery(x.Args[0]); ok && len(x.Args) == 1 {
				return b.bindArraySubquery(q, x, c) // bind_subquery.go
			}
		}
		if x.FnName.O == parser.MarkerRegCast {
			return b.bindRegCast(x, c)
		}
		if aggFuncs[x.FnName.L] {
			return nil, b.aggNotAllowed(x, c, x.FnName.L)
		}
		if e, ok, err := b.bindCatalogCall(x, c); ok { // pgcatalog.go
			return e, err
		}
		return b.bindFunc(x, c)
	case *ast.AggregateFuncExpr:
		return nil, b.aggNotAllowed(x, c, strings.ToLower(x.F))
	case *ast.WindowFuncExpr:
		if c.win != nil {
			if i, ok := c.win.index[x]; ok {
				col := c.win.nodes[len(c.win.nodes)-1].Schema()[i]
				return &expr.Column{Index: i, Name: col.Name, T: col.Type}, nil
			}
		}
		clause := c.clause
		if clause == "" || clause == "SELECT" {
			clause = "this context"
		}
		return nil, sqlerr.New(codeWindowingError, "window functions are not allowed in %s", clause).WithPosition(b.pos(x))
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr, *ast.CompareSubqueryExpr:
		return b.bindSubqueryExpr(n, c) // bind_subquery.go
	case *ast.DefaultExpr:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "DEFAULT is not supported").WithPosition(b.pos(x))
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s are not supported", exprKind(n)).WithPosition(b.pos(n))
}

// exprKind names an unsupported expression for messages.
func exprKind(n ast.ExprNode) string {
	switch n.(type) {
	case *ast.RowExpr:
		return "row constructors"
	case *ast.ValuesExpr:
		return "VALUES() functions"
	case *ast.VariableExpr:
		return "variables"
	case *ast.MatchAgainst:
		return "MATCH AGAINST expressions"
	case *ast.TimeUnitExpr, *ast.GetFormatSelectorExpr:
		return "MySQL time unit expressions"
	}
	return "expressions of this kind"
}

func (b *binder) aggNotAllowed(n ast.ExprNode, c *exprCtx, name string) error {
	if c.clause == "aggregate" {
		return sqlerr.New(sqlerr.GroupingError, "aggregate function calls cannot be nested").WithPosition(b.pos(n))
	}
	clause := c.clause
	if clause == "" {
		clause = "this context"
	}
	return sqlerr.New(sqlerr.GroupingError, "aggregate functions are not allowed in %s", clause).WithPosition(b.pos(n))
}

// bindGrouped handles an expression of a grouped query: an aggregate call
// or an expression equal to a GROUP BY item becomes a column of the
// Aggregate's output. ok is false when n is neither (bind its parts).
func (b *binder) bindGrouped(n ast.ExprNode, c *exprCtx) (expr.Expr, bool, error) {
	a := c.agg
	if call, name, ok := aggCall(n); ok {
		e, err := b.bindAggCall(n, call, name, a)
		return e, true, err
	}
	if hasAggregate(n) {
		return nil, false, nil
	}
	if _, ok := n.(*ast.ParenthesesExpr); ok {
		return nil, false, nil
	}
	e, err := b.bindExpr(n, &exprCtx{sc: a.from, clause: c.clause})
	if err != nil {
		return nil, false, nil // bound part by part, so the error lands on the culprit
	}
	k := e.String()
	for i, g := range a.groupKey {
		if g == k {
			return &expr.Column{Index: i, Name: columnName(a.groups[i]), T: a.groups[i].Type()}, true, nil
		}
	}
	if isConstant(e) {
		return e, true, nil
	}
	return nil, false, nil
}

// aggCall recognizes an aggregate function call.
func aggCall(n ast.ExprNode) ([]ast.ExprNode, string, bool) {
	switch x := n.(type) {
	case *ast.AggregateFuncExpr:
		return x.Args, strings.ToLower(x.F), true
	case *ast.FuncCallExpr:
		if aggFuncs[x.FnName.L] {
			return x.Args, x.FnName.L, true
		}
	}
	return nil, "", false
}

// hasAggregate reports whether an aggregate call occurs in n (not
// looking into subqueries).
func hasAggregate(n ast.Node) bool {
	found := false
	n.Accept(visitFn(func(x ast.Node) bool {
		if e, ok := x.(ast.ExprNode); ok {
			if _, _, ok := aggCall(e); ok {
				found = true
			}
		}
		switch x.(type) {
		case *ast.SubqueryExpr, *ast.SelectStmt, *ast.WindowFuncExpr:
			return false
		}
		return !found
	}))
	return found
}

// visitFn adapts a function to ast.Visitor; false skips the children.
type visitFn func(ast.Node) bool

func (v visitFn) Enter(n ast.Node) (ast.Node, bool) { return n, !v(n) }
func (v visitFn) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func (b *binder) bindAggCall(n ast.ExprNode, args []ast.ExprNode, name string, a *aggState) (expr.Expr, error) {
	distinct := false
	name = b.aggName(n, name)
	var order *ast.OrderByClause
	if x, ok := n.(*ast.AggregateFuncExpr); ok {
		distinct = x.Distinct
		order = x.Order
	}
	if name == "every" {
		name = "bool_and"
	}
	within := false
	if x, ok := n.(*ast.AggregateFuncExpr); ok {
		within = b.st.WithinGroup[x]
	}
	switch {
	case within && orderedSetAggs[name]:
		return b.bindOrderedSet(n.(*ast.AggregateFuncExpr), name, a)
	case within:
		// Postgres looks for an ordered-set f(direct args, sort keys) and
		// finds none.
		return nil, b.noOrderedSet(n.(*ast.AggregateFuncExpr), name, a)
	case orderedSetAggs[name]:
		return nil, sqlerr.New(codeWrongObjectType, "WITHIN GROUP is required for ordered-set aggregate %s", name).WithPosition(b.pos(n))
	}
	inner := &exprCtx{sc: a.from, clause: "aggregate"}
	call := AggCall{Func: name, Distinct: distinct}
	if name == "count" && len(args) == 1 && !distinct {
		if v, ok := args[0].(*test_driver.ValueExpr); ok && v.Datum.Kind() != test_driver.KindNull {
			// count(*) reaches us as count(1); both count rows.
			call.Star = true
			args = nil
		}
	}
	for _, arg := range args {
		e, err := b.bindExpr(arg, inner)
		if err != nil {
			return nil, err
		}
		if distinct {
			if err := b.needEquality(e.Type(), arg); err != nil {
				return nil, err
			}
		}
		call.Args = append(call.Args, e)
	}
	var err error
	switch {
	case call.Star:
		call.T = sqltypes.Int8Type
	case name == "string_agg" && len(call.Args) == 2:
		if call.T, err = b.stringAggType(&call, args, n); err != nil {
			return nil, err
		}
	case name == "json_object_agg" && len(call.Args) == 2:
		for i := range call.Args {
			if call.Args[i].Type().Kind == sqltypes.Unknown {
				if call.Args[i], err = b.coerce(call.Args[i], sqltypes.TextType, args[i], name); err != nil {
					return nil, err
				}
			}
		}
		call.T = sqltypes.JSONType
	case isRegrAgg(name) && len(call.Args) == 2:
		if call.T, err = b.regrAggType(&call, args, n); err != nil {
			return nil, err
		}
	case len(call.Args) != 1:
		ts := make([]string, len(call.Args))
		for i, a := range call.Args {
			ts[i] = a.Type().String()
		}
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s) does not exist", name, strings.Join(ts, ", ")).WithPosition(b.pos(n)).
			WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
	default:
		if call.T, call.Args[0], err = b.aggType(name, call.Args[0], n); err != nil {
			return nil, err
		}
	}
	if err := b.aggOrderBy(n, order, &call, a); err != nil {
		return nil, err
	}
	if err := b.aggFilter(n, &call, a); err != nil {
		return nil, err
	}
	return a.add(call, name), nil
}

// add records call (once: an identical call shares its column) and
// returns the column of the Aggregate's output that holds it.
func (a *aggState) add(call AggCall, name string) *expr.Column {
	key := aggKey(call)
	for i, k := range a.callKey {
		if k == key {
			return &expr.Column{Index: len(a.groups) + i, Name: name, T: a.calls[i].T}
		}
	}
	a.calls = append(a.calls, call)
	a.callKey = append(a.callKey, key)
	return &expr.Column{Index: len(a.groups) + len(a.calls) - 1, Name: name, T: call.T}
}

func aggKey(c AggCall) string {
	var sb strings.Builder
	sb.WriteString(c.Func)
	if c.Distinct {
		sb.WriteString(" distinct")
	}
	if c.Star {
		sb.WriteString("(*)")
	}
	for _, a := range c.Args {
		sb.WriteString("(" + a.String() + ")")
	}
	if c.ordered {
		sb.WriteString(" sorted") // its ORDER BY sorts the Aggregate's input
	}
	if c.Desc {
		sb.WriteString(" within group desc")
	}
	return sb.String()
}

// aggType is the result type of an aggregate, Postgres' overloads.
func (b *binder) aggType(name string, arg expr.Expr, n ast.ExprNode) (sqltypes.Type, expr.Expr, error) {
	t := arg.Type()
	if t.Kind == sqltypes.Unknown {
		if name == "count" || name == "min" || name == "max" || name == "first" || name == "last" || name == "json_agg" || name == "jsonb_agg" {
			var err error
			if arg, err = b.coerce(arg, sqltypes.TextType, n, name); err != nil {
				return t, nil, err
			}
			t = sqltypes.TextType
		}
	}
	bad := func() (sqltypes.Type, expr.Expr, error) {
		return t, nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s) does not exist", name, t).WithPosition(b.pos(n)).
			WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
	}
	if t.Kind == sqltypes.Void && name != "count" {
		return bad() // void has no operators: only count takes it
	}
	switch name {
	case "count":
		return sqltypes.Int8Type, arg, nil
	case "json_agg":
		return sqltypes.JSONType, arg, nil
	case "jsonb_agg":
		return sqltypes.JSONBType, arg, nil
	case "min", "max":
		if t.Kind == sqltypes.Bool || t.Kind == sqltypes.Bytea || t.Kind == sqltypes.JSON || t.Kind == sqltypes.JSONB {
			return bad()
		}
		if t.Kind == sqltypes.Varchar {
			return sqltypes.TextType, arg, nil
		}
		return t, arg, nil
	case "sum":
		switch t.Kind {
		case sqltypes.Int2, sqltypes.Int4:
			return sqltypes.Int8Type, arg, nil
		case sqltypes.Int8, sqltypes.Numeric:
			// Postgres' sum keeps the arguments' display scale.
			d, ok := t.DisplayScale()
			if !ok {
				d = -1
			}
			return sqltypes.NumericDisplay(d), arg, nil
		case sqltypes.Float4, sqltypes.Float8, sqltypes.Interval:
			return t, arg, nil
		}
	case "avg":
		switch t.Kind {
		case sqltypes.Int2, sqltypes.Int4, sqltypes.Int8, sqltypes.Numeric:
			// sum / count: a numeric division's result scale.
			return numericResult(expr.Div, sqltypes.NumericDisplay(-1), sqltypes.Int8Type), arg, nil
		case sqltypes.Float4, sqltypes.Float8:
			return sqltypes.Float8Type, arg, nil
		case sqltypes.Interval:
			return t, arg, nil
		}
	case "bool_and", "bool_or":
		if t.Kind == sqltypes.Bool {
			return t, arg, nil
		}
	default:
		if rt, ok := b.moreAggTypes(name, t); ok {
			return rt, arg, nil
		}
	}
	return bad()
}

// param returns $n, recording its type when t is known and it had none.
func (b *binder) param(n int, t sqltypes.Type) *expr.Param {
	for len(b.params) < n {
		b.params = append(b.params, sqltypes.UnknownType)
	}
	if b.params[n-1].Kind == sqltypes.Unknown {
		b.params[n-1] = t
	}
	return &expr.Param{N: n, T: b.params[n-1]}
}

// literal types a parser constant like Postgres: integers int4 or int8
// (numeric beyond), decimals numeric, strings unknown until context.
func (b *binder) literal(v *test_driver.ValueExpr) (expr.Expr, error) {
	d := &v.Datum
	switch d.Kind() {
	case test_driver.KindNull:
		return &expr.Literal{T: sqltypes.UnknownType}, nil
	case test_driver.KindInt64:
		i := d.GetInt64()
		// TiDB reads TRUE/FALSE as 1/0: the source text tells them apart.
		if off := v.OriginTextPosition(); off >= 0 && off < len(b.st.Rewritten) {
			w := strings.ToLower(b.st.Rewritten[off:min(len(b.st.Rewritten), off+5)])
			if strings.HasPrefix(w, "true") || strings.HasPrefix(w, "false") {
				return &expr.Literal{Value: i != 0, T: sqltypes.BoolType}, nil
			}
		}
		if i >= math.MinInt32 && i <= math.MaxInt32 {
			return &expr.Literal{Value: i, T: sqltypes.Int4Type}, nil
		}
		return &expr.Literal{Value: i, T: sqltypes.Int8Type}, nil
	case test_driver.KindUint64:
		if u := d.GetUint64(); u <= math.MaxInt64 {
			if u <= math.MaxInt32 {
				return &expr.Literal{Value: int64(u), T: sqltypes.Int4Type}, nil
			}
			return &expr.Literal{Value: int64(u), T: sqltypes.Int8Type}, nil
		}
		return decodeLiteral(sqltypes.NumericDisplay(0), strconv.FormatUint(d.GetUint64(), 10), b.opts.Types)
	case test_driver.KindMysqlDecimal:
		s := d.GetMysqlDecimal().String()
		return decodeLiteral(sqltypes.NumericDisplay(numericInputScale(s)), s, b.opts.Types)
	case test_driver.KindFloat64:
		return &expr.Literal{Value: d.GetFloat64(), T: sqltypes.Float8Type}, nil
	case test_driver.KindString:
		return &expr.Literal{Value: d.GetString(), T: sqltypes.UnknownType}, nil
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "literal of this kind is not supported").WithPosition(b.pos(v))
}

// coerce converts e to t the way Postgres does implicitly: an unknown
// literal is read as t, an untyped parameter takes t, an implicit cast is
// made explicit; anything else is 42804 naming both types and what.
func (b *binder) coerce(e expr.Expr, t sqltypes.Type, at ast.ExprNode, what string) (expr.Expr, error) {
	return b.convert(e, t, at, what, implicitCast)
}

// assign converts e for storing in a column of type t (INSERT).
func (b *binder) assign(e expr.Expr, t sqltypes.Type, at ast.ExprNode, what string) (expr.Expr, error) {
	e, err := b.convert(e, t, at, what, assignmentCast)
	if c, ok := e.(*expr.Cast); ok && err == nil && t.Kind == sqltypes.Varchar && t.Length != sqltypes.NoLimit {
		c.Assign = true
	}
	return e, err
}

func (b *binder) convert(e expr.Expr, t sqltypes.Type, at ast.ExprNode, what string, allowed func(from, to sqltypes.Type) bool) (expr.Expr, error) {
	et := e.Type()
	if et == t {
		return e, nil
	}
	switch x := e.(type) {
	case *expr.Func:
		if x.Fn == functions.ArraySubscript && et.Kind == sqltypes.Unknown {
			// An element of an array of unknown element type (bind_subquery.go)
			// is read as t, like an unknown literal.
			elem := &expr.Func{Fn: x.Fn, Args: x.Args, T: sqltypes.TextType}
			return &expr.Cast{X: elem, T: t}, nil
		}
	case *expr.Param:
		if et.Kind == sqltypes.Unknown {
			p := b.param(x.N, t)
			if p.T == t {
				return p, nil
			}
			// Another use already fixed the parameter's type (this
			// expression was bound before it): cast as for any value.
			if !allowed(p.T, t) {
				return nil, sqlerr.New("42P08", "inconsistent types deduced for parameter $%d", x.N).WithPosition(b.pos(at)).
					WithDetail("%s versus %s", p.T, t)
			}
			return &expr.Cast{X: p, T: t}, nil
		}
	case *expr.Literal:
		if x.Value == nil {
			return &expr.Literal{T: t}, nil
		}
		if et.Kind == sqltypes.Unknown {
			l, err := decodeLiteral(t, x.Value.(string), b.opts.Types)
			if err != nil {
				return nil, withPos(err, b.pos(at))
			}
			return l, nil
		}
		if allowed(et, t) {
			if l, ok := b.foldCast(x, t); ok {
				return l, nil
			}
		}
	}
	if allowed(et, t) {
		if et.Kind == t.Kind && (t.Kind == sqltypes.Text || t.Kind == sqltypes.Varchar && t.Length == sqltypes.NoLimit) {
			// Only the modifiers differ and the value cannot change.
			return retype(e, t), nil
		}
		return &expr.Cast{X: e, T: t}, nil
	}
	if strings.HasPrefix(what, "argument of ") {
		return nil, errDatatype(b.pos(at), "%s must be type %s, not type %s", what, t, et)
	}
	return nil, errDatatype(b.pos(at), "%s is of type %s but expression is of type %s", what, t, et).
		WithHint("You will need to rewrite or cast the expression.")
}

// retype gives e the type t without a conversion (same representation).
func retype(e expr.Expr, t sqltypes.Type) expr.Expr {
	return &expr.Cast{X: e, T: t}
}

// foldCast converts a literal to t at plan time, through text as
// Postgres' input functions would (int to numeric, numeric to float).
func (b *binder) foldCast(l *expr.Literal, t sqltypes.Type) (*expr.Literal, bool) {
	s, ok := literalText(l)
	if !ok {
		return nil, false
	}
	out, err := decodeLiteral(t, s, b.opts.Types)
	if err != nil {
		return nil, false // leave the cast to run time, which reports it
	}
	return out, true
}

// withPos positions an error that has no position yet.
func withPos(err error, pos int) error {
	if e, ok := sqlerr.As(err); ok && e.Position == 0 && pos > 0 {
		c := *e
		return c.WithPosition(pos)
	}
	return err
}

func (b *binder) bindUnary(x *ast.UnaryOperationExpr, c *exprCtx) (expr.Expr, error) {
	if v, ok := x.V.(*test_driver.ValueExpr); ok && x.Op == opcode.Minus && v.Datum.Kind() == test_driver.KindUint64 && v.Datum.GetUint64() == 1<<63 {
		// Postgres folds the sign into the literal, so
		// -9223372036854775808 is the smallest bigint, not a numeric.
		return &expr.Literal{Value: int64(math.MinInt64), T: sqltypes.Int8Type}, nil
	}
	e, err := b.bindExpr(x.V, c)
	if err != nil {
		return nil, err
	}
	switch x.Op {
	case opcode.Not, opcode.Not2:
		if e, err = b.coerce(e, sqltypes.BoolType, x.V, "argument of NOT"); err != nil {
			return nil, err
		}
		return &expr.Unary{Op: expr.Not, X: e, T: sqltypes.BoolType}, nil
	case opcode.Plus:
		return e, nil
	case opcode.Minus:
		if l, ok := e.(*expr.Literal); ok {
			if n, ok := negate(l); ok {
				return n, nil
			}
		}
		t := e.Type()
		if t.Kind == sqltypes.Unknown {
			if e, err = b.coerce(e, sqltypes.Float8Type, x.V, "operand"); err != nil {
				return nil, err
			}
			t = sqltypes.Float8Type
		}
		if categoryOf(t) != catNumeric && t.Kind != sqltypes.Interval {
			return nil, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: - %s", t).WithPosition(b.pos(x)).
				WithHint("No operator matches the given name and argument type. You might need to add an explicit type cast.")
		}
		return &expr.Unary{Op: expr.Neg, X: e, T: t}, nil
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "operator %s is not supported", x.Op).WithPosition(b.pos(x))
}

// negate folds -literal for numbers and intervals.
func negate(l *expr.Literal) (*expr.Literal, bool) {
	switch v := l.Value.(type) {
	case int64:
		if v == math.MinInt64 {
			return nil, false
		}
		t := l.T
		if -v == math.MinInt32 && t.Kind == sqltypes.Int8 {
			// -2147483648 is an int4 literal in Postgres.
			t = sqltypes.Int4Type
		}
		return &expr.Literal{Value: -v, T: t}, true
	case float64:
		return &expr.Literal{Value: -v, T: l.T}, true
	case decimal128.Num:
		return &expr.Literal{Value: v.Negate(), T: l.T}, true
	}
	if iv, ok := intervalValue(l); ok {
		if iv.Months == math.MinInt32 || iv.Days == math.MinInt32 || iv.Nanoseconds == math.MinInt64 {
			return nil, false
		}
		iv.Months, iv.Days, iv.Nanoseconds = -iv.Months, -iv.Days, -iv.Nanoseconds
		return &expr.Literal{Value: iv, T: l.T}, true
	}
	return nil, false
}
