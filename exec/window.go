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

// WindowFunc is one window function call: row_number(), rank(),
// dense_rank(), or lag/lead(Arg [, Offset [, Default]]). Offset 0 means
// the default of 1 (an explicit lag(x, 0) is x itself: use Zero); Default
// (evaluated on the current row, nil = NULL) must have Arg's type.
type WindowFunc struct {
	Func    string
	Arg     expr.Expr
	Offset  int64
	Zero    bool
	Default expr.Expr
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
	w := &Window{child: child, mem: mem, partition: partitionBy, order: orderBy, funcs: funcs,
		budget: newBudget("window", mem, opts.MemoryLimit), batchSize: opts.BatchSize}
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
		case "row_number", "rank", "dense_rank":
			if f.Arg != nil {
				return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s takes no arguments", f.Func)
			}
			t = sqltypes.Int8Type
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
		default:
			return nil, sqlerr.New(sqlerr.UndefinedFunction, "window function %s does not exist", f.Func)
		}
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
	// Partition starts and ends, and peer-group starts for rank.
	pstart := make([]int, n)
	newPeer := make([]bool, n)
	enc := keyEncoder{types: w.partTypes}
	for _, c := range w.partition {
		enc.cols = append(enc.cols, all.Column(c))
	}
	ordCmp, err := rowComparator(all, w.order, w.ordTypes)
	if err != nil {
		return err
	}
	var prev, cur []byte
	for i := 0; i < n; i++ {
		cur = enc.encode(cur[:0], i)
		if i == 0 || string(cur) != string(prev) {
			pstart[i] = i
			newPeer[i] = true
		} else {
			pstart[i] = pstart[i-1]
			newPeer[i] = ordCmp(i-1, i) != 0
		}
		prev, cur = cur, prev
	}
	pend := make([]int, n) // exclusive end of row i's partition
	for i := n - 1; i >= 0; i-- {
		if i == n-1 || pstart[i+1] != pstart[i] {
			pend[i] = i + 1
		} else {
			pend[i] = pend[i+1]
		}
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
		case "row_number", "rank", "dense_rank":
			vals := make([]int64, n)
			var rank, dense int64
			for i := 0; i < n; i++ {
				if pstart[i] == i {
					rank, dense = 0, 0
				}
				switch f.Func {
				case "row_number":
					vals[i] = int64(i - pstart[i] + 1)
				case "rank":
					if newPeer[i] {
						rank = int64(i - pstart[i] + 1)
					}
					vals[i] = rank
				default:
					if newPeer[i] {
						dense++
					}
					vals[i] = dense
				}
			}
			col = eval.MakeFixed(w.mem, arrow.PrimitiveTypes.Int64, vals, nil)
		default:
			col, err = w.shift(ctx, all, k, pstart, pend)
			if err != nil {
				return err
			}
		}
		cols = append(cols, col)
	}
	w.out = array.NewRecordBatch(w.schema, cols, int64(n))
	return nil
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
