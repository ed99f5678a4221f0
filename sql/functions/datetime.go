package functions

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// Date and time functions. Fields of a timestamptz are read on the
// session zone's wall clock, of a timestamp on its own (UTC) one; the
// kernels are in datetime_kernels.go.

var (
	tstz     = sqltypes.TimestampTZType
	interval = sqltypes.IntervalType
)

// Now is now() (CURRENT_TIMESTAMP, current.go): the current transaction's start time
// (a statement's own start outside a transaction block), as in Postgres.
var Now = register(&Def{
	Name: "now", MinArgs: 0, MaxArgs: 0,
	Rule: fixed(tstz),
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if len(args) != 0 || t.Kind != sqltypes.TimestampTZ {
			return nil, errTypes
		}
		return func(in Input) (arrow.Array, error) {
			return vec.Const(in.Mem(), t, in.Now().UnixMicro(), in.Rows()), nil
		}, nil
	},
	Examples: []Example{{"now() = current_timestamp", "t"}},
})

// DateTrunc is date_trunc(field, x [, zone]): x (a timestamp, timestamptz
// or interval) truncated to field; a date is truncated as the timestamptz
// of its midnight in the session zone, as Postgres' implicit cast makes
// it. With a zone, x is a timestamptz truncated on that zone's wall
// clock.
var DateTrunc = register(&Def{
	Name: "date_trunc", MinArgs: 2, MaxArgs: 3,
	Rule: func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		var err error
		if args[0], err = b.Coerce(args[0], 0, text); err != nil {
			return nil, sqltypes.UnknownType, err
		}
		t := args[1].Type()
		if len(args) == 3 {
			if !t.IsTemporal() && t.Kind != sqltypes.Unknown || !args[2].Type().IsString() && args[2].Type().Kind != sqltypes.Unknown {
				return nil, t, b.NoMatch(args)
			}
			if args[1], err = b.Coerce(args[1], 1, tstz); err != nil {
				return nil, t, err
			}
			if args[2], err = b.Coerce(args[2], 2, text); err != nil {
				return nil, t, err
			}
			return args, tstz, nil
		}
		switch t.Kind {
		case sqltypes.Unknown, sqltypes.Date:
			if args[1], err = b.Coerce(args[1], 1, tstz); err != nil {
				return nil, t, err
			}
			return args, tstz, nil
		case sqltypes.Timestamp, sqltypes.TimestampTZ, sqltypes.Interval:
			return args, sqltypes.Base(t.Kind), nil
		}
		return nil, t, b.NoMatch(args)
	},
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if len(args) < 2 || !vec.IsStringKind(args[0].Type().Kind) {
			return nil, errTypes
		}
		xt := args[1].Type()
		switch {
		case xt.Kind != sqltypes.Timestamp && xt.Kind != sqltypes.TimestampTZ && xt.Kind != sqltypes.Interval, t.Kind != xt.Kind:
		case len(args) == 2:
			return (&dateTrunc{xt: xt, t: t}).eval, nil
		case xt.Kind == sqltypes.TimestampTZ && vec.IsStringKind(args[2].Type().Kind):
			return (&dateTrunc{xt: xt, t: t, zone: true}).eval, nil
		}
		return nil, errTypes
	},
	Examples: []Example{
		{"date_trunc('hour', TIMESTAMP '2024-01-02 03:04:05')", "2024-01-02 03:00:00"},
		{"date_trunc('month', DATE '2024-03-15')", "2024-03-01 00:00:00+00"},
		{"date_trunc('day', TIMESTAMPTZ '2024-01-02 03:04:05+00', 'Asia/Tokyo')", "2024-01-01 15:00:00+00"},
		{"date_trunc('hour', INTERVAL '1 day 05:06:07')", "1 day 05:00:00"},
	},
})

// DatePart is date_part(field, x): a field of a timestamp, date (read as
// a timestamp) or interval, as double precision.
var DatePart = register(&Def{
	Name: "date_part", Aliases: []string{"datepart"}, MinArgs: 2, MaxArgs: 2,
	Rule: func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		if err := coerceOr(b, args, 0, text); err != nil {
			return nil, f8, err
		}
		t, err := temporalArg(b, args)
		if err != nil {
			return nil, f8, err
		}
		if t.Kind == sqltypes.Date {
			args[1] = &expr.Cast{X: args[1], T: sqltypes.TimestampType}
		}
		return args, f8, nil
	},
	Prepare: prepareDatePart,
	Examples: []Example{
		{"date_part('dow', DATE '2024-01-07')", "0"},
		{"date_part('epoch', TIMESTAMP '1970-01-01 00:00:01.5')", "1.5"},
		{"datepart('year', DATE '2024-06-30')", "2024"},
	},
})

// Extract is EXTRACT(field FROM x), also callable as extract('field', x)
// (Postgres 14+): the field as an exact numeric, scale 6 for second and
// epoch, 3 for milliseconds, else 0.
var Extract = register(&Def{
	Name: "extract", MinArgs: 2, MaxArgs: 2,
	Rule: func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		var err error
		if args[0], err = b.Coerce(args[0], 0, text); err != nil {
			return nil, sqltypes.UnknownType, err
		}
		t, err := temporalArg(b, args)
		if err != nil {
			return nil, t, err
		}
		d := -1
		if l, ok := args[0].(*expr.Literal); ok && l.Value != nil {
			d = extractScale(l.Value.(string), t)
		}
		return args, sqltypes.NumericDisplay(d), nil
	},
	Prepare: prepareDatePart,
	Examples: []Example{
		{"EXTRACT(second FROM TIMESTAMP '2024-01-02 03:04:05.5')", "5.500000"},
		{"extract('year', DATE '2024-06-30')", "2024"},
		{"EXTRACT(epoch FROM INTERVAL '1 day')", "86400.000000"},
	},
})

// temporalArg checks the second argument of date_part and extract: a
// date, timestamp(tz) or interval (an untyped literal is a timestamptz).
func temporalArg(b Binder, args []expr.Expr) (sqltypes.Type, error) {
	t := args[1].Type()
	if t.Kind == sqltypes.Unknown {
		t = tstz
		var err error
		if args[1], err = b.Coerce(args[1], 1, t); err != nil {
			return t, err
		}
	}
	if !t.IsTemporal() && t.Kind != sqltypes.Interval {
		return t, b.NoMatch(args)
	}
	return t, nil
}

// extractScale is the display scale of EXTRACT(unit FROM a value of type
// t) in Postgres 15: second and epoch count microseconds (6; a date's
// epoch is whole seconds), milliseconds 3, julian of a timestamp has a day
// fraction (Postgres prints 20 digits, asofsql stores 16), the rest 0.
func extractScale(unit string, t sqltypes.Type) int {
	switch unitAliases[strings.ToLower(strings.TrimSpace(unit))] {
	case "second":
		return 6
	case "epoch":
		if t.Kind == sqltypes.Date {
			return 0
		}
		return 6
	case "milliseconds":
		return 3
	case "julian":
		if t.Kind == sqltypes.Timestamp || t.Kind == sqltypes.TimestampTZ {
			return sqltypes.DefaultNumericScale
		}
	}
	return 0
}

// prepareDatePart is the kernel of date_part (a double result) and
// extract (numeric).
func prepareDatePart(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
	if len(args) != 2 || !vec.IsStringKind(args[0].Type().Kind) || t.Kind != sqltypes.Float8 && t.Kind != sqltypes.Numeric {
		return nil, errTypes
	}
	switch xt := args[1].Type(); xt.Kind {
	case sqltypes.Timestamp, sqltypes.TimestampTZ, sqltypes.Date, sqltypes.Interval:
		return (&datePart{xt: xt, t: t}).eval, nil
	}
	return nil, errTypes
}

// ToTimestamp is to_timestamp(seconds since 1970): a timestamptz,
// rounded to microseconds; NaN is 22008. to_timestamp(text, template)
// reads the text by a to_char template (totimestamp.go).
var ToTimestamp = register(&Def{
	Name: "to_timestamp", MinArgs: 1, MaxArgs: 2,
	Rule: func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		if len(args) == 2 {
			return fixed(tstz, text, text)(b, args)
		}
		return fixed(tstz, f8)(b, args)
	},
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if len(args) == 2 {
			return prepareToTimestampText(args, t)
		}
		return prepareIf(func([]expr.Expr, sqltypes.Type) Kernel { return toTimestamp },
			sqltypes.TimestampTZ, sqltypes.Float8)(args, t)
	},
	Examples: []Example{{"to_timestamp(1.5)", "1970-01-01 00:00:01.5+00"},
		{"to_timestamp('05 Mar 2024 02:07 PM', 'DD Mon YYYY HH:MI AM')", "2024-03-05 14:07:00+00"}},
})

// TimeBucket is TimescaleDB's time_bucket(width, x [, origin | offset]):
// the start of the width-sized bucket holding x (a date, timestamp or
// timestamptz), the third argument an interval (offset) or a value of x's
// type (origin; an untyped one is read as the origin, as TimescaleDB
// does).
var TimeBucket = register(&Def{
	Name: "time_bucket", MinArgs: 2, MaxArgs: 3,
	Rule: func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		var err error
		if args[0], err = b.Coerce(args[0], 0, interval); err != nil {
			return nil, sqltypes.UnknownType, err
		}
		t := args[1].Type()
		switch t.Kind {
		case sqltypes.Date, sqltypes.Timestamp, sqltypes.TimestampTZ:
		default:
			return nil, t, b.NoMatch(args)
		}
		t = sqltypes.Base(t.Kind)
		if len(args) == 3 {
			switch third := args[2].Type(); {
			case third.Kind == sqltypes.Interval:
			case third.Kind == sqltypes.Unknown:
				if args[2], err = b.Coerce(args[2], 2, t); err != nil {
					return nil, t, err
				}
			case third.IsTemporal():
				if err := coerceOr(b, args, 2, t); err != nil {
					return nil, t, err
				}
			default:
				return nil, t, b.NoMatch(args)
			}
		}
		return args, t, nil
	},
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if len(args) < 2 || args[0].Type().Kind != sqltypes.Interval {
			return nil, errTypes
		}
		xk := args[1].Type().Kind
		if xk != sqltypes.Timestamp && xk != sqltypes.TimestampTZ && xk != sqltypes.Date || t.Kind != xk {
			return nil, errTypes
		}
		n := &timeBucket{t: t}
		if len(args) == 3 {
			k := args[2].Type().Kind
			if k != sqltypes.Interval && k != xk {
				return nil, errTypes
			}
			n.extra, n.offset = true, k == sqltypes.Interval
		}
		return n.eval, nil
	},
	Examples: []Example{
		{"time_bucket(INTERVAL '15 minutes', TIMESTAMP '2024-01-02 03:44:00')", "2024-01-02 03:30:00"},
		{"time_bucket(INTERVAL '1 month', DATE '2024-05-20')", "2024-05-01"},
		{"time_bucket(INTERVAL '1 day', TIMESTAMP '2024-01-02 03:00', INTERVAL '2 hours')", "2024-01-02 02:00:00"},
	},
})
