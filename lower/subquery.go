package lower

import (
	"context"
	"errors"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/functions"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
)

// errEnough stops draining a subquery once it returned what was asked.
var errEnough = errors.New("enough rows")

// runSubquery is the eval.SubqueryRunner of a statement: it builds the
// subquery's plan with its outer references bound to args (as literals,
// like parameters) and reads up to max values of its first column. Each
// call builds and closes its own operators.
func (b *builder) runSubquery(ctx context.Context, s *expr.Subquery, args []any, max int) ([]any, error) {
	plan, ok := s.Plan.(planner.Node)
	if !ok {
		return nil, sqlerr.New(sqlerr.InternalError, "lower: subquery plan is %T", s.Plan)
	}
	if len(args) != len(s.Args) {
		return nil, sqlerr.New(sqlerr.InternalError, "lower: subquery has %d outer values, got %d", len(s.Args), len(args))
	}
	sb := &builder{ctx: ctx, snap: b.snap, env: b.env}
	sb.env.Analysis = nil
	for i, v := range args {
		sb.outer = append(sb.outer, &expr.Literal{Value: v, T: s.Args[i].Type()})
	}
	op, err := sb.node(plan)
	if err != nil {
		return nil, err
	}
	var out []any
	err = exec.Drain(ctx, op, func(rec arrow.RecordBatch) error {
		if rec.NumCols() == 0 {
			for i := int64(0); i < rec.NumRows() && (max < 0 || len(out) < max); i++ {
				out = append(out, nil)
			}
		} else {
			col := rec.Column(0)
			for i := 0; i < col.Len() && (max < 0 || len(out) < max); i++ {
				out = append(out, eval.ValueAt(col, i))
			}
		}
		if max >= 0 && len(out) >= max {
			return errEnough
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return nil, err
	}
	return out, nil
}

// lateralJoin builds a lateral join: the right plan is built anew for each
// distinct set of outer values, with its outer references bound to them
// (as runSubquery does).
func (b *builder) lateralJoin(n *planner.LateralJoin) (exec.Operator, error) {
	left, err := b.node(n.Left)
	if err != nil {
		return nil, err
	}
	run := func(ctx context.Context, args []any) (exec.Operator, error) {
		// EXPLAIN ANALYZE adds up the right side's runs.
		sb := &builder{ctx: ctx, snap: b.snap, env: b.env}
		for i, v := range args {
			sb.outer = append(sb.outer, &expr.Literal{Value: v, T: n.Args[i].Type()})
		}
		return sb.node(n.Right)
	}
	var cond expr.Expr
	if n.Cond != nil {
		cond = b.bind(n.Cond)
	}
	op, err := exec.NewLateralJoin(left, b.bindAll(n.Args), arrowSchema(n.Right.Schema()), run, b.env.Mem,
		execJoinType(n.Kind), cond, b.env.Eval, exec.LateralJoinOptions{MemoryLimit: b.env.MemoryLimit})
	if err != nil {
		left.Close()
	}
	return op, err
}

// outerRef returns the literal bound to an outer reference.
func (b *builder) outerRef(r *expr.OuterRef) expr.Expr {
	if r.N-1 < len(b.outer) {
		lit := b.outer[r.N-1]
		if lit.T != r.T {
			return &expr.Cast{X: lit, T: r.T}
		}
		return lit
	}
	return &expr.Literal{T: r.T}
}

// series builds generate_series: its arguments are evaluated once, here
// (they are constants of this run: literals, parameters, outer values).
func (b *builder) series(n *planner.Series) (exec.Operator, error) {
	if t := n.Cols[0].Type; t.IsTemporal() {
		var vals [3]any
		for i, e := range []expr.Expr{n.Start, n.Stop, n.Step} {
			v, err := b.constant(e)
			if err != nil {
				return nil, err
			}
			if v == nil { // a NULL argument (strict function): no rows
				return exec.NewTimeSeries(b.env.Mem, n.Cols[0].Name, t, 1, 0, arrow.MonthDayNanoInterval{Days: 1}, nil)
			}
			vals[i] = v
		}
		var loc *time.Location
		if b.env.Eval.Options != nil {
			loc = b.env.Eval.Options.Location
		}
		return exec.NewTimeSeries(b.env.Mem, n.Cols[0].Name, t, vals[0].(int64), vals[1].(int64), vals[2].(arrow.MonthDayNanoInterval), loc)
	}
	vals := make([]int64, 3)
	vals[2] = 1
	for i, e := range []expr.Expr{n.Start, n.Stop, n.Step} {
		if e == nil {
			continue
		}
		v, err := b.constant(e)
		if err != nil {
			return nil, err
		}
		if v == nil { // a NULL argument (strict function): no rows
			return exec.NewSeries(b.env.Mem, n.Cols[0].Name, n.Cols[0].Type, 1, 0, 1)
		}
		vals[i] = v.(int64)
	}
	return exec.NewSeries(b.env.Mem, n.Cols[0].Name, n.Cols[0].Type, vals[0], vals[1], vals[2])
}

// constant evaluates an expression without column references.
func (b *builder) constant(e expr.Expr) (any, error) {
	ev, err := eval.Compile(b.bind(e), emptySchema, b.env.Eval)
	if err != nil {
		return nil, err
	}
	rec := array.NewRecordBatch(emptySchema, nil, 1)
	defer rec.Release()
	arr, err := ev.Eval(b.ctx, rec)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	return eval.ValueAt(arr, 0), nil
}

var emptySchema = arrow.NewSchema(nil, nil)

// unnest builds unnest(array): the array is evaluated once, here.
func (b *builder) unnest(n *planner.Unnest) (exec.Operator, error) {
	if n.Matches != nil {
		return b.regexpMatches(n)
	}
	v, err := b.constant(n.Array)
	if err != nil {
		return nil, err
	}
	var elems []any
	switch x := v.(type) { // unnest(NULL) has no rows
	case []any: // a typed array
		elems = x
	case string: // an array's text form
		_, strs, err := functions.ParseArray(x)
		if err != nil {
			return nil, err
		}
		for _, s := range strs {
			if s == nil {
				elems = append(elems, nil)
			} else {
				elems = append(elems, *s)
			}
		}
	}
	return exec.NewUnnest(b.env.Mem, n.Cols[0].Name, n.Cols[0].Type, elems), nil
}

// arrowSchema is the Arrow schema of plan columns.
func arrowSchema(cols []planner.Column) *arrow.Schema {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = c.Type.Field(c.Name, true)
	}
	return arrow.NewSchema(fields, nil)
}

// regexpMatches builds regexp_matches in FROM: its arguments are
// evaluated once, here (a NULL one gives no rows).
func (b *builder) regexpMatches(n *planner.Unnest) (exec.Operator, error) {
	strs := make([]string, 3)
	for i, a := range n.Matches {
		v, err := b.constant(a)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return exec.NewUnnest(b.env.Mem, n.Cols[0].Name, n.Cols[0].Type, nil), nil
		}
		strs[i] = v.(string)
	}
	rows, err := functions.RegexpMatches(strs[0], strs[1], strs[2])
	if err != nil {
		return nil, err
	}
	return exec.NewUnnest(b.env.Mem, n.Cols[0].Name, n.Cols[0].Type, rows), nil
}
