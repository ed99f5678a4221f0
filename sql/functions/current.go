package functions

import (
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// The SQL-standard current-time keywords. Like now(), each is the current
// transaction's start time (a statement's own start outside a transaction
// block), read on the session zone's wall clock where the type has no
// zone. CURRENT_TIME and LOCALTIME need the time type, which asofsql does
// not have.

// CurrentDate is CURRENT_DATE: today's date in the session time zone.
var CurrentDate = register(&Def{
	Name: "current_date", MinArgs: 0, MaxArgs: 0,
	Rule: fixed(sqltypes.DateType),
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if len(args) != 0 || t.Kind != sqltypes.Date {
			return nil, errTypes
		}
		return func(in Input) (arrow.Array, error) {
			y, m, d := in.Now().In(in.Location()).Date()
			days := int32(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
			return vec.Const(in.Mem(), t, days, in.Rows()), nil
		}, nil
	},
	Examples: []Example{{"current_date = now()::date", "t"}},
})

// CurrentTimestamp is CURRENT_TIMESTAMP [(p)]: now(), rounded to p
// fractional digits of a second when p is given.
var CurrentTimestamp = register(&Def{
	Name: "current_timestamp", MinArgs: 0, MaxArgs: 1,
	Rule:    precisionRule(sqltypes.TimestampTZType),
	Prepare: prepareCurrent,
	Examples: []Example{{"date_trunc('second', current_timestamp(0)) = current_timestamp(0)", "t"},
		{"current_timestamp(6) = now()", "t"}},
})

// LocalTimestamp is LOCALTIMESTAMP [(p)]: the session zone's wall clock
// at now(), as a timestamp without time zone.
var LocalTimestamp = register(&Def{
	Name: "localtimestamp", MinArgs: 0, MaxArgs: 1,
	Rule:    precisionRule(sqltypes.TimestampType),
	Prepare: prepareCurrent,
	Examples: []Example{{"localtimestamp = now()::timestamp", "t"},
		{"date_trunc('second', localtimestamp(0)) = localtimestamp(0)", "t"}},
})

// precisionRule types CURRENT_TIMESTAMP(p) and LOCALTIMESTAMP(p): p must
// be an integer constant, as in Postgres' grammar; above 6 it means 6
// (Postgres warns and reduces it). The precision is the result type's.
func precisionRule(res sqltypes.Type) Rule {
	return func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		if len(args) == 0 {
			return args, res, nil
		}
		lit, ok := args[0].(*expr.Literal)
		var p int64
		switch {
		case !ok:
		case lit.T.IsInteger():
			switch v := lit.Value.(type) {
			case int64:
				p = v
			case int32:
				p = int64(v)
			case int16:
				p = int64(v)
			default:
				ok = false
			}
		default:
			ok = false
		}
		if !ok {
			return nil, res, b.Errorf(sqlerr.SyntaxError, "the precision of %s must be an integer constant", res)
		}
		if p < 0 {
			return nil, res, b.Errorf(sqlerr.InvalidParameterValue, "%s(%d) precision must not be negative", res, p)
		}
		t := res // res is shared by every call of the rule
		t.Precision = int(min(p, 6))
		return args, t, nil // the constant stays: it tells the calls apart
	}
}

func prepareCurrent(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
	if len(args) > 1 || t.Kind != sqltypes.TimestampTZ && t.Kind != sqltypes.Timestamp {
		return nil, errTypes
	}
	return func(in Input) (arrow.Array, error) {
		now := in.Now()
		us := now.UnixMicro()
		if t.Kind == sqltypes.Timestamp {
			_, off := now.In(in.Location()).Zone()
			us += int64(off) * 1_000_000
		}
		if p := t.Precision; p >= 0 && p < 6 {
			us = roundMicros(us, p)
		}
		return vec.Const(in.Mem(), t, us, in.Rows()), nil
	}, nil
}

// roundMicros rounds us to p fractional digits, half away from zero, as
// Postgres' AdjustTimestampForTypmod does.
func roundMicros(us int64, p int) int64 {
	scale := int64(1)
	for range 6 - p {
		scale *= 10
	}
	if us >= 0 {
		return (us + scale/2) / scale * scale
	}
	return -((-us + scale/2) / scale * scale)
}
