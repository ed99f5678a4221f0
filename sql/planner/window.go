package planner

import (
	"strconv"
	"strings"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/limits"
	"github.com/asofsql/asofsql/sql/ordering"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// WindowFunc is one window function call of a Window node.
type WindowFunc struct {
	// Func is row_number, rank, dense_rank, percent_rank, cume_dist,
	// ntile, lag, lead, first_value, last_value, nth_value, or an
	// aggregate (count, sum, avg, min, max).
	Func string
	Args []expr.Expr
	Star bool // count(*)
	T    sqltypes.Type
	// Frame is the call's frame (DefaultFrame when none is written);
	// ranking functions and lag/lead ignore it, as in Postgres.
	Frame Frame
}

// Window computes window functions sharing one window: rows are grouped
// by Partition and ordered by Order within each partition (both over
// input columns; lowering sorts, stably); each Func has its own frame.
// Output is the input columns, then one column per Func. The output
// order is unspecified.
type Window struct {
	Input     Node
	Partition []int
	Order     ordering.Lex
	Funcs     []WindowFunc
	// Serial says why the window runs serially at more than one worker
	// ("" when it runs in parallel or at one worker; EXPLAIN shows it).
	Serial string
	cols   []Column
}

var _ Node = (*Window)(nil)

func (w *Window) Schema() []Column                 { return w.cols }
func (w *Window) Children() []Node                 { return []Node{w.Input} }
func (w *Window) Ordering() ordering.Props         { return ordering.Props{} }
func (w *Window) RequiredOrdering() []ordering.Lex { return []ordering.Lex{nil} }
func (w *Window) PreservesOrder() []bool           { return []bool{false} }

// windowState collects the window functions of one query level before
// its select list is bound: each call gets its output column.
type windowState struct {
	nodes []*Window
	keys  []string
	index map[*ast.WindowFuncExpr]int // output column of each call
}

// bindWindows finds the window calls in the select list and ORDER BY,
// binds them, stacks one Window node per distinct window over node, and
// records each call's output column.
func (b *binder) bindWindows(node Node, sc *scope, fields []*ast.SelectField, ob *ast.OrderByClause, specs []ast.WindowSpec) (Node, *windowState, error) {
	defs, err := b.windowDefs(specs)
	if err != nil {
		return nil, nil, err
	}
	var calls []*ast.WindowFuncExpr
	collect := func(n ast.Node) {
		n.Accept(visitFn(func(x ast.Node) bool {
			switch w := x.(type) {
			case *ast.WindowFuncExpr:
				calls = append(calls, w)
				return false
			case *ast.SubqueryExpr:
				return false
			}
			return true
		}))
	}
	for _, f := range fields {
		if f.Expr != nil {
			collect(f.Expr)
		}
	}
	if ob != nil {
		for _, it := range ob.Items {
			collect(it.Expr)
		}
	}
	if len(calls) == 0 {
		return node, nil, nil
	}
	ws := &windowState{index: map[*ast.WindowFuncExpr]int{}}
	type pending struct {
		call *ast.WindowFuncExpr
		win  int
		k    int
	}
	var ps []pending
	byKey := map[string]int{} // window key -> index in ws.nodes
	for _, c := range calls {
		if c.IgnoreNull || c.FromLast {
			return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "IGNORE NULLS and FROM LAST are not supported").WithPosition(b.pos(c))
		}
		ew, err := b.resolveWindow(&c.Spec, defs)
		if err != nil {
			return nil, nil, err.(*sqlerr.Error).WithPosition(b.pos(c))
		}
		part, order, key, err := b.windowSpec(ew, sc, c)
		if err != nil {
			return nil, nil, err
		}
		var orderTypes []sqltypes.Type
		in := node.Schema()
		for _, k := range order {
			orderTypes = append(orderTypes, in[k.Col].Type)
		}
		frame, err := b.bindFrame(ew.frame, orderTypes, sc, c)
		if err != nil {
			return nil, nil, err
		}
		wi, ok := byKey[key]
		if !ok {
			// Each distinct window is one more node stacked on the input:
			// as deep as nesting, and bounded like it.
			if b.depth.Level()+len(ws.nodes) >= limits.MaxDepth {
				return nil, nil, limits.DepthError().WithPosition(b.pos(c))
			}
			byKey[key] = len(ws.nodes)
			ws.keys = append(ws.keys, key)
			ws.nodes = append(ws.nodes, &Window{Partition: part, Order: order})
			wi = len(ws.nodes) - 1
		}
		f, err := b.windowFunc(c, sc)
		if err != nil {
			return nil, nil, err
		}
		f.Frame = frame
		w := ws.nodes[wi]
		w.Funcs = append(w.Funcs, f)
		ps = append(ps, pending{call: c, win: wi, k: len(w.Funcs) - 1})
	}
	// Stack the windows; each adds its functions after its input.
	base := make([]int, len(ws.nodes))
	for i, w := range ws.nodes {
		w.Input = node
		in := node.Schema()
		base[i] = len(in)
		w.cols = append([]Column(nil), in...)
		for _, f := range w.Funcs {
			w.cols = append(w.cols, Column{Name: f.Func, Type: f.T, Nullable: true})
		}
		node = w
	}
	for _, p := range ps {
		ws.index[p.call] = base[p.win] + p.k
	}
	return node, ws, nil
}

// windowSpec binds PARTITION BY and ORDER BY to input columns.
func (b *binder) windowSpec(spec effWindow, sc *scope, at ast.ExprNode) ([]int, ordering.Lex, string, error) {
	col := func(n ast.ExprNode, what string) (int, error) {
		e, err := b.bindExpr(n, &exprCtx{sc: sc, clause: "window definitions"})
		if err != nil {
			return 0, err
		}
		check := b.needEquality
		if what == "ORDER BY" {
			check = b.needOrdering
		}
		if err := check(e.Type(), n); err != nil {
			return 0, err
		}
		c, ok := e.(*expr.Column)
		if !ok {
			return 0, sqlerr.New(sqlerr.FeatureNotSupported, "window %s on an expression is not supported; compute it in a subquery", what).WithPosition(b.pos(n))
		}
		return c.Index, nil
	}
	var part []int
	var order ordering.Lex
	var key strings.Builder
	if spec.part != nil {
		for _, it := range spec.part.Items {
			c, err := col(it.Expr, "PARTITION BY")
			if err != nil {
				return nil, nil, "", err
			}
			part = append(part, c)
			key.WriteString("p" + strconv.Itoa(c) + ",")
		}
	}
	if spec.order != nil {
		for _, it := range spec.order.Items {
			c, err := col(it.Expr, "ORDER BY")
			if err != nil {
				return nil, nil, "", err
			}
			nf, ok := b.st.NullsFirst[it]
			if !ok {
				nf = it.Desc
			}
			order = append(order, ordering.Key{Col: c, Desc: it.Desc, NullsFirst: nf})
			key.WriteString("o" + strconv.Itoa(c))
			if it.Desc {
				key.WriteString("d")
			}
			if nf {
				key.WriteString("n")
			}
			key.WriteString(",")
		}
	}
	return part, order, key.String(), nil
}

func (b *binder) windowFunc(c *ast.WindowFuncExpr, sc *scope) (WindowFunc, error) {
	name := strings.ToLower(c.Name)
	f := WindowFunc{Func: name}
	args := c.Args
	if name == "count" && len(args) == 1 {
		if v, ok := args[0].(*test_driver.ValueExpr); ok && v.Datum.Kind() != test_driver.KindNull {
			f.Star, args = true, nil
		}
	}
	if c.Distinct {
		return f, sqlerr.New(sqlerr.FeatureNotSupported, "DISTINCT is not implemented for window functions").WithPosition(b.pos(c))
	}
	ctx := &exprCtx{sc: sc, clause: "window function arguments"}
	for _, a := range args {
		e, err := b.bindExpr(a, ctx)
		if err != nil {
			return f, err
		}
		f.Args = append(f.Args, e)
	}
	bad := func() (WindowFunc, error) {
		ts := make([]string, len(f.Args))
		for i, a := range f.Args {
			ts[i] = a.Type().String()
		}
		return f, sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s) does not exist", name, strings.Join(ts, ", ")).WithPosition(b.pos(c))
	}
	switch name {
	case "row_number", "rank", "dense_rank":
		if len(f.Args) != 0 {
			return bad()
		}
		f.T = sqltypes.Int8Type
	case "percent_rank", "cume_dist":
		if len(f.Args) != 0 {
			return bad()
		}
		f.T = sqltypes.Float8Type
	case "ntile":
		if len(f.Args) != 1 {
			return bad()
		}
		var err error
		if f.Args[0], err = b.coerce(f.Args[0], sqltypes.Int4Type, args[0], "ntile"); err != nil {
			return f, err
		}
		if hasColumn(f.Args[0]) {
			return f, sqlerr.New(sqlerr.FeatureNotSupported, "ntile with a bucket count that varies by row is not supported").WithPosition(b.pos(args[0]))
		}
		f.T = sqltypes.Int4Type
	case "nth_value":
		if len(f.Args) != 2 {
			return bad()
		}
		f.Args[0] = resolveUnknown(f.Args[0])
		f.T = f.Args[0].Type()
		var err error
		if f.Args[1], err = b.coerce(f.Args[1], sqltypes.Int4Type, args[1], "nth_value"); err != nil {
			return f, err
		}
		if hasColumn(f.Args[1]) {
			return f, sqlerr.New(sqlerr.FeatureNotSupported, "nth_value with a position that varies by row is not supported").WithPosition(b.pos(args[1]))
		}
	case "first_value", "last_value":
		if len(f.Args) != 1 {
			return bad()
		}
		f.Args[0] = resolveUnknown(f.Args[0])
		f.T = f.Args[0].Type()
	case "lag", "lead":
		if len(f.Args) < 1 || len(f.Args) > 3 {
			return bad()
		}
		f.Args[0] = resolveUnknown(f.Args[0])
		f.T = f.Args[0].Type()
		var err error
		if len(f.Args) > 1 {
			if f.Args[1], err = b.coerce(f.Args[1], sqltypes.Int4Type, args[1], "lag/lead offset"); err != nil {
				return f, err
			}
		}
		if len(f.Args) > 2 {
			if f.Args[2], err = b.coerce(f.Args[2], f.T, args[2], "lag/lead default"); err != nil {
				return f, err
			}
		}
	case "count", "sum", "avg", "min", "max":
		if f.Star {
			f.T = sqltypes.Int8Type
			break
		}
		if len(f.Args) != 1 {
			return bad()
		}
		t, arg, err := b.aggType(name, f.Args[0], c)
		if err != nil {
			return f, err
		}
		f.T, f.Args[0] = t, arg
	case "stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop", "bool_and", "bool_or", "every",
		"string_agg", "array_agg", "first", "last", "json_agg", "jsonb_agg", "json_object_agg":
		return f, sqlerr.New(sqlerr.FeatureNotSupported, "%s as a window function is not supported", name).WithPosition(b.pos(c))
	default:
		return bad()
	}
	return f, nil
}
