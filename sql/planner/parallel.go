package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/ordering"
	"github.com/asofsql/asofsql/sqltypes"
)

// Parallel plans (the degree is Options.Workers, the session's
// max_parallel_workers_per_gather). Parallelism is part of the plan, as in
// DataFusion: parallelize inserts Repartition nodes where rows are split
// among workers and a Merge node where the workers' outputs become one
// stream again, and both state their orderings, so Validate proves the
// requirements of the nodes between them (an ASOF join's inputs ordered
// by t) at the degree the plan runs at.
//
// Today an AsofJoin over stored ordered tables runs in morsels of its left
// input (Merge.Morsels, see morselable); another one whose right inputs
// share a by-key runs split: both inputs split by the hash of the shared
// keys, one serial join per partition, each left batch's output
// reassembled in left order by the Merge. A join that cannot be split
// stays serial and says why in EXPLAIN.

// Repartition splits its input among Workers partitions: by the hash of
// Keys (every row with equal keys in the same partition). Each partition
// keeps its input's row order, so it provides the input's ordering.
type Repartition struct {
	Input   Node
	Keys    []int
	Workers int
}

// Merge turns the Workers partitions below it into one stream in the
// order of the rows that entered its Repartitions (order-preserving: a
// sequence merge, not a sort), so it provides its input's ordering.
//
// With Morsels set there are no Repartitions: the AsofJoin's inputs are
// ordered tables, the left one cut into contiguous morsels of rows, each
// joined by a worker against the right rows of its t range, and the
// morsels' outputs concatenated in order.
type Merge struct {
	Input   Node
	Workers int
	Morsels bool
}

func (r *Repartition) Schema() []Column                 { return r.Input.Schema() }
func (r *Repartition) Children() []Node                 { return []Node{r.Input} }
func (r *Repartition) Ordering() ordering.Props         { return r.Input.Ordering() }
func (r *Repartition) RequiredOrdering() []ordering.Lex { return []ordering.Lex{nil} }
func (r *Repartition) PreservesOrder() []bool           { return []bool{true} }

func (m *Merge) Schema() []Column                 { return m.Input.Schema() }
func (m *Merge) Children() []Node                 { return []Node{m.Input} }
func (m *Merge) Ordering() ordering.Props         { return m.Input.Ordering() }
func (m *Merge) RequiredOrdering() []ordering.Lex { return []ordering.Lex{nil} }
func (m *Merge) PreservesOrder() []bool           { return []bool{true} }

// parallelize rewrites n for d.max > 1 (see above), each gather at the
// degree d gives it (parallel_degree.go); at 1 it returns n unchanged,
// today's serial plan.
func parallelize(n Node, d *degrees) Node {
	if d.max < 2 {
		return n
	}
	n = mapChildren(n, func(c Node) Node { return parallelize(c, d) })
	j, ok := n.(*AsofJoin)
	if !ok {
		return parallelizeOps(n, d)
	}
	morsels := morselable(j)
	var lkeys []int
	var rkeys [][]int
	if !morsels {
		var why string
		if lkeys, rkeys, why = splittable(j); why != "" {
			j.Serial = why
			return n
		}
	}
	workers, why := d.of(j)
	if why != "" {
		j.Serial = why
		return n
	}
	if morsels {
		return &Merge{Input: j, Workers: workers, Morsels: true}
	}
	j.Left = &Repartition{Input: j.Left, Keys: lkeys, Workers: workers}
	for i, r := range j.Rights {
		r.Input = &Repartition{Input: r.Input, Keys: rkeys[i], Workers: workers}
	}
	return &Merge{Input: j, Workers: workers}
}

// morselable says whether the join runs in morsels of its left input: both
// inputs are stored ordered tables (the morsels find their right rows by
// t), the range has a finite upper end (lo may be unbounded: the backward
// join), the on columns are integers, dates or timestamps of one type on
// both sides, every right uses one left on column, and the join is not
// RIGHT, FULL, key-major or with ON conditions. It mirrors
// exec/asof.NewMorsel's conditions.
func morselable(j *AsofJoin) bool {
	if _, ok := j.Left.(*Scan); !ok {
		return false
	}
	for _, r := range j.Rights {
		if _, ok := r.Input.(*Scan); !ok {
			return false
		}
		if r.KeysFirst || r.Kind.outer() || r.LeftCond != nil || r.Cond != nil || r.PairCond != nil || r.LeftOn != j.Rights[0].LeftOn ||
			r.Hi.Unbounded || r.Lo.Cal != nil || r.Hi.Cal != nil || r.Lo.HasDec || r.Hi.HasDec {
			return false
		}
		lt, rt := j.Left.Schema()[r.LeftOn].Type, r.Input.Schema()[r.On].Type
		if lt != rt {
			return false
		}
		switch lt.Kind {
		case sqltypes.Int2, sqltypes.Int4, sqltypes.Int8, sqltypes.Date, sqltypes.Timestamp, sqltypes.TimestampTZ:
		default:
			return false
		}
	}
	return true
}

// splittable returns the by-keys all right inputs share (left columns, and
// each right's paired columns), or why the join stays serial. It mirrors
// exec/asof.NewParallel's conditions.
func splittable(j *AsofJoin) (left []int, rights [][]int, why string) {
	for _, r := range j.Rights {
		if len(r.Keys) == 0 {
			return nil, nil, "no by-keys"
		}
		if r.KeysFirst {
			return nil, nil, "inputs ordered by keys first"
		}
		if r.LeftCond != nil || r.Cond != nil || r.PairCond != nil {
			// A condition is compiled over its input's whole schema; the
			// partitions carry only the columns they join.
			return nil, nil, "ON conditions"
		}
		if r.Kind.outer() {
			// Unmatched right rows belong to no left batch to reassemble.
			return nil, nil, r.Kind.String() + " join"
		}
		for _, t := range []sqltypes.Type{j.Left.Schema()[r.LeftOn].Type, r.Input.Schema()[r.On].Type} {
			switch t.Kind {
			case sqltypes.Int2, sqltypes.Int4, sqltypes.Int8, sqltypes.Float4, sqltypes.Float8,
				sqltypes.Date, sqltypes.Timestamp, sqltypes.TimestampTZ:
			default:
				return nil, nil, "on column of type " + t.String()
			}
		}
	}
	for _, c := range j.Rights[0].LeftKeys {
		shared := !slices.Contains(left, c)
		for _, r := range j.Rights[1:] {
			shared = shared && slices.Contains(r.LeftKeys, c)
		}
		if shared {
			left = append(left, c)
		}
	}
	if len(left) == 0 {
		return nil, nil, "right inputs share no by-key"
	}
	for i, r := range j.Rights {
		var ks []int
		for _, c := range left {
			k := slices.Index(r.LeftKeys, c)
			ks = append(ks, r.Keys[k])
			// One split for every input: a shared key must pair with
			// columns of one type, compared the same way, in every right.
			r0 := j.Rights[0]
			k0 := slices.Index(r0.LeftKeys, c)
			t, t0 := r.Input.Schema()[r.Keys[k]].Type, r0.Input.Schema()[r0.Keys[k0]].Type
			if i > 0 && (t.Kind != t0.Kind || t.Scale != t0.Scale ||
				nullSafe(r, k) != nullSafe(r0, k0)) {
				return nil, nil, "right inputs' by-keys differ in type or NULL rule"
			}
		}
		rights = append(rights, ks)
	}
	return left, rights, ""
}

func nullSafe(r *AsofRight, k int) bool { return r.NullSafe != nil && r.NullSafe[k] }

func describeRepartition(r *Repartition) string {
	cols := r.Input.Schema()
	var ks []string
	for _, k := range r.Keys {
		ks = append(ks, qualName(cols[k]))
	}
	return fmt.Sprintf("Repartition hash(%s) workers=%d", strings.Join(ks, ", "), r.Workers)
}

func describeMerge(m *Merge) string {
	if m.Morsels {
		return fmt.Sprintf("Merge workers=%d morsels of %s preserving order", m.Workers, qualName(m.Input.(*AsofJoin).Left.Schema()[m.Input.(*AsofJoin).Rights[0].LeftOn]))
	}
	return fmt.Sprintf("Merge workers=%d preserving order", m.Workers)
}

// Parallel hash aggregation (issue 15, par-ops). An Aggregate whose calls
// all combine runs split as PostgreSQL's and DataFusion's Partial and
// Final aggregates: a Morsels node hands the batches of its input to the
// workers, each worker runs the Filters and Projects between the Morsels
// and the Aggregate over its morsels and aggregates them into partial
// states (PartialAggregate), and the FinalAggregate combines the states.
// The groups come out in the serial order (first appearance), though an
// Aggregate promises no order.

// Morsels hands its input's batches (morsels, numbered in input order) to
// Workers workers, each batch to one. A worker's rows are a subsequence of
// the input's, so each provides the input's ordering.
type Morsels struct {
	Input   Node
	Workers int
}

// PartialAggregate is one worker's part of Agg: Agg's Input rows of the
// worker's morsels, aggregated into partial states. Its schema is Agg's,
// which the partial states become once combined.
type PartialAggregate struct {
	Agg *Aggregate
}

// FinalAggregate combines the partial states of Workers copies of Input.
type FinalAggregate struct {
	Input   *PartialAggregate
	Workers int
}

func (m *Morsels) Schema() []Column                 { return m.Input.Schema() }
func (m *Morsels) Children() []Node                 { return []Node{m.Input} }
func (m *Morsels) Ordering() ordering.Props         { return m.Input.Ordering() }
func (m *Morsels) RequiredOrdering() []ordering.Lex { return []ordering.Lex{nil} }
func (m *Morsels) PreservesOrder() []bool           { return []bool{true} }

func (p *PartialAggregate) Schema() []Column                 { return p.Agg.Schema() }
func (p *PartialAggregate) Children() []Node                 { return []Node{p.Agg.Input} }
func (p *PartialAggregate) Ordering() ordering.Props         { return ordering.Props{} }
func (p *PartialAggregate) RequiredOrdering() []ordering.Lex { return []ordering.Lex{nil} }
func (p *PartialAggregate) PreservesOrder() []bool           { return []bool{false} }

func (f *FinalAggregate) Schema() []Column                 { return f.Input.Schema() }
func (f *FinalAggregate) Children() []Node                 { return []Node{f.Input} }
func (f *FinalAggregate) Ordering() ordering.Props         { return ordering.Props{} }
func (f *FinalAggregate) RequiredOrdering() []ordering.Lex { return []ordering.Lex{nil} }
func (f *FinalAggregate) PreservesOrder() []bool           { return []bool{false} }

// parallelizeOps splits n (an Aggregate, a Sort, a hash Join or a Window)
// at the degree d gives it, or says in n why it stays serial; other nodes
// come back unchanged. parallelize calls it bottom-up.
func parallelizeOps(n Node, d *degrees) Node {
	switch x := n.(type) {
	case *Sort:
		return parallelSort(x, d)
	case *Limit:
		serialTopN(x)
		return n
	case *Join:
		return parallelJoin(x, d)
	case *Window:
		return parallelWindow(x, d) // parallel_window.go
	}
	a, ok := n.(*Aggregate)
	if !ok {
		return n
	}
	if a.Serial = aggSerial(a); a.Serial != "" {
		return n
	}
	workers, why := d.of(a.Input)
	if a.Serial = why; why != "" {
		return n
	}
	a.Input = morselize(a.Input, workers)
	return &FinalAggregate{Input: &PartialAggregate{Agg: a}, Workers: workers}
}

// CombinableAggs are the aggregates with a combine step (mirrors
// exec.CombinableAgg: the planner imports nothing of exec).
var CombinableAggs = map[string]bool{
	"count": true, "sum": true, "avg": true, "min": true, "max": true, "bool_and": true, "bool_or": true, "every": true,
	"stddev": true, "stddev_samp": true, "stddev_pop": true, "variance": true, "var_samp": true, "var_pop": true,
	"corr": true, "covar_pop": true, "covar_samp": true, "regr_avgx": true, "regr_avgy": true, "regr_count": true,
	"regr_intercept": true, "regr_r2": true, "regr_slope": true, "regr_sxx": true, "regr_syy": true, "regr_sxy": true,
}

// aggSerial says why a stays serial, "" when it splits.
func aggSerial(a *Aggregate) string {
	if a.Sets != nil {
		return "grouping sets"
	}
	if Clustered(a.Input.Ordering(), a.GroupBy) {
		return "input ordered by the group keys: streams"
	}
	for _, c := range a.Aggs {
		switch {
		case c.Distinct:
			return "DISTINCT aggregate"
		case !CombinableAggs[c.Func]:
			return c.Func + " does not combine"
		}
		for _, e := range c.Args {
			if !parallelSafe(e) {
				return "volatile function or subquery in an argument"
			}
		}
	}
	for _, e := range a.GroupBy {
		if !parallelSafe(e) {
			return "volatile function or subquery in a group key"
		}
	}
	return ""
}

// parallelSafe reports whether e can be evaluated by several workers at
// once: it runs no subquery (those run through the statement's builder)
// and calls no volatile function (whose calls would change order).
func parallelSafe(e expr.Expr) bool {
	if e == nil {
		return true
	}
	safe := !volatile(e)
	expr.Walk(e, func(x expr.Expr) bool {
		if _, ok := x.(*expr.Subquery); ok {
			safe = false
		}
		return safe
	})
	return safe
}

// morselize puts a Morsels below the Filters and Projects that lead from
// n (each worker runs its own copies of them) and above the first other
// node, or other Filter or Project that must run once.
func morselize(n Node, workers int) Node {
	switch x := n.(type) {
	case *Filter:
		if parallelSafe(x.Cond) {
			x.Input = morselize(x.Input, workers)
			return x
		}
	case *Project:
		if !slices.ContainsFunc(x.Exprs, func(e expr.Expr) bool { return !parallelSafe(e) }) {
			x.Input = morselize(x.Input, workers)
			return x
		}
	}
	return &Morsels{Input: n, Workers: workers}
}

// Clustered reports whether rows with equal group keys are adjacent in an
// input with ordering p: every group key is a plain input column, and
// those columns (constants aside) are the leading keys of p's order, in
// any order and direction. Conservative: false whenever that is not
// proven. Such an Aggregate streams (lower builds a StreamAggregate).
func Clustered(p ordering.Props, groupBy []expr.Expr) bool {
	if len(groupBy) == 0 {
		return false
	}
	need := map[int]bool{}
	for _, g := range groupBy {
		c, ok := g.(*expr.Column)
		if !ok {
			return false
		}
		if !p.IsConst(c.Index) {
			need[c.Index] = true
		}
	}
	for _, k := range p.Lex {
		if len(need) == 0 {
			break
		}
		if p.IsConst(k.Col) {
			continue
		}
		if !need[k.Col] {
			return false
		}
		delete(need, k.Col)
	}
	return len(need) == 0
}

func describeMorsels(m *Morsels) string {
	return fmt.Sprintf("Morsels workers=%d (numbered in input order)", m.Workers)
}

func describeFinalAggregate(f *FinalAggregate) string {
	return fmt.Sprintf("Finalize Aggregate workers=%d (combines the partial states)", f.Workers)
}

// GatherMerge is a Sort run in parallel, as PostgreSQL's Gather Merge:
// Workers copies of Input (the Sort over a pipeline of Filters and
// Projects over one Morsels) each sort the rows of their morsels, and the
// sorted runs are merged by (keys, morsel, row), so rows with equal keys
// keep their input order: the serial Sort's output. It provides the
// Sort's ordering.
type GatherMerge struct {
	Input   *Sort
	Workers int
}

func (g *GatherMerge) Schema() []Column                 { return g.Input.Schema() }
func (g *GatherMerge) Children() []Node                 { return []Node{g.Input} }
func (g *GatherMerge) Ordering() ordering.Props         { return g.Input.Ordering() }
func (g *GatherMerge) RequiredOrdering() []ordering.Lex { return []ordering.Lex{nil} }
func (g *GatherMerge) PreservesOrder() []bool           { return []bool{true} }

// parallelSort splits s for workers. A Sort directly under a Limit stays
// serial: lower runs a small LIMIT as a top-N, which keeps only the best
// rows instead of sorting them all (parallelizeOps undoes the split
// there, see serialTopN).
//
// The Sort splits only when its rows come from a table or a join (through
// Filters and Projects): an aggregate's or another sort's output is small
// or already ordered, and sorting it in parallel would cost more than it
// saves.
//
// A Sort that would split stays serial, saying why, while its input is
// small.
func parallelSort(s *Sort, d *degrees) Node {
	in := s.Input
	for {
		if f, ok := in.(*Filter); ok && parallelSafe(f.Cond) {
			in = f.Input
			continue
		}
		if p, ok := in.(*Project); ok && !slices.ContainsFunc(p.Exprs, func(e expr.Expr) bool { return !parallelSafe(e) }) {
			in = p.Input
			continue
		}
		break
	}
	switch in.(type) {
	case *Scan, *Join, *ParallelHashJoin, *AsofJoin, *Merge, *UnionAll:
	default:
		return s
	}
	workers, why := d.of(s.Input)
	if s.Serial = why; why != "" {
		return s
	}
	s.Input = morselize(s.Input, workers)
	return &GatherMerge{Input: s, Workers: workers}
}

// serialTopN undoes the split of a Sort under l (see parallelSort).
func serialTopN(l *Limit) {
	if s, ok := l.Input.(*Sort); ok {
		s.Serial = "" // a top-N: the judgement does not apply
	}
	g, ok := l.Input.(*GatherMerge)
	if !ok {
		return
	}
	g.Input.Input = unmorselize(g.Input.Input)
	l.Input = g.Input
}

// unmorselize removes the Morsels morselize put below n.
func unmorselize(n Node) Node {
	switch x := n.(type) {
	case *Morsels:
		return x.Input
	case *Filter:
		x.Input = unmorselize(x.Input)
	case *Project:
		x.Input = unmorselize(x.Input)
	}
	return n
}

// describeGatherMerge says which of ParallelSort's paths will run: the
// range path needs one or two keys of numbers, dates or timestamps (known
// here) without NULLs (known only for NOT NULL columns; else decided when
// the rows are in).
func describeGatherMerge(g *GatherMerge) string {
	how := "sorted runs merged"
	if keys := g.Input.Keys; len(keys) > 0 && len(keys) <= 2 {
		schema := g.Input.Input.Schema()
		numeric, nullable := true, false
		for _, k := range keys {
			switch schema[k.Col].Type.Kind {
			case sqltypes.Int2, sqltypes.Int4, sqltypes.Date, sqltypes.Int8, sqltypes.Timestamp, sqltypes.TimestampTZ,
				sqltypes.Float4, sqltypes.Float8:
			default:
				numeric = false
			}
			nullable = nullable || schema[k.Col].Nullable
		}
		switch {
		case numeric && nullable:
			how = "key ranges sorted, or sorted runs merged if a key holds NULLs"
		case numeric:
			how = "key ranges sorted"
		}
	}
	return fmt.Sprintf("GatherMerge workers=%d (%s, ties in input order)", g.Workers, how)
}

// Parallel hash join (issue 15, par-join). A hash Join whose left (probe)
// rows come from a table or a join (through Filters and Projects) runs as
// a ParallelHashJoin: its right (build) input is built once into one hash
// table the workers share, and a Morsels node hands the left batches to
// the workers, each running the Filters and Projects above the Morsels
// and probing the table with its morsels. The workers' outputs are
// reassembled in morsel order, so the join's output and ordering are the
// serial join's at every degree. RIGHT and FULL joins merge the workers'
// match flags and add the unmatched right rows last, as the serial join.

// ParallelHashJoin runs Input (a Join with a Morsels below its left
// Filters and Projects) on Workers workers. It provides the Join's
// ordering.
type ParallelHashJoin struct {
	Input   *Join
	Workers int
}

func (p *ParallelHashJoin) Schema() []Column                 { return p.Input.Schema() }
func (p *ParallelHashJoin) Children() []Node                 { return []Node{p.Input} }
func (p *ParallelHashJoin) Ordering() ordering.Props         { return p.Input.Ordering() }
func (p *ParallelHashJoin) RequiredOrdering() []ordering.Lex { return []ordering.Lex{nil} }
func (p *ParallelHashJoin) PreservesOrder() []bool           { return []bool{true} }

// parallelJoin splits a hash join j for workers, or says in j why it
// stays serial; a nested loop or cross join, and a join whose left rows
// do not come from a table or a join, come back unchanged, as parallelSort
// leaves such sorts.
func parallelJoin(j *Join, d *degrees) Node {
	if j.Kind == JoinCross || len(j.LeftKeys) == 0 {
		return j
	}
	if !parallelSafe(j.Residual) {
		j.Serial = "volatile function or subquery in the join condition"
		return j
	}
	if !scansRows(j.Left) {
		return j
	}
	workers, why := d.of(j.Left)
	if j.Serial = why; why != "" {
		return j
	}
	j.Left = morselize(j.Left, workers)
	return &ParallelHashJoin{Input: j, Workers: workers}
}

// scansRows reports whether n's rows come, through parallel-safe Filters
// and Projects, from a table, a join or a union: inputs large enough to be
// worth cutting into morsels.
func scansRows(n Node) bool {
	for {
		if f, ok := n.(*Filter); ok && parallelSafe(f.Cond) {
			n = f.Input
			continue
		}
		if p, ok := n.(*Project); ok && !slices.ContainsFunc(p.Exprs, func(e expr.Expr) bool { return !parallelSafe(e) }) {
			n = p.Input
			continue
		}
		break
	}
	switch n.(type) {
	case *Scan, *Join, *ParallelHashJoin, *AsofJoin, *Merge, *UnionAll:
		return true
	}
	return false
}

func describeParallelHashJoin(p *ParallelHashJoin) string {
	return fmt.Sprintf("ParallelHashJoin workers=%d (right side built once and shared, left morsels probed in order)", p.Workers)
}
