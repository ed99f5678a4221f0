package lower

import (
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// Bind converts statement arguments (natural Go values, or strings in
// Postgres text syntax) to literals of the parameter types the planner
// inferred. A parameter the planner could not type takes the Go value's
// natural type (int → bigint, float64 → double precision, string → text,
// bool, []byte → bytea, time.Time → timestamptz). The count must match.
func Bind(types []sqltypes.Type, args []any, o *sqltypes.Options) ([]*expr.Literal, error) {
	if len(args) != len(types) {
		return nil, sqlerr.New(sqlerr.ProtocolViolation,
			"bind message supplies %d parameters, but prepared statement requires %d", len(args), len(types))
	}
	out := make([]*expr.Literal, len(args))
	mem := memory.DefaultAllocator
	for i, v := range args {
		t := types[i]
		if pv, ok := v.(Value); ok {
			if pv.Go != nil && (pv.T == t || t.Kind == sqltypes.Unknown && pv.T == natural(pv.Go)) {
				out[i] = &expr.Literal{Value: pv.V, T: pv.T}
				continue
			}
			v = pv.Go
		}
		if t.Kind == sqltypes.Unknown {
			t = natural(v)
		}
		if v == nil {
			out[i] = &expr.Literal{T: t}
			continue
		}
		b := array.NewBuilder(mem, t.Arrow())
		err := sqltypes.AppendGo(b, t, v, o)
		if err != nil {
			b.Release()
			return nil, sqlerr.Wrap(err, sqlerr.Code(err), "parameter $%d: %s", i+1, err.Error())
		}
		a := b.NewArray()
		b.Release()
		out[i] = &expr.Literal{Value: physical(a), T: t}
		a.Release()
	}
	return out, nil
}

// Value is an argument decoded already: Go is its natural Go value and V
// the literal value of type T (what row 0 of an Arrow array of T holds).
// Bind takes V as it is when T is the parameter's type, and converts Go
// otherwise; so a caller holding arguments as Arrow (the wire protocol's
// Bind) skips reading them back from Go values.
type Value struct {
	T  sqltypes.Type
	V  any
	Go any
}

// ValueOf is row 0 of a, of type t, as a Value. Text and bytes are
// copied: the Value outlives a.
func ValueOf(a arrow.Array, t sqltypes.Type) Value {
	v := physical(a)
	if s, ok := v.(string); ok {
		v = strings.Clone(s)
	}
	return Value{T: t, V: v, Go: sqltypes.GoValue(a, 0, t)}
}

func natural(v any) sqltypes.Type {
	switch v.(type) {
	case int, int8, int16, int32, int64, uint8, uint16, uint32:
		return sqltypes.Int8Type
	case float32, float64:
		return sqltypes.Float8Type
	case bool:
		return sqltypes.BoolType
	case []byte:
		return sqltypes.ByteaType
	case time.Time:
		return sqltypes.TimestampTZType
	}
	return sqltypes.TextType
}

// physical returns a[0] as the expr.Literal representation of its type.
func physical(a arrow.Array) any {
	if a.IsNull(0) {
		return nil
	}
	switch a := a.(type) {
	case *array.Boolean:
		return a.Value(0)
	case *array.Int16:
		return int64(a.Value(0))
	case *array.Int32:
		return int64(a.Value(0))
	case *array.Int64:
		return a.Value(0)
	case *array.Float32:
		return float64(a.Value(0))
	case *array.Float64:
		return a.Value(0)
	case *array.Decimal128:
		return a.Value(0)
	case *array.String:
		return a.Value(0)
	case *array.Binary:
		return append([]byte(nil), a.Value(0)...)
	case *array.Date32:
		return int32(a.Value(0))
	case *array.Timestamp:
		return int64(a.Value(0))
	case *array.MonthDayNanoInterval:
		return a.Value(0)
	case *array.List:
		return vec.Value(a, 0)
	}
	return nil
}

func (b *builder) param(p *expr.Param) *expr.Literal {
	if p.N-1 < len(b.env.Params) {
		return b.env.Params[p.N-1]
	}
	return &expr.Literal{T: p.T}
}

func (b *builder) bindAll(es []expr.Expr) []expr.Expr {
	out := make([]expr.Expr, len(es))
	for i, e := range es {
		out[i] = b.bind(e)
	}
	return out
}

// bind returns e with every parameter replaced by its literal (cast to the
// parameter's planned type when the literal's differs). Unchanged subtrees
// are shared, not copied.
func (b *builder) bind(e expr.Expr) expr.Expr {
	if len(b.env.Params) == 0 && b.outer == nil || e == nil {
		return e
	}
	switch n := e.(type) {
	case *expr.Param:
		lit := b.param(n)
		if lit.T != n.T && n.T.Kind != sqltypes.Unknown {
			return &expr.Cast{X: lit, T: n.T}
		}
		return lit
	case *expr.Cast:
		return &expr.Cast{X: b.bind(n.X), T: n.T, Assign: n.Assign}
	case *expr.Unary:
		return &expr.Unary{Op: n.Op, X: b.bind(n.X), T: n.T}
	case *expr.Binary:
		return &expr.Binary{Op: n.Op, L: b.bind(n.L), R: b.bind(n.R), T: n.T}
	case *expr.IsNull:
		return &expr.IsNull{X: b.bind(n.X), Not: n.Not}
	case *expr.In:
		return &expr.In{X: b.bind(n.X), List: b.bindAll(n.List), Not: n.Not}
	case *expr.Case:
		c := &expr.Case{Operand: b.bind(n.Operand), Else: b.bind(n.Else), T: n.T}
		for _, w := range n.Whens {
			c.Whens = append(c.Whens, expr.When{Cond: b.bind(w.Cond), Result: b.bind(w.Result)})
		}
		return c
	case *expr.Func:
		return &expr.Func{Fn: n.Fn, Args: b.bindAll(n.Args), T: n.T}
	case *expr.OuterRef:
		return b.outerRef(n) // subquery.go
	case *expr.Subquery: // its plan binds its own outer references when it runs
		return &expr.Subquery{Kind: n.Kind, Plan: n.Plan, Args: b.bindAll(n.Args), T: n.T, ID: n.ID}
	}
	return e
}
