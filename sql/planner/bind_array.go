package planner

import (
	"strings"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/functions"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Typed arrays (sqltypes.Array): ARRAY[...], casts to type[], arr[i] and
// x op ANY|ALL (arr). Arrays whose element type asofsql lacks (oid[],
// name[], the catalog's text array columns) keep the text form of
// bind_subquery.go.

// arrayElemOK reports whether t can be an array's element type.
func arrayElemOK(t sqltypes.Type) bool {
	return t.Kind >= sqltypes.Bool && t.Kind <= sqltypes.Interval
}

// bindArrayCtor binds ARRAY[a, b, ...] (`#arrayctor`(a, b, ...)): the
// elements take their common type, as Postgres resolves ARRAY[]
// (untyped literals alone are text); an array element would make a
// multidimensional array (0A000).
func (b *binder) bindArrayCtor(x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	if len(x.Args) == 0 {
		return nil, sqlerr.New("42P18", "cannot determine type of empty array").WithPosition(b.pos(x)).
			WithHint("Explicitly cast to the desired type, for example ARRAY[]::integer[].")
	}
	args := make([]expr.Expr, len(x.Args))
	for i, a := range x.Args {
		e, err := b.bindExpr(a, c)
		if err != nil {
			return nil, err
		}
		if e.Type().IsArray() {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "multidimensional arrays are not supported").WithPosition(b.pos(a))
		}
		args[i] = e
	}
	t, err := b.unify(args, x.Args, "ARRAY")
	if err != nil {
		return nil, err
	}
	if !arrayElemOK(t) {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "arrays of type %s are not supported", t).WithPosition(b.pos(x))
	}
	for i := range args {
		if args[i], err = b.coerce(args[i], t, x.Args[i], "ARRAY"); err != nil {
			return nil, err
		}
	}
	return &expr.Func{Fn: functions.ArrayCtor, Args: args, T: sqltypes.ArrayOf(t)}, nil
}

// bindTypedArrayCast binds x::type[] for an element type asofsql has;
// ok is false for other element types (the text form's business).
func (b *binder) bindTypedArrayCast(x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, bool, error) {
	v, isVal := x.Args[1].(ast.ValueExpr)
	if !isVal {
		return nil, false, nil
	}
	name, _ := v.GetValue().(string)
	et, err := sqltypes.ParseTypeName(strings.TrimPrefix(name, "pg_catalog."))
	if err != nil || !arrayElemOK(et) {
		return nil, false, nil
	}
	t := sqltypes.ArrayOf(et)
	if f, ok := unparen(x.Args[0]).(*ast.FuncCallExpr); ok && f.FnName.O == parser.MarkerArrayCtor && len(f.Args) == 0 {
		return &expr.Func{Fn: functions.ArrayCtor, T: t}, true, nil // ARRAY[]::type[]
	}
	e, err := b.bindExpr(x.Args[0], c)
	if err != nil {
		return nil, true, err
	}
	switch v := e.(type) {
	case *expr.Literal:
		if v.Value == nil {
			return &expr.Literal{T: t}, true, nil
		}
		if s, ok := v.Value.(string); ok && v.T.Kind == sqltypes.Unknown {
			l, err := decodeLiteral(t, s, b.opts.Types)
			return l, true, withPos(err, b.pos(x.Args[0]))
		}
	case *expr.Param:
		if v.T.Kind == sqltypes.Unknown {
			return b.param(v.N, t), true, nil
		}
	}
	from := e.Type()
	switch {
	case from == t:
		return e, true, nil
	case from.IsArray() && arrayElemOK(from.ElemType()), from.IsString(), from.Kind == sqltypes.Unknown:
		return &expr.Cast{X: e, T: t}, true, nil
	}
	return nil, true, sqlerr.New(codeCannotCoerce, "cannot cast type %s to %s", from, t).WithPosition(b.pos(x))
}

// bindArrayElement binds arr[i] on a typed array: 1-based, NULL out of
// range.
func (b *binder) bindArrayElement(arr expr.Expr, x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	idx, err := b.bindExpr(x.Args[1], c)
	if err != nil {
		return nil, err
	}
	if idx, err = b.coerce(idx, sqltypes.Int8Type, x.Args[1], "array subscript"); err != nil {
		return nil, err
	}
	return &expr.Func{Fn: functions.ArrayElement, Args: []expr.Expr{arr, idx}, T: arr.Type().ElemType()}, nil
}

// bindTypedAny binds x op ANY|ALL (arr) when arr is a typed array, or an
// untyped literal or parameter (then read as an array of x's type, as pgx
// and psycopg send a list for `= ANY($1)`). ok is false for a text array.
func (b *binder) bindTypedAny(l, arr expr.Expr, op string, all bool, x *ast.BinaryOperationExpr, f *ast.FuncCallExpr) (expr.Expr, bool, error) {
	at, lt := arr.Type(), l.Type()
	if !at.IsArray() && at.Kind != sqltypes.Unknown {
		return nil, false, nil
	}
	var err error
	if at.Kind == sqltypes.Unknown {
		if lt.Kind == sqltypes.Unknown {
			if l, err = b.coerce(l, sqltypes.TextType, x.L, "ANY"); err != nil {
				return nil, true, err
			}
			lt = sqltypes.TextType
		}
		if !arrayElemOK(lt) {
			return nil, true, errNoAnyOp(b, x, lt, op, lt)
		}
		if arr, err = b.coerce(arr, sqltypes.ArrayOf(lt), f.Args[0], "ANY"); err != nil {
			return nil, true, err
		}
	} else {
		et := at.ElemType()
		if lt.Kind == sqltypes.Unknown {
			lt = et
		}
		ct, ok := commonType(lt, et)
		if !ok || !arrayElemOK(ct) {
			return nil, true, errNoAnyOp(b, x, lt, op, et)
		}
		if l, err = b.coerce(l, ct, x.L, "ANY"); err != nil {
			return nil, true, err
		}
		if arr, err = b.coerce(arr, sqltypes.ArrayOf(ct), f.Args[0], "ANY"); err != nil {
			return nil, true, err
		}
	}
	return &expr.Func{Fn: functions.ArrayCompare, T: sqltypes.BoolType, Args: []expr.Expr{l, arr,
		&expr.Literal{Value: op, T: sqltypes.TextType}, &expr.Literal{Value: all, T: sqltypes.BoolType}}}, true, nil
}

func errNoAnyOp(b *binder, x *ast.BinaryOperationExpr, lt sqltypes.Type, op string, et sqltypes.Type) error {
	return sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s %s %s", lt, op, et).WithPosition(b.pos(x)).
		WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
}

// negatedOp is the comparison that is true exactly where op is false
// (both NULL together): x op ALL (a) is NOT (x negatedOp ANY (a)).
var negatedOp = map[string]string{"=": "<>", "<>": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}

// bindArrayConcat binds || with a typed array on one side: array ||
// array (an untyped side is read as an array), or array || element and
// element || array, the types meeting as in comparisons.
func (b *binder) bindArrayConcat(l, r expr.Expr, lat, rat ast.ExprNode) (expr.Expr, error) {
	lt, rt := l.Type(), r.Type()
	if lt.Kind == sqltypes.Unknown {
		lt = rt
	}
	if rt.Kind == sqltypes.Unknown {
		rt = lt
	}
	elem := func(t sqltypes.Type) sqltypes.Type {
		if t.IsArray() {
			return t.ElemType()
		}
		return t
	}
	et, ok := commonType(elem(lt), elem(rt))
	if !ok || !arrayElemOK(et) {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s || %s", l.Type(), r.Type()).WithPosition(b.pos(lat)).
			WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
	}
	t := sqltypes.ArrayOf(et)
	side := func(e expr.Expr, st sqltypes.Type, at ast.ExprNode) (expr.Expr, error) {
		if st.IsArray() {
			return b.coerce(e, t, at, "operand")
		}
		return b.coerce(e, et, at, "operand")
	}
	var err error
	if l, err = side(l, lt, lat); err != nil {
		return nil, err
	}
	if r, err = side(r, rt, rat); err != nil {
		return nil, err
	}
	return &expr.Func{Fn: functions.ArrayConcat, Args: []expr.Expr{l, r}, T: t}, nil
}
