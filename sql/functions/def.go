package functions

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Def is one scalar function: its names, how the planner types a call and
// how the evaluator runs it. A bound call (expr.Func) holds its Def, so
// the evaluator runs what the planner resolved without matching names.
type Def struct {
	// Name is the lower-case Postgres name: what EXPLAIN prints and what
	// an unaliased output column is called.
	Name string
	// Aliases are other spellings SQL may call it by (ceiling for ceil,
	// and the TiDB parser's renamings such as current_timestamp).
	Aliases []string
	// MinArgs and MaxArgs bound the argument count (MaxArgs < 0: any
	// number); a call outside them is 42883 before Rule runs.
	MinArgs, MaxArgs int
	// Params are the parameter names in declaration order, as Postgres
	// names them (pg_proc.proargnames), for calls with named arguments
	// (make_interval(mins => 5)); nil when Postgres' function has none,
	// and a named argument is then 42883. The planner puts named
	// arguments in their places before Rule runs; a parameter a named
	// call skips takes its entry of Defaults.
	Params []string
	// Defaults[i] is the default value of parameter MinArgs+i.
	Defaults []expr.Expr
	// Internal marks a function SQL cannot call by name: the planner
	// builds calls to it for an operator or a syntax (x ~ p is
	// textregexeq, arr[i] is array_subscript) and types them itself.
	Internal bool
	// Volatile marks a function whose value changes from call to call
	// (random): the planner neither treats its calls as constants nor
	// duplicates or moves them.
	Volatile bool
	// Rule types a call: it checks and coerces the bound arguments
	// through b and returns them with the result type. It runs once per
	// call in the planner. Internal functions have none.
	Rule Rule
	// Prepare builds the kernel for a call as Rule left it (arguments of
	// their final types, result type t). It runs once per compiled
	// expression in the evaluator (through Compile), and returns errTypes
	// for argument or result types its kernel does not run. It may
	// replace arguments by casts (expr.Cast) to the types its kernel
	// reads: the evaluator compiles the arguments as Prepare leaves them.
	Prepare func(args []expr.Expr, t sqltypes.Type) (Kernel, error)
	// Examples are calls with their results in Postgres' text form, as
	// PostgreSQL 15 prints them (except for asofsql's own functions and
	// spellings: time_bucket, datepart, extract('field', x)). They
	// document the function (docs/sql.md has the full story), and the
	// root package's TestFunctionExamples runs each one through the whole
	// engine, so every function the planner accepts is known to have a
	// working kernel.
	Examples []Example
}

// Example is one call of a function and its result as psql prints it
// ("NULL" for NULL). Call is an SQL expression: SELECT <Call> returns Want.
type Example struct {
	Call, Want string
}

// FuncName is d's name; it makes *Def an expr.Function.
func (d *Def) FuncName() string { return d.Name }

// Rule is a Def's type rule. It may replace args' elements (coerced or
// cast forms) and must return the slice the call keeps.
type Rule func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error)

// Binder is what a type rule may ask of the planner while it binds one
// call. i is an argument's position in the call, so errors point at it.
type Binder interface {
	// Coerce converts x (argument i) to t as Postgres converts
	// implicitly: an untyped literal is read as t (22P02 and the like when
	// it does not read), an allowed implicit cast is made explicit, any
	// other type is 42804.
	Coerce(x expr.Expr, i int, t sqltypes.Type) (expr.Expr, error)
	// ToText converts x (argument i) to text, other types through their
	// output function, as || and concat() do.
	ToText(x expr.Expr, i int) (expr.Expr, error)
	// Unify is the common type of args as for CASE: untyped arguments
	// take the others' type (text when all are untyped); 42804 "X types a
	// and b cannot be matched" when there is none.
	Unify(args []expr.Expr) (sqltypes.Type, error)
	// ResolveUnknown gives an untyped value the type a select list gives
	// it (an untyped literal is text); other values are returned as they
	// are.
	ResolveUnknown(x expr.Expr) expr.Expr
	// NoMatch is 42883 "function f(types of args) does not exist" at the
	// call, with Postgres' hint.
	NoMatch(args []expr.Expr) error
	// Errorf is an error with SQLSTATE code at the call's position.
	Errorf(code, format string, a ...any) *sqlerr.Error
}

// Kernel evaluates a prepared call over one batch: it returns an array of
// in.Rows() values of the call's result type, owned by the caller.
type Kernel func(in Input) (arrow.Array, error)

// Input is one evaluation of a call: its arguments over the current batch
// and the statement's settings. The evaluator implements it; a kernel
// must not keep it past the call.
type Input interface {
	// Context is the statement's: a kernel that waits (pg_sleep) stops
	// when it is done.
	Context() context.Context
	// Rows is the batch length.
	Rows() int
	// Mem allocates the result and any scratch arrays.
	Mem() memory.Allocator
	// Now is the statement's start time (now()).
	Now() time.Time
	// Options are the session's value settings (time zone, float
	// output); nil means sqltypes.DefaultOptions().
	Options() *sqltypes.Options
	// Location is the session time zone.
	Location() *time.Location
	// Arg evaluates argument i for every row; the caller releases it.
	Arg(i int) (arrow.Array, error)
	// ArgWhere evaluates argument i for the rows where want is true, so
	// that rows which do not need it cannot fail (COALESCE's later
	// arguments); the other rows hold NULL or any value and must not be
	// read. The caller releases the array.
	ArgWhere(i int, want []bool) (arrow.Array, error)
}

var (
	byName = map[string]*Def{}
	all    []*Def
)

// register adds d to the registry under its name and aliases. It runs at
// package initialisation only (each function file declares its Defs as
// package variables), so the registry is never written afterwards. A
// name taken twice is a programming error that every test run reports.
func register(d *Def) *Def {
	for _, n := range append([]string{d.Name}, d.Aliases...) {
		if byName[n] != nil {
			panic("functions: " + n + " registered twice")
		}
		byName[n] = d
	}
	all = append(all, d)
	return d
}

// Lookup finds a function by its lower-case name or alias. The planner
// refuses an Internal one (SQL cannot call it by name).
func Lookup(name string) (*Def, bool) {
	d, ok := byName[name]
	return d, ok
}

// All returns every function, internal ones included, ordered by name.
func All() []*Def {
	out := append([]*Def(nil), all...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Of returns the Def a call was bound to; ok is false for a call whose
// Fn is not one (a hand-built expression).
func Of(e *expr.Func) (*Def, bool) {
	d, ok := e.Fn.(*Def)
	return d, ok && d != nil
}

// errTypes is what a Prepare returns for argument or result types its
// kernel does not run; Compile turns it into a 42883 naming the call.
var errTypes = errors.New("functions: argument types not supported")

// Compile prepares d's kernel for a call with arguments args and result
// type t, as the evaluator does once per compiled expression, and returns
// the arguments the kernel reads (args itself is not changed). Types the
// kernel does not run are 42883: the planner never builds such a call, so
// it means a hand-built or mis-typed expression.
func (d *Def) Compile(args []expr.Expr, t sqltypes.Type) (Kernel, []expr.Expr, error) {
	args = append([]expr.Expr(nil), args...)
	k, err := d.Prepare(args, t)
	if err == errTypes {
		ts := make([]string, len(args))
		for i, a := range args {
			ts[i] = a.Type().String()
		}
		return nil, nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s) returning %s is not supported", d.Name, strings.Join(ts, ", "), t).
			WithHint("No operator or function matches the given name and argument types.")
	}
	return k, args, err
}
