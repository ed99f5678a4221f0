package eval

import (
	"context"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/functions"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// compileFunc compiles a call of the function the planner resolved: the
// kernel comes from its functions.Def, never from matching its name.
func (c *compiler) compileFunc(e *expr.Func) (node, error) {
	def, ok := functions.Of(e)
	if !ok {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s does not exist", e).
			WithHint("No function matches the given name and argument types.")
	}
	k, argExprs, err := def.Compile(e.Args, e.T)
	if err != nil {
		return nil, err
	}
	args, err := c.compileAll(argExprs)
	if err != nil {
		return nil, err
	}
	return &funcNode{k: k, args: args, t: e.T}, nil
}

// funcNode runs a function kernel over its compiled arguments.
type funcNode struct {
	k    functions.Kernel
	args []node
	t    sqltypes.Type
}

func (n *funcNode) typ() sqltypes.Type { return n.t }

func (n *funcNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	return n.k(&funcInput{c: c, b: b, args: n.args})
}

// funcInput is a kernel's view of one evaluation (functions.Input).
type funcInput struct {
	c    *call
	b    arrow.RecordBatch
	args []node
}

func (in *funcInput) Context() context.Context { return in.c.ctx }
func (in *funcInput) Rows() int                { return int(in.b.NumRows()) }
func (in *funcInput) Mem() memory.Allocator    { return in.c.mem }
func (in *funcInput) Now() time.Time           { return in.c.env.Now }
func (in *funcInput) Location() *time.Location { return in.c.env.loc() }
func (in *funcInput) Arg(i int) (arrow.Array, error) {
	return in.args[i].eval(in.c, in.b)
}
func (in *funcInput) ArgWhere(i int, want []bool) (arrow.Array, error) {
	return evalMasked(in.c, in.args[i], in.b, want)
}
func (in *funcInput) Options() *sqltypes.Options { return in.c.env.Options }
