package exec

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// WindowFunc is one window function call:
//
//   - row_number(), rank(), dense_rank(), percent_rank(), cume_dist(),
//     ntile(N) (N > 0, or NNull for ntile(NULL));
//   - lag/lead(Arg [, Offset [, Default]]): Offset 0 means the default of
//     1 (an explicit lag(x, 0) is x itself: use Zero); Default (evaluated
//     on the current row, nil = NULL) must have Arg's type;
//   - over the Frame: first_value(Arg), last_value(Arg), nth_value(Arg, N)
//     (N > 0, or NNull), and the aggregates count (Arg nil: count(*)),
//     sum, avg, min, max, whose result Type is AggResultType's (the zero
//     Type fills it in).
//
// Ranking functions and lag/lead ignore the frame, as in Postgres. The
// zero Frame is not Postgres' default: use DefaultFrame.
type WindowFunc struct {
	Func    string
	Arg     expr.Expr
	Offset  int64
	Zero    bool
	Default expr.Expr
	N       int64
	NNull   bool
	Type    sqltypes.Type
	Frame   WindowFrame
	Name    string
}

// WindowOptions tune a Window.
type WindowOptions struct {
	// MemoryLimit bounds the bytes materialized (0 = unlimited; 53200).
	MemoryLimit int64
	BatchSize   int // 0 = DefaultBatchSize
}

// Window computes window functions over PARTITION BY / ORDER BY for input
// already sorted by the partition columns and then the order keys (put a
// Sort below it). Output: the input columns, then one column per function.
// It materializes its input (within a memory limit) because lead() looks
// ahead across batches.
type Window struct {
	child     Operator
	mem       memory.Allocator
	partition []int
	partTypes []sqltypes.Type
	order     []SortKey
	ordTypes  []sqltypes.Type
	funcs     []WindowFunc
	env       eval.Env
	args      []*eval.Evaluator
	defs      []*eval.Evaluator
	schema    *arrow.Schema
	budget    memBudget
	batchSize int

	out  arrow.RecordBatch
	pos  int64
	done bool
}

var _ Operator = (*Window)(nil)

// NewWindow returns the window computation over child.
func NewWindow(child Operator, mem memory.Allocator, partitionBy []int, orderBy []SortKey, funcs []WindowFunc, env eval.Env, opts WindowOptions) (*Window, error) {
	s := child.Schema()
	env.Mem = mem
	w := &Window{child: child, mem: mem, partition: partitionBy, order: orderBy, funcs: append([]WindowFunc(nil), funcs...),
		env: env, budget: newBudget("window", mem, opts.MemoryLimit), batchSize: opts.BatchSize}
	if w.batchSize <= 0 {
		w.batchSize = DefaultBatchSize
	}
	for _, c := range partitionBy {
		t, err := columnType(s, c)
		if err != nil {
			return nil, err
		}
		w.partTypes = append(w.partTypes, t)
	}
	var err error
	if w.ordTypes, err = checkKeys(s, orderBy); err != nil {
		return nil, err
	}
	fields := append([]arrow.Field{}, s.Fields()...)
	for _, f := range funcs {
		var argEv, defEv *eval.Evaluator
		var t sqltypes.Type
		switch f.Func {
		case "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile":
			if f.Arg != nil {
				return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s takes no value argument", f.Func)
			}
			t = sqltypes.Int8Type
			switch {
			case f.Func == "percent_rank" || f.Func == "cume_dist":
				t = sqltypes.Float8Type
			case f.Func == "ntile" && !f.NNull && f.N <= 0:
				return nil, sqlerr.New(codeInvalidNtile, "argument of ntile must be greater than zero")
			case f.Func == "ntile":
				t = sqltypes.Int4Type
			}
		case "lag", "lead":
			if f.Arg == nil {
				return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s() does not exist", f.Func)
			}
			if f.Offset < 0 {
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "%s offset must not be negative", f.Func)
			}
			if argEv, err = eval.Compile(f.Arg, s, env); err != nil {
				return nil, err
			}
			t = argEv.Type()
			if f.Default != nil {
				if defEv, err = eval.Compile(f.Default, s, env); err != nil {
					return nil, err
				}
				if !arrow.TypeEqual(defEv.Type().Arrow(), t.Arrow()) {
					return nil, sqlerr.New(sqlerr.DatatypeMismatch, "%s default has type %s, expected %s", f.Func, defEv.Type(), t)
				}
			}
		case "first_value", "last_value", "nth_value", "count", "sum", "avg", "min", "max":
			if err := w.checkFrame(f.Frame); err != nil {
				return nil, err
			}
			if f.Arg == nil && f.Func != "count" {
				return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s() does not exist", f.Func)
			}
			if f.Arg != nil {
				if argEv, err = eval.Compile(f.Arg, s, env); err != nil {
					return nil, err
				}
			}
			switch f.Func {
			case "first_value", "last_value", "nth_value":
				t = argEv.Type()
				if f.Func == "nth_value" && !f.NNull && f.N <= 0 {
					return nil, sqlerr.New(codeInvalidNthValue, "argument of nth_value must be greater than zero")
				}
			case "count":
				t = sqltypes.Int8Type
			default:
				if t, err = AggResultType(f.Func, argEv.Type()); err != nil {
					return nil, err
				}
				if f.Type.Kind != sqltypes.Unknown && !arrow.TypeEqual(f.Type.Arrow(), t.Arrow()) {
					return nil, sqlerr.New(sqlerr.InternalError, "window %s: result type %s, planned %s", f.Func, t, f.Type)
				}
				if err := slidable(f.Func, argEv.Type()); err != nil {
					return nil, err
				}
			}
		default:
			return nil, sqlerr.New(sqlerr.UndefinedFunction, "window function %s does not exist", f.Func)
		}
		w.funcs[len(w.args)].Type = t
		w.args = append(w.args, argEv)
		w.defs = append(w.defs, defEv)
		fields = append(fields, t.Field(f.Name, true))
	}
	w.schema = arrow.NewSchema(fields, nil)
	return w, nil
}

func (w *Window) Schema() *arrow.Schema          { return w.schema }
func (w *Window) Open(ctx context.Context) error { return w.child.Open(ctx) }

func (w *Window) Close() error {
	if w.out != nil {
		w.out.Release()
		w.out = nil
	}
	return w.child.Close()
}

func (w *Window) compute(ctx context.Context) error {
	parts, err := drainAll(ctx, w.child, &w.budget)
	if err != nil {
		return err
	}
	all, err := concatBatches(w.mem, w.child.Schema(), parts)
	releaseBatches(parts)
	if err != nil {
		return err
	}
	defer all.Release()
	n := int(all.NumRows())
	// Per-row layout state: 5 ints, and about as much again per function.
	if err := w.budget.grow(int64(n) * 8 * int64(5+3*len(w.funcs))); err != nil {
		return err
	}
	l, err := w.layout(all)
	if err != nil {
		return err
	}
	cols := append([]arrow.Array{}, all.Columns()...)
	for _, c := range cols {
		c.Retain()
	}
	defer func() { releaseArrays(cols) }()
	for k, f := range w.funcs {
		if err := ctx.Err(); err != nil {
			return err
		}
		var col arrow.Array
		switch f.Func {
		case "row_number", "rank", "dense_rank", "ntile":
			col = w.ranks(l, f)
		case "percent_rank", "cume_dist":
			vals := make([]float64, n)
			for i := 0; i < n; i++ {
				size := float64(l.pend[i] - l.pstart[i])
				if f.Func == "cume_dist" {
					vals[i] = float64(l.gend[i]-l.pstart[i]) / size
				} else if size > 1 {
					vals[i] = float64(l.gstart[i]-l.pstart[i]) / (size - 1)
				}
			}
			col = eval.MakeFixed(w.mem, arrow.PrimitiveTypes.Float64, vals, nil)
		case "lag", "lead":
			col, err = w.shift(ctx, all, k, l.pstart, l.pend)
		default:
			col, err = w.framed(ctx, all, k, l)
		}
		if err != nil {
			return err
		}
		cols = append(cols, col)
	}
	w.out = array.NewRecordBatch(w.schema, cols, int64(n))
	return nil
}

// layout finds the partitions and peer groups of the sorted input.
func (w *Window) layout(all arrow.RecordBatch) (*layout, error) {
	n := int(all.NumRows())
	l := &layout{n: n, pstart: make([]int, n), pend: make([]int, n), gstart: make([]int, n), gend: make([]int, n), gidx: make([]int, n)}
	enc := keyEncoder{types: w.partTypes}
	for _, c := range w.partition {
		enc.cols = append(enc.cols, all.Column(c))
	}
	ordCmp, err := rowComparator(all, w.order, w.ordTypes)
	if err != nil {
		return nil, err
	}
	var prev, cur []byte
	for i := 0; i < n; i++ {
		cur = enc.encode(cur[:0], i)
		switch {
		case i == 0 || string(cur) != string(prev):
			l.pstart[i], l.gstart[i] = i, i
		case ordCmp(i-1, i) != 0:
			l.pstart[i], l.gstart[i], l.gidx[i] = l.pstart[i-1], i, l.gidx[i-1]+1
		default:
			l.pstart[i], l.gstart[i], l.gidx[i] = l.pstart[i-1], l.gstart[i-1], l.gidx[i-1]
		}
		prev, cur = cur, prev
	}
	for i := n - 1; i >= 0; i-- {
		l.pend[i], l.gend[i] = i+1, i+1
		if i+1 < n && l.pstart[i+1] == l.pstart[i] {
			l.pend[i] = l.pend[i+1]
			if l.gstart[i+1] == l.gstart[i] {
				l.gend[i] = l.gend[i+1]
			}
		}
	}
	return l, nil
}

// ranks computes row_number, rank, dense_rank and ntile.
func (w *Window) ranks(l *layout, f WindowFunc) arrow.Array {
	vals := make([]int64, l.n)
	var valid []bool
	if f.Func == "ntile" && f.NNull {
		valid = make([]bool, l.n)
	}
	for i := 0; i < l.n; i++ {
		pos := int64(i - l.pstart[i])
		switch f.Func {
		case "row_number":
			vals[i] = pos + 1
		case "rank":
			vals[i] = int64(l.gstart[i]-l.pstart[i]) + 1
		case "dense_rank":
			vals[i] = int64(l.gidx[i]) + 1
		case "ntile":
			// The first size%N buckets hold one row more than the others.
			size := int64(l.pend[i] - l.pstart[i])
			q, rem := size/f.N, size%f.N
			if pos < rem*(q+1) {
				vals[i] = pos/(q+1) + 1
			} else {
				vals[i] = rem + (pos-rem*(q+1))/q + 1
			}
		}
	}
	if f.Func == "ntile" {
		v32 := make([]int32, l.n)
		for i, v := range vals {
			v32[i] = int32(v)
		}
		return eval.MakeFixed(w.mem, arrow.PrimitiveTypes.Int32, v32, valid)
	}
	return eval.MakeFixed(w.mem, arrow.PrimitiveTypes.Int64, vals, valid)
}

// checkFrame validates a frame against the window's ORDER BY.
func (w *Window) checkFrame(f WindowFrame) error {
	if f.Start.Kind == UnboundedFollowing || f.End.Kind == UnboundedPreceding {
		return sqlerr.New(codeWindowingError, "frame start cannot be UNBOUNDED FOLLOWING, nor its end UNBOUNDED PRECEDING")
	}
	for _, b := range []FrameBound{f.Start, f.End} {
		if b.Kind != OffsetPreceding && b.Kind != OffsetFollowing {
			continue
		}
		switch f.Unit {
		case FrameRange:
			if len(w.order) != 1 {
				return sqlerr.New(codeWindowingError, "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column")
			}
			if b.Value == nil {
				return sqlerr.New(sqlerr.InternalError, "window: RANGE offset without a value")
			}
		default:
			if b.N < 0 {
				return sqlerr.New(codeInvalidFrameSize, "frame starting or ending offset must not be negative")
			}
		}
	}
	if f.Unit == FrameGroups && len(w.order) == 0 {
		return sqlerr.New(codeWindowingError, "GROUPS mode requires an ORDER BY clause")
	}
	return nil
}

// framed computes a function over each row's frame.
func (w *Window) framed(ctx context.Context, all arrow.RecordBatch, k int, l *layout) (arrow.Array, error) {
	f := w.funcs[k]
	ro := make([]*rangeOffsets, 2)
	for i, b := range []FrameBound{f.Frame.Start, f.Frame.End} {
		if f.Frame.Unit != FrameRange || (b.Kind != OffsetPreceding && b.Kind != OffsetFollowing) {
			continue
		}
		key := w.order[0]
		var err error
		if ro[i], err = newRangeOffsets(ctx, all.Column(key.Col), w.ordTypes[0], key, b.Value, w.env); err != nil {
			return nil, err
		}
	}
	s, e, err := frameBounds(l, f.Frame, ro)
	if err != nil {
		return nil, err
	}
	var arg arrow.Array
	if w.args[k] != nil {
		if arg, err = w.args[k].Eval(ctx, all); err != nil {
			return nil, err
		}
		defer arg.Release()
	}
	switch f.Func {
	case "first_value", "last_value", "nth_value":
		which, idx := make([]int, l.n), make([]int, l.n)
		for i := 0; i < l.n; i++ {
			p := framePieces(l, f.Frame, s, e, i)
			j := -1
			switch {
			case f.Func == "first_value":
				j = nthInFrame(p, 1, false)
			case f.Func == "last_value":
				j = nthInFrame(p, 1, true)
			case !f.NNull:
				j = nthInFrame(p, f.N, false)
			}
			which[i], idx[i] = min(j, 0), j
		}
		return eval.Gather(w.mem, f.Type, []arrow.Array{arg}, which, idx), nil
	}
	in := sqltypes.Int8Type
	if w.args[k] != nil {
		in = w.args[k].Type()
	}
	sl, err := newSlider(f.Func, arg, in, f.Type, l.n)
	if err != nil {
		return nil, err
	}
	if err := slide(l, f.Frame, s, e, sl); err != nil {
		return nil, err
	}
	return sl.finish(w.mem)
}

// shift computes lag/lead: the argument offset rows back/ahead within the
// partition, else the default.
func (w *Window) shift(ctx context.Context, all arrow.RecordBatch, k int, pstart, pend []int) (arrow.Array, error) {
	f := w.funcs[k]
	off := f.Offset
	if off == 0 && !f.Zero {
		off = 1
	}
	if f.Func == "lag" {
		off = -off
	}
	arg, err := w.args[k].Eval(ctx, all)
	if err != nil {
		return nil, err
	}
	defer arg.Release()
	srcs := []arrow.Array{arg}
	if w.defs[k] != nil {
		d, err := w.defs[k].Eval(ctx, all)
		if err != nil {
			return nil, err
		}
		defer d.Release()
		srcs = append(srcs, d)
	}
	n := len(pstart)
	which, idx := make([]int, n), make([]int, n)
	for i := 0; i < n; i++ {
		j := int64(i) + off
		switch {
		case j >= int64(pstart[i]) && j < int64(pend[i]):
			which[i], idx[i] = 0, int(j)
		case len(srcs) > 1:
			which[i], idx[i] = 1, i
		default:
			which[i] = -1
		}
	}
	return eval.Gather(w.mem, w.args[k].Type(), srcs, which, idx), nil
}

func (w *Window) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !w.done {
		w.done = true
		if err := w.compute(ctx); err != nil {
			return nil, err
		}
	}
	if w.out == nil || w.pos >= w.out.NumRows() {
		return nil, io.EOF
	}
	end := min(w.out.NumRows(), w.pos+int64(w.batchSize))
	b := w.out.NewSlice(w.pos, end)
	w.pos = end
	return b, nil
}
