package exec

import (
	"context"
	"errors"
	"io"
	"strings"

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
	c := &aggCore{mem: mem, specs: aggs, budget: newBudget(opName, mem, opts.MemoryLimit), batchSize: opts.BatchSize}
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
		case len(spec.Args) == 1 || len(spec.Args) == 2 && (spec.Func == "string_agg" || spec.Func == "json_object_agg" || spec.Func == "array_agg" ||
			spec.Func == "json_agg" || spec.Func == "jsonb_agg" || regrFuncs[spec.Func] || orderedSetFuncs[spec.Func]) ||
			len(spec.Args) == 3 && spec.Func == "json_object_agg":
			if ev, err = eval.Compile(spec.Args[0], child.Schema(), env); err != nil {
				return nil, err
			}
			argType = ev.Type()
			if extra, err = compileAll(spec.Args[1:], child.Schema(), env); err != nil {
				return nil, err
			}
			if spec.Func == "string_agg" && len(extra) > 0 && extra[0].Type().Kind != argType.Kind && !(isTextKind(argType.Kind) && isTextKind(extra[0].Type().Kind)) {
				return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s, %s) does not exist", spec.Func, argType, extra[0].Type())
			}
		default:
			return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s with %d arguments does not exist", spec.Func, len(spec.Args))
		}
		rt, err := AggResultType(spec.Func, argType)
		if err != nil {
			return nil, err
		}
		if orderedSetFuncs[spec.Func] && len(extra) > 0 && extra[0].Type().IsArray() {
			rt = sqltypes.ArrayOf(rt) // percentile_*(ARRAY[fractions])
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
		if a, ok := acc.(accounted); ok {
			a.setAccount(c.budget.acct)
		}
		inner := acc
		if d, ok := acc.(*distinctAcc); ok {
			inner = d.inner
		}
		if j, ok := inner.(*jsonAggAcc); ok {
			j.opts = env.Options
			if spec.Func == "json_object_agg" && len(extra) > 0 {
				j.valT = extra[0].Type()
			}
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
	// One of three group tables: ints for a single integer-like key,
	// strs for a single text key, table (encoded keys) otherwise.
	ints  *intGroupTable
	strs  map[string]int32
	table map[string]int32
	// nullGroup is the group of a NULL single key (-1: none yet).
	nullGroup int32
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
	h := &HashAggregate{child: child, core: core, nullGroup: -1}
	switch {
	case len(core.groupTypes) == 1 && intKeyKind(core.groupTypes[0].Kind):
		h.ints = newIntGroupTable()
	case len(core.groupTypes) == 1 && textKeyKind(core.groupTypes[0]):
		h.strs = map[string]int32{}
	default:
		h.table = map[string]int32{}
	}
	return h, nil
}

// intKeyKind reports whether a key of kind k is read as int16/32/64
// values whose equality is the key's (no -0/NaN or interval rules).
func intKeyKind(k sqltypes.Kind) bool {
	switch k {
	case sqltypes.Int2, sqltypes.Int4, sqltypes.Int8, sqltypes.Date, sqltypes.Timestamp, sqltypes.TimestampTZ:
		return true
	}
	return false
}

// textKeyKind reports whether a key of type t is an *array.String whose
// byte equality is the key's (the keyEncoder's default case).
func textKeyKind(t sqltypes.Type) bool {
	// jsonb is stored as text but equal values may differ in text (1.0, 1).
	return t.Arrow().ID() == arrow.STRING && t.Kind != sqltypes.JSONB
}

func (h *HashAggregate) Schema() *arrow.Schema          { return h.core.schema }
func (h *HashAggregate) Open(ctx context.Context) error { return h.child.Open(ctx) }

func (h *HashAggregate) Close() error {
	h.release()
	return h.child.Close()
}

// release frees the groups and the output held (not the child).
func (h *HashAggregate) release() {
	h.core.releaseKeys()
	if h.out != nil {
		h.out.Release()
		h.out = nil
	}
}

func (h *HashAggregate) consume(ctx context.Context, b arrow.RecordBatch) error {
	keys, err := h.core.evalKeys(ctx, b)
	if err != nil {
		return err
	}
	defer releaseArrays(keys)
	gids, newRows, tableBytes := h.groupIDs(keys, int(b.NumRows()))
	if err := h.core.addKeys(keys, newRows); err != nil {
		return err
	}
	if err := h.core.accumulate(ctx, b, gids); err != nil {
		return err
	}
	h.tableBytes += tableBytes
	return h.core.budget.set(h.core.stateBytes(h.tableBytes))
}

// groupIDs assigns the group of each of rows rows of the key columns keys,
// adding the new groups to the table (not to the core): it returns the
// group ids, the rows that start new groups, and the table's growth in
// bytes.
func (h *HashAggregate) groupIDs(keys []arrow.Array, rows int) (gids []int32, newRows []int, tableBytes int64) {
	gids = make([]int32, rows)
	switch {
	case len(keys) == 0:
		if h.core.ngroups == 0 {
			newRows = []int{0}
		}
	case h.ints != nil:
		switch h.core.groupTypes[0].Kind {
		case sqltypes.Int2:
			newRows = groupInts(h, eval.FixedValues[int16](keys[0]), keys[0], gids)
		case sqltypes.Int4, sqltypes.Date:
			newRows = groupInts(h, eval.FixedValues[int32](keys[0]), keys[0], gids)
		default:
			newRows = groupInts(h, eval.FixedValues[int64](keys[0]), keys[0], gids)
		}
		tableBytes = h.ints.bytes() - h.tableBytes
	case h.strs != nil:
		col := keys[0].(*array.String)
		for i := 0; i < rows; i++ {
			if col.IsNull(i) {
				gids[i] = h.nullGroupFor(&newRows, i)
				continue
			}
			v := col.Value(i)
			g, found := h.strs[v]
			if !found {
				g = int32(h.core.ngroups + len(newRows))
				h.strs[strings.Clone(v)] = g
				newRows = append(newRows, i)
				tableBytes += int64(len(v)) + 64
			}
			gids[i] = g
		}
	default:
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
	return gids, newRows, tableBytes
}

// nullGroupFor returns the group of a NULL single key at row i, making it
// a new group (appended to newRows) the first time.
func (h *HashAggregate) nullGroupFor(newRows *[]int, i int) int32 {
	if h.nullGroup < 0 {
		h.nullGroup = int32(h.core.ngroups + len(*newRows))
		*newRows = append(*newRows, i)
	}
	return h.nullGroup
}

// groupInts assigns the group ids of one batch's single integer key
// column (values vals, validity from col) into gids and returns the rows
// that start new groups.
func groupInts[T int16 | int32 | int64](h *HashAggregate, vals []T, col arrow.Array, gids []int32) []int {
	var newRows []int
	t := h.ints
	next := int32(h.core.ngroups)
	nulls := col.NullN() > 0
	for i, v := range vals {
		if nulls && col.IsNull(i) {
			gids[i] = h.nullGroupFor(&newRows, i)
			next = int32(h.core.ngroups + len(newRows))
			continue
		}
		g, added := t.findOrAdd(int64(v), next)
		if added {
			newRows = append(newRows, i)
			next++
		}
		gids[i] = g
	}
	return newRows
}

// intGroupTable maps int64 keys to group ids: open addressing with linear
// probing, Fibonacci hashing, load at most 1/2.
type intGroupTable struct {
	keys  []int64
	gids  []int32 // group id + 1; 0 is an empty slot
	shift uint
	n     int
}

const intTableMinBits = 10

func newIntGroupTable() *intGroupTable {
	return &intGroupTable{keys: make([]int64, 1<<intTableMinBits), gids: make([]int32, 1<<intTableMinBits), shift: 64 - intTableMinBits}
}

func (t *intGroupTable) bytes() int64 { return int64(len(t.keys)) * 12 }

// findOrAdd returns k's group, or adds k as group next.
func (t *intGroupTable) findOrAdd(k int64, next int32) (int32, bool) {
	mask := uint64(len(t.keys) - 1)
	for s := (uint64(k) * 0x9E3779B97F4A7C15) >> t.shift; ; s = (s + 1) & mask {
		g := t.gids[s]
		if g == 0 {
			t.keys[s], t.gids[s] = k, next+1
			t.n++
			if 2*t.n > len(t.keys) {
				t.rehash()
			}
			return next, true
		}
		if t.keys[s] == k {
			return g - 1, false
		}
	}
}

func (t *intGroupTable) rehash() {
	keys, gids := t.keys, t.gids
	t.keys, t.gids = make([]int64, 2*len(keys)), make([]int32, 2*len(keys))
	t.shift--
	mask := uint64(len(t.keys) - 1)
	for i, g := range gids {
		if g == 0 {
			continue
		}
		s := (uint64(keys[i]) * 0x9E3779B97F4A7C15) >> t.shift
		for t.gids[s] != 0 {
			s = (s + 1) & mask
		}
		t.keys[s], t.gids[s] = keys[i], g
	}
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
		if err := h.finish(); err != nil {
			return nil, err
		}
	}
	if h.out == nil || h.pos >= h.out.NumRows() {
		return nil, io.EOF
	}
	end := min(h.out.NumRows(), h.pos+int64(h.core.batchSize))
	b := h.out.NewSlice(h.pos, end)
	h.pos = end
	return b, nil
}

// finish turns the groups into the output batch once the input is
// consumed; Next then returns slices of it.
func (h *HashAggregate) finish() error {
	h.done = true
	if h.core.ngroups == 0 && len(h.core.groupEvs) == 0 {
		h.core.ngroups = 1
		for _, a := range h.core.accs {
			a.resize(1)
		}
	}
	out, err := h.core.output(h.core.ngroups)
	if err != nil {
		return err
	}
	h.out = out
	h.core.releaseKeys()
	h.table, h.strs, h.ints = nil, nil, nil
	return nil
}
