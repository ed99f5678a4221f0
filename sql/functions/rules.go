package functions

import (
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Type rules shared by several functions. A rule sees the arguments as
// bound (untyped literals still Unknown) and answers Postgres' errors: an
// argument no overload takes is 42883 "function f(...) does not exist"
// (NoMatch), an untyped literal that does not read as the parameter type
// keeps its input error (22P02 and the like).

// fixed is the rule of a function with one signature: argument i is
// coerced to params[i] (the last parameter repeats; an Unknown parameter
// takes any type), and the result is res (Unknown: the first argument's
// type).
func fixed(res sqltypes.Type, params ...sqltypes.Type) Rule {
	return func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		for i := range args {
			p := params[min(i, len(params)-1)]
			if p.Kind == sqltypes.Unknown {
				continue
			}
			a, err := b.Coerce(args[i], i, p)
			if err != nil {
				if args[i].Type().Kind == sqltypes.Unknown {
					return nil, res, err // an untyped literal that does not read as p
				}
				return nil, res, b.NoMatch(args)
			}
			args[i] = a
		}
		if res.Kind == sqltypes.Unknown {
			return args, args[0].Type(), nil
		}
		return args, res, nil
	}
}

// common is the rule of coalesce, nullif, greatest and least: any number
// of arguments of one common type (Binder.Unify), which is the result.
func common(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
	t, err := b.Unify(args)
	if err != nil {
		return nil, t, err
	}
	for i := range args {
		if args[i], err = b.Coerce(args[i], i, t); err != nil {
			return nil, t, err
		}
	}
	return args, t, nil
}

// coerceOr coerces args[i] to t, answering NoMatch (with the arguments as
// they were) when it does not convert.
func coerceOr(b Binder, args []expr.Expr, i int, t sqltypes.Type) error {
	a, err := b.Coerce(args[i], i, t)
	if err != nil {
		return b.NoMatch(args)
	}
	args[i] = a
	return nil
}

// isFloat reports whether t is real or double precision.
func isFloat(t sqltypes.Type) bool { return t.Kind == sqltypes.Float4 || t.Kind == sqltypes.Float8 }

// isPlainNumeric reports whether t is an unconstrained NUMERIC (with or
// without a display scale): all of them are stored alike.
func isPlainNumeric(t sqltypes.Type) bool {
	return t.Kind == sqltypes.Numeric && t.Precision == sqltypes.NoLimit
}
