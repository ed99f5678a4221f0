package planner

import (
	"fmt"
	"slices"
	"strings"

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

// parallelize rewrites n for workers > 1 (see above); at 1 it returns n
// unchanged, today's serial plan.
func parallelize(n Node, workers int) Node {
	if workers < 2 {
		return n
	}
	n = mapChildren(n, func(c Node) Node { return parallelize(c, workers) })
	j, ok := n.(*AsofJoin)
	if !ok {
		return n
	}
	if morselable(j) {
		return &Merge{Input: j, Workers: workers, Morsels: true}
	}
	lkeys, rkeys, why := splittable(j)
	if why != "" {
		j.Serial = why
		return n
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
