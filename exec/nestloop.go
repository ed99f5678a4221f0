package exec

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// NestedLoopJoin joins on any condition (no equality needed): a block
// nested loop that streams the left input and materializes the right one
// (bounded by MemoryLimit, 53200 beyond). Each chunk of left rows is paired
// with every right row, the condition is evaluated over the pairs at once
// (NULL = no match), and the passing pairs come out in left order, each
// left row's matches in right order. LEFT and FULL add each unmatched left
// row in place, with NULL right columns; RIGHT and FULL add the right rows
// that matched no left row at the end, with NULL left columns.
type NestedLoopJoin struct {
	left, right Operator
	mem         memory.Allocator
	typ         JoinType
	cond        *eval.Evaluator // nil: every pair matches
	need        *condCols
	schema      *arrow.Schema
	budget      memBudget
	batchSize   int

	rightAll arrow.RecordBatch
	matched  []bool // right rows that matched (RIGHT, FULL)
	tail     bool
	cur      arrow.RecordBatch
	curRow   int
}

var _ Operator = (*NestedLoopJoin)(nil)

// NestedLoopJoinOptions tune a NestedLoopJoin.
type NestedLoopJoinOptions struct {
	// MemoryLimit bounds the right side's bytes (0 = unlimited; 53200 beyond).
	MemoryLimit int64
	BatchSize   int // candidate pairs per chunk; 0 = DefaultBatchSize
}

// NewNestedLoopJoin returns left JOIN right ON cond (nil: ON true); cond
// refers to the joined row, left columns first.
func NewNestedLoopJoin(left, right Operator, mem memory.Allocator, typ JoinType, cond expr.Expr, env eval.Env, opts NestedLoopJoinOptions) (*NestedLoopJoin, error) {
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	j := &NestedLoopJoin{left: left, right: right, mem: mem, typ: typ,
		schema: joinSchema(left.Schema(), right.Schema(), typ), budget: newBudget("nested loop join", mem, opts.MemoryLimit),
		batchSize: opts.BatchSize}
	ev, err := compileJoinCond(cond, j.schema, mem, env)
	if err != nil {
		return nil, err
	}
	j.cond, j.need = ev, newCondCols(cond, j.schema)
	return j, nil
}

// joinSchema is the output of a join of kind typ: left fields, then right
// ones, nullable on a side that may be padded.
func joinSchema(ls, rs *arrow.Schema, typ JoinType) *arrow.Schema {
	var fields []arrow.Field
	for _, f := range ls.Fields() {
		if typ.rightOuter() {
			f.Nullable = true
		}
		fields = append(fields, f)
	}
	for _, f := range rs.Fields() {
		if typ != InnerJoin {
			f.Nullable = true
		}
		fields = append(fields, f)
	}
	return arrow.NewSchema(fields, nil)
}

func compileJoinCond(cond expr.Expr, schema *arrow.Schema, mem memory.Allocator, env eval.Env) (*eval.Evaluator, error) {
	if cond == nil {
		return nil, nil
	}
	env.Mem = mem
	ev, err := eval.Compile(cond, schema, env)
	if err != nil {
		return nil, err
	}
	if ev.Type().Kind != sqltypes.Bool {
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "argument of JOIN/ON must be type boolean, not type %s", ev.Type())
	}
	return ev, nil
}

func (j *NestedLoopJoin) Schema() *arrow.Schema { return j.schema }

func (j *NestedLoopJoin) Open(ctx context.Context) error {
	if err := j.left.Open(ctx); err != nil {
		return err
	}
	return j.right.Open(ctx)
}

func (j *NestedLoopJoin) Close() error {
	j.need.release()
	for _, b := range []*arrow.RecordBatch{&j.rightAll, &j.cur} {
		if *b != nil {
			(*b).Release()
			*b = nil
		}
	}
	lerr, rerr := j.left.Close(), j.right.Close()
	if lerr != nil {
		return lerr
	}
	return rerr
}

func (j *NestedLoopJoin) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if j.rightAll == nil {
		parts, err := drainAll(ctx, j.right, &j.budget)
		if err != nil {
			return nil, err
		}
		all, err := concatBatches(j.mem, j.right.Schema(), parts)
		releaseBatches(parts)
		if err != nil {
			return nil, err
		}
		j.rightAll = all
		if j.typ.rightOuter() {
			j.matched = make([]bool, all.NumRows())
		}
	}
	m := int(j.rightAll.NumRows())
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if j.cur == nil || j.curRow >= int(j.cur.NumRows()) {
			if j.cur != nil {
				j.cur.Release()
				j.cur = nil
			}
			b, err := j.left.Next(ctx)
			if errors.Is(err, io.EOF) {
				return j.unmatchedRight()
			}
			if err != nil {
				return nil, err
			}
			if b.NumRows() == 0 || m == 0 && !j.typ.leftOuter() {
				b.Release()
				continue
			}
			j.cur, j.curRow = b, 0
		}
		rows := max(1, j.batchSize/max(m, 1))
		end := min(int(j.cur.NumRows()), j.curRow+rows)
		var li []int
		var ri []operator.Ref
		for i := j.curRow; i < end; i++ {
			for r := 0; r < m; r++ {
				li = append(li, i)
				ri = append(ri, operator.Ref{Row: int32(r)})
			}
		}
		start := j.curRow
		j.curRow = end
		out, err := pairJoin(ctx, pairInput{mem: j.mem, schema: j.schema, cond: j.cond, need: j.need, left: j.cur,
			rights: []arrow.RecordBatch{j.rightAll}, li: li, ri: ri, leftOuter: j.typ.leftOuter(), from: start, to: end,
			matched: func(ref operator.Ref) {
				if j.matched != nil {
					j.matched[ref.Row] = true
				}
			}})
		if err != nil {
			return nil, err
		}
		if out.NumRows() > 0 {
			return out, nil
		}
		out.Release()
	}
}

// unmatchedRight emits, once, the right rows no left row matched (RIGHT,
// FULL), with NULL left columns.
func (j *NestedLoopJoin) unmatchedRight() (arrow.RecordBatch, error) {
	if j.matched == nil || j.tail {
		return nil, io.EOF
	}
	j.tail = true
	var li []int
	var ri []operator.Ref
	for r, ok := range j.matched {
		if !ok {
			li = append(li, -1)
			ri = append(ri, operator.Ref{Row: int32(r)})
		}
	}
	if len(li) == 0 {
		return nil, io.EOF
	}
	cols := emptyCols(j.mem, j.left.Schema())
	empty := array.NewRecordBatch(j.left.Schema(), cols, 0)
	releaseArrays(cols)
	defer empty.Release()
	return gatherPairs(j.mem, j.schema, empty, []arrow.RecordBatch{j.rightAll}, li, ri, nil)
}

// pairInput is one chunk of candidate pairs: left row li[k] of left with
// row ri[k] of the right batches (ri[k].Src indexes rights). The pairs are
// grouped by left row, in left order, over the left rows [from, to).
type pairInput struct {
	mem       memory.Allocator
	schema    *arrow.Schema
	cond      *eval.Evaluator
	need      *condCols
	left      arrow.RecordBatch
	rights    []arrow.RecordBatch
	li        []int
	ri        []operator.Ref
	leftOuter bool
	from, to  int
	matched   func(operator.Ref) // called for each pair that passes
}

// pairJoin evaluates the condition over the candidate pairs and returns
// the passing ones; with leftOuter, each left row in [from, to) that kept
// no pair appears once, in place, with NULL right columns.
func pairJoin(ctx context.Context, p pairInput) (arrow.RecordBatch, error) {
	keep := make([]bool, len(p.li))
	for k := range keep {
		keep[k] = true
	}
	if p.cond != nil && len(p.li) > 0 {
		cand, err := gatherPairs(p.mem, p.schema, p.left, p.rights, p.li, p.ri, p.need)
		if err != nil {
			return nil, err
		}
		m, err := p.cond.Eval(ctx, cand)
		cand.Release()
		if err != nil {
			return nil, err
		}
		ba := m.(*array.Boolean)
		for k := range keep {
			keep[k] = ba.IsValid(k) && ba.Value(k)
		}
		m.Release()
	}
	var li []int
	var ri []operator.Ref
	k := 0
	for i := p.from; i < p.to; i++ {
		any := false
		for ; k < len(p.li) && p.li[k] == i; k++ {
			if keep[k] {
				li = append(li, i)
				ri = append(ri, p.ri[k])
				any = true
				if p.matched != nil {
					p.matched(p.ri[k])
				}
			}
		}
		if !any && p.leftOuter {
			li = append(li, i)
			ri = append(ri, operator.NullRef)
		}
	}
	return gatherPairs(p.mem, p.schema, p.left, p.rights, li, ri, nil)
}

// gatherPairs builds the rows (left[li[k]], rights[ri[k]]): li[k] < 0 or
// a NullRef makes that side NULL. With need, only the columns the
// condition reads are gathered (the others are NULL placeholders).
func gatherPairs(mem memory.Allocator, schema *arrow.Schema, left arrow.RecordBatch, rights []arrow.RecordBatch, li []int, ri []operator.Ref, need *condCols) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, 0, schema.NumFields())
	for c := 0; c < int(left.NumCols()); c++ {
		if need.skip(c) {
			cols = append(cols, need.placeholder(mem, c, len(li)))
			continue
		}
		a, err := eval.Take(mem, left.Column(c), li)
		if err != nil {
			releaseArrays(cols)
			return nil, err
		}
		cols = append(cols, a)
	}
	nl := int(left.NumCols())
	srcs := make([]arrow.Array, len(rights))
	for c := nl; c < schema.NumFields(); c++ {
		if need.skip(c) {
			cols = append(cols, need.placeholder(mem, c, len(li)))
			continue
		}
		for s, b := range rights {
			srcs[s] = nil
			if b != nil {
				srcs[s] = b.Column(c - nl)
			}
		}
		a, err := operator.Gather(context.Background(), mem, schema.Field(c).Type, srcs, ri)
		if err != nil {
			releaseArrays(cols)
			return nil, err
		}
		cols = append(cols, a)
	}
	out := array.NewRecordBatch(schema, cols, int64(len(li)))
	releaseArrays(cols)
	return out, nil
}

// LateralRunner builds the right side of a lateral join for one left
// row's outer values (in the order of the join's Args). The operator is
// not yet opened.
type LateralRunner func(ctx context.Context, args []any) (Operator, error)

// LateralJoinOptions tune a LateralJoin.
type LateralJoinOptions struct {
	// MemoryLimit bounds the cached right results' bytes (0 = unlimited;
	// one right result beyond it fails with 53200).
	MemoryLimit int64
	// CacheBytes caps the cache of right results: when it would grow past
	// it, the cache is emptied (0 = MemoryLimit/4, or 16 MiB without a
	// limit).
	CacheBytes int64
	BatchSize  int // candidate pairs per chunk; 0 = DefaultBatchSize
}

// LateralJoin is FROM left, LATERAL (right): for each left row the right
// side is run with the row's outer values (Args evaluated over the row),
// and the row is paired with each right row that passes Cond (nil: ON
// true). Results are cached per distinct outer values, so repeated values
// run the right side once. Output: left columns then right ones, in left
// order, each left row's pairs in the right side's order; LeftJoin adds
// each left row that kept no pair, once, with NULL right columns.
type LateralJoin struct {
	left        Operator
	args        []*eval.Evaluator
	run         LateralRunner
	rightSchema *arrow.Schema
	mem         memory.Allocator
	typ         JoinType
	cond        *eval.Evaluator
	need        *condCols
	schema      *arrow.Schema
	budget      memBudget
	batchSize   int
	cacheCap    int64

	cache      map[string]*lateralResult
	cacheBytes int64
	cur        arrow.RecordBatch
	curArgs    []arrow.Array
	curRow     int
}

type lateralResult struct {
	rows    arrow.RecordBatch // nil: no rows
	bytes   int64             // its size, against the cache cap
	charged int64             // what the memory budget was charged
}

var _ Operator = (*LateralJoin)(nil)

// NewLateralJoin returns left JOIN LATERAL right ON cond for typ InnerJoin
// or LeftJoin; args are expressions over the left row, cond over the
// joined row (left columns first).
func NewLateralJoin(left Operator, args []expr.Expr, rightSchema *arrow.Schema, run LateralRunner, mem memory.Allocator, typ JoinType, cond expr.Expr, env eval.Env, opts LateralJoinOptions) (*LateralJoin, error) {
	if typ != InnerJoin && typ != LeftJoin {
		return nil, sqlerr.New(sqlerr.InternalError, "lateral join of kind %s", typ)
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = 16 << 20
		if opts.MemoryLimit > 0 {
			opts.CacheBytes = opts.MemoryLimit / 4
		}
	}
	j := &LateralJoin{left: left, run: run, rightSchema: rightSchema, mem: mem, typ: typ,
		schema: joinSchema(left.Schema(), rightSchema, typ), budget: newBudget("lateral join", mem, opts.MemoryLimit),
		batchSize: opts.BatchSize, cacheCap: opts.CacheBytes, cache: map[string]*lateralResult{}}
	aenv := env
	aenv.Mem = mem
	for _, a := range args {
		ev, err := eval.Compile(a, left.Schema(), aenv)
		if err != nil {
			return nil, err
		}
		j.args = append(j.args, ev)
	}
	ev, err := compileJoinCond(cond, j.schema, mem, env)
	if err != nil {
		return nil, err
	}
	j.cond, j.need = ev, newCondCols(cond, j.schema)
	return j, nil
}

func (j *LateralJoin) Schema() *arrow.Schema { return j.schema }

func (j *LateralJoin) Open(ctx context.Context) error { return j.left.Open(ctx) }

func (j *LateralJoin) Close() error {
	j.need.release()
	j.dropCache()
	j.dropCur()
	return j.left.Close()
}

func (j *LateralJoin) dropCur() {
	if j.cur != nil {
		j.cur.Release()
		j.cur = nil
	}
	releaseArrays(j.curArgs)
	j.curArgs = nil
}

func (j *LateralJoin) dropCache() {
	for _, r := range j.cache {
		if r.rows != nil {
			r.rows.Release()
		}
		j.budget.grow(-r.charged) //nolint:errcheck // returning bytes cannot fail
	}
	clear(j.cache)
	j.cacheBytes = 0
}

func (j *LateralJoin) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if j.cur == nil || j.curRow >= int(j.cur.NumRows()) {
			j.dropCur()
			b, err := j.left.Next(ctx)
			if err != nil {
				return nil, err // io.EOF included
			}
			if b.NumRows() == 0 {
				b.Release()
				continue
			}
			j.cur, j.curRow = b, 0
			for _, ev := range j.args {
				a, err := ev.Eval(ctx, b)
				if err != nil {
					return nil, err
				}
				j.curArgs = append(j.curArgs, a)
			}
		}
		out, err := j.chunk(ctx)
		if err != nil {
			return nil, err
		}
		if out.NumRows() > 0 {
			return out, nil
		}
		out.Release()
	}
}

// chunk joins the next left rows of cur, up to about batchSize pairs.
func (j *LateralJoin) chunk(ctx context.Context) (arrow.RecordBatch, error) {
	var rights []arrow.RecordBatch
	defer func() { releaseBatches(rights) }()
	src := map[*lateralResult]int32{}
	var li []int
	var ri []operator.Ref
	start := j.curRow
	n := int(j.cur.NumRows())
	for j.curRow < n && (j.curRow == start || len(li) < j.batchSize) {
		i := j.curRow
		res, err := j.result(ctx, i)
		if err != nil {
			return nil, err
		}
		j.curRow++
		if res.rows == nil {
			continue
		}
		s, ok := src[res]
		if !ok {
			res.rows.Retain() // kept for this chunk even if the cache drops it
			s = int32(len(rights))
			src[res] = s
			rights = append(rights, res.rows)
		}
		for r := 0; r < int(res.rows.NumRows()); r++ {
			li = append(li, i)
			ri = append(ri, operator.Ref{Src: s, Row: int32(r)})
		}
	}
	if len(rights) == 0 {
		// Gather needs a source array for the right columns' type even
		// when every right row is NULL.
		cols := emptyCols(j.mem, j.rightSchema)
		rights = append(rights, array.NewRecordBatch(j.rightSchema, cols, 0))
		releaseArrays(cols)
	}
	return pairJoin(ctx, pairInput{mem: j.mem, schema: j.schema, cond: j.cond, need: j.need, left: j.cur, rights: rights,
		li: li, ri: ri, leftOuter: j.typ == LeftJoin, from: start, to: j.curRow})
}

// result returns the right side's rows for left row i of cur, from the
// cache or by running it.
func (j *LateralJoin) result(ctx context.Context, i int) (*lateralResult, error) {
	var key []byte
	vals := make([]any, len(j.curArgs))
	for k, a := range j.curArgs {
		v := eval.ValueAt(a, i)
		vals[k] = v
		if v == nil {
			key = append(key, 0)
			continue
		}
		// The exact value, not SQL equality: 0 and -0, or '1 day' and
		// '24 hours', may give different results.
		s := fmt.Sprint(v)
		key = append(key, 1)
		key = binary.AppendUvarint(key, uint64(len(s)))
		key = append(key, s...)
	}
	if r, ok := j.cache[string(key)]; ok {
		return r, nil
	}
	op, err := j.run(ctx, vals)
	if err != nil {
		return nil, err
	}
	if err := op.Open(ctx); err != nil {
		op.Close()
		return nil, err
	}
	before := j.budget.used
	parts, err := drainAll(ctx, op, &j.budget)
	cerr := op.Close()
	if err == nil {
		err = cerr
	}
	if err != nil {
		releaseBatches(parts)
		j.budget.grow(before - j.budget.used) //nolint:errcheck // returning bytes cannot fail
		return nil, err
	}
	res := &lateralResult{charged: j.budget.used - before}
	if len(parts) > 0 {
		rows, err := concatBatches(j.mem, j.rightSchema, parts)
		releaseBatches(parts)
		if err != nil {
			j.budget.grow(-res.charged) //nolint:errcheck // returning bytes cannot fail
			return nil, err
		}
		res.rows, res.bytes = rows, batchBytes(rows)
	}
	if j.cacheBytes+res.bytes > j.cacheCap {
		j.dropCache()
	}
	j.cache[string(key)] = res
	j.cacheBytes += res.bytes
	return res, nil
}

// condCols are the joined columns a join condition reads: the candidate
// pairs gather only those (strings cost the most), the others are slices
// of one all-NULL array per column, kept across chunks.
type condCols struct {
	schema *arrow.Schema
	read   []bool
	nulls  []arrow.Array
}

func newCondCols(cond expr.Expr, schema *arrow.Schema) *condCols {
	if cond == nil {
		return nil
	}
	c := &condCols{schema: schema, read: make([]bool, schema.NumFields()), nulls: make([]arrow.Array, schema.NumFields())}
	for _, i := range expr.Columns(cond) {
		if i < len(c.read) {
			c.read[i] = true
		}
	}
	return c
}

func (c *condCols) skip(i int) bool { return c != nil && !c.read[i] }

// placeholder returns n NULLs of column i's type.
func (c *condCols) placeholder(mem memory.Allocator, i, n int) arrow.Array {
	if a := c.nulls[i]; a == nil || a.Len() < n {
		if a != nil {
			a.Release()
		}
		c.nulls[i] = array.MakeArrayOfNull(mem, c.schema.Field(i).Type, max(n, DefaultBatchSize))
	}
	return array.NewSlice(c.nulls[i], 0, int64(n))
}

func (c *condCols) release() {
	if c == nil {
		return
	}
	releaseArrays(c.nulls)
	clear(c.nulls)
}
