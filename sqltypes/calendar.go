package sqltypes

import "math"

// Storage conventions for the temporal types (see doc.go):
//   - DATE is date32, days since 1970-01-01; +/-infinity are MaxInt32/MinInt32.
//   - TIMESTAMP(TZ) is int64 microseconds since 1970-01-01 00:00 (UTC for
//     timestamptz); +/-infinity are MaxInt64/MinInt64, as in Postgres' own
//     binary format.
const (
	DateInfinity         = math.MaxInt32
	DateNegInfinity      = math.MinInt32
	TimestampInfinity    = math.MaxInt64
	TimestampNegInfinity = math.MinInt64
)

const (
	unixEpochJD    = 2440588 // Julian day of 1970-01-01
	pgEpochJD      = 2451545 // Julian day of 2000-01-01
	pgEpochDays    = pgEpochJD - unixEpochJD
	usPerSec       = int64(1_000_000)
	usPerMinute    = 60 * usPerSec
	usPerHour      = 60 * usPerMinute
	usPerDay       = 24 * usPerHour
	pgEpochMicros  = pgEpochDays * usPerDay
	dateEndJD      = 2147483494                          // Postgres DATE_END_JULIAN (5874898-01-01), exclusive
	minTimestampUs = -211813488000000000 + pgEpochMicros // 4714-11-24 BC 00:00 UTC
)

// date2j is Postgres' date2j: the Julian day of a proleptic Gregorian date.
// y is astronomical (0 = 1 BC).
func date2j(y, m, d int64) int64 {
	if m > 2 {
		m++
		y += 4800
	} else {
		m += 13
		y += 4799
	}
	century := y / 100
	julian := y*365 - 32167
	julian += y/4 - century + century/4
	julian += 7834*m/256 + d
	return julian
}

// JulianToDate is Postgres' j2date (the proleptic Gregorian year, month
// and day of Julian day jd >= 0), for functions that follow Postgres'
// field-by-field date algorithms (age).
func JulianToDate(jd int64) (year, month, day int64) { return j2date(jd) }

// j2date is Postgres' j2date, the inverse of date2j for jd >= 0.
func j2date(jd int64) (year, month, day int64) {
	julian := jd + 32044
	quad := julian / 146097
	extra := (julian-quad*146097)*4 + 3
	julian += 60 + quad*3 + extra/146097
	quad = julian / 1461
	julian -= quad * 1461
	y := julian * 4 / 1461
	if y != 0 {
		julian = (julian+305)%365 + 123
	} else {
		julian = (julian+306)%366 + 123
	}
	y += quad * 4
	year = y - 4800
	quad = julian * 2141 / 65536
	day = julian - 7834*quad/256
	month = (quad+10)%12 + 1
	return
}

// validJulianDate is Postgres' IS_VALID_JULIAN: a coarse, month-granular
// bound (4714-11 BC .. 5874898-05) that keeps the Julian-day arithmetic
// exact; the precise limits are checked on the resulting date or instant.
func validJulianDate(y, m, d int64) bool {
	return (y > -4713 || y == -4713 && m >= 11) && (y < 5874898 || y == 5874898 && m < 6)
}

var daysInMonth = [2][13]int64{
	{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31},
	{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31},
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func monthDays(y, m int64) int64 {
	if isLeap(y) {
		return daysInMonth[1][m]
	}
	return daysInMonth[0][m]
}

func floorDiv(a, b int64) (q, r int64) {
	q, r = a/b, a%b
	if r < 0 {
		q--
		r += b
	}
	return
}

// validDate32 reports whether days (since 1970) is a finite date Postgres
// can hold.
func validDate32(days int64) bool {
	jd := days + unixEpochJD
	return jd >= 0 && jd < dateEndJD
}

// validTimestamp reports whether us (since 1970) is a finite timestamp in
// range: from 4714-11-24 BC to the largest int64 below the infinity sentinel.
func validTimestamp(us int64) bool {
	return us >= minTimestampUs && us != TimestampInfinity
}
