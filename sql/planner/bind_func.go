package planner

import (
	"strings"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// funcSig is one scalar function overload family: how to type its
// arguments and result.
type funcSig struct {
	min, max int // argument count (max -1: variadic)
	// typ checks/coerces the bound arguments and returns the result type.
	typ func(b *binder, args []expr.Expr, at []ast.ExprNode, n ast.ExprNode) ([]expr.Expr, sqltypes.Type, error)
}

// fixed returns a signature whose arguments are coerced to params (the
// last one repeats) and whose result is res; res Unknown means "the
// first argument's type".
func fixed(lo, hi int, res sqltypes.Type, params ...sqltypes.Type) funcSig {
	return funcSig{min: lo, max: hi, typ: func(b *binder, args []expr.Expr, at []ast.ExprNode, n ast.ExprNode) ([]expr.Expr, sqltypes.Type, error) {
		for i := range args {
			p := params[min(i, len(params)-1)]
			if p.Kind == sqltypes.Unknown {
				continue
			}
			a, err := b.coerce(args[i], p, at[i], "argument")
			if err != nil {
				if args[i].Type().Kind == sqltypes.Unknown {
					return nil, res, err // an untyped literal that does not read as p
				}
				return nil, res, funcError(b, n, args)
			}
			args[i] = a
		}
		if res.Kind == sqltypes.Unknown {
			return args, args[0].Type(), nil
		}
		return args, res, nil
	}}
}

// common takes any number of arguments of one common type and returns it
// (coalesce, nullif, greatest, least).
func common(lo, hi int) funcSig {
	return funcSig{min: lo, max: hi, typ: func(b *binder, args []expr.Expr, at []ast.ExprNode, n ast.ExprNode) ([]expr.Expr, sqltypes.Type, error) {
		name := strings.ToUpper(n.(*ast.FuncCallExpr).FnName.L)
		t, err := b.unify(args, at, name)
		if err != nil {
			return nil, t, err
		}
		for i := range args {
			if args[i], err = b.coerce(args[i], t, at[i], "argument"); err != nil {
				return nil, t, err
			}
		}
		return args, t, nil
	}}
}

// temporalSecond takes (text, timestamp-ish) and returns the second's
// type (date_trunc) or float8 (date_part).
func temporalSecond(res sqltypes.Type) funcSig {
	return funcSig{min: 2, max: 2, typ: func(b *binder, args []expr.Expr, at []ast.ExprNode, n ast.ExprNode) ([]expr.Expr, sqltypes.Type, error) {
		var err error
		if args[0], err = b.coerce(args[0], sqltypes.TextType, at[0], "argument"); err != nil {
			return nil, res, funcError(b, n, args)
		}
		t := args[1].Type()
		if t.Kind == sqltypes.Unknown {
			t = sqltypes.TimestampTZType
			if args[1], err = b.coerce(args[1], t, at[1], "argument"); err != nil {
				return nil, res, err
			}
		}
		if categoryOf(t) != catDateTime && t.Kind != sqltypes.Interval {
			return nil, res, funcError(b, n, args)
		}
		if t.Kind == sqltypes.Date {
			t = sqltypes.TimestampType
			args[1] = &expr.Cast{X: args[1], T: t}
		}
		if res.Kind == sqltypes.Unknown {
			return args, t, nil
		}
		return args, res, nil
	}}
}

var funcs = map[string]funcSig{
	"coalesce": common(1, -1), "nullif": common(2, 2), "greatest": common(1, -1), "least": common(1, -1),
	"lower": fixed(1, 1, sqltypes.TextType, sqltypes.TextType), "upper": fixed(1, 1, sqltypes.TextType, sqltypes.TextType),
	"length": fixed(1, 1, sqltypes.Int4Type, sqltypes.TextType),
	"substr": fixed(2, 3, sqltypes.TextType, sqltypes.TextType, sqltypes.Int4Type),
	"btrim":  fixed(1, 2, sqltypes.TextType, sqltypes.TextType), "ltrim": fixed(1, 2, sqltypes.TextType, sqltypes.TextType),
	"rtrim": fixed(1, 2, sqltypes.TextType, sqltypes.TextType),
	// math: bind_math.go
	"abs": mathFuncs["abs"], "floor": mathFuncs["floor"], "ceil": mathFuncs["ceil"], "round": mathFuncs["round"],
	"trunc": mathFuncs["trunc"], "sign": mathFuncs["sign"], "sqrt": mathFuncs["sqrt"], "ln": mathFuncs["ln"],
	"exp": mathFuncs["exp"], "log": mathFuncs["log"], "log10": mathFuncs["log10"], "power": mathFuncs["power"],
	"now": fixed(0, 0, sqltypes.TimestampTZType), "random": fixed(0, 0, sqltypes.Float8Type),
	"date_trunc":   dateTruncSig, // bind_time.go
	"extract":      extractSig,
	"date_part":    temporalSecond(sqltypes.Float8Type),
	"to_timestamp": fixed(1, 1, sqltypes.TimestampTZType, sqltypes.Float8Type),
	"time_bucket":  timeBucketSig,
	"concat": {min: 1, max: -1, typ: func(b *binder, args []expr.Expr, at []ast.ExprNode, n ast.ExprNode) ([]expr.Expr, sqltypes.Type, error) {
		for i := range args {
			var err error
			if args[i], err = b.toText(args[i], at[i]); err != nil {
				return nil, sqltypes.TextType, err
			}
		}
		return args, sqltypes.TextType, nil
	}},
}

// funcAliases maps other spellings (and TiDB's renamings) to our names.
var funcAliases = map[string]string{
	"substring": "substr", "ceiling": "ceil", "pow": "power", "trim": "btrim",
	"current_timestamp": "now", "datepart": "date_part", "char_length": "length", "character_length": "length",
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

func (b *binder) bindFunc(x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	name := x.FnName.L
	args := make([]expr.Expr, len(x.Args))
	for i, a := range x.Args {
		var err error
		if args[i], err = b.bindExpr(a, c); err != nil {
			return nil, err
		}
	}
	// PIPES_AS_CONCAT turns a || b into concat(a, b); Postgres' || is
	// NULL-strict where concat() is not, so tell them apart by the text.
	if name == "concat" && !b.textAt(x, "concat") && len(args) == 2 {
		return b.binary(expr.Concat, args[0], args[1], x, x.Args[0], x.Args[1])
	}
	if name == "position" {
		return b.bindPosition(x, c) // bind_strfunc.go
	}
	if a, ok := funcAliases[name]; ok {
		name = a
	}
	if x.FnName.O == parser.ExtractFunc {
		name = "extract"
	}
	sig, ok := funcs[name]
	if !ok || len(args) < sig.min || (sig.max >= 0 && len(args) > sig.max) {
		return nil, funcError(b, x, args)
	}
	args, t, err := sig.typ(b, args, x.Args, x)
	if err != nil {
		return nil, err
	}
	return &expr.Func{Name: name, Args: args, T: t}, nil
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
	args, t, err := funcs["power"].typ(b, args, call.Args, call)
	if err != nil {
		if sqlerr.Code(err) == sqlerr.UndefinedFunction {
			return nil, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s ^ %s", lt, rt).WithPosition(b.pos(x)).
				WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
		}
		return nil, err
	}
	return &expr.Func{Name: "power", Args: args, T: t}, nil
}
