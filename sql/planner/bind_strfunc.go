package planner

import (
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

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
