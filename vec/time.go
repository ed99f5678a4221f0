package vec

import (
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Microseconds per second and per day: timestamps are microseconds since
// 1970-01-01 00:00 UTC.
const (
	UsPerSec = int64(1_000_000)
	UsPerDay = 86_400 * UsPerSec
)

// ErrTimestampRange is Postgres' 22008 "timestamp out of range".
func ErrTimestampRange() error {
	return sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
}

// IsInfTimestamp reports whether a timestamp is +/-infinity.
func IsInfTimestamp(v int64) bool {
	return v == sqltypes.TimestampInfinity || v == sqltypes.TimestampNegInfinity
}

// AddInterval is Postgres' timestamp_pl_interval: months first (clamping
// the day to the month's length), then days, both on the wall clock of loc
// (the session zone for timestamptz, UTC for timestamp), then the time part
// as elapsed time.
func AddInterval(us int64, iv arrow.MonthDayNanoInterval, loc *time.Location) (int64, error) {
	if IsInfTimestamp(us) {
		return us, nil
	}
	t := time.UnixMicro(us).In(loc)
	if iv.Months != 0 || iv.Days != 0 {
		y, m, d := t.Date()
		if iv.Months != 0 {
			total := int64(y)*12 + int64(m-1) + int64(iv.Months)
			y = int(FloorDiv(total, 12))
			m = time.Month(total-int64(y)*12) + 1
			if dim := DaysIn(y, m); d > dim {
				d = dim
			}
		}
		d += int(iv.Days)
		hh, mm, ss := t.Clock()
		t = time.Date(y, m, d, hh, mm, ss, t.Nanosecond(), loc)
	}
	base := t.Unix()
	if base > math.MaxInt64/UsPerSec-1 || base < math.MinInt64/UsPerSec+1 {
		return 0, ErrTimestampRange()
	}
	r := base*UsPerSec + int64(t.Nanosecond()/1000)
	micros := iv.Nanoseconds / 1000
	s := r + micros
	if (micros > 0 && s < r) || (micros < 0 && s > r) || IsInfTimestamp(s) || s < MinTimestamp {
		return 0, ErrTimestampRange()
	}
	return s, nil
}

// MinTimestamp is 4714-11-24 00:00:00 BC, Postgres' lower bound.
const MinTimestamp = -210866803200000000

// FloorDiv is a / b rounded toward negative infinity.
func FloorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// DaysIn is the number of days of month m of year y.
func DaysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
