package functions

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// unitAliases maps Postgres' spellings of date/time units (units.c's
// deltatktbl) to a canonical name.
var unitAliases = map[string]string{
	"microsecond": "microseconds", "microseconds": "microseconds", "us": "microseconds", "usec": "microseconds", "usecs": "microseconds", "useconds": "microseconds",
	"millisecond": "milliseconds", "milliseconds": "milliseconds", "ms": "milliseconds", "msec": "milliseconds", "msecs": "milliseconds", "mseconds": "milliseconds",
	"second": "second", "seconds": "second", "s": "second", "sec": "second", "secs": "second",
	"minute": "minute", "minutes": "minute", "m": "minute", "min": "minute", "mins": "minute",
	"hour": "hour", "hours": "hour", "h": "hour", "hr": "hour", "hrs": "hour",
	"day": "day", "days": "day", "d": "day",
	"week": "week", "weeks": "week", "w": "week",
	"month": "month", "months": "month", "mon": "month", "mons": "month",
	"quarter": "quarter", "qtr": "quarter",
	"year": "year", "years": "year", "y": "year", "yr": "year", "yrs": "year",
	"decade": "decade", "decades": "decade", "dec": "decade", "decs": "decade",
	"century": "century", "centuries": "century", "c": "century", "cent": "century",
	"millennium": "millennium", "millennia": "millennium", "mil": "millennium", "mils": "millennium",
	"epoch": "epoch", "dow": "dow", "isodow": "isodow", "doy": "doy", "isoyear": "isoyear",
	"timezone": "timezone", "timezone_h": "timezone_hour", "timezone_hour": "timezone_hour",
	"timezone_m": "timezone_minute", "timezone_minute": "timezone_minute", "julian": "julian", "j": "julian",
}

func typeWords(t sqltypes.Type) string {
	switch t.Kind {
	case sqltypes.Timestamp:
		return "timestamp without time zone"
	case sqltypes.TimestampTZ:
		return "timestamp with time zone"
	}
	return t.String()
}

func parseUnit(s string, t sqltypes.Type) (string, error) {
	u, found := unitAliases[strings.ToLower(strings.TrimSpace(s))]
	if !found {
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "unit \"%s\" not recognized for type %s", s, typeWords(t))
	}
	return u, nil
}

// unitCache parses a unit argument row by row, reusing the last answer
// while the text repeats (a constant unit is parsed once per batch).
type unitCache struct {
	parse     func(raw string) (string, error)
	raw, unit string
}

func (c *unitCache) at(raw string) (string, error) {
	if c.unit == "" || raw != c.raw {
		u, err := c.parse(raw)
		if err != nil {
			return "", err
		}
		c.raw, c.unit = raw, u
	}
	return c.unit, nil
}

// unitsOf is a unitCache for units of a value of type t.
func unitsOf(t sqltypes.Type) *unitCache {
	return &unitCache{parse: func(raw string) (string, error) { return parseUnit(raw, t) }}
}

func errUnitUnsupported(u string, t sqltypes.Type) error {
	return sqlerr.New(sqlerr.FeatureNotSupported, "unit \"%s\" not supported for type %s", u, typeWords(t))
}

// tsLoc is the zone whose wall clock a timestamp's fields are read in: the
// session zone for timestamptz, UTC (the stored wall clock) otherwise.
func tsLoc(in Input, t sqltypes.Type) *time.Location {
	if t.Kind == sqltypes.TimestampTZ {
		return in.Location()
	}
	return time.UTC
}

// dateTrunc is date_trunc's kernel for an argument of type xt.
type dateTrunc struct {
	xt, t sqltypes.Type
	zone  bool // a third argument: the zone whose wall clock truncates
}

func (n *dateTrunc) eval(in Input) (arrow.Array, error) {
	arrs, err := argsAll(in, 2)
	if err != nil {
		return nil, err
	}
	defer vec.Release(arrs)
	ua, xa := arrs[0], arrs[1]
	rows := xa.Len()
	valid := vec.Validity(rows, ua, xa)
	if n.t.Kind == sqltypes.Interval {
		return n.evalInterval(in, ua, xa, valid)
	}
	us := ua.(*array.String)
	xs := vec.Values[int64](xa)
	loc := tsLoc(in, n.t)
	var zones *array.String
	if n.zone {
		za, err := in.Arg(2)
		if err != nil {
			return nil, err
		}
		defer za.Release()
		valid = vec.Validity(rows, ua, xa, za)
		zones = za.(*array.String)
	}
	buf, out := vec.NewFixed[int64](in.Mem(), rows)
	units := &unitCache{parse: func(raw string) (string, error) {
		u, err := parseUnit(raw, n.xt)
		if err == nil && u == "epoch" {
			// a "reserved" word to Postgres, not a unit: not recognized
			err = sqlerr.New(sqlerr.InvalidParameterValue, "unit \"%s\" not recognized for type %s", raw, typeWords(n.xt))
		} else if err == nil && (u == "dow" || u == "isodow" || u == "doy" || u == "isoyear" ||
			u == "timezone" || u == "timezone_hour" || u == "timezone_minute" || u == "julian") {
			err = errUnitUnsupported(raw, n.xt)
		}
		return u, err
	}}
	lastZone, zoneSet := "", false
	for i := 0; i < rows; i++ {
		out[i] = 0
		if !vec.Valid(valid, i) {
			continue
		}
		if zones != nil && (!zoneSet || zones.Value(i) != lastZone) {
			z := zones.Value(i)
			l, err := sqltypes.ParseTimeZone(z)
			if err != nil {
				buf.Release()
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "time zone \"%s\" not recognized", z)
			}
			loc, lastZone, zoneSet = l, z, true
		}
		unit, err := units.at(us.Value(i))
		if err != nil {
			buf.Release()
			return nil, err
		}
		if vec.IsInfTimestamp(xs[i]) {
			out[i] = xs[i]
			continue
		}
		out[i] = truncTS(xs[i], unit, loc)
	}
	return vec.FinishFixed(in.Mem(), n.t.Arrow(), rows, buf, valid), nil
}

func truncTS(us int64, unit string, loc *time.Location) int64 {
	switch unit {
	case "microseconds":
		return us
	case "milliseconds":
		return vec.FloorDiv(us, 1000) * 1000
	case "second":
		return vec.FloorDiv(us, vec.UsPerSec) * vec.UsPerSec
	}
	t := time.UnixMicro(us).In(loc)
	y, m, d := t.Date()
	hh, mi, _ := t.Clock()
	switch unit {
	case "minute":
		t = time.Date(y, m, d, hh, mi, 0, 0, loc)
	case "hour":
		t = time.Date(y, m, d, hh, 0, 0, 0, loc)
	case "day":
		t = time.Date(y, m, d, 0, 0, 0, 0, loc)
	case "week":
		wd := (int(t.Weekday()) + 6) % 7 // days since Monday
		t = time.Date(y, m, d-wd, 0, 0, 0, 0, loc)
	case "month":
		t = time.Date(y, m, 1, 0, 0, 0, 0, loc)
	case "quarter":
		t = time.Date(y, ((m-1)/3)*3+1, 1, 0, 0, 0, 0, loc)
	case "year":
		t = time.Date(y, 1, 1, 0, 0, 0, 0, loc)
	case "decade":
		t = time.Date(int(vec.FloorDiv(int64(y), 10)*10), 1, 1, 0, 0, 0, 0, loc)
	case "century":
		if y > 0 {
			y = ((y+99)/100)*100 - 99
		} else {
			y = -((99-(y-1))/100)*100 + 1
		}
		t = time.Date(y, 1, 1, 0, 0, 0, 0, loc)
	case "millennium":
		if y > 0 {
			y = ((y+999)/1000)*1000 - 999
		} else {
			y = -((999-(y-1))/1000)*1000 + 1
		}
		t = time.Date(y, 1, 1, 0, 0, 0, 0, loc)
	}
	return t.UnixMicro()
}

// datePart is the kernel of date_part and extract. date_part computes in
// float64 (its double precision); extract, typed NUMERIC by its rule, is
// exact (extractNum).
type datePart struct {
	xt, t sqltypes.Type
}

func (n *datePart) eval(in Input) (arrow.Array, error) {
	arrs, err := argsAll(in, 2)
	if err != nil {
		return nil, err
	}
	defer vec.Release(arrs)
	ua, xa := arrs[0], arrs[1]
	rows := xa.Len()
	valid := vec.Validity(rows, ua, xa)
	if n.t.Kind == sqltypes.Numeric {
		return n.extractNum(in, ua, xa, valid)
	}
	us := ua.(*array.String)
	xt := n.xt
	loc := tsLoc(in, xt)
	out := make([]float64, rows)
	units := unitsOf(xt)
	for i := 0; i < rows; i++ {
		if !vec.Valid(valid, i) {
			continue
		}
		unit, err := units.at(us.Value(i))
		if err != nil {
			return nil, err
		}
		var v float64
		var isNull bool
		switch xt.Kind {
		case sqltypes.Interval:
			v, err = intervalPart(vec.Values[arrow.MonthDayNanoInterval](xa)[i], unit, xt)
		case sqltypes.Date:
			v, isNull, err = tsPart(dayUs(vec.Values[int32](xa)[i]), unit, time.UTC, xt)
		default:
			v, isNull, err = tsPart(vec.Values[int64](xa)[i], unit, loc, xt)
		}
		if err != nil {
			return nil, err
		}
		if isNull {
			if valid == nil {
				valid = make([]bool, rows)
				for k := range valid {
					valid[k] = true
				}
			}
			valid[i] = false
			continue
		}
		out[i] = v
	}
	return vec.WriteFloats(in.Mem(), n.t, out, valid)
}

func tsPart(us int64, unit string, loc *time.Location, t sqltypes.Type) (float64, bool, error) {
	if vec.IsInfTimestamp(us) {
		sign := 1.0
		if us == sqltypes.TimestampNegInfinity {
			sign = -1
		}
		switch unit {
		case "epoch", "year", "decade", "century", "millennium", "isoyear":
			return math.Inf(int(sign)), false, nil
		}
		return 0, true, nil
	}
	tm := time.UnixMicro(us).In(loc)
	y, m, d := tm.Date()
	hh, mi, ss := tm.Clock()
	frac := float64(tm.Nanosecond()/1000) / 1e6
	switch unit {
	case "microseconds":
		return float64(ss)*1e6 + float64(tm.Nanosecond()/1000), false, nil
	case "milliseconds":
		return float64(ss)*1e3 + float64(tm.Nanosecond()/1000)/1e3, false, nil
	case "second":
		return float64(ss) + frac, false, nil
	case "minute":
		return float64(mi), false, nil
	case "hour":
		return float64(hh), false, nil
	case "day":
		return float64(d), false, nil
	case "month":
		return float64(m), false, nil
	case "quarter":
		return float64((int(m)-1)/3 + 1), false, nil
	case "year":
		return float64(y), false, nil
	case "decade":
		return float64(vec.FloorDiv(int64(y), 10)), false, nil
	case "century":
		if y > 0 {
			return float64((y + 99) / 100), false, nil
		}
		return float64(-((99 - (y - 1)) / 100)), false, nil
	case "millennium":
		if y > 0 {
			return float64((y + 999) / 1000), false, nil
		}
		return float64(-((999 - (y - 1)) / 1000)), false, nil
	case "dow":
		return float64(tm.Weekday()), false, nil
	case "isodow":
		wd := int(tm.Weekday())
		if wd == 0 {
			wd = 7
		}
		return float64(wd), false, nil
	case "doy":
		return float64(tm.YearDay()), false, nil
	case "week":
		_, w := tm.ISOWeek()
		return float64(w), false, nil
	case "isoyear":
		iy, _ := tm.ISOWeek()
		return float64(iy), false, nil
	case "epoch":
		return float64(us) / 1e6, false, nil
	case "julian":
		day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix()/86400 + julianUnixDay
		return float64(day) + (float64(hh*3600+mi*60+ss)+frac)/86400, false, nil
	case "timezone", "timezone_hour", "timezone_minute":
		if t.Kind == sqltypes.TimestampTZ {
			p, err := tsPartNum(us, unit, loc, t)
			return float64(p.num), false, err
		}
	}
	return 0, false, errUnitUnsupported(unit, t)
}

func intervalPart(v arrow.MonthDayNanoInterval, unit string, t sqltypes.Type) (float64, error) {
	micros := v.Nanoseconds / 1000
	switch unit {
	case "microseconds":
		return float64(micros % (60 * vec.UsPerSec)), nil
	case "milliseconds":
		return float64(micros%(60*vec.UsPerSec)) / 1e3, nil
	case "second":
		return float64(micros%(60*vec.UsPerSec)) / 1e6, nil
	case "minute":
		return float64(micros / (60 * vec.UsPerSec) % 60), nil
	case "hour":
		return float64(micros / (3600 * vec.UsPerSec)), nil
	case "day":
		return float64(v.Days), nil
	case "month":
		return float64(v.Months % 12), nil
	case "quarter":
		return float64((v.Months%12)/3 + 1), nil
	case "year":
		return float64(v.Months / 12), nil
	case "decade":
		return float64(v.Months / 120), nil
	case "century":
		return float64(v.Months / 1200), nil
	case "millennium":
		return float64(v.Months / 12000), nil
	case "epoch":
		// Postgres: a year is 365.25 days, a month 30 days.
		secs := float64(micros)/1e6 + float64(v.Days)*86400 +
			float64(v.Months/12)*365.25*86400 + float64(v.Months%12)*30*86400
		return secs, nil
	}
	return 0, errUnitUnsupported(unit, t)
}

func toTimestamp(in Input) (arrow.Array, error) {
	xa, err := in.Arg(0)
	if err != nil {
		return nil, err
	}
	defer xa.Release()
	rows := xa.Len()
	valid := vec.Validity(rows, xa)
	xs := vec.Values[float64](xa)
	buf, out := vec.NewFixed[int64](in.Mem(), rows)
	for i, x := range xs {
		out[i] = 0
		if !vec.Valid(valid, i) {
			continue
		}
		switch {
		case math.IsNaN(x):
			buf.Release()
			return nil, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp cannot be NaN")
		case math.IsInf(x, 1):
			out[i] = sqltypes.TimestampInfinity
			continue
		case math.IsInf(x, -1):
			out[i] = sqltypes.TimestampNegInfinity
			continue
		}
		v := math.RoundToEven(x * 1e6)
		if v < vec.MinTimestamp || v >= 9223372036854775807 {
			buf.Release()
			return nil, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range: \"%s\"", strconv.FormatFloat(x, 'g', -1, 64))
		}
		out[i] = int64(v)
	}
	return vec.FinishFixed(in.Mem(), sqltypes.TimestampTZType.Arrow(), rows, buf, valid), nil
}

// timeBucket is TimescaleDB's time_bucket(width, ts [, origin |
// offset]): the start of the width-sized bucket holding ts, buckets
// aligned to origin (default 2000-01-03, a Monday) for day/time widths
// and to origin's month (default 2000-01) for month widths, computed in
// UTC. With an offset interval it is time_bucket(width, ts - offset) +
// offset.
type timeBucket struct {
	t      sqltypes.Type
	extra  bool // a third argument: the origin (of x's type) or the offset (offset set)
	offset bool
}

// dayUs is a date as microseconds since 1970, infinities mapped.
func dayUs(d int32) int64 {
	switch d {
	case sqltypes.DateInfinity:
		return sqltypes.TimestampInfinity
	case sqltypes.DateNegInfinity:
		return sqltypes.TimestampNegInfinity
	}
	return int64(d) * vec.UsPerDay
}

const (
	bucketOrigin = int64(946857600) * vec.UsPerSec // 2000-01-03 00:00:00 UTC
	monthOrigin  = 2000*12 + 0                     // 2000-01 in months since year 0
)

func (n *timeBucket) eval(in Input) (arrow.Array, error) {
	arrs, err := argsAll(in, 2)
	if err != nil {
		return nil, err
	}
	defer vec.Release(arrs)
	wa, xa := arrs[0], arrs[1]
	rows := xa.Len()
	isDate := n.t.Kind == sqltypes.Date
	toUs := func(a arrow.Array) []int64 {
		if !isDate {
			return vec.Values[int64](a)
		}
		out := make([]int64, a.Len())
		for i, d := range vec.Values[int32](a) {
			out[i] = dayUs(d)
		}
		return out
	}
	valid := vec.Validity(rows, wa, xa)
	var origins []int64
	var offsets []arrow.MonthDayNanoInterval
	if n.extra {
		ea, err := in.Arg(2)
		if err != nil {
			return nil, err
		}
		defer ea.Release()
		valid = vec.Validity(rows, wa, xa, ea)
		if n.offset {
			offsets = vec.Values[arrow.MonthDayNanoInterval](ea)
		} else {
			origins = toUs(ea)
		}
	}
	ws := vec.Values[arrow.MonthDayNanoInterval](wa)
	ts := toUs(xa)
	res := make([]int64, rows)
	for i := 0; i < rows; i++ {
		if !vec.Valid(valid, i) {
			continue
		}
		w := ws[i]
		if vec.IsInfTimestamp(ts[i]) {
			res[i] = ts[i]
			continue
		}
		x, origin, mOrigin := ts[i], bucketOrigin, int64(monthOrigin)
		if origins != nil {
			if vec.IsInfTimestamp(origins[i]) {
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "invalid origin: it must be finite")
			}
			origin = origins[i]
			om := time.UnixMicro(origin).UTC()
			mOrigin = int64(om.Year())*12 + int64(om.Month()-1)
		}
		if offsets != nil {
			neg := offsets[i]
			neg.Months, neg.Days, neg.Nanoseconds = -neg.Months, -neg.Days, -neg.Nanoseconds
			if x, err = vec.AddInterval(x, neg, time.UTC); err != nil {
				return nil, err
			}
		}
		r, err := bucketOne(w, x, origin, mOrigin, isDate)
		if err != nil {
			return nil, err
		}
		if offsets != nil {
			if r, err = vec.AddInterval(r, offsets[i], time.UTC); err != nil {
				return nil, err
			}
		}
		res[i] = r
	}
	return n.finish(in, res, valid, rows)
}

// bucketOne is the start of the bucket of width w holding x (both in
// microseconds since 1970, UTC): aligned to origin for day/time widths,
// to the month mOrigin (months since year 0) for month widths.
func bucketOne(w arrow.MonthDayNanoInterval, x, origin, mOrigin int64, isDate bool) (int64, error) {
	if w.Months != 0 {
		if w.Days != 0 || w.Nanoseconds != 0 {
			return 0, sqlerr.New(sqlerr.InvalidParameterValue, "month intervals cannot have day or time component")
		}
		if w.Months < 0 {
			return 0, sqlerr.New(sqlerr.InvalidParameterValue, "interval must be positive")
		}
		tm := time.UnixMicro(x).UTC()
		months := int64(tm.Year())*12 + int64(tm.Month()-1)
		bm := mOrigin + vec.FloorDiv(months-mOrigin, int64(w.Months))*int64(w.Months)
		return time.Date(int(vec.FloorDiv(bm, 12)), time.Month(bm-vec.FloorDiv(bm, 12)*12+1), 1, 0, 0, 0, 0, time.UTC).UnixMicro(), nil
	}
	width := int64(w.Days)*vec.UsPerDay + w.Nanoseconds/1000
	if width <= 0 {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "interval must be positive")
	}
	if isDate && width%vec.UsPerDay != 0 {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "interval must not have sub-day precision for a date")
	}
	return origin + vec.FloorDiv(x-origin, width)*width, nil
}

func (n *timeBucket) finish(in Input, res []int64, valid []bool, rows int) (arrow.Array, error) {
	isDate := n.t.Kind == sqltypes.Date
	if isDate {
		buf, out := vec.NewFixed[int32](in.Mem(), rows)
		for i, v := range res {
			switch {
			case v == sqltypes.TimestampInfinity:
				out[i] = sqltypes.DateInfinity
			case v == sqltypes.TimestampNegInfinity:
				out[i] = sqltypes.DateNegInfinity
			default:
				out[i] = int32(vec.FloorDiv(v, vec.UsPerDay))
			}
		}
		return vec.FinishFixed(in.Mem(), n.t.Arrow(), rows, buf, valid), nil
	}
	buf, out := vec.NewFixed[int64](in.Mem(), rows)
	copy(out, res)
	return vec.FinishFixed(in.Mem(), n.t.Arrow(), rows, buf, valid), nil
}

// EXTRACT(field FROM x) is Postgres 15's numeric extract: exact values
// (second 5.123456, epoch 1704164645.123456), where date_part computes in
// double precision. Every field is an integer count of 10^-scale units:
// second and epoch microseconds (scale 6), milliseconds scale 3, the rest
// scale 0; julian of a timestamp is a day count with its fraction.

// part is an extracted field: num × 10^-scale, or ±infinity (inf), or NULL.
type part struct {
	num   int64
	scale int32
	frac  *big.Rat // julian's exact day fraction, added to num
	inf   int
	null  bool
}

// extractNum evaluates the numeric EXTRACT for every row.
func (n *datePart) extractNum(in Input, ua, xa arrow.Array, valid []bool) (arrow.Array, error) {
	rows := xa.Len()
	us := ua.(*array.String)
	xt := n.xt
	loc := tsLoc(in, xt)
	ts := vec.DecScale(n.t)
	bld := array.NewDecimal128Builder(in.Mem(), n.t.Arrow().(*arrow.Decimal128Type))
	defer bld.Release()
	units := unitsOf(xt)
	for i := 0; i < rows; i++ {
		if !vec.Valid(valid, i) {
			bld.AppendNull()
			continue
		}
		unit, err := units.at(us.Value(i))
		if err != nil {
			return nil, err
		}
		var p part
		switch xt.Kind {
		case sqltypes.Interval:
			p, err = intervalPartNum(vec.Values[arrow.MonthDayNanoInterval](xa)[i], unit, xt)
		case sqltypes.Date:
			p, err = datePartNum(vec.Values[int32](xa)[i], unit, xt)
		default:
			p, err = tsPartNum(vec.Values[int64](xa)[i], unit, loc, xt)
		}
		if err != nil {
			return nil, err
		}
		switch {
		case p.null:
			bld.AppendNull()
			continue
		case p.inf != 0:
			return nil, sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric field overflow").
				WithDetail("The result is infinite, and asofsql's NUMERIC has no infinity.")
		}
		v := vec.Rescale(big.NewInt(p.num), p.scale, ts)
		if p.frac != nil {
			f := new(big.Rat).Mul(p.frac, new(big.Rat).SetInt(vec.Pow10(ts)))
			v.Add(v, vec.RoundDiv(f.Num(), f.Denom()))
		}
		d, err := vec.FitDecimal(v, n.t)
		if err != nil {
			return nil, err
		}
		bld.Append(d)
	}
	return bld.NewArray(), nil
}

// tsPartNum is one field of a timestamp (wall clock in loc).
func tsPartNum(us int64, unit string, loc *time.Location, t sqltypes.Type) (part, error) {
	switch unit {
	case "timezone", "timezone_hour", "timezone_minute":
		if t.Kind != sqltypes.TimestampTZ {
			return part{}, errUnitUnsupported(unit, t)
		}
		if vec.IsInfTimestamp(us) {
			return part{null: true}, nil
		}
		_, off := time.UnixMicro(us).In(loc).Zone()
		switch unit {
		case "timezone_hour":
			return part{num: int64(off / 3600)}, nil
		case "timezone_minute":
			return part{num: int64(off / 60 % 60)}, nil
		}
		return part{num: int64(off)}, nil
	}
	if vec.IsInfTimestamp(us) {
		f, null, err := tsPart(us, unit, loc, t)
		if err != nil || null {
			return part{null: null}, err
		}
		if f > 0 {
			return part{inf: 1}, nil
		}
		return part{inf: -1}, nil
	}
	tm := time.UnixMicro(us).In(loc)
	sub := int64(tm.Second())*vec.UsPerSec + int64(tm.Nanosecond()/1000)
	switch unit {
	case "microseconds":
		return part{num: sub}, nil
	case "milliseconds":
		return part{num: sub, scale: 3}, nil
	case "second":
		return part{num: sub, scale: 6}, nil
	case "epoch":
		if t.Kind == sqltypes.Timestamp || t.Kind == sqltypes.TimestampTZ {
			return part{num: us, scale: 6}, nil
		}
	case "julian":
		y, m, d := tm.Date()
		day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
		ofDay := int64(tm.Hour()*3600+tm.Minute()*60+tm.Second())*vec.UsPerSec + int64(tm.Nanosecond()/1000)
		return part{num: day + julianUnixDay, frac: big.NewRat(ofDay, vec.UsPerDay)}, nil
	}
	f, null, err := tsPart(us, unit, loc, t)
	if err != nil || null {
		return part{null: null}, err
	}
	return part{num: int64(f)}, nil // an integer field
}

// julianUnixDay is the Julian day number of 1970-01-01.
const julianUnixDay = 2440588

// datePartNum is one field of a date: the date fields only.
func datePartNum(d int32, unit string, t sqltypes.Type) (part, error) {
	switch unit {
	case "microseconds", "milliseconds", "second", "minute", "hour", "timezone", "timezone_hour", "timezone_minute":
		return part{}, errUnitUnsupported(unit, t)
	}
	us := dayUs(d)
	if !vec.IsInfTimestamp(us) {
		switch unit {
		case "epoch":
			return part{num: int64(d) * 86400}, nil
		case "julian":
			return part{num: int64(d) + julianUnixDay}, nil
		}
	}
	return tsPartNum(us, unit, time.UTC, sqltypes.TimestampType)
}

// intervalPartNum is one field of an interval.
func intervalPartNum(v arrow.MonthDayNanoInterval, unit string, t sqltypes.Type) (part, error) {
	micros := v.Nanoseconds / 1000
	switch unit {
	case "microseconds":
		return part{num: micros % (60 * vec.UsPerSec)}, nil
	case "milliseconds":
		return part{num: micros % (60 * vec.UsPerSec), scale: 3}, nil
	case "second":
		return part{num: micros % (60 * vec.UsPerSec), scale: 6}, nil
	case "epoch":
		// Postgres: a year is 365.25 days, a month 30 days.
		secs := int64(31557600)*int64(v.Months/12) + int64(2592000)*int64(v.Months%12) + 86400*int64(v.Days)
		return part{num: micros + secs*vec.UsPerSec, scale: 6}, nil
	}
	f, err := intervalPart(v, unit, t)
	if err != nil {
		return part{}, err
	}
	return part{num: int64(f)}, nil
}

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
func (n *dateTrunc) evalInterval(in Input, ua, xa arrow.Array, valid []bool) (arrow.Array, error) {
	us := ua.(*array.String)
	xs := vec.Values[arrow.MonthDayNanoInterval](xa)
	bld := array.NewMonthDayNanoIntervalBuilder(in.Mem())
	defer bld.Release()
	units := unitsOf(sqltypes.IntervalType)
	for i := range xs {
		if !vec.Valid(valid, i) {
			bld.AppendNull()
			continue
		}
		raw := us.Value(i)
		unit, err := units.at(raw)
		if err != nil {
			return nil, err
		}
		v, err := truncInterval(xs[i], raw, unit)
		if err != nil {
			return nil, err
		}
		bld.Append(v)
	}
	return bld.NewArray(), nil
}
