package lower

import (
	"math"

	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
)

func (b *builder) window(n *planner.Window) (exec.Operator, error) {
	return b.unary(n.Input, func(child exec.Operator) (exec.Operator, error) {
		return b.windowOver(n, child, 0)
	})
}

// windowOver builds n's Sort and Window over child (batch > 0: the size
// of the Window's output batches).
func (b *builder) windowOver(n *planner.Window, child exec.Operator, batch int) (exec.Operator, error) {
	funcs := make([]exec.WindowFunc, len(n.Funcs))
	cols := n.Schema()
	in := len(cols) - len(n.Funcs)
	for i, f := range n.Funcs {
		wf := exec.WindowFunc{Func: f.Func, Name: cols[in+i].Name, Type: f.T}
		args := b.bindAll(f.Args)
		if len(args) > 0 && f.Func != "ntile" {
			wf.Arg = args[0]
		}
		switch f.Func {
		case "lag", "lead":
			wf.Offset = 1
			if len(args) > 1 {
				off, err := b.int64Of(args[1], 1, f.Func+" offset")
				if err != nil {
					return nil, err
				}
				wf.Offset, wf.Zero = off, off == 0
			}
			if len(args) > 2 {
				wf.Default = args[2]
			}
		case "ntile", "nth_value":
			k := 0
			if f.Func == "nth_value" {
				k = 1
			}
			v, null, err := b.constInt(args[k], f.Func+" argument")
			if err != nil {
				return nil, err
			}
			wf.N, wf.NNull = v, null
		case "count", "sum", "avg", "min", "max":
			if f.Func != "count" {
				wf.Type = f.T
			}
		}
		fr, err := b.frame(f.Frame)
		if err != nil {
			return nil, err
		}
		wf.Frame = fr
		funcs[i] = wf
	}
	// The window operator needs its input sorted by partition, then order:
	// the plan says lowering sorts (stably), so the input order among
	// peers is kept.
	var keys []exec.SortKey
	for _, c := range n.Partition {
		keys = append(keys, exec.SortKey{Col: c, Nulls: exec.NullsLast})
	}
	keys = append(keys, sortKeys(n.Order)...)
	sorted := child
	if len(keys) > 0 {
		// The Window materializes its input: the Sort hands it all rows
		// in one batch, which it keeps as it is, instead of batches it
		// would copy into one.
		s, err := exec.NewSort(child, b.env.Mem, keys, exec.SortOptions{MemoryLimit: b.env.MemoryLimit, BatchSize: math.MaxInt32})
		if err != nil {
			return nil, err
		}
		sorted = s
	}
	op, err := exec.NewWindow(sorted, b.env.Mem, n.Partition, sortKeys(n.Order), funcs, b.env.Eval,
		exec.WindowOptions{MemoryLimit: b.env.MemoryLimit, BatchSize: batch})
	if err != nil && sorted != child {
		sorted.Close() // closes child too; the caller's second Close is a no-op
	}
	return op, err
}

// frame lowers a frame: ROWS and GROUPS offsets become counts, RANGE
// offsets stay constant expressions the operator evaluates once.
func (b *builder) frame(f planner.Frame) (exec.WindowFrame, error) {
	out := exec.WindowFrame{Unit: exec.FrameUnit(f.Unit), Exclude: exec.FrameExclude(f.Exclude)}
	for i, fb := range []planner.FrameBound{f.Start, f.End} {
		eb := exec.FrameBound{Kind: exec.BoundKind(fb.Kind)}
		if fb.Offset != nil {
			what := [...]string{"frame starting offset", "frame ending offset"}[i]
			if f.Unit == planner.FrameRange {
				eb.Value = b.bind(fb.Offset)
			} else {
				v, null, err := b.constInt(fb.Offset, what)
				if err != nil {
					return out, err
				}
				if null {
					return out, sqlerr.New("22004", "%s must not be null", what)
				}
				if v < 0 {
					return out, sqlerr.New("22013", "%s must not be negative", what)
				}
				eb.N = v
			}
		}
		if i == 0 {
			out.Start = eb
		} else {
			out.End = eb
		}
	}
	return out, nil
}

// constInt reads a constant integer argument; null reports NULL.
func (b *builder) constInt(e expr.Expr, what string) (v int64, null bool, err error) {
	e = b.bind(e)
	for {
		c, ok := e.(*expr.Cast)
		if !ok {
			break
		}
		e = c.X
	}
	lit, ok := e.(*expr.Literal)
	if !ok {
		return 0, false, sqlerr.New(sqlerr.FeatureNotSupported, "a %s that is not a constant is not supported", what)
	}
	switch x := lit.Value.(type) {
	case nil:
		return 0, true, nil
	case int64:
		return x, false, nil
	}
	return 0, false, sqlerr.New(sqlerr.DatatypeMismatch, "%s must be an integer, not type %s", what, lit.T)
}
