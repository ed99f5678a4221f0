package expr

import (
	"fmt"
	"strings"

	"github.com/asofsql/asofsql/sqltypes"
)

// Expr is a bound expression.
type Expr interface {
	// Type is the SQL type of the expression's value.
	Type() sqltypes.Type
	// String renders the expression in SQL-like form for EXPLAIN.
	String() string
	isExpr()
}

// Column reads input column Index. Name is for display only.
type Column struct {
	Index int
	Name  string
	T     sqltypes.Type
}

// Literal is a constant. Value is nil for NULL, otherwise the Arrow
// physical value of T:
//
//	BOOLEAN bool; SMALLINT, INTEGER, BIGINT int64; REAL, DOUBLE PRECISION
//	float64; NUMERIC decimal128.Num (unscaled, at T's scale); TEXT, VARCHAR
//	string; BYTEA []byte; DATE int32 days since 1970-01-01; TIMESTAMP,
//	TIMESTAMPTZ int64 microseconds since 1970-01-01 00:00 (UTC for TZ);
//	INTERVAL arrow.MonthDayNanoInterval; Unknown (an untyped string
//	literal not yet coerced) string.
type Literal struct {
	Value any
	T     sqltypes.Type
}

// Param is the n-th ($n, 1-based) statement parameter, of the type the
// planner inferred (Unknown when it could not).
type Param struct {
	N int
	T sqltypes.Type
}

// Cast converts X to T with Postgres' cast semantics (errors as Postgres
// raises them: 22P02, 22003, ...).
type Cast struct {
	X Expr
	T sqltypes.Type
	// Assign marks an assignment cast (a value stored into a column): to
	// VARCHAR(n) a longer value is 22001 unless the excess is spaces,
	// where an explicit cast truncates.
	Assign bool
}

// UnaryOp is a prefix operator.
type UnaryOp uint8

const (
	Neg UnaryOp = iota // -x
	Not                // NOT x (three-valued)
)

// Unary applies a prefix operator.
type Unary struct {
	Op UnaryOp
	X  Expr
	T  sqltypes.Type
}

// BinaryOp is an infix operator.
type BinaryOp uint8

const (
	Add BinaryOp = iota
	Sub
	Mul
	Div // integer division truncates toward zero, as in Postgres
	Mod
	Eq
	Ne
	Lt
	Le
	Gt
	Ge
	And // three-valued
	Or  // three-valued
	Concat
	IsDistinctFrom
	IsNotDistinctFrom
	Like
	NotLike
	ILike
	NotILike
)

var binaryNames = [...]string{
	Add: "+", Sub: "-", Mul: "*", Div: "/", Mod: "%",
	Eq: "=", Ne: "<>", Lt: "<", Le: "<=", Gt: ">", Ge: ">=",
	And: "AND", Or: "OR", Concat: "||",
	IsDistinctFrom: "IS DISTINCT FROM", IsNotDistinctFrom: "IS NOT DISTINCT FROM",
	Like: "LIKE", NotLike: "NOT LIKE", ILike: "ILIKE", NotILike: "NOT ILIKE",
}

func (op BinaryOp) String() string { return binaryNames[op] }

// IsComparison reports whether op is one of = <> < <= > >=.
func (op BinaryOp) IsComparison() bool { return op >= Eq && op <= Ge }

// Binary applies an infix operator. For arithmetic and comparisons both
// operands already have the operator's input type (the planner casts).
type Binary struct {
	Op   BinaryOp
	L, R Expr
	T    sqltypes.Type
}

// IsNull is `X IS NULL` (or IS NOT NULL when Not).
type IsNull struct {
	X   Expr
	Not bool
}

// In is `X IN (List...)` (NOT IN when Not), with SQL NULL semantics: no
// match and a NULL in the list gives NULL.
type In struct {
	X    Expr
	List []Expr
	Not  bool
}

// When is one WHEN ... THEN ... arm of a Case.
type When struct {
	Cond, Result Expr
}

// Case is a searched CASE (Operand nil) or a simple CASE (Operand compared
// with each When.Cond by =). Else nil means ELSE NULL.
type Case struct {
	Operand Expr
	Whens   []When
	Else    Expr
	T       sqltypes.Type
}

// Func is a call of the scalar function Fn, which the planner resolved
// (overload included): T is the result type and Args have their final
// types.
type Func struct {
	Fn   Function
	Args []Expr
	T    sqltypes.Type
}

// Function is the definition a Func calls: a *functions.Def from package
// sql/functions, which holds each function's type rule and kernel. That
// package builds on this one, hence the interface; the evaluator runs
// the Def it finds here, never a function looked up by name.
type Function interface {
	// FuncName is the function's lower-case Postgres name.
	FuncName() string
}

// Name is the called function's lower-case Postgres name.
func (e *Func) Name() string { return e.Fn.FuncName() }

func (*Column) isExpr()  {}
func (*Literal) isExpr() {}
func (*Param) isExpr()   {}
func (*Cast) isExpr()    {}
func (*Unary) isExpr()   {}
func (*Binary) isExpr()  {}
func (*IsNull) isExpr()  {}
func (*In) isExpr()      {}
func (*Case) isExpr()    {}
func (*Func) isExpr()    {}

func (e *Column) Type() sqltypes.Type  { return e.T }
func (e *Literal) Type() sqltypes.Type { return e.T }
func (e *Param) Type() sqltypes.Type   { return e.T }
func (e *Cast) Type() sqltypes.Type    { return e.T }
func (e *Unary) Type() sqltypes.Type   { return e.T }
func (e *Binary) Type() sqltypes.Type  { return e.T }
func (e *IsNull) Type() sqltypes.Type  { return sqltypes.BoolType }
func (e *In) Type() sqltypes.Type      { return sqltypes.BoolType }
func (e *Case) Type() sqltypes.Type    { return e.T }
func (e *Func) Type() sqltypes.Type    { return e.T }

func (e *Column) String() string {
	if e.Name != "" {
		return e.Name
	}
	return fmt.Sprintf("#%d", e.Index)
}

func (e *Literal) String() string {
	switch v := e.Value.(type) {
	case nil:
		return "NULL"
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case bool:
		if v {
			return "true"
		}
		return "false"
	case []byte:
		return fmt.Sprintf("'\\x%x'::bytea", v)
	case int64, float64:
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%v::%s", e.Value, e.T)
}

func (e *Param) String() string { return fmt.Sprintf("$%d", e.N) }
func (e *Cast) String() string  { return fmt.Sprintf("CAST(%s AS %s)", e.X, e.T) }

func (e *Unary) String() string {
	if e.Op == Not {
		return "(NOT " + e.X.String() + ")"
	}
	return "(-" + e.X.String() + ")"
}

func (e *Binary) String() string {
	return "(" + e.L.String() + " " + e.Op.String() + " " + e.R.String() + ")"
}

func (e *IsNull) String() string {
	if e.Not {
		return "(" + e.X.String() + " IS NOT NULL)"
	}
	return "(" + e.X.String() + " IS NULL)"
}

func (e *In) String() string {
	op := " IN ("
	if e.Not {
		op = " NOT IN ("
	}
	return "(" + e.X.String() + op + join(e.List) + "))"
}

func (e *Case) String() string {
	var sb strings.Builder
	sb.WriteString("CASE")
	if e.Operand != nil {
		sb.WriteString(" " + e.Operand.String())
	}
	for _, w := range e.Whens {
		sb.WriteString(" WHEN " + w.Cond.String() + " THEN " + w.Result.String())
	}
	if e.Else != nil {
		sb.WriteString(" ELSE " + e.Else.String())
	}
	sb.WriteString(" END")
	return sb.String()
}

func (e *Func) String() string { return e.Name() + "(" + join(e.Args) + ")" }

func join(es []Expr) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.String()
	}
	return strings.Join(s, ", ")
}

// AndAll returns the conjunction of conds (nil for none, the sole one for
// one).
func AndAll(conds ...Expr) Expr {
	var out Expr
	for _, c := range conds {
		if c == nil {
			continue
		}
		if out == nil {
			out = c
			continue
		}
		out = &Binary{Op: And, L: out, R: c, T: sqltypes.BoolType}
	}
	return out
}

// Conjuncts splits a tree of ANDs into its operands.
func Conjuncts(e Expr) []Expr {
	if b, ok := e.(*Binary); ok && b.Op == And {
		return append(Conjuncts(b.L), Conjuncts(b.R)...)
	}
	if e == nil {
		return nil
	}
	return []Expr{e}
}

// Walk calls fn for e and every expression below it, parents first; fn
// returning false skips a node's children.
func Walk(e Expr, fn func(Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	switch n := e.(type) {
	case *Cast:
		Walk(n.X, fn)
	case *Unary:
		Walk(n.X, fn)
	case *Binary:
		Walk(n.L, fn)
		Walk(n.R, fn)
	case *IsNull:
		Walk(n.X, fn)
	case *In:
		Walk(n.X, fn)
		for _, x := range n.List {
			Walk(x, fn)
		}
	case *Case:
		Walk(n.Operand, fn)
		for _, w := range n.Whens {
			Walk(w.Cond, fn)
			Walk(w.Result, fn)
		}
		Walk(n.Else, fn)
	case *Func:
		for _, x := range n.Args {
			Walk(x, fn)
		}
	case *Subquery: // its Args are outer expressions; its Plan is not walked
		for _, x := range n.Args {
			Walk(x, fn)
		}
	}
}

// Columns returns the distinct input column indexes e reads, in first-use
// order.
func Columns(e Expr) []int {
	var out []int
	seen := map[int]bool{}
	Walk(e, func(x Expr) bool {
		if c, ok := x.(*Column); ok && !seen[c.Index] {
			seen[c.Index] = true
			out = append(out, c.Index)
		}
		return true
	})
	return out
}
