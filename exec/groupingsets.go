package exec

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/memacct"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// GroupingSets is GROUP BY GROUPING SETS (and ROLLUP, CUBE): it reads its
// input once and feeds every batch to one hash aggregation per set, then
// outputs the sets one after another. Output: all group keys (NULL where
// the row's set does not group by the key), an int4 column holding the
// index of the row's set, then the aggregates. A set with no keys yields
// exactly one row, even for empty input. It provides no ordering.
//
// Memory is the sum of the sets' hash tables and states, bounded as one
// HashAggregate's is: by the query's account when the allocator has one,
// else by AggOptions.MemoryLimit.
type GroupingSets struct {
	child    Operator
	mem      memory.Allocator
	schema   *arrow.Schema
	sets     [][]int
	keyTypes []sqltypes.Type
	aggs     []*HashAggregate
	budget   *memBudget // nil: the sets charge the query's account
	cur      int
	done     bool
}

var _ Operator = (*GroupingSets)(nil)

// NewGroupingSets returns the aggregation of child by each of sets (lists
// of indexes into groupBy, output names groupNames) computing aggs; the
// set-index column is named setName.
func NewGroupingSets(child Operator, mem memory.Allocator, groupBy []expr.Expr, groupNames []string, sets [][]int, setName string,
	aggs []AggSpec, env eval.Env, opts AggOptions) (*GroupingSets, error) {
	if len(groupNames) != len(groupBy) || len(sets) == 0 {
		return nil, sqlerr.New(sqlerr.InternalError, "grouping sets: %d names for %d keys, %d sets", len(groupNames), len(groupBy), len(sets))
	}
	env.Mem = mem
	g := &GroupingSets{child: child, mem: mem, sets: sets}
	evs, err := compileAll(groupBy, child.Schema(), env)
	if err != nil {
		return nil, err
	}
	var fields []arrow.Field
	for i, ev := range evs {
		g.keyTypes = append(g.keyTypes, ev.Type())
		fields = append(fields, ev.Type().Field(groupNames[i], true))
	}
	fields = append(fields, sqltypes.Int4Type.Field(setName, false))
	sub := opts
	if memacct.Of(mem) == nil {
		b := newBudget("hash aggregate", mem, opts.MemoryLimit)
		g.budget = &b
		sub.MemoryLimit = 0
	}
	for _, set := range sets {
		var keys []expr.Expr
		var names []string
		for _, k := range set {
			if k < 0 || k >= len(groupBy) {
				return nil, sqlerr.New(sqlerr.InternalError, "grouping sets: key %d of %d", k, len(groupBy))
			}
			keys = append(keys, groupBy[k])
			names = append(names, groupNames[k])
		}
		h, err := NewHashAggregate(child, mem, keys, names, aggs, env, sub)
		if err != nil {
			return nil, err
		}
		g.aggs = append(g.aggs, h)
	}
	fields = append(fields, g.aggs[0].Schema().Fields()[len(sets[0]):]...)
	g.schema = arrow.NewSchema(fields, nil)
	return g, nil
}

func (g *GroupingSets) Schema() *arrow.Schema          { return g.schema }
func (g *GroupingSets) Open(ctx context.Context) error { return g.child.Open(ctx) }

func (g *GroupingSets) Close() error {
	for _, h := range g.aggs {
		h.release()
	}
	return g.child.Close()
}

func (g *GroupingSets) consume(ctx context.Context) error {
	for {
		b, err := g.child.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		var total int64
		for _, h := range g.aggs {
			if err = h.consume(ctx, b); err != nil {
				break
			}
			total += h.core.stateBytes(h.tableBytes)
		}
		b.Release()
		if err != nil {
			return err
		}
		if g.budget != nil {
			if err := g.budget.set(total); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

func (g *GroupingSets) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !g.done {
		if err := g.consume(ctx); err != nil {
			return nil, err
		}
		g.done = true
	}
	for g.cur < len(g.aggs) {
		h := g.aggs[g.cur]
		if !h.done {
			if err := h.finish(); err != nil {
				return nil, err
			}
		}
		b, err := h.Next(ctx)
		if errors.Is(err, io.EOF) {
			h.release()
			g.cur++
			continue
		}
		if err != nil {
			return nil, err
		}
		out, err := g.widen(b, g.cur)
		b.Release()
		return out, err
	}
	return nil, io.EOF
}

// widen turns set's output batch b (its keys, then the aggregates) into
// the operator's layout.
func (g *GroupingSets) widen(b arrow.RecordBatch, set int) (arrow.RecordBatch, error) {
	n := int(b.NumRows())
	pos := map[int]int{}
	for p, k := range g.sets[set] {
		pos[k] = p
	}
	cols := make([]arrow.Array, 0, g.schema.NumFields())
	for k, t := range g.keyTypes {
		if p, ok := pos[k]; ok {
			c := b.Column(p)
			c.Retain()
			cols = append(cols, c)
			continue
		}
		cols = append(cols, array.MakeArrayOfNull(g.mem, t.Arrow(), n))
	}
	ib := array.NewInt32Builder(g.mem)
	ib.Reserve(n)
	for i := 0; i < n; i++ {
		ib.UnsafeAppend(int32(set))
	}
	cols = append(cols, ib.NewArray())
	ib.Release()
	for i := len(g.sets[set]); i < int(b.NumCols()); i++ {
		c := b.Column(i)
		c.Retain()
		cols = append(cols, c)
	}
	out := array.NewRecordBatch(g.schema, cols, int64(n))
	releaseArrays(cols)
	return out, nil
}
