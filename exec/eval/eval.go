package eval

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/limits"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
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
		return c.compileFunc(e) // funcs.go
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
	if !vec.SameClass(n.typ(), t) {
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
	// A string literal is copied into every row of the batch: a long one
	// is asked for before (a 1 MB literal over a batch of 1024 rows is a
	// gigabyte).
	var size int
	switch v := n.v.(type) {
	case string:
		size = len(v)
	case []byte:
		size = len(v)
	}
	if size >= 1<<10 {
		if err := c.needMemory("a literal", int64(size)*b.NumRows()); err != nil {
			return nil, err
		}
	}
	return vec.Const(c.mem, n.t, n.v, int(b.NumRows())), nil
}

func checkLiteral(e *expr.Literal) error {
	if e.Value == nil {
		return nil
	}
	ok := false
	switch e.T.Kind {
	case sqltypes.Bool, sqltypes.Void:
		_, ok = e.Value.(bool)
	case sqltypes.Int2, sqltypes.Int4:
		var v int64
		v, ok = e.Value.(int64)
		if lo, hi := vec.IntRange(e.T.Kind); ok && (v < lo || v > hi) {
			return vec.ErrIntRange(e.T.Kind)
		}
	case sqltypes.Int8, sqltypes.Timestamp, sqltypes.TimestampTZ:
		_, ok = e.Value.(int64)
	case sqltypes.Float4, sqltypes.Float8:
		_, ok = e.Value.(float64)
	case sqltypes.Numeric:
		_, ok = e.Value.(decimalNum)
	case sqltypes.Text, sqltypes.Varchar, sqltypes.Unknown, sqltypes.JSON, sqltypes.JSONB:
		_, ok = e.Value.(string)
	case sqltypes.Bytea:
		_, ok = e.Value.([]byte)
	case sqltypes.Date:
		_, ok = e.Value.(int32)
	case sqltypes.Interval:
		_, ok = e.Value.(arrow.MonthDayNanoInterval)
	case sqltypes.Array:
		var elems []any
		if elems, ok = e.Value.([]any); ok {
			for _, v := range elems {
				if err := checkLiteral(&expr.Literal{Value: v, T: e.T.ElemType()}); err != nil {
					return err
				}
			}
		}
	}
	if !ok {
		return sqlerr.New(sqlerr.InternalError, "literal %v (Go %T) does not match its type %s", e.Value, e.Value, e.T)
	}
	return nil
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
