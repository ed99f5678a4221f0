package functions

import (
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
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

// equalityTypes says whether values of type t have = (json and void do not,
// nor arrays of them): nullif and greatest/least refuse them while planning,
// as PostgreSQL does.
func equalityTypes(t sqltypes.Type) bool {
	switch t.Kind {
	case sqltypes.JSON, sqltypes.Void:
		return false
	case sqltypes.Array:
		return equalityTypes(t.ElemType())
	}
	return true
}

// commonCompared is common for nullif: its arguments must have =.
func commonCompared(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
	args, t, err := common(b, args)
	if err == nil && !equalityTypes(t) {
		err = b.Errorf(sqlerr.UndefinedFunction, "operator does not exist: %s = %s", t, t).
			WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
	}
	return args, t, err
}

// commonOrdered is common for greatest and least: their arguments must
// have an order (PostgreSQL's error has no position).
func commonOrdered(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
	args, t, err := common(b, args)
	if err == nil && !equalityTypes(t) {
		err = sqlerr.New(sqlerr.UndefinedFunction, "could not identify a comparison function for type %s", t)
	}
	return args, t, err
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
