package planner

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/functions"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// codeCannotCoerce is Postgres' cannot_coerce, which sqlerr lacks.
const codeCannotCoerce = "42846"

var binOps = map[opcode.Op]expr.BinaryOp{
	opcode.Plus: expr.Add, opcode.Minus: expr.Sub, opcode.Mul: expr.Mul, opcode.Div: expr.Div,
	opcode.Mod: expr.Mod, opcode.EQ: expr.Eq, opcode.NE: expr.Ne, opcode.LT: expr.Lt,
	opcode.LE: expr.Le, opcode.GT: expr.Gt, opcode.GE: expr.Ge, opcode.LogicAnd: expr.And,
	opcode.LogicOr: expr.Or, opcode.NullEQ: expr.IsNotDistinctFrom,
}

func (b *binder) bindBinary(x *ast.BinaryOperationExpr, c *exprCtx) (expr.Expr, error) {
	if x.Op == opcode.Xor {
		return b.bindPow(x, c)
	}
	op, ok := binOps[x.Op]
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "operator %s is not supported", x.Op).WithPosition(b.pos(x))
	}
	l, err := b.bindExpr(x.L, c)
	if err != nil {
		return nil, err
	}
	r, err := b.bindExpr(x.R, c)
	if err != nil {
		return nil, err
	}
	return b.binary(op, l, r, x, x.L, x.R)
}

func opError(b *binder, at ast.ExprNode, op expr.BinaryOp, l, r sqltypes.Type) error {
	return sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s %s %s", l, op, r).WithPosition(b.pos(at)).
		WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
}

// binary types an operator application like Postgres' operator
// resolution, for the operators asofsql has.
func (b *binder) binary(op expr.BinaryOp, l, r expr.Expr, at, lat, rat ast.ExprNode) (expr.Expr, error) {
	lt, rt := l.Type(), r.Type()
	var err error
	switch {
	case op == expr.And || op == expr.Or:
		if l, err = b.coerce(l, sqltypes.BoolType, lat, "argument of "+op.String()); err != nil {
			return nil, err
		}
		if r, err = b.coerce(r, sqltypes.BoolType, rat, "argument of "+op.String()); err != nil {
			return nil, err
		}
		return &expr.Binary{Op: op, L: l, R: r, T: sqltypes.BoolType}, nil
	case op.IsComparison() || op == expr.IsDistinctFrom || op == expr.IsNotDistinctFrom:
		ct, ok := commonType(lt, rt)
		if !ok || noEquality(ct) {
			if op == expr.IsDistinctFrom || op == expr.IsNotDistinctFrom {
				op = expr.Eq // Postgres names the = operator IS DISTINCT FROM uses
			}
			return nil, opError(b, at, op, lt, rt)
		}
		if l, err = b.coerce(l, ct, lat, "operand"); err != nil {
			return nil, err
		}
		if r, err = b.coerce(r, ct, rat, "operand"); err != nil {
			return nil, err
		}
		return &expr.Binary{Op: op, L: l, R: r, T: sqltypes.BoolType}, nil
	case op == expr.Concat:
		if lt.IsArray() || rt.IsArray() {
			return b.bindArrayConcat(l, r, lat, rat) // bind_array.go
		}
		if l, err = b.toText(l, lat); err != nil {
			return nil, err
		}
		if r, err = b.toText(r, rat); err != nil {
			return nil, err
		}
		return &expr.Binary{Op: op, L: l, R: r, T: sqltypes.TextType}, nil
	}
	// Arithmetic.
	cl, cr := categoryOf(lt), categoryOf(rt)
	// An unknown literal next to a date/time takes the type that makes
	// the operator exist: ts + '1 day' is timestamp + interval.
	if lt.Kind == sqltypes.Unknown && rt.Kind != sqltypes.Unknown {
		lt = unknownPartner(op, rt, true)
		if l, err = b.coerce(l, lt, lat, "operand"); err != nil {
			return nil, err
		}
		cl = categoryOf(lt)
	}
	if rt.Kind == sqltypes.Unknown && lt.Kind != sqltypes.Unknown {
		rt = unknownPartner(op, lt, false)
		if r, err = b.coerce(r, rt, rat, "operand"); err != nil {
			return nil, err
		}
		cr = categoryOf(rt)
	}
	mk := func(l, r expr.Expr, t sqltypes.Type) (expr.Expr, error) {
		return &expr.Binary{Op: op, L: l, R: r, T: t}, nil
	}
	switch {
	case cl == catNumeric && cr == catNumeric:
		ct, _ := commonType(lt, rt)
		if ct.Kind == sqltypes.Numeric {
			// Every unconstrained NUMERIC is stored alike: an operand
			// that is one keeps its display scale.
			ct = sqltypes.NumericType(sqltypes.NoLimit, sqltypes.NoLimit)
			if !isPlainNumeric(lt) {
				if l, err = b.coerce(l, ct, lat, "operand"); err != nil {
					return nil, err
				}
			}
			if !isPlainNumeric(rt) {
				if r, err = b.coerce(r, ct, rat, "operand"); err != nil {
					return nil, err
				}
			}
			if d, ok := constDivScale(op, l, r); ok { // numeric_scale.go
				return mk(l, r, sqltypes.NumericDisplay(d))
			}
			return mk(l, r, numericResult(op, lt, rt))
		}
		if l, err = b.coerce(l, ct, lat, "operand"); err != nil {
			return nil, err
		}
		if r, err = b.coerce(r, ct, rat, "operand"); err != nil {
			return nil, err
		}
		return mk(l, r, ct)
	case lt.Kind == sqltypes.Date && rt.IsInteger() && (op == expr.Add || op == expr.Sub):
		if r, err = b.coerce(r, sqltypes.Int4Type, rat, "operand"); err != nil {
			return nil, err
		}
		return mk(l, r, sqltypes.DateType)
	case lt.IsInteger() && rt.Kind == sqltypes.Date && op == expr.Add:
		if l, err = b.coerce(l, sqltypes.Int4Type, lat, "operand"); err != nil {
			return nil, err
		}
		return mk(l, r, sqltypes.DateType)
	case lt.Kind == sqltypes.Date && rt.Kind == sqltypes.Date && op == expr.Sub:
		return mk(l, r, sqltypes.Int4Type)
	case cl == catDateTime && rt.Kind == sqltypes.Interval && (op == expr.Add || op == expr.Sub):
		t := sqltypes.Base(lt.Kind)
		if lt.Kind == sqltypes.Date {
			t = sqltypes.TimestampType
			l = &expr.Cast{X: l, T: t}
		}
		return mk(l, r, t)
	case lt.Kind == sqltypes.Interval && cr == catDateTime && op == expr.Add:
		t := sqltypes.Base(rt.Kind)
		if rt.Kind == sqltypes.Date {
			t = sqltypes.TimestampType
			r = &expr.Cast{X: r, T: t}
		}
		return mk(l, r, t)
	case cl == catDateTime && cr == catDateTime && op == expr.Sub:
		// date - date is handled above; otherwise the date side is
		// promoted and the difference is an interval.
		ct, _ := commonType(lt, rt)
		if l, err = b.coerce(l, ct, lat, "operand"); err != nil {
			return nil, err
		}
		if r, err = b.coerce(r, ct, rat, "operand"); err != nil {
			return nil, err
		}
		return mk(l, r, sqltypes.IntervalType)
	case lt.Kind == sqltypes.Interval && rt.Kind == sqltypes.Interval && (op == expr.Add || op == expr.Sub):
		return mk(l, r, sqltypes.IntervalType)
	case lt.Kind == sqltypes.Interval && cr == catNumeric && (op == expr.Mul || op == expr.Div):
		if r, err = b.coerce(r, sqltypes.Float8Type, rat, "operand"); err != nil {
			return nil, err
		}
		return mk(l, r, sqltypes.IntervalType)
	case cl == catNumeric && rt.Kind == sqltypes.Interval && op == expr.Mul:
		if l, err = b.coerce(l, sqltypes.Float8Type, lat, "operand"); err != nil {
			return nil, err
		}
		return mk(l, r, sqltypes.IntervalType)
	}
	return nil, opError(b, at, op, lt, rt)
}

// unknownPartner is the type an unknown-typed operand of an arithmetic
// operator takes next to an operand of type other. Postgres first tries
// the other operand's own type, which exists for subtraction of
// dates/timestamps (so now() - '1 day' is read as a timestamp and fails,
// as in Postgres); addition has no such operator and takes an interval
// (days for a date).
func unknownPartner(op expr.BinaryOp, other sqltypes.Type, left bool) sqltypes.Type {
	switch categoryOf(other) {
	case catDateTime:
		switch {
		case op == expr.Sub:
			return other
		case other.Kind == sqltypes.Date:
			return sqltypes.Int4Type
		}
		return sqltypes.IntervalType
	case catTimespan:
		if op == expr.Mul || op == expr.Div {
			return sqltypes.Float8Type
		}
		return sqltypes.IntervalType
	}
	return other
}

// toText converts an operand of || to text: strings and unknowns
// directly, other types through their output function (Postgres'
// anynonarray || text).
func (b *binder) toText(e expr.Expr, at ast.ExprNode) (expr.Expr, error) {
	t := e.Type()
	switch {
	case t.Kind == sqltypes.Text:
		return e, nil
	case t.Kind == sqltypes.Unknown || t.Kind == sqltypes.Varchar:
		return b.coerce(e, sqltypes.TextType, at, "operand")
	}
	return &expr.Cast{X: e, T: sqltypes.TextType}, nil
}

func (b *binder) bindBetween(x *ast.BetweenExpr, c *exprCtx) (expr.Expr, error) {
	v, err := b.bindExpr(x.Expr, c)
	if err != nil {
		return nil, err
	}
	lo, err := b.bindExpr(x.Left, c)
	if err != nil {
		return nil, err
	}
	hi, err := b.bindExpr(x.Right, c)
	if err != nil {
		return nil, err
	}
	ge, err := b.binary(expr.Ge, v, lo, x, x.Expr, x.Left)
	if err != nil {
		return nil, err
	}
	le, err := b.binary(expr.Le, v, hi, x, x.Expr, x.Right)
	if err != nil {
		return nil, err
	}
	out := expr.AndAll(ge, le)
	if x.Not {
		out = &expr.Unary{Op: expr.Not, X: out, T: sqltypes.BoolType}
	}
	return out, nil
}

func (b *binder) bindIn(x *ast.PatternInExpr, c *exprCtx) (expr.Expr, error) {
	if x.Sel != nil {
		return b.bindInSubquery(x, c) // bind_subquery.go
	}
	v, err := b.bindExpr(x.Expr, c)
	if err != nil {
		return nil, err
	}
	list := make([]expr.Expr, len(x.List))
	t := v.Type()
	for i, item := range x.List {
		if list[i], err = b.bindExpr(item, c); err != nil {
			return nil, err
		}
		ct, ok := commonType(t, list[i].Type())
		if !ok {
			return nil, opError(b, item, expr.Eq, t, list[i].Type())
		}
		t = ct
	}
	if noEquality(t) {
		return nil, opError(b, x, expr.Eq, t, t)
	}
	if v, err = b.coerce(v, t, x.Expr, "IN operand"); err != nil {
		return nil, err
	}
	for i := range list {
		if list[i], err = b.coerce(list[i], t, x.List[i], "IN list item"); err != nil {
			return nil, err
		}
	}
	return &expr.In{X: v, List: list, Not: x.Not}, nil
}

func (b *binder) bindLike(x *ast.PatternLikeOrIlikeExpr, c *exprCtx) (expr.Expr, error) {
	if x.EscapeExplicit && x.Escape != '\\' {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "LIKE with ESCAPE other than backslash is not supported").WithPosition(b.pos(x))
	}
	v, err := b.bindExpr(x.Expr, c)
	if err != nil {
		return nil, err
	}
	p, err := b.bindExpr(x.Pattern, c)
	if err != nil {
		return nil, err
	}
	if v, err = b.coerceString(v, x.Expr, "LIKE"); err != nil {
		return nil, err
	}
	if p, err = b.coerceString(p, x.Pattern, "LIKE"); err != nil {
		return nil, err
	}
	op := map[[2]bool]expr.BinaryOp{{true, false}: expr.Like, {true, true}: expr.NotLike, {false, false}: expr.ILike, {false, true}: expr.NotILike}[[2]bool{x.IsLike, x.Not}]
	return &expr.Binary{Op: op, L: v, R: p, T: sqltypes.BoolType}, nil
}

func (b *binder) coerceString(e expr.Expr, at ast.ExprNode, what string) (expr.Expr, error) {
	if t := e.Type(); t.Kind != sqltypes.Text && t.Kind != sqltypes.Varchar && t.Kind != sqltypes.Unknown {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s ~~ text", t).WithPosition(b.pos(at)).
			WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
	}
	return b.coerce(e, sqltypes.TextType, at, what)
}

func (b *binder) bindCase(x *ast.CaseExpr, c *exprCtx) (expr.Expr, error) {
	out := &expr.Case{}
	var err error
	var operand expr.Expr
	if x.Value != nil {
		if operand, err = b.bindExpr(x.Value, c); err != nil {
			return nil, err
		}
	}
	var results []expr.Expr
	var resultAt []ast.ExprNode
	for _, w := range x.WhenClauses {
		cond, err := b.bindExpr(w.Expr, c)
		if err != nil {
			return nil, err
		}
		if operand != nil {
			if cond, err = b.binary(expr.Eq, operand, cond, w.Expr, x.Value, w.Expr); err != nil {
				return nil, err
			}
		} else if cond, err = b.coerce(cond, sqltypes.BoolType, w.Expr, "argument of CASE/WHEN"); err != nil {
			return nil, err
		}
		res, err := b.bindExpr(w.Result, c)
		if err != nil {
			return nil, err
		}
		out.Whens = append(out.Whens, expr.When{Cond: cond, Result: res})
		results = append(results, res)
		resultAt = append(resultAt, w.Result)
	}
	if x.ElseClause != nil {
		e, err := b.bindExpr(x.ElseClause, c)
		if err != nil {
			return nil, err
		}
		results = append(results, e)
		resultAt = append(resultAt, x.ElseClause)
	}
	t, err := b.unify(results, resultAt, "CASE")
	if err != nil {
		return nil, err
	}
	for i := range out.Whens {
		if out.Whens[i].Result, err = b.coerce(out.Whens[i].Result, t, resultAt[i], "CASE result"); err != nil {
			return nil, err
		}
	}
	if x.ElseClause != nil {
		if out.Else, err = b.coerce(results[len(results)-1], t, x.ElseClause, "CASE result"); err != nil {
			return nil, err
		}
	}
	out.T = t
	return out, nil
}

// unify finds the common type of a set of values (CASE, COALESCE,
// UNION): 42804 "X types a and b cannot be matched" when there is none.
func (b *binder) unify(es []expr.Expr, at []ast.ExprNode, what string) (sqltypes.Type, error) {
	// Unknown-typed inputs take the type of the known ones (all unknown:
	// text), as Postgres resolves UNION/CASE/COALESCE.
	t := sqltypes.UnknownType
	for i, e := range es {
		et := e.Type()
		if et.Kind == sqltypes.Unknown {
			continue
		}
		if t.Kind == sqltypes.Unknown {
			t = et
			continue
		}
		ct, ok := commonType(t, et)
		if !ok {
			return t, errDatatype(b.pos(at[i]), "%s types %s and %s cannot be matched", what, t, et)
		}
		t = ct
	}
	if t.Kind == sqltypes.Unknown {
		t = sqltypes.TextType
	}
	for i, e := range es {
		if _, err := b.coerce(e, t, at[i], what+" result"); err != nil {
			return t, err
		}
	}
	return t, nil
}

func (b *binder) bindCast(x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	info := b.st.Casts[x]
	if info == nil || len(x.Args) == 0 {
		return nil, sqlerr.New(sqlerr.InternalError, "cast marker without its type").WithPosition(b.pos(x))
	}
	if r, ok := x.Args[0].(*ast.FuncCallExpr); ok && r.FnName.O == parser.MarkerRegCast && info.Type.IsString() {
		// 'trades'::regclass::text prints the name (pgcatalog.go).
		e, err := b.bindRegCastAs(r, c, true)
		if err != nil || e.Type() == info.Type {
			return e, err
		}
		return &expr.Cast{X: e, T: info.Type}, nil
	}
	e, err := b.bindExpr(x.Args[0], c)
	if err != nil {
		return nil, err
	}
	t := info.Type
	switch v := e.(type) {
	case *expr.Literal:
		if v.Value == nil {
			return &expr.Literal{T: t}, nil
		}
		if s, ok := literalText(v); ok && foldableCast(v.T, t) {
			if t.Kind == sqltypes.Varchar && t.Length != sqltypes.NoLimit {
				// An explicit cast to varchar(n) truncates (Postgres);
				// only assignment raises 22001.
				s = truncateChars(s, t.Length)
			}
			l, err := decodeLiteral(t, s, b.opts.Types)
			if err == nil && isPlainNumeric(t) && t.Scale == sqltypes.NoLimit {
				l.T = sqltypes.NumericDisplay(numericInputScale(s))
			}
			if err != nil {
				return nil, withPos(err, b.pos(x.Args[0]))
			}
			return l, nil
		}
	case *expr.Param:
		if v.T.Kind == sqltypes.Unknown {
			return b.param(v.N, t), nil
		}
	}
	if isPlainNumeric(t) && t.Scale == sqltypes.NoLimit {
		// ::numeric keeps the operand's display scale (12.50::numeric
		// is 12.50, 5::numeric is 5).
		if d, ok := e.Type().DisplayScale(); ok {
			t = sqltypes.NumericDisplay(d)
		}
	}
	if e.Type() == t {
		return e, nil
	}
	if !explicitCast(e.Type(), t) {
		return nil, sqlerr.New(codeCannotCoerce, "cannot cast type %s to %s", e.Type(), t).WithPosition(b.pos(x))
	}
	return &expr.Cast{X: e, T: t}, nil
}

// foldableCast reports whether a literal of type from converts to to
// exactly through to's input function (so it can be folded at plan
// time): unknown and string literals, anything to a string, and
// widening numeric conversions. Narrowing ones (1.5::int rounds) are
// left to the run-time cast.
func foldableCast(from, to sqltypes.Type) bool {
	switch {
	case from.Kind == sqltypes.Unknown, categoryOf(from) == catString, categoryOf(to) == catString:
		return true
	case categoryOf(from) == catNumeric && categoryOf(to) == catNumeric:
		return implicitCast(from, to)
	case from.Kind == to.Kind:
		return true
	}
	return false
}

// explicitCast reports whether CAST(from AS to) exists.
func explicitCast(from, to sqltypes.Type) bool {
	cf, ct := categoryOf(from), categoryOf(to)
	switch {
	case cf == ct, cf == catString, ct == catString, cf == catUnknown:
		return true
	case cf == catNumeric && ct == catBool && from.Kind == sqltypes.Int4, cf == catBool && to.Kind == sqltypes.Int4:
		return true
	}
	return false
}

// intervalValue returns the interval constant in l.
func intervalValue(l *expr.Literal) (arrow.MonthDayNanoInterval, bool) {
	iv, ok := l.Value.(arrow.MonthDayNanoInterval)
	return iv, ok
}

// columnName is the output name Postgres gives an expression.
func columnName(e expr.Expr) string {
	switch x := e.(type) {
	case *expr.Column:
		if i := strings.LastIndexByte(x.Name, '.'); i >= 0 {
			return x.Name[i+1:]
		}
		return x.Name
	case *expr.Func:
		if x.Fn == functions.ArrayConcat || x.Fn == functions.ArrayCompare {
			return "?column?" // operators
		}
		return x.Name()
	case *expr.Cast:
		if _, ok := x.X.(*expr.Column); ok {
			return columnName(x.X)
		}
	}
	return "?column?"
}
