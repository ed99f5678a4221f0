package planner

import (
	"strings"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Date/time functions whose typing differs from the generic helpers:
// EXTRACT (numeric, Postgres 15), date_trunc on a date (timestamptz, as
// Postgres' implicit date -> timestamptz makes it) and time_bucket with an
// origin or offset (TimescaleDB).

// extractSig is extract(field, x): EXTRACT(field FROM x) after the
// parser, or the function Postgres 14+ also has. The result is NUMERIC
// with the field's display scale (second and epoch 6, milliseconds 3, the
// rest 0) when the field is a constant.
var extractSig = funcSig{min: 2, max: 2, typ: func(b *binder, args []expr.Expr, at []ast.ExprNode, n ast.ExprNode) ([]expr.Expr, sqltypes.Type, error) {
	var err error
	if args[0], err = b.coerce(args[0], sqltypes.TextType, at[0], "argument"); err != nil {
		return nil, sqltypes.UnknownType, err
	}
	t := args[1].Type()
	if t.Kind == sqltypes.Unknown {
		t = sqltypes.TimestampTZType
		if args[1], err = b.coerce(args[1], t, at[1], "argument"); err != nil {
			return nil, t, err
		}
	}
	if categoryOf(t) != catDateTime && t.Kind != sqltypes.Interval {
		return nil, t, funcError(b, n, args)
	}
	d := -1
	if l, ok := args[0].(*expr.Literal); ok && l.Value != nil {
		d = extractScale(l.Value.(string), t)
	}
	return args, sqltypes.NumericDisplay(d), nil
}}

// extractScale is the display scale of EXTRACT(unit FROM a value of type
// t) in Postgres 15: second and epoch count microseconds (6; a date's
// epoch is whole seconds), milliseconds 3, julian of a timestamp has a day
// fraction (Postgres prints 20 digits, asofsql stores 16), the rest 0.
func extractScale(unit string, t sqltypes.Type) int {
	switch strings.ToLower(strings.TrimSpace(unit)) {
	case "second", "seconds", "s", "sec", "secs":
		return 6
	case "epoch":
		if t.Kind == sqltypes.Date {
			return 0
		}
		return 6
	case "millisecond", "milliseconds", "ms", "msec", "msecs", "mseconds":
		return 3
	case "julian", "j":
		if t.Kind == sqltypes.Timestamp || t.Kind == sqltypes.TimestampTZ {
			return sqltypes.DefaultNumericScale
		}
	}
	return 0
}

// dateTruncSig is date_trunc(field, x [, zone]): the type of x for
// timestamps and intervals; a date becomes timestamptz (midnight in the session zone) as
// in Postgres. With a zone x is a timestamptz truncated on that zone's
// wall clock.
var dateTruncSig = funcSig{min: 2, max: 3, typ: func(b *binder, args []expr.Expr, at []ast.ExprNode, n ast.ExprNode) ([]expr.Expr, sqltypes.Type, error) {
	var err error
	if args[0], err = b.coerce(args[0], sqltypes.TextType, at[0], "argument"); err != nil {
		return nil, sqltypes.UnknownType, err
	}
	t := args[1].Type()
	if len(args) == 3 {
		if categoryOf(t) != catDateTime && t.Kind != sqltypes.Unknown || categoryOf(args[2].Type()) != catString && args[2].Type().Kind != sqltypes.Unknown {
			return nil, t, funcError(b, n, args)
		}
		if args[1], err = b.coerce(args[1], sqltypes.TimestampTZType, at[1], "argument"); err != nil {
			return nil, t, err
		}
		if args[2], err = b.coerce(args[2], sqltypes.TextType, at[2], "argument"); err != nil {
			return nil, t, err
		}
		return args, sqltypes.TimestampTZType, nil
	}
	switch t.Kind {
	case sqltypes.Unknown, sqltypes.Date:
		if args[1], err = b.coerce(args[1], sqltypes.TimestampTZType, at[1], "argument"); err != nil {
			return nil, t, err
		}
		return args, sqltypes.TimestampTZType, nil
	case sqltypes.Timestamp, sqltypes.TimestampTZ, sqltypes.Interval:
		return args, baseType(t.Kind), nil
	}
	return nil, t, funcError(b, n, args)
}}

// timeBucketSig is TimescaleDB's time_bucket(width, x [, origin | offset]):
// x a date, timestamp or timestamptz; the third argument an interval
// (offset) or a value of x's type (origin).
var timeBucketSig = funcSig{min: 2, max: 3, typ: func(b *binder, args []expr.Expr, at []ast.ExprNode, n ast.ExprNode) ([]expr.Expr, sqltypes.Type, error) {
	var err error
	if args[0], err = b.coerce(args[0], sqltypes.IntervalType, at[0], "argument"); err != nil {
		return nil, sqltypes.UnknownType, err
	}
	t := args[1].Type()
	switch t.Kind {
	case sqltypes.Date, sqltypes.Timestamp, sqltypes.TimestampTZ:
	default:
		return nil, t, funcError(b, n, args)
	}
	t = baseType(t.Kind)
	if len(args) == 3 {
		switch third := args[2].Type(); {
		case third.Kind == sqltypes.Interval:
		case third.Kind == sqltypes.Unknown:
			// TimescaleDB resolves an untyped third argument as the origin.
			if args[2], err = b.coerce(args[2], t, at[2], "argument"); err != nil {
				return nil, t, err
			}
		case categoryOf(third) == catDateTime:
			if args[2], err = b.coerce(args[2], t, at[2], "argument"); err != nil {
				return nil, t, funcError(b, n, args)
			}
		default:
			return nil, t, funcError(b, n, args)
		}
	}
	return args, t, nil
}}
