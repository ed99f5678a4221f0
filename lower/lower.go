package lower

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/asof"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/ordering"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
)

// Env is what building operators needs besides the plan.
type Env struct {
	// Mem allocates every operator's output and what scans read; nil
	// means the default. A query's *memacct.Account bounds its memory as
	// a whole (MemoryLimit then does not apply).
	Mem memory.Allocator
	// Params are the bound values of $1..$n as typed literals (see Bind).
	Params []*expr.Literal
	// Eval carries the statement time and session settings for
	// expression evaluation.
	Eval eval.Env
	// MemoryLimit bounds each materializing operator (sort, hash build,
	// aggregate) in bytes; 0 means unlimited.
	MemoryLimit int64
	// Analysis, when set, counts rows, batches and time per plan node
	// (EXPLAIN ANALYZE).
	Analysis *Analysis
	// Temp is the snapshot of the session's temporary tables (scans of
	// tables with TableInfo.Temp read it); nil when the session has none.
	Temp *catalog.Snapshot
	// Memo, when set, is the plan's memo from its earlier lowerings
	// (memo.go); nil lowers from scratch.
	Memo *Memo
}

// Query builds the operator tree for a query plan's root. The operator's
// schema has the plan's column names and SQL types.
func Query(ctx context.Context, snap *catalog.Snapshot, root planner.Node, env Env) (exec.Operator, error) {
	b := newBuilder(ctx, snap, env)
	op, err := b.node(root)
	if err != nil {
		return nil, err
	}
	return rename(op, root.Schema())
}

func newBuilder(ctx context.Context, snap *catalog.Snapshot, env Env) *builder {
	if env.Mem == nil {
		env.Mem = memory.DefaultAllocator
	}
	if env.Eval.Mem == nil {
		env.Eval.Mem = env.Mem
	}
	b := &builder{ctx: ctx, snap: snap, env: env}
	b.env.Eval.Subquery = b.runSubquery // subquery.go
	return b
}

// topNMaxRows is the largest LIMIT + OFFSET lowered to a top-N: TopN
// re-sorts its kept rows with each batch that improves them, which pays
// off for the small limits of "the best k" queries, not for huge ones.
const topNMaxRows = 16384

type builder struct {
	ctx  context.Context
	snap *catalog.Snapshot
	env  Env
	// outer are the outer values of the subquery being built (its
	// OuterRefs), nil at the top level.
	outer []*expr.Literal
	// workTables are the working tables of the recursive queries being
	// built, by RecursiveCTE.ID.
	workTables map[int]*exec.WorkTable
	// view is the morsel reader of the parallel worker whose pipeline is
	// being built (a planner.Morsels lowers to it), nil elsewhere.
	view *exec.MorselView
}

// node builds n's operator; on error it has closed whatever it built.
func (b *builder) node(n planner.Node) (exec.Operator, error) {
	op, err := b.build(n)
	if err != nil || b.env.Analysis == nil {
		return op, err
	}
	if b.view != nil {
		return b.env.Analysis.wrapPart(n, op), nil // parallel.go
	}
	return b.env.Analysis.wrap(n, op), nil
}

func (b *builder) build(n planner.Node) (exec.Operator, error) {
	switch n := n.(type) {
	case *planner.Scan:
		opts := catalog.ScanOptions{Columns: n.Columns, Range: n.Range, Allocator: b.env.Mem}
		snap := b.snap
		if n.Table.Temp {
			if snap = b.env.Temp; snap == nil {
				return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", n.Table.Name)
			}
		}
		rdr, err := snap.Scan(b.ctx, n.Table.Name, opts)
		if err != nil {
			return nil, err
		}
		if r := n.Rows; r != nil {
			// One part of a partitioned result: its rows are LIMIT/OFFSET
			// of the scan's (End < 0: to the end).
			count := int64(-1)
			if r.End >= 0 {
				count = max(r.End-r.Start, 0)
			}
			return exec.NewLimit(exec.FromReader(rdr), count, max(r.Start, 0))
		}
		return exec.FromReader(rdr), nil
	case *planner.Filter:
		return b.unary(n.Input, func(child exec.Operator) (exec.Operator, error) {
			return exec.NewFilter(child, b.env.Mem, b.bind(n.Cond), b.env.Eval)
		})
	case *planner.Project:
		return b.unary(n.Input, func(child exec.Operator) (exec.Operator, error) {
			return exec.NewProjectMemo(child, b.env.Mem, b.bindAll(n.Exprs), names(n.Cols), b.env.Eval, b.env.Memo.project(n))
		})
	case *planner.AsofJoin:
		return b.asofJoin(n, 1)
	case *planner.Merge:
		j, ok := n.Input.(*planner.AsofJoin)
		if !ok {
			return nil, sqlerr.New(sqlerr.InternalError, "a Merge over %T cannot be executed", n.Input)
		}
		op, err := b.asofJoinIn(j, n.Workers, n.Morsels)
		if err == nil && b.env.Analysis != nil {
			op = b.env.Analysis.wrap(j, op)
		}
		return op, err
	case *planner.Repartition:
		return nil, sqlerr.New(sqlerr.InternalError, "a Repartition outside a Merge cannot be executed")
	case *planner.Sort:
		return b.unary(n.Input, func(child exec.Operator) (exec.Operator, error) {
			return exec.NewSerialSort(child, b.env.Mem, sortKeys(n.Keys), exec.SortOptions{MemoryLimit: b.env.MemoryLimit})
		})
	case *planner.Limit:
		count, err := b.int64Of(n.Count, -1, "LIMIT")
		if err != nil {
			return nil, err
		}
		offset, err := b.int64Of(n.Offset, 0, "OFFSET")
		if err != nil {
			return nil, err
		}
		if srt, ok := n.Input.(*planner.Sort); ok && count >= 0 && offset >= 0 && count <= topNMaxRows-offset {
			// ORDER BY ... LIMIT: keep the best count+offset rows instead
			// of sorting the whole input.
			top, err := b.unary(srt.Input, func(child exec.Operator) (exec.Operator, error) {
				return exec.NewTopN(child, b.env.Mem, sortKeys(srt.Keys), count+offset, exec.SortOptions{MemoryLimit: b.env.MemoryLimit})
			})
			if err != nil {
				return nil, err
			}
			if b.env.Analysis != nil {
				top = b.env.Analysis.wrap(srt, top)
			}
			lim, err := exec.NewLimit(top, count, offset)
			if err != nil {
				top.Close()
				return nil, err
			}
			return lim, nil
		}
		return b.unary(n.Input, func(child exec.Operator) (exec.Operator, error) {
			return exec.NewLimit(child, count, offset)
		})
	case *planner.FinalAggregate:
		return b.parallelAggregate(n) // parallel.go
	case *planner.GatherMerge:
		return b.parallelSort(n)
	case *planner.ParallelHashJoin:
		return b.parallelHashJoin(n) // parallel.go
	case *planner.ParallelWindow:
		return b.parallelWindow(n) // parallel_window.go
	case *planner.Morsels:
		if b.view == nil {
			return nil, sqlerr.New(sqlerr.InternalError, "Morsels outside a parallel operator cannot be executed")
		}
		return b.view, nil
	case *planner.Aggregate:
		cols := n.Schema()
		specs := b.aggSpecs(n)
		if n.Sets != nil {
			return b.unary(n.Input, func(child exec.Operator) (exec.Operator, error) {
				return exec.NewGroupingSets(child, b.env.Mem, b.bindAll(n.GroupBy), names(cols[:len(n.GroupBy)]), n.Sets, cols[len(n.GroupBy)].Name,
					specs, b.env.Eval, exec.AggOptions{MemoryLimit: b.env.MemoryLimit})
			})
		}
		stream := planner.Clustered(n.Input.Ordering(), n.GroupBy)
		return b.unary(n.Input, func(child exec.Operator) (exec.Operator, error) {
			if stream {
				// The input is proven ordered by the group keys: groups arrive
				// one after another, so they stream out in bounded memory.
				return exec.NewStreamAggregate(child, b.env.Mem, b.bindAll(n.GroupBy), names(cols[:len(n.GroupBy)]), specs,
					b.env.Eval, exec.AggOptions{MemoryLimit: b.env.MemoryLimit})
			}
			return exec.NewHashAggregate(child, b.env.Mem, b.bindAll(n.GroupBy), names(cols[:len(n.GroupBy)]), specs,
				b.env.Eval, exec.AggOptions{MemoryLimit: b.env.MemoryLimit})
		})
	case *planner.Join:
		return b.join(n)
	case *planner.LateralJoin:
		return b.lateralJoin(n) // subquery.go
	case *planner.Values:
		rows := make([][]expr.Expr, len(n.Rows))
		for i, r := range n.Rows {
			rows[i] = b.bindAll(r)
		}
		return exec.NewValues(b.env.Mem, rows, names(n.Cols), b.env.Eval)
	case *planner.RecursiveCTE:
		return b.recursive(n) // recursive.go
	case *planner.WorkTable:
		wt := b.workTables[n.ID]
		if wt == nil {
			return nil, sqlerr.New(sqlerr.InternalError, "working table of %q used outside its recursive query", n.Name)
		}
		return exec.NewWorkTableScan(wt), nil
	case *planner.UnionAll:
		var children []exec.Operator
		for _, in := range n.Inputs {
			op, err := b.node(in)
			if err != nil {
				closeAll(children)
				return nil, err
			}
			children = append(children, op)
		}
		op, err := exec.NewUnionAll(children...)
		if err != nil {
			closeAll(children)
		}
		return op, err
	case *planner.SetOp:
		left, err := b.node(n.Left)
		if err != nil {
			return nil, err
		}
		right, err := b.node(n.Right)
		if err != nil {
			left.Close()
			return nil, err
		}
		kind := exec.Intersect
		if n.Kind == planner.Except {
			kind = exec.Except
		}
		op, err := exec.NewHashSetOp(left, right, kind, n.All, b.env.Mem, b.env.MemoryLimit)
		if err != nil {
			closeAll([]exec.Operator{left, right})
		}
		return op, err
	case *planner.Distinct:
		return b.unary(n.Input, func(child exec.Operator) (exec.Operator, error) {
			return exec.NewDistinct(child, b.env.Mem, b.env.MemoryLimit)
		})
	case *planner.DistinctOn:
		return b.unary(n.Input, func(child exec.Operator) (exec.Operator, error) {
			return exec.NewDistinctOn(child, b.env.Mem, n.Keys)
		})
	case *planner.Window:
		return b.window(n)
	case *planner.Series:
		return b.series(n) // subquery.go
	case *planner.Unnest:
		return b.unnest(n)
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "plan node %T cannot be executed yet", n)
}

// unary builds child, then the operator over it, closing child if that
// fails.
func (b *builder) unary(in planner.Node, build func(exec.Operator) (exec.Operator, error)) (exec.Operator, error) {
	child, err := b.node(in)
	if err != nil {
		return nil, err
	}
	op, err := build(child)
	if err != nil {
		child.Close()
		return nil, err
	}
	return op, nil
}

func closeAll(ops []exec.Operator) {
	for _, o := range ops {
		if o != nil {
			o.Close()
		}
	}
}

// asofJoin builds the join; with workers > 1 its inputs are Repartitions
// (planner.Merge) and the join runs split by key, each Repartition's
// input read by the workers in turn.
func (b *builder) asofJoin(n *planner.AsofJoin, workers int) (exec.Operator, error) {
	return b.asofJoinIn(n, workers, false)
}

// asofJoinIn is asofJoin, in morsels of the left input when morsels is set
// (planner.Merge.Morsels: the inputs are ordered tables, not Repartitions).
func (b *builder) asofJoinIn(n *planner.AsofJoin, workers int, morsels bool) (exec.Operator, error) {
	left, err := b.partitioned(n.Left)
	if err != nil {
		return nil, err
	}
	rights := make([]asof.Right, len(n.Rights))
	built := []exec.Operator{left}
	for i, r := range n.Rights {
		in, err := b.partitioned(r.Input)
		if err != nil {
			closeAll(built)
			return nil, err
		}
		built = append(built, in)
		lo, hi, empty, err := b.asofRange(n, r)
		if err != nil {
			closeAll(built)
			return nil, err
		}
		tie := asof.PreferEarlier
		if r.Tie == planner.PreferLater {
			tie = asof.PreferLater
		}
		kind := asof.Inner
		switch r.Kind {
		case planner.AsofLeft:
			kind = asof.Left
		case planner.AsofSemi:
			kind = asof.Semi
		case planner.AsofAnti:
			kind = asof.Anti
		case planner.AsofRightOuter:
			kind = asof.RightOuter
		case planner.AsofFull:
			kind = asof.FullOuter
		}
		rights[i] = asof.Right{
			Name: r.Name, Input: in, LeftOn: r.LeftOn, On: r.On, LeftKeys: r.LeftKeys, Keys: r.Keys, NullSafe: r.NullSafe,
			Lo: lo, Hi: hi, Empty: empty, Tie: tie, Kind: kind, Payload: r.Payload, KeyMajor: r.KeysFirst,
		}
		if r.LeftCond != nil {
			if rights[i].LeftCond, err = b.asofCond(r.LeftCond, left.Schema()); err != nil {
				closeAll(built)
				return nil, err
			}
		}
		if r.Cond != nil {
			if rights[i].Cond, err = b.asofCond(r.Cond, in.Schema()); err != nil {
				closeAll(built)
				return nil, err
			}
		}
		if r.PairCond != nil {
			// The pair batches hold PairLeft's then PairRight's columns.
			var fields []arrow.Field
			for _, c := range r.PairLeft {
				fields = append(fields, left.Schema().Field(c))
			}
			for _, c := range r.PairRight {
				fields = append(fields, in.Schema().Field(c))
			}
			if rights[i].PairCond, err = b.asofCond(r.PairCond, arrow.NewSchema(fields, nil)); err != nil {
				closeAll(built)
				return nil, err
			}
			rights[i].PairLeft, rights[i].PairRight = r.PairLeft, r.PairRight
		}
	}
	// asof.New owns its inputs from here on, also when it fails.
	opts := asof.Options{Allocator: b.env.Mem, LeftName: n.LeftName}
	if workers > 1 && morsels {
		return asof.NewMorsel(left, rights, opts, workers)
	}
	if workers > 1 {
		return asof.NewParallel(left, rights, opts, workers)
	}
	return asof.New(left, rights, opts)
}

// partitioned builds the input of a Repartition (counted as the
// Repartition's rows by EXPLAIN ANALYZE), or n itself.
func (b *builder) partitioned(n planner.Node) (exec.Operator, error) {
	r, ok := n.(*planner.Repartition)
	if !ok {
		return b.node(n)
	}
	op, err := b.node(r.Input)
	if err == nil && b.env.Analysis != nil {
		op = b.env.Analysis.wrap(r, op)
	}
	return op, err
}

// asofCond compiles an extra ON condition of one ASOF input.
func (b *builder) asofCond(e expr.Expr, schema *arrow.Schema) (asof.Cond, error) {
	env := b.env.Eval
	env.Mem = b.env.Mem
	return eval.Compile(b.bind(e), schema, env)
}

func (b *builder) join(n *planner.Join) (exec.Operator, error) {
	left, err := b.node(n.Left)
	if err != nil {
		return nil, err
	}
	right, err := b.node(n.Right)
	if err != nil {
		left.Close()
		return nil, err
	}
	var op exec.Operator
	switch {
	case n.Kind == planner.JoinCross || (len(n.LeftKeys) == 0 && n.Kind == planner.JoinInner):
		op, err = exec.NewCrossJoin(left, right, b.env.Mem, exec.CrossJoinOptions{MemoryLimit: b.env.MemoryLimit})
		if err == nil && n.Residual != nil {
			cross := op
			if op, err = exec.NewFilter(cross, b.env.Mem, b.bind(n.Residual), b.env.Eval); err != nil {
				cross.Close()
				return nil, err
			}
		}
		if err != nil && op == nil {
			left.Close()
			right.Close()
		}
		return op, err
	}
	typ := execJoinType(n.Kind)
	var residual expr.Expr
	if n.Residual != nil {
		residual = b.bind(n.Residual)
	}
	if len(n.LeftKeys) == 0 {
		// No equality to hash on: a nested loop, for every outer kind.
		op, err = exec.NewNestedLoopJoin(left, right, b.env.Mem, typ, residual, b.env.Eval,
			exec.NestedLoopJoinOptions{MemoryLimit: b.env.MemoryLimit})
		if err != nil {
			left.Close()
			right.Close()
		}
		return op, err
	}
	op, err = exec.NewHashJoin(left, right, b.env.Mem, typ, n.LeftKeys, n.RightKeys, residual, b.env.Eval,
		exec.HashJoinOptions{MemoryLimit: b.env.MemoryLimit})
	if err != nil {
		left.Close()
		right.Close()
	}
	return op, err
}

func execJoinType(k planner.JoinKind) exec.JoinType {
	switch k {
	case planner.JoinLeft:
		return exec.LeftJoin
	case planner.JoinRight:
		return exec.RightJoin
	case planner.JoinFull:
		return exec.FullJoin
	}
	return exec.InnerJoin
}

func sortKeys(lex ordering.Lex) []exec.SortKey {
	keys := make([]exec.SortKey, len(lex))
	for i, k := range lex {
		nulls := exec.NullsLast
		if k.NullsFirst {
			nulls = exec.NullsFirst
		}
		keys[i] = exec.SortKey{Col: k.Col, Desc: k.Desc, Nulls: nulls}
	}
	return keys
}

func names(cols []planner.Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// int64Of reads a constant integer expression (a literal or parameter);
// nil gives def.
func (b *builder) int64Of(e expr.Expr, def int64, what string) (int64, error) {
	if e == nil {
		return def, nil
	}
	e = b.bind(e)
	if c, ok := e.(*expr.Cast); ok {
		e = c.X
	}
	lit, ok := e.(*expr.Literal)
	if !ok {
		return 0, sqlerr.New(sqlerr.FeatureNotSupported, "%s must be a constant", what)
	}
	switch v := lit.Value.(type) {
	case nil:
		return def, nil
	case int64:
		return v, nil
	}
	return 0, sqlerr.New(sqlerr.DatatypeMismatch, "argument of %s must be type bigint, not type %s", what, lit.T)
}

// renameOp relabels its child's columns with the plan's names and SQL
// types without touching the data.
type renameOp struct {
	exec.Operator
	schema *arrow.Schema
}

func rename(op exec.Operator, cols []planner.Column) (exec.Operator, error) {
	in := op.Schema()
	if in.NumFields() != len(cols) {
		op.Close()
		return nil, sqlerr.New(sqlerr.InternalError, "lowered plan has %d columns, the plan %d", in.NumFields(), len(cols))
	}
	fields := make([]arrow.Field, len(cols))
	same := true
	for i, c := range cols {
		f := c.Type.Field(c.Name, true)
		if !arrow.TypeEqual(f.Type, in.Field(i).Type) {
			op.Close()
			return nil, sqlerr.New(sqlerr.InternalError, "column %q is %s in the plan but %s when executed",
				c.Name, f.Type, in.Field(i).Type)
		}
		fields[i] = f
		same = same && f.Equal(in.Field(i))
	}
	if same {
		// The child's schema is the plan's already (a projection names
		// its columns so): a new schema would only cost its name index,
		// per execution of a prepared statement.
		return &renameOp{Operator: op, schema: in}, nil
	}
	return &renameOp{Operator: op, schema: arrow.NewSchema(fields, nil)}, nil
}

func (r *renameOp) Schema() *arrow.Schema { return r.schema }

func (r *renameOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	rec, err := r.Operator.Next(ctx)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	return relabel(rec, r.schema), nil
}

func relabel(rec arrow.RecordBatch, schema *arrow.Schema) arrow.RecordBatch {
	return array.NewRecordBatch(schema, rec.Columns(), rec.NumRows())
}
