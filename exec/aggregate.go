package exec

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// AggOptions are the knobs of the aggregate operators.
type AggOptions struct {
	// MemoryLimit bounds the bytes of group state (0 = unlimited); beyond
	// it HashAggregate fails with 53200.
	MemoryLimit int64
	// BatchSize is the rows per output batch (0 = DefaultBatchSize).
	BatchSize int
}

// aggCore is what HashAggregate and StreamAggregate share: the compiled
// group keys and aggregate arguments, the accumulators and the key values
// of the groups so far.
type aggCore struct {
	mem        memory.Allocator
	groupEvs   []*eval.Evaluator
	groupTypes []sqltypes.Type
	argEvs     []*eval.Evaluator   // nil entry: count(*)
	extraEvs   [][]*eval.Evaluator // further arguments (string_agg's delimiter)
	specs      []AggSpec
	accs       []accumulator
	schema     *arrow.Schema
	keyChunks  [][]arrow.Array // per group column: key values of groups, in group order
	ngroups    int
	keyBytes   int64
	budget     memBudget
	batchSize  int
}

func newAggCore(child Operator, mem memory.Allocator, groupBy []expr.Expr, groupNames []string, aggs []AggSpec, env eval.Env, opts AggOptions, opName string) (*aggCore, error) {
	if len(groupNames) != len(groupBy) {
		return nil, sqlerr.New(sqlerr.InternalError, "%s: %d names for %d group keys", opName, len(groupNames), len(groupBy))
	}
	env.Mem = mem
	c := &aggCore{mem: mem, specs: aggs, budget: memBudget{op: opName, limit: opts.MemoryLimit}, batchSize: opts.BatchSize}
	if c.batchSize <= 0 {
		c.batchSize = DefaultBatchSize
	}
	var err error
	if c.groupEvs, err = compileAll(groupBy, child.Schema(), env); err != nil {
		return nil, err
	}
	var fields []arrow.Field
	for i, ev := range c.groupEvs {
		c.groupTypes = append(c.groupTypes, ev.Type())
		fields = append(fields, ev.Type().Field(groupNames[i], true))
	}
	c.keyChunks = make([][]arrow.Array, len(groupBy))
	for i := range c.specs {
		spec := &c.specs[i]
		var argType sqltypes.Type
		var ev *eval.Evaluator
		var extra []*eval.Evaluator
		switch {
		case len(spec.Args) == 0 && spec.Func == "count" && !spec.Distinct:
		case len(spec.Args) == 1 || len(spec.Args) == 2 && spec.Func == "string_agg":
			if ev, err = eval.Compile(spec.Args[0], child.Schema(), env); err != nil {
				return nil, err
			}
			argType = ev.Type()
			if extra, err = compileAll(spec.Args[1:], child.Schema(), env); err != nil {
				return nil, err
			}
			if len(extra) > 0 && extra[0].Type().Kind != argType.Kind && !(isTextKind(argType.Kind) && isTextKind(extra[0].Type().Kind)) {
				return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s, %s) does not exist", spec.Func, argType, extra[0].Type())
			}
		default:
			return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s with %d arguments does not exist", spec.Func, len(spec.Args))
		}
		rt, err := AggResultType(spec.Func, argType)
		if err != nil {
			return nil, err
		}
		if spec.Type == (sqltypes.Type{}) {
			spec.Type = rt
		} else if spec.Type != rt && !(spec.Type.Kind == sqltypes.Numeric && rt == unconstrainedNumeric && arrow.TypeEqual(spec.Type.Arrow(), rt.Arrow())) {
			// (The planner may give an unconstrained NUMERIC result a
			// display scale: same values, printed with that scale.)
			return nil, sqlerr.New(sqlerr.DatatypeMismatch, "%s(%s) returns %s, not %s", spec.Func, argType, rt, spec.Type)
		}
		acc, err := newAccumulator(*spec, argType)
		if err != nil {
			return nil, err
		}
		c.argEvs = append(c.argEvs, ev)
		c.extraEvs = append(c.extraEvs, extra)
		c.accs = append(c.accs, acc)
		fields = append(fields, spec.Type.Field(spec.Name, true))
	}
	c.schema = arrow.NewSchema(fields, nil)
	return c, nil
}

// evalKeys evaluates the group key expressions over b.
func (c *aggCore) evalKeys(ctx context.Context, b arrow.RecordBatch) ([]arrow.Array, error) {
	keys := make([]arrow.Array, len(c.groupEvs))
	for i, ev := range c.groupEvs {
		k, err := ev.Eval(ctx, b)
		if err != nil {
			releaseArrays(keys[:i])
			return nil, err
		}
		keys[i] = k
	}
	return keys, nil
}

// addKeys appends the key values of rows idx (new groups, in order).
func (c *aggCore) addKeys(keys []arrow.Array, idx []int) error {
	if len(idx) == 0 {
		return nil
	}
	for i, k := range keys {
		t, err := eval.Take(c.mem, k, idx)
		if err != nil {
			return err
		}
		c.keyChunks[i] = append(c.keyChunks[i], t)
		c.keyBytes += arrayBytes(t)
	}
	c.ngroups += len(idx)
	for _, a := range c.accs {
		a.resize(c.ngroups)
	}
	return nil
}

// accumulate folds b's rows (group ids gids) into the accumulators.
func (c *aggCore) accumulate(ctx context.Context, b arrow.RecordBatch, gids []int32) error {
	for i, acc := range c.accs {
		var arg arrow.Array
		if ev := c.argEvs[i]; ev != nil {
			a, err := ev.Eval(ctx, b)
			if err != nil {
				return err
			}
			arg = a
		}
		var extra []arrow.Array
		for _, ev := range c.extraEvs[i] {
			a, err := ev.Eval(ctx, b)
			if err != nil {
				releaseArrays(extra)
				if arg != nil {
					arg.Release()
				}
				return err
			}
			extra = append(extra, a)
		}
		if m, ok := acc.(multiArg); ok && len(extra) > 0 {
			m.setExtra(extra)
		}
		err := acc.add(gids, arg)
		if arg != nil {
			arg.Release()
		}
		if m, ok := acc.(multiArg); ok && len(extra) > 0 {
			m.setExtra(nil)
		}
		releaseArrays(extra)
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *aggCore) stateBytes(tableBytes int64) int64 {
	per := int64(0)
	extra := int64(0)
	for _, a := range c.accs {
		per += a.groupBytes()
		if d, ok := a.(*distinctAcc); ok {
			extra += d.bytes
		}
		if v, ok := a.(varState); ok {
			extra += v.varBytes()
		}
	}
	return tableBytes + c.keyBytes + int64(c.ngroups)*per + extra
}

// output builds the batch of groups [0, n): their keys and aggregates.
func (c *aggCore) output(n int) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, 0, c.schema.NumFields())
	fail := func(err error) (arrow.RecordBatch, error) { releaseArrays(cols); return nil, err }
	for i := range c.keyChunks {
		var k arrow.Array
		switch len(c.keyChunks[i]) {
		case 0:
			k = array.MakeArrayOfNull(c.mem, c.groupTypes[i].Arrow(), 0)
		case 1:
			k = c.keyChunks[i][0]
			k.Retain()
		default:
			var err error
			if k, err = array.Concatenate(c.keyChunks[i], c.mem); err != nil {
				return fail(err)
			}
		}
		if k.Len() != n {
			s := array.NewSlice(k, 0, int64(n))
			k.Release()
			k = s
		}
		cols = append(cols, k)
	}
	for _, a := range c.accs {
		r, err := a.finish(c.mem, n)
		if err != nil {
			return fail(err)
		}
		cols = append(cols, r)
	}
	out := array.NewRecordBatch(c.schema, cols, int64(n))
	releaseArrays(cols)
	return out, nil
}

func (c *aggCore) releaseKeys() {
	for i := range c.keyChunks {
		releaseArrays(c.keyChunks[i])
		c.keyChunks[i] = nil
	}
	c.keyBytes = 0
}

// HashAggregate groups its input by key expressions with a hash table and
// computes aggregates per group. Output: the group keys, then one column
// per AggSpec, groups in order of first appearance. With no GROUP BY it
// yields exactly one row, even for empty input (count = 0, others NULL).
// HAVING is a Filter on top.
type HashAggregate struct {
	child Operator
	core  *aggCore
	table map[string]int32
	// tableBytes estimates the hash table's keys and entries.
	tableBytes int64
	out        arrow.RecordBatch
	pos        int64
	done       bool
}

var _ Operator = (*HashAggregate)(nil)

// NewHashAggregate returns the aggregation of child grouped by groupBy
// (output names groupNames) computing aggs.
func NewHashAggregate(child Operator, mem memory.Allocator, groupBy []expr.Expr, groupNames []string, aggs []AggSpec, env eval.Env, opts AggOptions) (*HashAggregate, error) {
	core, err := newAggCore(child, mem, groupBy, groupNames, append([]AggSpec(nil), aggs...), env, opts, "hash aggregate")
	if err != nil {
		return nil, err
	}
	return &HashAggregate{child: child, core: core, table: map[string]int32{}}, nil
}

func (h *HashAggregate) Schema() *arrow.Schema          { return h.core.schema }
func (h *HashAggregate) Open(ctx context.Context) error { return h.child.Open(ctx) }

func (h *HashAggregate) Close() error {
	h.core.releaseKeys()
	if h.out != nil {
		h.out.Release()
		h.out = nil
	}
	return h.child.Close()
}

func (h *HashAggregate) consume(ctx context.Context, b arrow.RecordBatch) error {
	keys, err := h.core.evalKeys(ctx, b)
	if err != nil {
		return err
	}
	defer releaseArrays(keys)
	rows := int(b.NumRows())
	gids := make([]int32, rows)
	var newRows []int
	var tableBytes int64
	if len(keys) == 0 {
		if h.core.ngroups == 0 {
			newRows = []int{0}
		}
	} else {
		enc := keyEncoder{cols: keys, types: h.core.groupTypes}
		var buf []byte
		for i := 0; i < rows; i++ {
			buf = enc.encode(buf[:0], i)
			g, found := h.table[string(buf)]
			if !found {
				g = int32(h.core.ngroups + len(newRows))
				h.table[string(buf)] = g
				newRows = append(newRows, i)
				tableBytes += int64(len(buf)) + 64
			}
			gids[i] = g
		}
	}
	if err := h.core.addKeys(keys, newRows); err != nil {
		return err
	}
	if err := h.core.accumulate(ctx, b, gids); err != nil {
		return err
	}
	h.tableBytes += tableBytes
	return h.core.budget.set(h.core.stateBytes(h.tableBytes))
}

func (h *HashAggregate) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !h.done {
		for {
			b, err := h.child.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, err
			}
			err = h.consume(ctx, b)
			b.Release()
			if err != nil {
				return nil, err
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		h.done = true
		if h.core.ngroups == 0 && len(h.core.groupEvs) == 0 {
			h.core.ngroups = 1
			for _, a := range h.core.accs {
				a.resize(1)
			}
		}
		out, err := h.core.output(h.core.ngroups)
		if err != nil {
			return nil, err
		}
		h.out = out
		h.core.releaseKeys()
		h.table = nil
	}
	if h.out == nil || h.pos >= h.out.NumRows() {
		return nil, io.EOF
	}
	end := min(h.out.NumRows(), h.pos+int64(h.core.batchSize))
	b := h.out.NewSlice(h.pos, end)
	h.pos = end
	return b, nil
}
