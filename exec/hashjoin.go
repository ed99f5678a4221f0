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

// JoinType is the kind of an equi-join.
type JoinType uint8

const (
	InnerJoin JoinType = iota
	LeftJoin
	RightJoin
	FullJoin
)

func (j JoinType) String() string {
	switch j {
	case LeftJoin:
		return "LEFT"
	case RightJoin:
		return "RIGHT"
	case FullJoin:
		return "FULL"
	}
	return "INNER"
}

// leftOuter and rightOuter report which sides keep their unmatched rows.
func (j JoinType) leftOuter() bool  { return j == LeftJoin || j == FullJoin }
func (j JoinType) rightOuter() bool { return j == RightJoin || j == FullJoin }

// HashJoinOptions tune a HashJoin.
type HashJoinOptions struct {
	// LeftRows and RightRows are the inputs' estimated sizes (< 0 or 0 =
	// unknown). When both are known the smaller side is built; otherwise
	// the right side is.
	LeftRows, RightRows int64
	// MemoryLimit bounds the build side's bytes (0 = unlimited); beyond it
	// the join fails with 53200.
	MemoryLimit int64
}

// HashJoin is an equi-join: left.LeftKeys[i] = right.RightKeys[i] for all
// i (SQL '=': a NULL key matches nothing), then the optional Residual
// predicate over the joined row (NULL = no match). Output: the left
// columns, then the right columns (NULL for the other side of an outer
// join's unmatched rows: left rows of LEFT and FULL, right rows of RIGHT
// and FULL).
//
// Building the right side (the default) streams the left input and keeps
// its order: each left batch yields one output batch with every left row's
// matches in build order. Building the left side (chosen when it is known
// to be smaller) streams the right input. Unmatched rows of the streamed
// side come in place; unmatched rows of the built side come last.
type HashJoin struct {
	left, right Operator
	mem         memory.Allocator
	typ         JoinType
	leftKeys    []int
	rightKeys   []int
	keyTypes    []sqltypes.Type
	residual    *eval.Evaluator
	schema      *arrow.Schema
	buildLeft   bool
	budget      memBudget

	built   bool
	build   arrow.RecordBatch // the whole build side
	table   map[string]int32  // key → index into groups
	groups  [][]int32         // build rows per key, in input order
	matched []bool            // outer build side: build rows that matched
	tail    bool              // unmatched build rows emitted

	cur     arrow.RecordBatch // probe batch being joined
	curGids []int32           // its rows' key groups (-1: none)
	curPos  int               // next row of cur to join
}

var _ Operator = (*HashJoin)(nil)

// NewHashJoin returns left JOIN right ON the key columns (and residual,
// which may be nil and refers to the joined row: left columns first).
func NewHashJoin(left, right Operator, mem memory.Allocator, typ JoinType, leftKeys, rightKeys []int, residual expr.Expr, env eval.Env, opts HashJoinOptions) (*HashJoin, error) {
	if len(leftKeys) != len(rightKeys) || len(leftKeys) == 0 {
		return nil, sqlerr.New(sqlerr.InternalError, "hash join needs the same positive number of left and right keys (got %d and %d)", len(leftKeys), len(rightKeys))
	}
	ls, rs := left.Schema(), right.Schema()
	j := &HashJoin{left: left, right: right, mem: mem, typ: typ, leftKeys: leftKeys, rightKeys: rightKeys,
		budget: newBudget("hash join", mem, opts.MemoryLimit)}
	for i := range leftKeys {
		lt, err := columnType(ls, leftKeys[i])
		if err != nil {
			return nil, err
		}
		rt, err := columnType(rs, rightKeys[i])
		if err != nil {
			return nil, err
		}
		if !arrow.TypeEqual(lt.Arrow(), rt.Arrow()) {
			return nil, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s = %s", lt, rt).
				WithHint("Join keys %q and %q must have the same type; cast one of them.", ls.Field(leftKeys[i]).Name, rs.Field(rightKeys[i]).Name)
		}
		j.keyTypes = append(j.keyTypes, lt)
	}
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
	j.schema = arrow.NewSchema(fields, nil)
	if residual != nil {
		env.Mem = mem
		ev, err := eval.Compile(residual, j.schema, env)
		if err != nil {
			return nil, err
		}
		if ev.Type().Kind != sqltypes.Bool {
			return nil, sqlerr.New(sqlerr.DatatypeMismatch, "argument of JOIN/ON must be type boolean, not type %s", ev.Type())
		}
		j.residual = ev
	}
	j.buildLeft = opts.LeftRows > 0 && opts.RightRows > 0 && opts.LeftRows < opts.RightRows
	return j, nil
}

func (j *HashJoin) Schema() *arrow.Schema { return j.schema }

func (j *HashJoin) Open(ctx context.Context) error {
	if err := j.left.Open(ctx); err != nil {
		return err
	}
	return j.right.Open(ctx)
}

func (j *HashJoin) Close() error {
	if j.cur != nil {
		j.cur.Release()
		j.cur = nil
	}
	if j.build != nil {
		j.build.Release()
		j.build = nil
	}
	lerr := j.left.Close()
	rerr := j.right.Close()
	if lerr != nil {
		return lerr
	}
	return rerr
}

func (j *HashJoin) buildSide() (Operator, []int) {
	if j.buildLeft {
		return j.left, j.leftKeys
	}
	return j.right, j.rightKeys
}

func (j *HashJoin) buildTable(ctx context.Context) error {
	j.built = true
	op, keys := j.buildSide()
	parts, err := drainAll(ctx, op, &j.budget)
	if err != nil {
		return err
	}
	all, err := concatBatches(j.mem, op.Schema(), parts)
	releaseBatches(parts)
	if err != nil {
		return err
	}
	j.build = all
	enc := j.encoder(all, keys)
	j.table = map[string]int32{}
	var buf []byte
	var tableBytes int64
	for i := 0; i < int(all.NumRows()); i++ {
		if enc.anyNull(i) {
			continue
		}
		buf = enc.encode(buf[:0], i)
		g, found := j.table[string(buf)]
		if !found {
			g = int32(len(j.groups))
			j.table[string(buf)] = g
			j.groups = append(j.groups, nil)
			tableBytes += int64(len(buf)) + 80
		}
		j.groups[g] = append(j.groups[g], int32(i))
		tableBytes += 4
	}
	if j.buildOuter() {
		j.matched = make([]bool, all.NumRows())
	}
	return j.budget.grow(tableBytes)
}

// buildOuter and probeOuter report whether the built and the streamed
// side keep their unmatched rows.
func (j *HashJoin) buildOuter() bool {
	return j.buildLeft && j.typ.leftOuter() || !j.buildLeft && j.typ.rightOuter()
}

func (j *HashJoin) probeOuter() bool {
	return !j.buildLeft && j.typ.leftOuter() || j.buildLeft && j.typ.rightOuter()
}

func (j *HashJoin) encoder(b arrow.RecordBatch, keys []int) *keyEncoder {
	enc := &keyEncoder{types: j.keyTypes}
	for _, k := range keys {
		enc.cols = append(enc.cols, b.Column(k))
	}
	return enc
}

// joined builds the output rows (left[li[k]], right[ri[k]]); an index < 0
// makes that side NULL.
func (j *HashJoin) joined(left, right arrow.RecordBatch, li, ri []int) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, 0, j.schema.NumFields())
	for _, side := range []struct {
		b   arrow.RecordBatch
		idx []int
	}{{left, li}, {right, ri}} {
		for c := 0; c < int(side.b.NumCols()); c++ {
			a, err := eval.Take(j.mem, side.b.Column(c), side.idx)
			if err != nil {
				releaseArrays(cols)
				return nil, err
			}
			cols = append(cols, a)
		}
	}
	out := array.NewRecordBatch(j.schema, cols, int64(len(li)))
	releaseArrays(cols)
	return out, nil
}

// keepResidual evaluates the residual over b and reports which rows pass.
func (j *HashJoin) keepResidual(ctx context.Context, b arrow.RecordBatch) ([]bool, error) {
	keep := make([]bool, b.NumRows())
	if j.residual == nil {
		for i := range keep {
			keep[i] = true
		}
		return keep, nil
	}
	m, err := j.residual.Eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer m.Release()
	ba := m.(*array.Boolean)
	for i := range keep {
		keep[i] = ba.IsValid(i) && ba.Value(i)
	}
	return keep, nil
}

func (j *HashJoin) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !j.built {
		if err := j.buildTable(ctx); err != nil {
			return nil, err
		}
	}
	probe, probeKeys := j.left, j.leftKeys
	if j.buildLeft {
		probe, probeKeys = j.right, j.rightKeys
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if j.cur == nil {
			pb, err := probe.Next(ctx)
			if errors.Is(err, io.EOF) {
				return j.unmatchedBuild()
			}
			if err != nil {
				return nil, err
			}
			j.startProbe(pb, probeKeys)
		}
		// Cut the probe batch where its matches reach maxPairs, so that a
		// key with many build rows cannot blow up one output batch.
		n := int(j.cur.NumRows())
		start, end, pairs := j.curPos, j.curPos, 0
		for end < n && (end == start || pairs < maxPairs) {
			if g := j.curGids[end]; g >= 0 {
				pairs += len(j.groups[g])
			}
			end++
		}
		sub := j.cur.NewSlice(int64(start), int64(end))
		out, err := j.probeRows(ctx, sub, j.curGids[start:end])
		sub.Release()
		j.curPos = end
		if end >= n {
			j.cur.Release()
			j.cur, j.curGids = nil, nil
		}
		if err != nil {
			return nil, err
		}
		if out.NumRows() > 0 {
			return out, nil
		}
		out.Release()
	}
}

// maxPairs bounds the candidate pairs joined at once.
const maxPairs = 64 << 10

// startProbe takes pb as the current probe batch and looks up each row's
// key group (-1: NULL key or no match).
func (j *HashJoin) startProbe(pb arrow.RecordBatch, probeKeys []int) {
	enc := j.encoder(pb, probeKeys)
	gids := make([]int32, pb.NumRows())
	var buf []byte
	for i := range gids {
		gids[i] = -1
		if enc.anyNull(i) {
			continue
		}
		buf = enc.encode(buf[:0], i)
		if g, found := j.table[string(buf)]; found {
			gids[i] = g
		}
	}
	j.cur, j.curGids, j.curPos = pb, gids, 0
}

// probeRows joins the probe rows pb (whose key groups are gids).
func (j *HashJoin) probeRows(ctx context.Context, pb arrow.RecordBatch, gids []int32) (arrow.RecordBatch, error) {
	var pi, bi []int
	for i, g := range gids {
		if g < 0 {
			continue
		}
		for _, r := range j.groups[g] {
			pi = append(pi, i)
			bi = append(bi, int(r))
		}
	}
	li, ri, lb, rb := pi, bi, pb, j.build
	if j.buildLeft {
		li, ri, lb, rb = bi, pi, j.build, pb
	}
	cand, err := j.joined(lb, rb, li, ri)
	if err != nil {
		return nil, err
	}
	keep, err := j.keepResidual(ctx, cand)
	if err != nil {
		cand.Release()
		return nil, err
	}
	if j.matched != nil {
		for k, ok := range keep {
			if ok {
				j.matched[bi[k]] = true
			}
		}
	}
	if !j.probeOuter() {
		out, err := eval.FilterBatch(j.mem, cand, keep)
		cand.Release()
		return out, err
	}
	// The streamed side is outer: every probe row appears, with its
	// surviving matches or once with NULLs, in probe order.
	var take []int // rows of cand, or -(probe row+1) for an unmatched one
	k := 0
	for i := 0; i < int(pb.NumRows()); i++ {
		any := false
		for ; k < len(pi) && pi[k] == i; k++ {
			if keep[k] {
				take = append(take, k)
				any = true
			}
		}
		if !any {
			take = append(take, -(i + 1))
		}
	}
	cand.Release()
	fp, fb := make([]int, len(take)), make([]int, len(take))
	for n, t := range take {
		if t >= 0 {
			fp[n], fb[n] = pi[t], bi[t]
		} else {
			fp[n], fb[n] = -t-1, -1
		}
	}
	if j.buildLeft {
		return j.joined(j.build, pb, fb, fp)
	}
	return j.joined(pb, j.build, fp, fb)
}

// unmatchedBuild emits, once, the outer build side's rows that matched
// nothing, with NULLs for the other side.
func (j *HashJoin) unmatchedBuild() (arrow.RecordBatch, error) {
	if j.matched == nil || j.tail {
		return nil, io.EOF
	}
	j.tail = true
	var bi, none []int
	for i, m := range j.matched {
		if !m {
			bi = append(bi, i)
			none = append(none, -1)
		}
	}
	if len(bi) == 0 {
		return nil, io.EOF
	}
	other := j.left.Schema()
	if j.buildLeft {
		other = j.right.Schema()
	}
	cols := emptyCols(j.mem, other)
	empty := array.NewRecordBatch(other, cols, 0)
	releaseArrays(cols)
	defer empty.Release()
	if j.buildLeft {
		return j.joined(j.build, empty, bi, none)
	}
	return j.joined(empty, j.build, none, bi)
}

func emptyCols(mem memory.Allocator, s *arrow.Schema) []arrow.Array {
	cols := make([]arrow.Array, s.NumFields())
	for i, f := range s.Fields() {
		cols[i] = array.MakeArrayOfNull(mem, f.Type, 0)
	}
	return cols
}
