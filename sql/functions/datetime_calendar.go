package functions

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// Calendar functions analysts use beside date_trunc: binning (date_bin),
// interval normalisation (justify_*), construction from fields (make_*)
// and symbolic differences (age). Each follows PostgreSQL 15's algorithm
// step by step, including where it wraps or saturates, because users
// compare our output with Postgres' digit for digit.

var (
	ts   = sqltypes.TimestampType
	date = sqltypes.DateType
)

const (
	usPerHour = 3600 * vec.UsPerSec
	// pgEpochShift converts asofsql's timestamps (microseconds since
	// 1970) to Postgres' (since 2000), for the algorithms that work on
	// Postgres' representation.
	pgEpochShift = 946_684_800 * vec.UsPerSec
)

func errIntervalRange() error {
	return sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
}

// ivUs is the time part of an interval in microseconds (Postgres keeps
// microseconds; Arrow's interval holds nanoseconds).
func ivUs(iv arrow.MonthDayNanoInterval) int64 { return iv.Nanoseconds / 1000 }

func mkIv(months, days int32, us int64) arrow.MonthDayNanoInterval {
	return arrow.MonthDayNanoInterval{Months: months, Days: days, Nanoseconds: us * 1000}
}

// DateBin is date_bin(stride, source, origin): the start of the
// stride-wide bin, counted from origin, that holds source. Strides with
// months or years are 0A000 as in Postgres; an infinite source stays
// infinite.
var DateBin = register(&Def{
	Name: "date_bin", MinArgs: 3, MaxArgs: 3,
	Rule: func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		var err error
		if args[0], err = b.Coerce(args[0], 0, interval); err != nil {
			return nil, ts, err
		}
		t := ts
		for _, a := range args[1:] {
			if a.Type().Kind == sqltypes.TimestampTZ {
				t = tstz
			}
		}
		for i := 1; i < 3; i++ {
			k := args[i].Type().Kind
			if k != sqltypes.Unknown && k != sqltypes.Date && !args[i].Type().IsTemporal() {
				return nil, t, b.NoMatch(args)
			}
			if args[i], err = b.Coerce(args[i], i, t); err != nil {
				return nil, t, err
			}
		}
		return args, t, nil
	},
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if len(args) != 3 || args[0].Type().Kind != sqltypes.Interval || args[1].Type().Kind != t.Kind || args[2].Type().Kind != t.Kind ||
			(t.Kind != sqltypes.Timestamp && t.Kind != sqltypes.TimestampTZ) {
			return nil, errTypes
		}
		return strict3(t, dateBin), nil
	},
	Examples: []Example{
		{"date_bin('15 minutes', TIMESTAMP '2020-02-11 15:44:17', TIMESTAMP '2001-01-01')", "2020-02-11 15:30:00"},
		{"date_bin('1 hour', TIMESTAMP '2020-01-01 00:30', TIMESTAMP '2020-01-01 01:00')", "2020-01-01 00:00:00"},
		{"date_bin('1 hour', TIMESTAMPTZ '2020-01-01 00:30+00', TIMESTAMPTZ '2020-01-01 01:00+00')", "2020-01-01 00:00:00+00"},
	},
})

func dateBin(stride arrow.MonthDayNanoInterval, x, origin int64) (int64, error) {
	if vec.IsInfTimestamp(x) {
		return x, nil
	}
	if vec.IsInfTimestamp(origin) {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "origin out of range")
	}
	if stride.Months != 0 {
		return 0, sqlerr.New(sqlerr.FeatureNotSupported, "timestamps cannot be binned into intervals containing months or years")
	}
	step, ok := addInt64(int64(stride.Days)*vec.UsPerDay, ivUs(stride))
	if !ok || step <= 0 {
		if !ok {
			return 0, errIntervalRange()
		}
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "stride must be greater than zero")
	}
	diff, ok := subInt64(x, origin)
	if !ok {
		return 0, errIntervalRange()
	}
	r, ok := addInt64(origin, vec.FloorDiv(diff, step)*step)
	if !ok || vec.IsInfTimestamp(r) || r < vec.MinTimestamp {
		return 0, vec.ErrTimestampRange()
	}
	return r, nil
}

func addInt64(a, b int64) (int64, bool) {
	s := a + b
	return s, (s > a) == (b > 0)
}

func subInt64(a, b int64) (int64, bool) {
	s := a - b
	return s, (s < a) == (b > 0)
}

// tmodulo is Postgres' TMODULO: q = t / u truncated, t keeps the rest.
func tmodulo(t *int64, u int64) int64 {
	q := *t / u
	*t -= q * u
	return q
}

func addDays32(a int32, b int64) (int32, error) {
	s := int64(a) + b
	if s > math.MaxInt32 || s < math.MinInt32 {
		return 0, errIntervalRange()
	}
	return int32(s), nil
}

// JustifyHours is justify_hours(interval): whole 24-hour periods of the
// time part become days, signs made to agree with the days.
var JustifyHours = register(&Def{
	Name: "justify_hours", MinArgs: 1, MaxArgs: 1,
	Rule: fixed(interval, interval),
	Prepare: prepareIf(func([]expr.Expr, sqltypes.Type) Kernel {
		return strict1(interval, func(iv arrow.MonthDayNanoInterval) (arrow.MonthDayNanoInterval, error) {
			us := ivUs(iv)
			day, err := addDays32(iv.Days, tmodulo(&us, vec.UsPerDay))
			if err != nil {
				return iv, err
			}
			if day > 0 && us < 0 {
				us += vec.UsPerDay
				day--
			} else if day < 0 && us > 0 {
				us -= vec.UsPerDay
				day++
			}
			return mkIv(iv.Months, day, us), nil
		})
	}, sqltypes.Interval, sqltypes.Interval),
	Examples: []Example{{"justify_hours(INTERVAL '1 day 27 hours')", "2 days 03:00:00"}, {"justify_hours(INTERVAL '1 day -27 hours')", "-03:00:00"}},
})

// JustifyDays is justify_days(interval): whole 30-day periods become
// months, signs made to agree with the months.
var JustifyDays = register(&Def{
	Name: "justify_days", MinArgs: 1, MaxArgs: 1,
	Rule: fixed(interval, interval),
	Prepare: prepareIf(func([]expr.Expr, sqltypes.Type) Kernel {
		return strict1(interval, func(iv arrow.MonthDayNanoInterval) (arrow.MonthDayNanoInterval, error) {
			day := iv.Days
			month, err := addDays32(iv.Months, int64(day/30))
			if err != nil {
				return iv, err
			}
			day -= day / 30 * 30
			if month > 0 && day < 0 {
				day += 30
				month--
			} else if month < 0 && day > 0 {
				day -= 30
				month++
			}
			return mkIv(month, day, ivUs(iv)), nil
		})
	}, sqltypes.Interval, sqltypes.Interval),
	Examples: []Example{{"justify_days(INTERVAL '35 days')", "1 mon 5 days"}, {"justify_days(INTERVAL '-1 month 35 days')", "5 days"}},
})

// JustifyInterval is justify_interval(interval): justify_hours then
// justify_days, with the signs of all three parts made to agree.
var JustifyInterval = register(&Def{
	Name: "justify_interval", MinArgs: 1, MaxArgs: 1,
	Rule: fixed(interval, interval),
	Prepare: prepareIf(func([]expr.Expr, sqltypes.Type) Kernel {
		return strict1(interval, justifyInterval)
	}, sqltypes.Interval, sqltypes.Interval),
	Examples: []Example{
		{"justify_interval(INTERVAL '1 mon -1 hour')", "29 days 23:00:00"},
		{"justify_interval(INTERVAL '29 days 25 hours')", "1 mon 01:00:00"},
	},
})

func justifyInterval(iv arrow.MonthDayNanoInterval) (arrow.MonthDayNanoInterval, error) {
	month, day, us := iv.Months, iv.Days, ivUs(iv)
	var err error
	if (day > 0 && us > 0) || (day < 0 && us < 0) {
		if month, err = addDays32(month, int64(day/30)); err != nil {
			return iv, err
		}
		day -= day / 30 * 30
	}
	if day, err = addDays32(day, tmodulo(&us, vec.UsPerDay)); err != nil {
		return iv, err
	}
	if month, err = addDays32(month, int64(day/30)); err != nil {
		return iv, err
	}
	day -= day / 30 * 30
	if month > 0 && (day < 0 || (day == 0 && us < 0)) {
		day += 30
		month--
	} else if month < 0 && (day > 0 || (day == 0 && us > 0)) {
		day -= 30
		month++
	}
	if day > 0 && us < 0 {
		us += vec.UsPerDay
		day--
	} else if day < 0 && us > 0 {
		us -= vec.UsPerDay
		day++
	}
	return mkIv(month, day, us), nil
}

// MakeInterval is make_interval(years, months, weeks, days, hours, mins,
// secs), every argument optional (default 0), by position from the right
// or by name (make_interval(mins => 5)). As in
// Postgres 15 the field arithmetic wraps rather than checks; an infinite
// or NaN secs is 22008.
var MakeInterval = register(&Def{
	Name: "make_interval", MinArgs: 0, MaxArgs: 7,
	Params: []string{"years", "months", "weeks", "days", "hours", "mins", "secs"},
	Defaults: []expr.Expr{
		&expr.Literal{Value: int64(0), T: i4}, &expr.Literal{Value: int64(0), T: i4}, &expr.Literal{Value: int64(0), T: i4},
		&expr.Literal{Value: int64(0), T: i4}, &expr.Literal{Value: int64(0), T: i4}, &expr.Literal{Value: int64(0), T: i4},
		&expr.Literal{Value: 0.0, T: f8},
	},
	Rule: func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		params := []sqltypes.Type{i4, i4, i4, i4, i4, i4, f8}
		return fixed(interval, params[:max(len(args), 1)]...)(b, args)
	},
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		for i, a := range args {
			if want := sqltypes.Int4; i == 6 && a.Type().Kind != sqltypes.Float8 || i < 6 && a.Type().Kind != want {
				return nil, errTypes
			}
		}
		n := len(args)
		return func(in Input) (arrow.Array, error) {
			arrs, err := argsAll(in, n)
			if err != nil {
				return nil, err
			}
			defer vec.Release(arrs)
			ints := make([]func(int) int32, min(n, 6))
			for i := range ints {
				ints[i] = reader[int32](arrs[i])
			}
			var secs func(int) float64
			if n == 7 {
				secs = reader[float64](arrs[6])
			}
			return strictRows(in, interval, arrs, func(i int) (arrow.MonthDayNanoInterval, error) {
				var f [6]int32
				for k, r := range ints {
					f[k] = r(i)
				}
				s := 0.0
				if secs != nil {
					s = secs(i)
				}
				if math.IsInf(s, 0) || math.IsNaN(s) {
					return arrow.MonthDayNanoInterval{}, errIntervalRange()
				}
				us := int64(f[4])*usPerHour + int64(f[5])*60*vec.UsPerSec + int64(math.RoundToEven(s*float64(vec.UsPerSec)))
				return mkIv(f[0]*12+f[1], f[2]*7+f[3], us), nil
			})
		}, nil
	},
	Examples: []Example{
		{"make_interval()", "00:00:00"},
		{"make_interval(1, 2, 3, 4, 5, 6, 7.5)", "1 year 2 mons 25 days 05:06:07.5"},
		{"make_interval(0, 0, 0, 0, 0, 0, -1.5)", "-00:00:01.5"},
		{"make_interval(mins => 5)", "00:05:00"},
		{"make_interval(days => 1, secs => 1.5)", "1 day 00:00:01.5"},
		{"make_interval(1, hours := 2)", "1 year 02:00:00"},
	},
})

// MakeDate is make_date(year, month, day); a negative year is BC, year 0
// and impossible dates are 22008.
var MakeDate = register(&Def{
	Name: "make_date", MinArgs: 3, MaxArgs: 3,
	Params: []string{"year", "month", "day"},
	Rule:   fixed(date, i4, i4, i4),
	Prepare: prepareIf(func([]expr.Expr, sqltypes.Type) Kernel {
		return strict3(date, func(y, m, d int32) (int32, error) {
			days, err := makeDate(y, m, d)
			return int32(days), err
		})
	}, sqltypes.Date, sqltypes.Int4, sqltypes.Int4, sqltypes.Int4),
	Examples: []Example{{"make_date(2013, 7, 15)", "2013-07-15"}, {"make_date(-44, 3, 15)", "0044-03-15 BC"},
		{"make_date(day => 15, month => 7, year => 2013)", "2013-07-15"}},
})

// makeDate is the day number (since 1970-01-01) of a Postgres year
// (negative = BC, no year 0), month and day.
func makeDate(y, m, d int32) (int64, error) {
	ay := astroYear(y)
	if y == 0 || m < 1 || m > 12 || d < 1 || int(d) > vec.DaysIn(int(ay), time.Month(m)) {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "date field value out of range: %d-%02d-%02d", ay, m, d)
	}
	if ay < -4713 || ay == -4713 && (m < 11 || m == 11 && d < 24) || ay > 5874897 {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "date out of range: %d-%02d-%02d", ay, m, d)
	}
	return time.Date(int(ay), time.Month(m), int(d), 0, 0, 0, 0, time.UTC).Unix() / 86400, nil
}

// astroYear numbers years astronomically (1 BC is 0, 2 BC is -1), as
// Postgres does before it checks a date and in its messages.
func astroYear(y int32) int64 {
	if y < 0 {
		return int64(y) + 1
	}
	return int64(y)
}

// MakeTimestamp is make_timestamp(year, month, day, hour, min, sec):
// 24:00:00 is allowed (the next midnight), as in Postgres.
var MakeTimestamp = register(&Def{
	Name: "make_timestamp", MinArgs: 6, MaxArgs: 6,
	Params: []string{"year", "month", "mday", "hour", "min", "sec"},
	Rule:   fixed(ts, i4, i4, i4, i4, i4, f8),
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if !kindsAre(args, sqltypes.Int4, sqltypes.Int4, sqltypes.Int4, sqltypes.Int4, sqltypes.Int4, sqltypes.Float8) || t.Kind != sqltypes.Timestamp {
			return nil, errTypes
		}
		return func(in Input) (arrow.Array, error) {
			arrs, err := argsAll(in, 6)
			if err != nil {
				return nil, err
			}
			defer vec.Release(arrs)
			var ints [5]func(int) int32
			for i := range ints {
				ints[i] = reader[int32](arrs[i])
			}
			secs := reader[float64](arrs[5])
			return strictRows(in, ts, arrs, func(i int) (int64, error) {
				return makeTimestamp(ints[0](i), ints[1](i), ints[2](i), ints[3](i), ints[4](i), secs(i))
			})
		}, nil
	},
	Examples: []Example{{"make_timestamp(2013, 7, 15, 8, 15, 23.5)", "2013-07-15 08:15:23.5"}, {"make_timestamp(2013, 7, 15, 24, 0, 0)", "2013-07-16 00:00:00"},
		{"make_timestamp(2013, 7, 15, sec => 0, min => 4, hour => 3)", "2013-07-15 03:04:00"}},
})

func makeTimestamp(y, mo, d, h, mi int32, sec float64) (int64, error) {
	days, err := makeDate(y, mo, d)
	if err != nil {
		return 0, err
	}
	// Postgres' check: fields in range, or exactly 24:00:00.
	if h < 0 || mi < 0 || mi > 59 || !(sec >= 0) || sec > 60 || h > 24 || (h == 24 && (mi > 0 || sec > 0)) {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "time field value out of range: %d:%02d:%s", h, mi, pgFloatG(sec))
	}
	us := int64(h)*usPerHour + int64(mi)*60*vec.UsPerSec + int64(math.RoundToEven(sec*float64(vec.UsPerSec)))
	r, ok := addInt64(days*vec.UsPerDay, us)
	if days > math.MaxInt64/vec.UsPerDay-1 || !ok || vec.IsInfTimestamp(r) || r < vec.MinTimestamp {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range: %d-%02d-%02d %d:%02d:%s", astroYear(y), mo, d, h, mi, pgFloatG(sec))
	}
	return r, nil
}

// pgFloatG is C's %02g as Postgres prints seconds in messages.
func pgFloatG(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return fmt.Sprintf("%02.6g", f)
}

// Age is age(a, b) (and age(b) = age(today's midnight, b)): the symbolic
// difference in years, months, days and time, as Postgres computes it
// field by field on the calendar (timestamptz in the session's zone).
var Age = register(&Def{
	Name: "age", MinArgs: 1, MaxArgs: 2,
	Rule: func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		t, typed := ts, false
		for _, a := range args {
			switch a.Type().Kind {
			case sqltypes.TimestampTZ, sqltypes.Date:
				t, typed = tstz, true
			case sqltypes.Unknown:
			default:
				typed = true
			}
		}
		if !typed {
			return nil, interval, b.Errorf(codeAmbiguousFunction, "function age(%s) is not unique", strings.Repeat("unknown, ", len(args)-1)+"unknown").
				WithHint("Could not choose a best candidate function. You might need to add explicit type casts.")
		}
		for i := range args {
			k := args[i].Type().Kind
			if k != sqltypes.Unknown && !args[i].Type().IsTemporal() {
				return nil, interval, b.NoMatch(args)
			}
			var err error
			if args[i], err = b.Coerce(args[i], i, t); err != nil {
				return nil, interval, err
			}
		}
		return args, interval, nil
	},
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		k := args[0].Type().Kind
		if k != sqltypes.Timestamp && k != sqltypes.TimestampTZ || len(args) == 2 && args[1].Type().Kind != k {
			return nil, errTypes
		}
		tz := k == sqltypes.TimestampTZ
		return func(in Input) (arrow.Array, error) {
			loc := time.UTC
			if tz {
				loc = in.Location()
			}
			arrs, err := argsAll(in, len(args))
			if err != nil {
				return nil, err
			}
			defer vec.Release(arrs)
			b := reader[int64](arrs[0])
			// age(x) is from midnight of the statement's current date in
			// the session's zone (a wall-clock midnight for timestamp).
			y, m, d := in.Now().In(in.Location()).Date()
			today := time.Date(y, m, d, 0, 0, 0, 0, loc).UnixMicro()
			a := func(int) int64 { return today }
			if len(args) == 2 {
				a, b = b, reader[int64](arrs[1])
			}
			return strictRows(in, interval, arrs, func(i int) (arrow.MonthDayNanoInterval, error) {
				return age(a(i), b(i), loc), nil
			})
		}, nil
	},
	Examples: []Example{
		{"age(TIMESTAMP '2001-04-10', TIMESTAMP '1957-06-13')", "43 years 9 mons 27 days"},
		{"age(TIMESTAMP '2001-03-01', TIMESTAMP '2001-01-31 12:00:00.5')", "1 mon 11:59:59.5"},
		{"age(TIMESTAMP '1957-06-13', TIMESTAMP '2001-04-10')", "-43 years -9 mons -27 days"},
	},
})

// pgTm is Postgres' struct pg_tm as timestamp2tm fills it.
type pgTm struct{ year, mon, mday, hour, min, sec, fsec int64 }

// toTm is timestamp2tm: us are asofsql microseconds; infinities are read
// as Postgres reads its int64 limits (age() of infinity is a large
// finite interval in Postgres 15, and so it is here).
func toTm(us int64, loc *time.Location) pgTm {
	var pg int64
	switch us {
	case sqltypes.TimestampInfinity:
		pg = math.MaxInt64
	case sqltypes.TimestampNegInfinity:
		pg = math.MinInt64
	default:
		if loc != time.UTC {
			us += zoneOffsetUs(us, loc)
		}
		pg = us - pgEpochShift
	}
	t := pg
	date := tmodulo(&t, vec.UsPerDay)
	if t < 0 {
		t += vec.UsPerDay
		date--
	}
	date += 2451545 // POSTGRES_EPOCH_JDATE
	y, m, d := sqltypes.JulianToDate(date)
	var tm pgTm
	tm.year, tm.mon, tm.mday = y, m, d
	tm.hour = t / usPerHour
	t -= tm.hour * usPerHour
	tm.min = t / (60 * vec.UsPerSec)
	t -= tm.min * 60 * vec.UsPerSec
	tm.sec = t / vec.UsPerSec
	tm.fsec = t - tm.sec*vec.UsPerSec
	return tm
}

func zoneOffsetUs(us int64, loc *time.Location) int64 {
	_, off := time.UnixMicro(us).In(loc).Zone()
	return int64(off) * vec.UsPerSec
}

var dayTab = [2][12]int64{
	{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31},
	{31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31},
}

func isLeap(y int64) int {
	if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		return 1
	}
	return 0
}

// age is Postgres' timestamp_age / timestamptz_age.
func age(a, b int64, loc *time.Location) arrow.MonthDayNanoInterval {
	t1, t2 := toTm(a, loc), toTm(b, loc)
	tm := pgTm{t1.year - t2.year, t1.mon - t2.mon, t1.mday - t2.mday, t1.hour - t2.hour, t1.min - t2.min, t1.sec - t2.sec, t1.fsec - t2.fsec}
	neg := func() {
		tm = pgTm{-tm.year, -tm.mon, -tm.mday, -tm.hour, -tm.min, -tm.sec, -tm.fsec}
	}
	if a < b {
		neg()
	}
	for tm.fsec < 0 {
		tm.fsec += vec.UsPerSec
		tm.sec--
	}
	for tm.sec < 0 {
		tm.sec += 60
		tm.min--
	}
	for tm.min < 0 {
		tm.min += 60
		tm.hour--
	}
	for tm.hour < 0 {
		tm.hour += 24
		tm.mday--
	}
	for tm.mday < 0 {
		if a < b {
			tm.mday += dayTab[isLeap(t1.year)][t1.mon-1]
		} else {
			tm.mday += dayTab[isLeap(t2.year)][t2.mon-1]
		}
		tm.mon--
	}
	for tm.mon < 0 {
		tm.mon += 12
		tm.year--
	}
	if a < b {
		neg()
	}
	us := ((tm.hour*60+tm.min)*60+tm.sec)*vec.UsPerSec + tm.fsec
	return mkIv(int32(tm.year*12+tm.mon), int32(tm.mday), us)
}
