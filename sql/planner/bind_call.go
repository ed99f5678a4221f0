package planner

import (
	"slices"
	"strings"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/functions"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Scalar functions are defined in package sql/functions: each Def has its
// names, its type rule and its kernel. The binder resolves a call to a Def
// and runs its rule through callBinder; the bound expr.Func carries the
// Def, which the evaluator runs.

// callBinder is a functions.Binder for one call: coercions and errors
// positioned at the call's arguments.
type callBinder struct {
	b *binder
	x *ast.FuncCallExpr
}

var _ functions.Binder = callBinder{}

func (c callBinder) Coerce(e expr.Expr, i int, t sqltypes.Type) (expr.Expr, error) {
	return c.b.coerce(e, t, c.x.Args[i], "argument")
}

func (c callBinder) ToText(e expr.Expr, i int) (expr.Expr, error) { return c.b.toText(e, c.x.Args[i]) }

func (c callBinder) Unify(args []expr.Expr) (sqltypes.Type, error) {
	return c.b.unify(args, c.x.Args, strings.ToUpper(c.x.FnName.L))
}

func (c callBinder) ResolveUnknown(e expr.Expr) expr.Expr { return resolveUnknown(e) }

func (c callBinder) NoMatch(args []expr.Expr) error { return funcError(c.b, c.x, args) }

func (c callBinder) Errorf(code, format string, a ...any) *sqlerr.Error {
	return sqlerr.New(code, format, a...).WithPosition(c.b.pos(c.x))
}

func funcError(b *binder, n ast.ExprNode, args []expr.Expr) error {
	ts := make([]string, len(args))
	for i, a := range args {
		ts[i] = a.Type().String()
	}
	name := n.(*ast.FuncCallExpr).FnName.L
	return sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s) does not exist", name, strings.Join(ts, ", ")).WithPosition(b.pos(n)).
		WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

// notYetSetFuncs are Postgres functions returning sets or arrays that
// asofsql does not have yet (unnest in FROM is bind_select's).
var notYetSetFuncs = map[string]string{
	"unnest": "unnest outside FROM", "regexp_matches": "regexp_matches outside FROM",
	"generate_series":       "generate_series outside FROM",
	"regexp_split_to_array": "regexp_split_to_array", "regexp_split_to_table": "regexp_split_to_table",
	"string_to_table": "string_to_table",
}

func (b *binder) bindFunc(x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	name := x.FnName.L
	// TRIM([BOTH | LEADING | TRAILING] chars FROM s), which TiDB reads as
	// trim(s, chars, direction), is btrim, ltrim or rtrim(s, chars), as in
	// Postgres (psql's \d+ of a view sends TRIM(TRAILING ';' FROM ...)).
	if name == "trim" && len(x.Args) == 3 && x.Args[1] != nil {
		if d, ok := x.Args[2].(*ast.TrimDirectionExpr); ok {
			fn := map[ast.TrimDirectionType]string{ast.TrimBoth: "btrim", ast.TrimLeading: "ltrim", ast.TrimTrailing: "rtrim"}[d.Direction]
			if fn == "" {
				fn = "btrim"
			}
			call := &ast.FuncCallExpr{FnName: ast.NewCIStr(fn), Args: x.Args[:2]}
			call.SetOriginTextPosition(x.OriginTextPosition())
			return b.bindFunc(call, c)
		}
	}
	if x.FnName.O == parser.MarkerAtTimeZone && len(x.Args) == 2 {
		// x AT TIME ZONE z is timezone(z, x).
		call := &ast.FuncCallExpr{FnName: ast.NewCIStr("timezone"), Args: []ast.ExprNode{x.Args[1], x.Args[0]}}
		call.SetOriginTextPosition(x.OriginTextPosition())
		return b.bindFunc(call, c)
	}
	if what := notYetSetFuncs[name]; what != "" {
		err := sqlerr.New(sqlerr.FeatureNotSupported, "%s is not supported", what).WithPosition(b.pos(x))
		if strings.HasSuffix(what, "outside FROM") {
			// Set-returning functions run in FROM, lateral to the items
			// before them.
			err = err.WithHint("A select list takes one, in a query without GROUP BY, aggregates, window functions or an unqualified *; otherwise call it in FROM: SELECT x FROM t, %s(...) AS f(x).", name)
		}
		return nil, err
	}
	args := make([]expr.Expr, len(x.Args))
	var names []string
	for i, a := range x.Args {
		if f, ok := a.(*ast.FuncCallExpr); ok && f.FnName.O == parser.MarkerNamed && len(f.Args) == 2 {
			// name => value: bound here, put in its place below.
			if names == nil {
				names = make([]string, len(x.Args))
			}
			if v, ok := f.Args[0].(ast.ValueExpr); ok {
				names[i], _ = v.GetValue().(string)
			}
			a = f.Args[1]
		}
		var err error
		if args[i], err = b.bindExpr(a, c); err != nil {
			if e, ok := sqlerr.As(err); ok && e.Code == sqlerr.GroupingError && c.agg != nil {
				// Postgres resolves the function before it checks
				// grouping: an unknown aggregate (median(x) in a grouped
				// query) is 42883, not "x must appear in GROUP BY".
				if _, known := functions.Lookup(name); !known {
					if ungrouped, err2 := b.bindArgsUngrouped(x, c); err2 == nil {
						return nil, funcError(b, x, ungrouped)
					}
				}
			}
			return nil, err
		}
	}
	// PIPES_AS_CONCAT turns a || b into concat(a, b); Postgres' || is
	// NULL-strict where concat() is not, so tell them apart by the text.
	if name == "concat" && !b.textAt(x, "concat") && len(args) == 2 {
		return b.binary(expr.Concat, args[0], args[1], x, x.Args[0], x.Args[1])
	}
	if name == "position" {
		return b.bindPosition(x, c)
	}
	if x.FnName.O == parser.ExtractFunc {
		name = "extract"
	}
	if name == "current_time" || name == "localtime" {
		// SQL's CURRENT_TIME and LOCALTIME: their types (time with and
		// without time zone) are not asofsql's.
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s is not supported: asofsql has no time type", name).WithPosition(b.pos(x)).
			WithHint("Use localtimestamp or current_timestamp, or to_char(now(), 'HH24:MI:SS').")
	}
	d, ok := functions.Lookup(name)
	if names != nil {
		if !ok || d.Internal {
			return nil, namedFuncError(b, x, names, args)
		}
		var err error
		if x, args, err = placeNamed(b, d, x, names, args); err != nil {
			return nil, err
		}
	}
	if !ok || d.Internal || len(args) < d.MinArgs || (d.MaxArgs >= 0 && len(args) > d.MaxArgs) {
		return nil, funcError(b, x, args)
	}
	args, t, err := d.Rule(callBinder{b, x}, args)
	if err != nil {
		return nil, err
	}
	return &expr.Func{Fn: d, Args: args, T: t}, nil
}

// bindPosition binds position(sub IN s), which TiDB reads as the call
// position(sub, s): Postgres' strpos(s, sub).
func (b *binder) bindPosition(x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	if len(x.Args) != 2 {
		args := make([]expr.Expr, len(x.Args))
		for i, a := range x.Args {
			var err error
			if args[i], err = b.bindExpr(a, c); err != nil {
				return nil, err
			}
		}
		return nil, funcError(b, x, args)
	}
	call := &ast.FuncCallExpr{FnName: ast.NewCIStr("strpos"), Args: []ast.ExprNode{x.Args[1], x.Args[0]}}
	call.SetOriginTextPosition(x.OriginTextPosition())
	e, err := b.bindFunc(call, c)
	if err != nil && sqlerr.Code(err) == sqlerr.UndefinedFunction {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function position does not match its arguments").WithPosition(b.pos(x)).
			WithHint("position(substring IN string) takes two strings.")
	}
	return e, err
}

// textAt reports whether the rewritten text at n's position starts with
// word (case-insensitive).
func (b *binder) textAt(n ast.ExprNode, word string) bool {
	off := n.OriginTextPosition()
	rw := b.st.Rewritten
	if off < 0 || off+len(word) > len(rw) {
		return false
	}
	return strings.EqualFold(rw[off:off+len(word)], word)
}

// bindPow binds Postgres' a ^ b (exponentiation). TiDB parses ^ as its
// bitwise XOR, which has Postgres' precedence for ^ (above * and /, below
// unary minus; left-associative), so only the meaning changes: a ^ b is
// power(a, b), with power's overloads.
func (b *binder) bindPow(x *ast.BinaryOperationExpr, c *exprCtx) (expr.Expr, error) {
	call := &ast.FuncCallExpr{FnName: ast.NewCIStr("power"), Args: []ast.ExprNode{x.L, x.R}}
	call.SetOriginTextPosition(x.OriginTextPosition())
	args := make([]expr.Expr, 2)
	for i, a := range call.Args {
		var err error
		if args[i], err = b.bindExpr(a, c); err != nil {
			return nil, err
		}
	}
	lt, rt := args[0].Type(), args[1].Type()
	args, t, err := functions.Power.Rule(callBinder{b, call}, args)
	if err != nil {
		if sqlerr.Code(err) == sqlerr.UndefinedFunction {
			return nil, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s ^ %s", lt, rt).WithPosition(b.pos(x)).
				WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
		}
		return nil, err
	}
	return &expr.Func{Fn: functions.Power, Args: args, T: t}, nil
}

// bindArgsUngrouped binds a call's arguments over the grouped query's
// input, for the types an error message names.
func (b *binder) bindArgsUngrouped(x *ast.FuncCallExpr, c *exprCtx) ([]expr.Expr, error) {
	inner := &exprCtx{sc: c.agg.from, clause: c.clause}
	args := make([]expr.Expr, len(x.Args))
	for i, a := range x.Args {
		var err error
		if args[i], err = b.bindExpr(a, inner); err != nil {
			return nil, err
		}
	}
	return args, nil
}

// placeNamed puts a call's named arguments where d's parameters of those
// names are, and the defaults of the parameters left out before the last
// one given. It returns the call with its arguments (the value nodes, the
// call itself standing for a default) in the same order, for positions.
// A name d lacks, one a positional argument already filled, or a required
// parameter left out is 42883 with the call's signature, as in Postgres.
func placeNamed(b *binder, d *functions.Def, x *ast.FuncCallExpr, names []string, args []expr.Expr) (*ast.FuncCallExpr, []expr.Expr, error) {
	slot := make([]int, len(args))
	n, positional := 0, slices.IndexFunc(names, func(s string) bool { return s != "" })
	for i, nm := range names {
		slot[i] = i
		if nm != "" {
			slot[i] = slices.Index(d.Params, nm)
			if slot[i] < positional {
				return nil, nil, namedFuncError(b, x, names, args)
			}
		}
		n = max(n, slot[i]+1)
	}
	if n < d.MinArgs {
		return nil, nil, namedFuncError(b, x, names, args)
	}
	out := make([]expr.Expr, n)
	nodes := make([]ast.ExprNode, n)
	for i, s := range slot {
		out[s] = args[i]
		nodes[s] = x.Args[i]
		if f, ok := x.Args[i].(*ast.FuncCallExpr); ok && f.FnName.O == parser.MarkerNamed && len(f.Args) == 2 {
			nodes[s] = f.Args[1]
		}
	}
	for i := range out {
		if out[i] != nil {
			continue
		}
		if i < d.MinArgs || i-d.MinArgs >= len(d.Defaults) {
			return nil, nil, namedFuncError(b, x, names, args)
		}
		def := d.Defaults[i-d.MinArgs]
		if l, ok := def.(*expr.Literal); ok {
			c := *l // plans own their expressions
			def = &c
		}
		out[i], nodes[i] = def, x
	}
	call := &ast.FuncCallExpr{FnName: x.FnName, Args: nodes}
	call.SetOriginTextPosition(x.OriginTextPosition())
	return call, out, nil
}

// namedFuncError is 42883 for a call with named arguments, spelled as
// Postgres spells its signature: f(integer, mins => integer).
func namedFuncError(b *binder, x *ast.FuncCallExpr, names []string, args []expr.Expr) error {
	ts := make([]string, len(args))
	for i, a := range args {
		ts[i] = a.Type().String()
		if names[i] != "" {
			ts[i] = names[i] + " => " + ts[i]
		}
	}
	return sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s) does not exist", x.FnName.L, strings.Join(ts, ", ")).WithPosition(b.pos(x)).
		WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

// bindJSONGet binds j -> k and j ->> k (the parser's MarkerJSONGet form,
// at is the whole operation): the accessor function of j's type and k's,
// by key for text, by index for an integer.
func (b *binder) bindJSONGet(at *ast.BinaryOperationExpr, jn, kn ast.ExprNode, asText bool, c *exprCtx) (expr.Expr, error) {
	j, err := b.bindExpr(jn, c)
	if err != nil {
		return nil, err
	}
	k, err := b.bindExpr(kn, c)
	if err != nil {
		return nil, err
	}
	op := "->"
	if asText {
		op = "->>"
	}
	kt := k.Type()
	if kt.Kind == sqltypes.Unknown {
		kt = sqltypes.TextType
	}
	d := functions.JSONAccessor(j.Type(), kt, asText)
	if d == nil {
		if j.Type().Kind == sqltypes.Unknown && (kt.IsInteger() || kt.IsString()) {
			return nil, sqlerr.New("42725", "operator is not unique: unknown %s %s", op, k.Type()).WithPosition(b.pos(at)).
				WithHint("Could not choose a best candidate operator. You might need to add explicit type casts.")
		}
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s %s %s", j.Type(), op, k.Type()).WithPosition(b.pos(at)).
			WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
	}
	call := &ast.FuncCallExpr{FnName: ast.NewCIStr(d.Name), Args: []ast.ExprNode{jn, kn}}
	call.SetOriginTextPosition(at.OriginTextPosition())
	args, t, err := d.Rule(callBinder{b, call}, []expr.Expr{j, k})
	if err != nil {
		return nil, err
	}
	return &expr.Func{Fn: d, Args: args, T: t}, nil
}
