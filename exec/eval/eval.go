package eval

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/limits"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Env is what evaluation needs besides the batch: where output arrays are
// allocated and the per-statement settings.
type Env struct {
	// Mem allocates every output array; nil means memory.DefaultAllocator.
	Mem memory.Allocator
	// Now is the statement start time returned by now(); the zero value
	// means time.Now() at Compile.
	Now time.Time
	// Options carries the session TimeZone (timestamptz arithmetic,
	// date_trunc and text casts) and float output settings; nil means UTC.
	Options *sqltypes.Options
	// Subquery runs the plans of subquery expressions (subquery.go); nil
	// makes them a compile error.
	Subquery SubqueryRunner
}

func (e *Env) loc() *time.Location {
	if e.Options == nil || e.Options.Location == nil {
		return time.UTC
	}
	return e.Options.Location
}

// Evaluator evaluates one compiled expression over record batches of the
// schema it was compiled for. It holds no Arrow memory between calls and
// is not safe for concurrent use.
type Evaluator struct {
	root node
	env  Env
}

// Compile checks e against the input schema and prepares it for vectorized
// evaluation. Errors are *sqlerr.Error: 42804 for a column whose Arrow type
// differs from the expression's SQL type, 42883 for an unknown function or
// an operator on types it does not support, 42P02 for an unbound $n.
func Compile(e expr.Expr, input *arrow.Schema, env Env) (*Evaluator, error) {
	if env.Mem == nil {
		env.Mem = memory.DefaultAllocator
	}
	if env.Now.IsZero() {
		env.Now = time.Now()
	}
	c := &compiler{schema: input, env: &env}
	n, err := c.compile(e)
	if err != nil {
		return nil, err
	}
	return &Evaluator{root: n, env: env}, nil
}

// Type returns the SQL type of the evaluator's result.
func (ev *Evaluator) Type() sqltypes.Type { return ev.root.typ() }

// Eval evaluates the expression for every row of b and returns an array of
// b.NumRows() values of Type().Arrow(), owned by the caller. It checks ctx
// once per call: a cancelled context returns ctx.Err(). When Env.Mem is a
// query's *memacct.Account, a result that takes the query past its memory
// limit is 53200.
func (ev *Evaluator) Eval(ctx context.Context, b arrow.RecordBatch) (arrow.Array, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out, err := ev.root.eval(&call{ctx: ctx, env: &ev.env, mem: ev.env.Mem}, b)
	if err == nil {
		// Under a query's memory account, the result counts against it.
		if err = checkMemory(ev.env.Mem); err != nil {
			out.Release()
			out = nil
		}
	}
	return out, err
}

// node is one compiled expression.
type node interface {
	typ() sqltypes.Type
	// eval returns a new reference to an array of b.NumRows() values.
	eval(c *call, b arrow.RecordBatch) (arrow.Array, error)
}

type call struct {
	ctx context.Context
	env *Env
	mem memory.Allocator
}

type compiler struct {
	schema *arrow.Schema
	env    *Env
	depth  int // of compile's recursion, bounded by maxCompileDepth
}

// maxCompileDepth bounds the depth of an expression Compile takes. The
// planner already refuses statements nested past limits.MaxDepth; the
// casts it inserts can at most double that. This guard keeps any other
// caller from overflowing the stack (here and in eval, which recurses as
// deep) with a hand-built tree.
const maxCompileDepth = 4 * limits.MaxDepth

func (c *compiler) compile(e expr.Expr) (node, error) {
	if c.depth >= maxCompileDepth {
		return nil, limits.DepthError()
	}
	c.depth++
	defer func() { c.depth-- }()
	switch e := e.(type) {
	case *expr.Column:
		if e.Index < 0 || e.Index >= c.schema.NumFields() {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %s (index %d) is not in the input (%d columns)", e, e.Index, c.schema.NumFields())
		}
		f := c.schema.Field(e.Index)
		if !arrow.TypeEqual(f.Type, e.T.Arrow()) {
			return nil, sqlerr.New(sqlerr.DatatypeMismatch, "column %s has Arrow type %s, but the expression expects %s (%s)", e, f.Type, e.T, e.T.Arrow())
		}
		return &colNode{idx: e.Index, t: e.T}, nil
	case *expr.Literal:
		if err := checkLiteral(e); err != nil {
			return nil, err
		}
		return &litNode{v: e.Value, t: e.T}, nil
	case *expr.Param:
		return nil, sqlerr.New("42P02", "there is no parameter $%d", e.N)
	case *expr.Cast:
		return c.compileCast(e)
	case *expr.Unary:
		return c.compileUnary(e)
	case *expr.Binary:
		return c.compileBinary(e)
	case *expr.IsNull:
		x, err := c.compile(e.X)
		if err != nil {
			return nil, err
		}
		return &isNullNode{x: x, not: e.Not}, nil
	case *expr.In:
		return c.compileIn(e)
	case *expr.Case:
		return c.compileCase(e)
	case *expr.Func:
		if n, ok, err := c.compilePgFunc(e); ok { // pgfuncs.go
			return n, err
		}
		return c.compileFunc(e)
	case *expr.Subquery:
		return c.compileSubquery(e) // subquery.go
	case *expr.OuterRef:
		return nil, sqlerr.New(sqlerr.InternalError, "eval: unbound outer reference %s", e)
	case nil:
		return nil, sqlerr.New(sqlerr.InternalError, "eval: nil expression")
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "eval: unsupported expression %T", e)
}

// coerce makes n produce exactly t's Arrow type: a value of the same kind
// with other modifiers (numeric(10,2) in a numeric(12,4) CASE, varchar in
// a text COALESCE) is cast, since the arms of CASE/COALESCE/GREATEST are
// merged value by value and must share one physical representation.
func (c *compiler) coerce(n node, t sqltypes.Type) (node, error) {
	if arrow.TypeEqual(n.typ().Arrow(), t.Arrow()) {
		return n, nil
	}
	if !sameClass(n.typ(), t) {
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "%s cannot be matched with %s", n.typ(), t)
	}
	return c.compileCastNode(n, t)
}

func (c *compiler) compileAll(es []expr.Expr) ([]node, error) {
	out := make([]node, len(es))
	for i, e := range es {
		n, err := c.compile(e)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// colNode passes the input array through: no copy.
type colNode struct {
	idx int
	t   sqltypes.Type
}

func (n *colNode) typ() sqltypes.Type { return n.t }
func (n *colNode) eval(_ *call, b arrow.RecordBatch) (arrow.Array, error) {
	a := b.Column(n.idx)
	a.Retain()
	return a, nil
}

// litNode broadcasts a constant to the batch length.
type litNode struct {
	v any
	t sqltypes.Type
}

func (n *litNode) typ() sqltypes.Type { return n.t }
func (n *litNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	return constArray(c.mem, n.t, n.v, int(b.NumRows())), nil
}

func checkLiteral(e *expr.Literal) error {
	if e.Value == nil {
		return nil
	}
	ok := false
	switch e.T.Kind {
	case sqltypes.Bool:
		_, ok = e.Value.(bool)
	case sqltypes.Int2, sqltypes.Int4:
		var v int64
		v, ok = e.Value.(int64)
		if lo, hi := intRange(e.T.Kind); ok && (v < lo || v > hi) {
			return errIntRange(e.T.Kind)
		}
	case sqltypes.Int8, sqltypes.Timestamp, sqltypes.TimestampTZ:
		_, ok = e.Value.(int64)
	case sqltypes.Float4, sqltypes.Float8:
		_, ok = e.Value.(float64)
	case sqltypes.Numeric:
		_, ok = e.Value.(decimalNum)
	case sqltypes.Text, sqltypes.Varchar, sqltypes.Unknown:
		_, ok = e.Value.(string)
	case sqltypes.Bytea:
		_, ok = e.Value.([]byte)
	case sqltypes.Date:
		_, ok = e.Value.(int32)
	case sqltypes.Interval:
		_, ok = e.Value.(arrow.MonthDayNanoInterval)
	}
	if !ok {
		return sqlerr.New(sqlerr.InternalError, "literal %v (Go %T) does not match its type %s", e.Value, e.Value, e.T)
	}
	return nil
}

// constArray builds n copies of the physical value v (nil = NULL) of t.
func constArray(mem memory.Allocator, t sqltypes.Type, v any, n int) arrow.Array {
	if v == nil {
		return array.MakeArrayOfNull(mem, t.Arrow(), n)
	}
	switch t.Kind {
	case sqltypes.Bool:
		vals := make([]bool, n)
		if v.(bool) {
			for i := range vals {
				vals[i] = true
			}
		}
		return makeBool(mem, vals, nil)
	case sqltypes.Int2:
		return fillFixed(mem, t, int16(v.(int64)), n)
	case sqltypes.Int4:
		return fillFixed(mem, t, int32(v.(int64)), n)
	case sqltypes.Int8, sqltypes.Timestamp, sqltypes.TimestampTZ:
		return fillFixed(mem, t, v.(int64), n)
	case sqltypes.Float4:
		return fillFixed(mem, t, float32(v.(float64)), n)
	case sqltypes.Float8:
		return fillFixed(mem, t, v.(float64), n)
	case sqltypes.Date:
		return fillFixed(mem, t, v.(int32), n)
	case sqltypes.Interval:
		return fillFixed(mem, t, v.(arrow.MonthDayNanoInterval), n)
	case sqltypes.Numeric:
		bld := array.NewDecimal128Builder(mem, t.Arrow().(*arrow.Decimal128Type))
		defer bld.Release()
		bld.Reserve(n)
		for i := 0; i < n; i++ {
			bld.UnsafeAppend(v.(decimalNum))
		}
		return bld.NewArray()
	case sqltypes.Bytea:
		bld := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
		defer bld.Release()
		bv := v.([]byte)
		bld.ReserveData(n * len(bv))
		for i := 0; i < n; i++ {
			bld.Append(bv)
		}
		return bld.NewArray()
	default: // text kinds
		bld := array.NewStringBuilder(mem)
		defer bld.Release()
		s := v.(string)
		bld.ReserveData(n * len(s))
		for i := 0; i < n; i++ {
			bld.Append(s)
		}
		return bld.NewArray()
	}
}

func fillFixed[T arrow.FixedWidthType](mem memory.Allocator, t sqltypes.Type, v T, n int) arrow.Array {
	buf, vals := newFixed[T](mem, n)
	for i := range vals {
		vals[i] = v
	}
	return finishFixed(t.Arrow(), n, buf, nil)
}

// ---- array construction helpers ----

// fixed returns the values of a fixed-width array as []T (T must have the
// array's physical width), honouring the array's offset.
func fixed[T arrow.FixedWidthType](a arrow.Array) []T {
	d := a.Data()
	bufs := d.Buffers()
	if a.Len() == 0 || len(bufs) < 2 || bufs[1] == nil {
		return nil
	}
	return arrow.GetData[T](bufs[1].Bytes())[d.Offset() : d.Offset()+a.Len()]
}

// newFixed allocates an uninitialised buffer for n values of T.
func newFixed[T arrow.FixedWidthType](mem memory.Allocator, n int) (*memory.Buffer, []T) {
	var z T
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * int(unsafe.Sizeof(z)))
	if n == 0 {
		return buf, nil
	}
	return buf, arrow.GetData[T](buf.Bytes())[:n]
}

// finishFixed wraps buf (from newFixed) with the validity valid (nil = all
// valid) into an array of dt, taking over buf's reference.
func finishFixed(dt arrow.DataType, n int, buf *memory.Buffer, valid []bool) arrow.Array {
	return finishFixedMem(nil, dt, n, buf, valid)
}

func finishFixedMem(mem memory.Allocator, dt arrow.DataType, n int, buf *memory.Buffer, valid []bool) arrow.Array {
	var bm *memory.Buffer
	nulls := 0
	if valid != nil {
		if mem == nil {
			mem = memory.DefaultAllocator
		}
		bm = bitmapFrom(mem, valid)
		for _, v := range valid {
			if !v {
				nulls++
			}
		}
		if nulls == 0 {
			bm.Release()
			bm = nil
		}
	}
	d := array.NewData(dt, n, []*memory.Buffer{bm, buf}, nil, nulls, 0)
	a := array.MakeFromData(d)
	d.Release()
	buf.Release()
	if bm != nil {
		bm.Release()
	}
	return a
}

func bitmapFrom(mem memory.Allocator, valid []bool) *memory.Buffer {
	bm := memory.NewResizableBuffer(mem)
	bm.Resize(int(bitutil.BytesForBits(int64(len(valid)))))
	b := bm.Bytes()
	for i := range b {
		b[i] = 0
	}
	for i, v := range valid {
		if v {
			bitutil.SetBit(b, i)
		}
	}
	return bm
}

func makeBool(mem memory.Allocator, vals, valid []bool) arrow.Array {
	bld := array.NewBooleanBuilder(mem)
	defer bld.Release()
	bld.AppendValues(vals, valid)
	return bld.NewArray()
}

// validity returns the AND of the arrays' validity, nil when every value
// of every array is valid.
func validity(n int, arrs ...arrow.Array) []bool {
	var out []bool
	for _, a := range arrs {
		if a.NullN() == 0 {
			continue
		}
		if out == nil {
			out = make([]bool, n)
			for i := range out {
				out[i] = a.IsValid(i)
			}
			continue
		}
		for i := range out {
			out[i] = out[i] && a.IsValid(i)
		}
	}
	return out
}

func ok(valid []bool, i int) bool { return valid == nil || valid[i] }

func releaseAll(arrs []arrow.Array) {
	for _, a := range arrs {
		if a != nil {
			a.Release()
		}
	}
}

// evalAll evaluates every node; on error nothing is leaked.
func evalAll(c *call, b arrow.RecordBatch, ns []node) ([]arrow.Array, error) {
	out := make([]arrow.Array, len(ns))
	for i, n := range ns {
		a, err := n.eval(c, b)
		if err != nil {
			releaseAll(out[:i])
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

func unsupported(what string, ts ...sqltypes.Type) error {
	args := ""
	for i, t := range ts {
		if i > 0 {
			args += ", "
		}
		args += t.String()
	}
	return sqlerr.New(sqlerr.UndefinedFunction, "%s(%s) is not supported", what, args).
		WithHint("No operator or function matches the given name and argument types.")
}

func internalf(format string, args ...any) error {
	return sqlerr.New(sqlerr.InternalError, "eval: %s", fmt.Sprintf(format, args...))
}
