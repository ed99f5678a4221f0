package planner

import (
	"math"
	"strings"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/functions"
	"github.com/asofsql/asofsql/sql/ordering"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// bindQuery binds a SELECT or set operation to a node.
func (b *binder) bindQuery(n ast.Node, env *cteEnv) (Node, error) {
	if err := b.guard(); err != nil {
		return nil, err
	}
	defer b.depth.Leave()
	switch x := n.(type) {
	case *ast.SelectStmt:
		return b.bindSelect(x, env)
	case *ast.SetOprStmt:
		env, err := b.withEnv(x.With, env)
		if err != nil {
			return nil, err
		}
		return b.bindSetOpr(x.SelectList, x.OrderBy, x.Limit, env)
	case *ast.SetOprSelectList:
		env, err := b.withEnv(x.With, env)
		if err != nil {
			return nil, err
		}
		return b.bindSetOpr(x, x.OrderBy, x.Limit, env)
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "query %T is not supported", n)
}

// output is one select-list column under construction.
type output struct {
	e    expr.Expr
	col  Column
	name string // for ORDER BY name lookup ("" for hidden)
}

func (b *binder) bindSelect(s *ast.SelectStmt, env *cteEnv) (Node, error) {
	env, err := b.withEnv(s.With, env)
	if err != nil {
		return nil, err
	}
	defer func(saved *cteEnv) { b.env = saved }(b.env)
	b.env = env
	switch {
	case s.LockInfo != nil:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "SELECT ... FOR UPDATE/SHARE is not supported")
	case s.SelectIntoOpt != nil:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "SELECT INTO is not supported")
	case s.Kind == ast.SelectStmtKindValues:
		return b.bindValues(s)
	}
	if call, name, ok := seriesCall(s); ok { // series.go
		if call.FnName.O == parser.MarkerUnnest {
			return b.bindUnnest(call, name)
		}
		if call.FnName.O == parser.MarkerRegexpMatches {
			return b.bindRegexpMatches(call, name)
		}
		return b.bindSeries(call, name)
	}
	moveSelectSRF(s) // srf_select.go
	var from *rel
	if s.From == nil {
		from = &rel{node: &Values{Rows: [][]expr.Expr{{}}}, sc: &scope{}}
	} else if from, err = b.bindJoin(s.From.TableRefs, env); err != nil {
		return nil, err
	}
	node := from.node
	if s.Where != nil {
		cond, err := b.bindExpr(s.Where, &exprCtx{sc: from.sc, clause: "WHERE"})
		if err != nil {
			return nil, err
		}
		if cond, err = b.boolClause(cond, s.Where, "WHERE"); err != nil {
			return nil, err
		}
		node = &Filter{Input: node, Cond: cond}
	}

	ctx := &exprCtx{sc: from.sc, clause: "SELECT"}
	grouped := s.GroupBy != nil || s.Having != nil
	for _, f := range s.Fields.Fields {
		if f.Expr != nil && hasAggregate(f.Expr) {
			grouped = true
		}
	}
	if s.OrderBy != nil {
		for _, it := range s.OrderBy.Items {
			if hasAggregate(it.Expr) {
				grouped = true
			}
		}
	}
	distinctOn := b.st.DistinctOn[s]
	for _, e := range distinctOn {
		if hasAggregate(e) {
			grouped = true
		}
	}
	var agg *aggState
	if grouped && hasWindow(s.Fields.Fields, s.OrderBy) {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "window functions in a grouped query are not supported").
			WithHint("Aggregate in a subquery and apply the window function outside it.")
	}
	if !grouped {
		var ws *windowState
		if node, ws, err = b.bindWindows(node, from.sc, s.Fields.Fields, s.OrderBy, s.WindowSpecs); err != nil {
			return nil, err
		}
		ctx.win = ws
	}
	if grouped {
		agg = &aggState{from: from.sc}
		if s.GroupBy != nil && hasGroupingSets(s.GroupBy) { // grouping.go
			if err := b.bindGroupingSets(s.GroupBy, s.Fields.Fields, agg); err != nil {
				return nil, err
			}
		} else if s.GroupBy != nil {
			for _, it := range s.GroupBy.Items {
				n := b.groupItem(it.Expr, s.Fields.Fields, from.sc)
				g, err := b.bindExpr(n, &exprCtx{sc: from.sc, clause: "GROUP BY"})
				if err != nil {
					return nil, err
				}
				if err := b.needEquality(g.Type(), it.Expr); err != nil {
					return nil, err
				}
				agg.groups = append(agg.groups, g)
				agg.groupKey = append(agg.groupKey, g.String())
			}
		}
		ctx.agg = agg
	}

	// Select list.
	var outs []output
	for _, f := range s.Fields.Fields {
		if f.WildCard != nil {
			ws, err := b.expandStar(f.WildCard, from.sc, agg)
			if err != nil {
				return nil, err
			}
			outs = append(outs, ws...)
			continue
		}
		e, err := b.bindExpr(f.Expr, ctx)
		if err != nil {
			return nil, err
		}
		name := f.AsName.O
		if name == "" {
			name = b.itemName(f.Expr, e) // pgcatalog.go
		}
		e = resolveUnknown(e)
		outs = append(outs, output{e: e, name: name, col: Column{Name: name, Type: e.Type(), Nullable: true}})
	}
	if grouped {
		var having expr.Expr
		if s.Having != nil {
			hctx := &exprCtx{sc: from.sc, clause: "HAVING", agg: agg}
			if having, err = b.bindExpr(s.Having.Expr, hctx); err != nil {
				return nil, err
			}
			if having, err = b.boolClause(having, s.Having.Expr, "HAVING"); err != nil {
				return nil, err
			}
		}
		// ORDER BY and DISTINCT ON may add aggregates: bind them before
		// building Aggregate.
		keys, extra, on, err := b.sortAndDistinctOn(s, distinctOn, outs, ctx)
		if err != nil {
			return nil, err
		}
		a := &Aggregate{Input: sortAggInput(node, agg), GroupBy: agg.groups, Aggs: agg.calls}
		if agg.sets != nil {
			a.GroupBy, a.Sets = agg.groups[:len(agg.groups)-1], agg.sets
		}
		for _, g := range agg.groups {
			a.cols = append(a.cols, Column{Name: columnName(g), Type: g.Type(), Nullable: true})
		}
		for _, c := range agg.calls {
			a.cols = append(a.cols, Column{Name: c.Func, Type: c.T, Nullable: c.Func != "count"})
		}
		node = a
		if having != nil {
			node = &Filter{Input: node, Cond: having}
		}
		if err := b.checkDistinct(s, outs); err != nil {
			return nil, err
		}
		return b.finishSelect(node, append(outs, extra...), len(extra), keys, s.Distinct, on, s.Limit)
	}
	keys, extra, on, err := b.sortAndDistinctOn(s, distinctOn, outs, ctx)
	if err != nil {
		return nil, err
	}
	if err := b.checkDistinct(s, outs); err != nil {
		return nil, err
	}
	return b.finishSelect(node, append(outs, extra...), len(extra), keys, s.Distinct, on, s.Limit)
}

// checkDistinct refuses SELECT DISTINCT over a type without equality, at
// the select-list item when one item makes one output.
func (b *binder) checkDistinct(s *ast.SelectStmt, outs []output) error {
	if !s.Distinct {
		return nil
	}
	for i, o := range outs {
		var at ast.ExprNode
		if len(s.Fields.Fields) == len(outs) {
			at = s.Fields.Fields[i].Expr
		}
		if err := b.needEquality(o.e.Type(), at); err != nil {
			return err
		}
	}
	return nil
}

// distinctOnPlan is a bound DISTINCT ON: its key columns (of the select
// list with hidden columns) and the leading sort keys that order them.
type distinctOnPlan struct {
	keys  []int
	order ordering.Lex
}

// sortAndDistinctOn binds ORDER BY and, for SELECT DISTINCT ON (on), the
// DISTINCT ON items, enforcing Postgres' rule: the ORDER BY items that
// are DISTINCT ON items come first, and DISTINCT ON items missing from
// ORDER BY are allowed only when ORDER BY has no other items (they then
// sort after it, ascending). A violation is 42P10 at the DISTINCT ON
// item, as in transformDistinctOnClause.
func (b *binder) sortAndDistinctOn(s *ast.SelectStmt, on []ast.ExprNode, outs []output, ctx *exprCtx) (ordering.Lex, []output, *distinctOnPlan, error) {
	keys, extra, err := b.orderBy(s.OrderBy, outs, ctx, s.Distinct)
	if err != nil || len(on) == 0 {
		return keys, extra, nil, err
	}
	items := make([]*ast.ByItem, len(on))
	for i, e := range on {
		items[i] = &ast.ByItem{Expr: e}
		// An integer constant is a select-list position, as in ORDER BY
		// (TiDB's grammar makes PositionExprs only there).
		if v, ok := e.(*test_driver.ValueExpr); ok && (v.Datum.Kind() == test_driver.KindInt64 || v.Datum.Kind() == test_driver.KindUint64) {
			n := v.Datum.GetInt64()
			if v.Datum.Kind() == test_driver.KindUint64 {
				n = int64(min(v.Datum.GetUint64(), math.MaxInt32))
			}
			if n < 1 || n > int64(len(outs)) {
				return nil, nil, nil, sqlerr.New(sqlerr.InvalidColumnReference, "DISTINCT ON position %d is not in select list", n).WithPosition(b.pos(e))
			}
			items[i].Expr = &ast.PositionExpr{N: int(n)}
		}
	}
	dkeys, more, err := b.sortItems(items, append(outs, extra...), ctx, false, "DISTINCT ON")
	if err != nil {
		return nil, nil, nil, err
	}
	extra = append(extra, more...)
	mismatch := func(col int) error {
		for i, k := range dkeys {
			if k.Col == col {
				return sqlerr.New(sqlerr.InvalidColumnReference, "SELECT DISTINCT ON expressions must match initial ORDER BY expressions").
					WithPosition(b.pos(on[i]))
			}
		}
		return nil
	}
	isOn := func(col int) bool {
		for _, k := range dkeys {
			if k.Col == col {
				return true
			}
		}
		return false
	}
	plan := &distinctOnPlan{}
	covered := map[int]bool{}
	skipped := false
	for _, k := range keys {
		if !isOn(k.Col) {
			skipped = true
			continue
		}
		if skipped {
			return nil, nil, nil, mismatch(k.Col)
		}
		if !covered[k.Col] {
			covered[k.Col] = true
			plan.keys = append(plan.keys, k.Col)
			plan.order = append(plan.order, k)
		}
	}
	for _, k := range dkeys {
		if covered[k.Col] {
			continue
		}
		if skipped {
			return nil, nil, nil, mismatch(k.Col)
		}
		covered[k.Col] = true
		plan.keys = append(plan.keys, k.Col)
		plan.order = append(plan.order, k)
		keys = append(keys, k)
	}
	return keys, extra, plan, nil
}

// resolveUnknown gives an unknown-typed output (SELECT 'x') type text, as
// Postgres does for a top-level select list.
func resolveUnknown(e expr.Expr) expr.Expr {
	if e.Type().Kind != sqltypes.Unknown {
		return e
	}
	if l, ok := e.(*expr.Literal); ok {
		return &expr.Literal{Value: l.Value, T: sqltypes.TextType}
	}
	if f, ok := e.(*expr.Func); ok && f.Fn == functions.ArraySubscript { // bind_subquery.go
		return &expr.Func{Fn: f.Fn, Args: f.Args, T: sqltypes.TextType}
	}
	return e
}

func (b *binder) boolClause(e expr.Expr, at ast.ExprNode, clause string) (expr.Expr, error) {
	t := e.Type()
	if t.Kind != sqltypes.Bool && t.Kind != sqltypes.Unknown {
		return nil, errDatatype(b.pos(at), "argument of %s must be type boolean, not type %s", clause, t)
	}
	return b.coerce(e, sqltypes.BoolType, at, "argument of "+clause)
}

// finishSelect stacks Project, Distinct, Sort, DistinctOn, Limit and the final
// Project that drops ORDER BY-only columns.
func (b *binder) finishSelect(node Node, outs []output, hidden int, keys ordering.Lex, distinct bool, on *distinctOnPlan, lim *ast.Limit) (Node, error) {
	p := &Project{Input: node}
	for _, o := range outs {
		p.Exprs = append(p.Exprs, o.e)
		p.Cols = append(p.Cols, o.col)
	}
	markNotNull(p)
	node = p
	if distinct {
		node = &Distinct{Input: node}
	}
	if len(keys) > 0 {
		node = &Sort{Input: node, Keys: keys}
	}
	if on != nil {
		node = &DistinctOn{Input: node, Keys: on.keys, Order: on.order}
	}
	node, err := b.limit(node, lim)
	if err != nil {
		return nil, err
	}
	if hidden > 0 {
		vis := len(outs) - hidden
		q := &Project{Input: node}
		for i := 0; i < vis; i++ {
			q.Exprs = append(q.Exprs, &expr.Column{Index: i, Name: p.Cols[i].Name, T: p.Cols[i].Type})
			q.Cols = append(q.Cols, p.Cols[i])
		}
		node = q
	}
	return node, nil
}

// markNotNull copies NOT NULL through plain column references.
func markNotNull(p *Project) {
	in := p.Input.Schema()
	for i, e := range p.Exprs {
		if c, ok := e.(*expr.Column); ok && c.Index < len(in) {
			p.Cols[i].Nullable = in[c.Index].Nullable
			if p.Cols[i].Table == "" {
				p.Cols[i].Table = in[c.Index].Table
			}
		}
	}
}

func (b *binder) limit(node Node, lim *ast.Limit) (Node, error) {
	if lim == nil {
		return node, nil
	}
	l := &Limit{Input: node}
	var err error
	if l.Count, err = b.limitValue(lim.Count, "LIMIT"); err != nil {
		return nil, err
	}
	if l.Offset, err = b.limitValue(lim.Offset, "OFFSET"); err != nil {
		return nil, err
	}
	if l.Count == nil && l.Offset == nil {
		return node, nil
	}
	return l, nil
}

func (b *binder) limitValue(n ast.ExprNode, what string) (expr.Expr, error) {
	if n == nil {
		return nil, nil
	}
	if v, ok := n.(*test_driver.ValueExpr); ok && v.Datum.Kind() == test_driver.KindUint64 && v.Datum.GetUint64() == math.MaxUint64 {
		return nil, nil // LIMIT ALL
	}
	e, err := b.bindExpr(n, &exprCtx{sc: &scope{}, clause: what})
	if err != nil {
		return nil, err
	}
	if e, err = b.coerce(e, sqltypes.Int8Type, n, "argument of "+what); err != nil {
		return nil, err
	}
	if l, ok := e.(*expr.Literal); ok {
		if v, ok := l.Value.(int64); ok && v < 0 {
			code := "2201W"
			if what == "OFFSET" {
				code = "2201X"
			}
			return nil, sqlerr.New(code, "%s must not be negative", what).WithPosition(b.pos(n))
		}
	}
	return e, nil
}

// groupItem resolves GROUP BY n (an output ordinal) and GROUP BY alias
// to the select-list expression, as Postgres does.
func (b *binder) groupItem(n ast.ExprNode, fields []*ast.SelectField, from *scope) ast.ExprNode {
	if v, ok := n.(*ast.PositionExpr); ok && v.P == nil {
		if v.N >= 1 && v.N <= len(fields) && fields[v.N-1].Expr != nil {
			return fields[v.N-1].Expr
		}
	}
	if c, ok := n.(*ast.ColumnNameExpr); ok && c.Name.Table.O == "" {
		if _, err := from.lookup("", c.Name.Name.O, 0); err != nil {
			for _, f := range fields {
				if f.AsName.O == c.Name.Name.O && f.Expr != nil {
					return f.Expr
				}
			}
		}
	}
	return n
}

func (b *binder) expandStar(w *ast.WildCardField, sc *scope, agg *aggState) ([]output, error) {
	var idx []int
	if w.Table.O == "" {
		idx = sc.star
		if len(idx) == 0 {
			return nil, sqlerr.New(sqlerr.SyntaxError, "SELECT * with no tables specified is not valid")
		}
	} else {
		for i, c := range sc.cols {
			if c.table == w.Table.O {
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			return nil, sqlerr.New(sqlerr.UndefinedTable, "missing FROM-clause entry for table %q", w.Table.O)
		}
	}
	var out []output
	for _, i := range idx {
		c := sc.cols[i]
		var e expr.Expr = &expr.Column{Index: c.idx, Name: c.display(), T: c.typ}
		if agg != nil {
			k := e.String()
			found := false
			for gi, g := range agg.groupKey {
				if g == k {
					e = &expr.Column{Index: gi, Name: c.display(), T: c.typ}
					found = true
					break
				}
			}
			if !found {
				return nil, sqlerr.New(sqlerr.GroupingError, "column %q must appear in the GROUP BY clause or be used in an aggregate function", c.display())
			}
		}
		out = append(out, output{e: e, name: c.name, col: Column{Name: c.name, Table: c.table, Type: c.typ, Nullable: c.nullable}})
	}
	return out, nil
}

// derivedName is the column name Postgres gives an unaliased select item.
func (b *binder) derivedName(n ast.ExprNode, e expr.Expr) string {
	switch x := n.(type) {
	case *ast.ColumnNameExpr:
		return x.Name.Name.O
	case *ast.ParenthesesExpr:
		return b.derivedName(x.Expr, e)
	case *ast.AggregateFuncExpr:
		return b.aggName(x, strings.ToLower(x.F))
	case *ast.WindowFuncExpr:
		return strings.ToLower(x.Name)
	case *ast.FuncCallExpr:
		if x.FnName.O == "#cast" {
			if len(x.Args) > 0 {
				switch a := x.Args[0].(type) {
				case *ast.ColumnNameExpr:
					return a.Name.Name.O
				case *ast.FuncCallExpr, *ast.AggregateFuncExpr:
					// Postgres names a cast after its operand when that
					// has a name: pg_typeof(x)::text is "pg_typeof".
					if n := b.derivedName(a, nil); n != "?column?" {
						return n
					}
				}
			}
			if info := b.st.Casts[x]; info != nil {
				return typName(info.Type)
			}
		}
		switch x.FnName.O {
		case parser.MarkerArray, parser.MarkerArrayCtor:
			return "array"
		case parser.MarkerArrayCast, parser.MarkerSubscript:
			return b.derivedName(x.Args[0], nil)
		}
		if x.FnName.L == "position" {
			return "position" // bound as strpos
		}
		if f, ok := e.(*expr.Func); ok && f.Fn != functions.ArrayConcat { // array || array is an operator
			return f.Name()
		}
		if _, ok := e.(*expr.Func); ok {
			return "?column?"
		}
		if bin, ok := e.(*expr.Binary); ok && bin.Op == expr.Concat {
			return "?column?"
		}
		return x.FnName.L
	case *ast.CaseExpr:
		return "case"
	case *ast.SubqueryExpr:
		if x.Exists {
			return "exists"
		}
		if s, ok := e.(*expr.Subquery); ok && s.Kind == expr.ScalarSub {
			return s.Plan.(Node).Schema()[0].Name
		}
	case *ast.ExistsSubqueryExpr:
		if !x.Not {
			return "exists"
		}
	}
	return "?column?"
}

// typName is Postgres' internal type name, which names a cast column.
func typName(t sqltypes.Type) string {
	return map[sqltypes.Kind]string{
		sqltypes.Bool: "bool", sqltypes.Int2: "int2", sqltypes.Int4: "int4", sqltypes.Int8: "int8",
		sqltypes.Float4: "float4", sqltypes.Float8: "float8", sqltypes.Numeric: "numeric", sqltypes.Text: "text",
		sqltypes.Varchar: "varchar", sqltypes.Bytea: "bytea", sqltypes.Date: "date", sqltypes.Timestamp: "timestamp",
		sqltypes.TimestampTZ: "timestamptz", sqltypes.Interval: "interval", sqltypes.JSON: "json", sqltypes.JSONB: "jsonb",
	}[t.Kind]
}

// orderBy binds ORDER BY items to sort keys over the select list. Items
// not in it become extra (hidden) outputs, returned for the caller to
// append after the visible ones.
func (b *binder) orderBy(ob *ast.OrderByClause, outsIn []output, ctx *exprCtx, distinct bool) (ordering.Lex, []output, error) {
	if ob == nil {
		return nil, nil, nil
	}
	return b.sortItems(ob.Items, outsIn, ctx, distinct, "ORDER BY")
}

// sortItems binds ORDER BY or DISTINCT ON items (what) as orderBy does.
func (b *binder) sortItems(items []*ast.ByItem, outsIn []output, ctx *exprCtx, distinct bool, what string) (ordering.Lex, []output, error) {
	outs := append([]output(nil), outsIn...)
	var keys ordering.Lex
	for _, it := range items {
		idx := -1
		switch x := it.Expr.(type) {
		case *ast.PositionExpr:
			if x.P != nil {
				return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s a parameter is not supported", what).WithPosition(b.pos(x))
			}
			if x.N < 1 || x.N > len(outsIn) {
				return nil, nil, sqlerr.New(sqlerr.InvalidColumnReference, "%s position %d is not in select list", what, x.N).WithPosition(b.pos(x))
			}
			idx = x.N - 1
		case *ast.ColumnNameExpr:
			if x.Name.Table.O == "" {
				for i, o := range outsIn {
					if o.name == x.Name.Name.O {
						if idx >= 0 && !sameExpr(outsIn[idx].e, o.e) {
							return nil, nil, sqlerr.New(sqlerr.AmbiguousColumn, "%s %q is ambiguous", what, x.Name.Name.O).WithPosition(b.pos(x))
						}
						if idx < 0 {
							idx = i
						}
					}
				}
			}
		}
		if idx < 0 {
			e, err := b.bindExpr(it.Expr, ctx)
			if err != nil {
				return nil, nil, err
			}
			for i, o := range outs {
				if sameExpr(o.e, e) {
					idx = i
					break
				}
			}
			if idx < 0 {
				if distinct {
					return nil, nil, sqlerr.New(sqlerr.InvalidColumnReference, "for SELECT DISTINCT, ORDER BY expressions must appear in select list").WithPosition(b.pos(it.Expr))
				}
				outs = append(outs, output{e: e, col: Column{Name: columnName(e), Type: e.Type(), Nullable: true}})
				idx = len(outs) - 1
			}
		}
		check := b.needOrdering
		if what == "DISTINCT ON" {
			check = b.needEquality
		}
		if err := check(outs[idx].e.Type(), it.Expr); err != nil {
			return nil, nil, err
		}
		nf, ok := b.st.NullsFirst[it]
		if !ok {
			nf = it.Desc
		}
		keys = append(keys, ordering.Key{Col: idx, Desc: it.Desc, NullsFirst: nf})
	}
	return keys, outs[len(outsIn):], nil
}

func sameExpr(a, b expr.Expr) bool { return a.String() == b.String() && a.Type() == b.Type() }

// hasWindow reports whether a window function call occurs in the select
// list or ORDER BY.
func hasWindow(fields []*ast.SelectField, ob *ast.OrderByClause) bool {
	found := false
	visit := func(n ast.Node) {
		n.Accept(visitFn(func(x ast.Node) bool {
			if _, ok := x.(*ast.WindowFuncExpr); ok {
				found = true
			}
			_, sub := x.(*ast.SubqueryExpr)
			return !found && !sub
		}))
	}
	for _, f := range fields {
		if f.Expr != nil {
			visit(f.Expr)
		}
	}
	if ob != nil {
		for _, it := range ob.Items {
			visit(it.Expr)
		}
	}
	return found
}
