package eval

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// truncInterval is date_trunc(unit, interval): Postgres' interval_trunc
// splits the interval into years, months, days, hours, minutes, seconds
// and microseconds (each truncated toward zero) and zeroes the fields
// below unit.
func truncInterval(v arrow.MonthDayNanoInterval, raw, unit string) (arrow.MonthDayNanoInterval, error) {
	year, mon := int64(v.Months)/12, int64(v.Months)%12
	us := v.Nanoseconds / 1000
	hour := us / (3600 * vec.UsPerSec)
	us -= hour * 3600 * vec.UsPerSec
	min := us / (60 * vec.UsPerSec)
	us -= min * 60 * vec.UsPerSec
	sec := us / vec.UsPerSec
	fsec := us - sec*vec.UsPerSec
	day := int64(v.Days)
	switch unit {
	case "millennium", "century", "decade", "year", "quarter", "month", "day", "hour", "minute", "second", "milliseconds", "microseconds":
	case "week":
		return v, sqlerr.New(sqlerr.FeatureNotSupported, "unit \"%s\" not supported for type interval", raw).
			WithDetail("Months usually have fractional weeks.")
	case "epoch":
		return v, sqlerr.New(sqlerr.InvalidParameterValue, "unit \"%s\" not recognized for type interval", raw)
	default:
		return v, errUnitUnsupported(raw, sqltypes.IntervalType)
	}
	// Each unit zeroes its own smaller fields and falls through to the
	// next smaller unit, as in Postgres.
	order := []string{"millennium", "century", "decade", "year", "quarter", "month", "day", "hour", "minute", "second", "milliseconds"}
	start := len(order)
	for i, u := range order {
		if u == unit {
			start = i
		}
	}
	for _, u := range order[start:] {
		switch u {
		case "millennium":
			year = year / 1000 * 1000
		case "century":
			year = year / 100 * 100
		case "decade":
			year = year / 10 * 10
		case "year":
			mon = 0
		case "quarter":
			mon = 3 * (mon / 3)
		case "month":
			day = 0
		case "day":
			hour = 0
		case "hour":
			min = 0
		case "minute":
			sec = 0
		case "second":
			fsec = 0
		case "milliseconds":
			fsec = fsec / 1000 * 1000
		}
	}
	return arrow.MonthDayNanoInterval{
		Months:      int32(year*12 + mon),
		Days:        int32(day),
		Nanoseconds: (((hour*60+min)*60+sec)*vec.UsPerSec + fsec) * 1000,
	}, nil
}

// evalInterval is date_trunc on an interval column.
func (n *dateTruncNode) evalInterval(c *call, ua, xa arrow.Array, valid []bool) (arrow.Array, error) {
	us := ua.(*array.String)
	xs := vec.Values[arrow.MonthDayNanoInterval](xa)
	bld := array.NewMonthDayNanoIntervalBuilder(c.mem)
	defer bld.Release()
	lastRaw, unit := "", ""
	for i := range xs {
		if !vec.Valid(valid, i) {
			bld.AppendNull()
			continue
		}
		raw := us.Value(i)
		if unit == "" || raw != lastRaw {
			u, err := parseUnit(raw, sqltypes.IntervalType)
			if err != nil {
				return nil, err
			}
			lastRaw, unit = raw, u
		}
		v, err := truncInterval(xs[i], raw, unit)
		if err != nil {
			return nil, err
		}
		bld.Append(v)
	}
	return bld.NewArray(), nil
}
