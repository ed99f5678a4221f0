package planner

import (
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// String functions beyond the core set and pg_typeof (exec/eval/strfuncs.go
// runs them), added to funcs here so the shared table stays small.
func init() {
	text, i4 := sqltypes.TextType, sqltypes.Int4Type
	for name, sig := range map[string]funcSig{
		"replace":     fixed(3, 3, text, text),
		"strpos":      fixed(2, 2, i4, text),
		"left":        fixed(2, 2, text, text, i4),
		"right":       fixed(2, 2, text, text, i4),
		"lpad":        fixed(2, 3, text, text, i4, text),
		"rpad":        fixed(2, 3, text, text, i4, text),
		"split_part":  fixed(3, 3, text, text, text, i4),
		"starts_with": fixed(2, 2, sqltypes.BoolType, text),
		"pg_typeof":   {min: 1, max: 1, typ: pgTypeof},
	} {
		funcs[name] = sig
	}
}

// pgTypeof is pg_typeof(x): the name of x's type, without modifiers, as
// Postgres prints a regtype (the result here is text). x is still
// evaluated, so its run-time errors are raised.
func pgTypeof(b *binder, args []expr.Expr, at []ast.ExprNode, n ast.ExprNode) ([]expr.Expr, sqltypes.Type, error) {
	t := args[0].Type()
	bare := sqltypes.Type{Kind: t.Kind, Precision: sqltypes.NoLimit, Scale: sqltypes.NoLimit, Length: sqltypes.NoLimit}
	x := args[0]
	if t.Kind == sqltypes.Unknown {
		x = resolveUnknown(x)
		if x.Type().Kind == sqltypes.Unknown {
			x = &expr.Literal{T: sqltypes.TextType}
		}
	}
	return []expr.Expr{x, &expr.Literal{Value: bare.String(), T: sqltypes.TextType}}, sqltypes.TextType, nil
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
