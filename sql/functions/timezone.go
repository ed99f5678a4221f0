package functions

import (
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// TimeZone is timezone(zone, x), which x AT TIME ZONE zone also calls: a
// timestamptz becomes the timestamp of its wall clock in zone, a
// timestamp (a wall clock in zone) the timestamptz of that instant, read
// as Postgres reads it (a time skipped by a daylight-saving change with
// the offset before it, a repeated one with the offset after it). A date
// or an untyped literal is taken as a timestamptz, as Postgres' overload
// resolution takes it. The zone is a name as SET TimeZone takes it
// (22023 "time zone ... not recognized" otherwise) or an interval of
// hours, minutes and seconds east of UTC.
var TimeZone = register(&Def{
	Name: "timezone", MinArgs: 2, MaxArgs: 2,
	Rule: func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		var err error
		if args[0].Type().Kind != sqltypes.Interval {
			if !args[0].Type().IsString() && args[0].Type().Kind != sqltypes.Unknown {
				return nil, sqltypes.UnknownType, b.NoMatch(args)
			}
			if args[0], err = b.Coerce(args[0], 0, text); err != nil {
				return nil, sqltypes.UnknownType, err
			}
		}
		switch args[1].Type().Kind {
		case sqltypes.Timestamp:
			return args, tstz, nil
		case sqltypes.TimestampTZ:
			return args, sqltypes.TimestampType, nil
		case sqltypes.Date, sqltypes.Unknown:
			if args[1], err = b.Coerce(args[1], 1, tstz); err != nil {
				return nil, sqltypes.UnknownType, err
			}
			return args, sqltypes.TimestampType, nil
		}
		return nil, sqltypes.UnknownType, b.NoMatch(args)
	},
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if len(args) != 2 || !(t.Kind == sqltypes.Timestamp && args[1].Type().Kind == sqltypes.TimestampTZ ||
			t.Kind == sqltypes.TimestampTZ && args[1].Type().Kind == sqltypes.Timestamp) {
			return nil, errTypes
		}
		toWall := t.Kind == sqltypes.Timestamp
		byInterval := args[0].Type().Kind == sqltypes.Interval
		return func(in Input) (arrow.Array, error) {
			arrs, err := argsAll(in, 2)
			if err != nil {
				return nil, err
			}
			defer vec.Release(arrs)
			za, xa := arrs[0], arrs[1]
			rows := xa.Len()
			valid := vec.Validity(rows, za, xa)
			xs := vec.Values[int64](xa)
			buf, out := vec.NewFixed[int64](in.Mem(), rows)
			var zones *array.String
			var ivs []arrow.MonthDayNanoInterval
			if byInterval {
				ivs = vec.Values[arrow.MonthDayNanoInterval](za)
			} else {
				zones = za.(*array.String)
			}
			var loc *time.Location
			lastZone, zoneSet := "", false
			for i := range out {
				out[i] = 0
				if !vec.Valid(valid, i) {
					continue
				}
				if byInterval {
					iv := ivs[i]
					if iv.Months != 0 || iv.Days != 0 {
						buf.Release()
						return nil, sqlerr.New(sqlerr.InvalidParameterValue, "interval time zone \"%s\" must not include months or days", sqltypes.IntervalValue{Months: iv.Months, Days: iv.Days, Microseconds: iv.Nanoseconds / 1000}.String())
					}
					loc = time.FixedZone("", int(iv.Nanoseconds/1e9))
				} else if z := zones.Value(i); !zoneSet || z != lastZone {
					l, err := sqltypes.ParseTimeZone(z)
					if err != nil {
						buf.Release()
						return nil, sqlerr.New(sqlerr.InvalidParameterValue, "time zone \"%s\" not recognized", z)
					}
					loc, lastZone, zoneSet = l, z, true
				}
				x := xs[i]
				if vec.IsInfTimestamp(x) {
					out[i] = x
					continue
				}
				if toWall {
					_, off := time.UnixMicro(x).In(loc).Zone()
					out[i] = x + int64(off)*1_000_000
					continue
				}
				us, ok := sqltypes.LocalToUTC(x, loc)
				if !ok {
					buf.Release()
					return nil, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
				}
				out[i] = us
			}
			return vec.FinishFixed(in.Mem(), t.Arrow(), rows, buf, valid), nil
		}, nil
	},
	Examples: []Example{
		{"timezone('America/New_York', TIMESTAMPTZ '2024-07-01 12:00+00')", "2024-07-01 08:00:00"},
		{"timezone('Asia/Kolkata', TIMESTAMP '2024-01-01 05:30')::text", "2024-01-01 00:00:00+00"},
		{"timezone(INTERVAL '-08:00', TIMESTAMPTZ '2024-01-01 00:00+00')", "2023-12-31 16:00:00"},
	},
})
