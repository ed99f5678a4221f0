package sqltypes

import (
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sqlerr"
)

// itm accumulates interval fields like Postgres' pg_itm_in.
// Years, months and days are int32 fields there: overflowing one is a
// field overflow (22015), while years*12+months overflowing is "interval
// out of range" (22008).
type itm struct {
	years, months, days, us int64
	overflow                bool
}

func (m *itm) addYears(v int64)  { m.years, m.overflow = addOv32(m.years, v, m.overflow) }
func (m *itm) addMonths(v int64) { m.months, m.overflow = addOv32(m.months, v, m.overflow) }
func (m *itm) addDays(v int64)   { m.days, m.overflow = addOv32(m.days, v, m.overflow) }
func (m *itm) addUs(v int64)     { m.us, m.overflow = addOv(m.us, v, m.overflow) }

func addOv(a, b int64, ov bool) (int64, bool) {
	c := a + b
	return c, ov || (b > 0 && c < a) || (b < 0 && c > a)
}

func addOv32(a, b int64, ov bool) (int64, bool) {
	c, ov := addOv(a, b, ov)
	return c, ov || c > math.MaxInt32 || c < math.MinInt32
}

func mulOv(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(abs64(a)), uint64(abs64(b)))
	if hi != 0 || lo > math.MaxInt64 || a == math.MinInt64 || b == math.MinInt64 {
		return 0, true
	}
	if (a < 0) != (b < 0) {
		return -int64(lo), false
	}
	return int64(lo), false
}

// The Adjust* helpers spread a fractional amount over smaller units as
// Postgres 15 does (1.5 months = 1 mon 15 days; 1.5 days = 1 day 12:00).
func (m *itm) fracMicros(frac float64, scale int64) {
	if frac == 0 {
		return
	}
	frac *= float64(scale)
	us := int64(frac)
	us += int64(math.RoundToEven(frac - float64(us)))
	m.addUs(us)
}

func (m *itm) fracDays(frac float64, scale int64) {
	if frac == 0 {
		return
	}
	frac *= float64(scale)
	d := int64(frac)
	m.addDays(d)
	m.fracMicros(frac-float64(d), usPerDay)
}

func (m *itm) fracYears(frac float64, scale int64) {
	if frac == 0 {
		return
	}
	m.addMonths(int64(math.RoundToEven(frac * float64(scale) * 12)))
}

type ivUnit uint8

const (
	uNone ivUnit = iota
	uMicro
	uMilli
	uSecond
	uMinute
	uHour
	uDay
	uWeek
	uMonth
	uYear
	uDecade
	uCentury
	uMillennium
)

var intervalUnits = map[string]ivUnit{
	"microsecond": uMicro, "microseconds": uMicro, "microsecon": uMicro, "us": uMicro, "usec": uMicro, "usecs": uMicro, "useconds": uMicro,
	"millisecond": uMilli, "milliseconds": uMilli, "millisecon": uMilli, "ms": uMilli, "msec": uMilli, "msecs": uMilli, "mseconds": uMilli,
	"second": uSecond, "seconds": uSecond, "sec": uSecond, "secs": uSecond, "s": uSecond,
	"minute": uMinute, "minutes": uMinute, "min": uMinute, "mins": uMinute, "m": uMinute,
	"hour": uHour, "hours": uHour, "hr": uHour, "hrs": uHour, "h": uHour,
	"day": uDay, "days": uDay, "d": uDay,
	"week": uWeek, "weeks": uWeek, "w": uWeek,
	"month": uMonth, "months": uMonth, "mon": uMonth, "mons": uMonth,
	"year": uYear, "years": uYear, "yr": uYear, "yrs": uYear, "y": uYear,
	"decade": uDecade, "decades": uDecade, "dec": uDecade, "decs": uDecade,
	"century": uCentury, "centuries": uCentury, "cent": uCentury, "c": uCentury,
	"millennium": uMillennium, "millennia": uMillennium, "mil": uMillennium, "mils": uMillennium,
}

// apply adds val+fval of unit u, as Postgres' DecodeInterval does.
func (m *itm) apply(u ivUnit, val int64, fval float64) {
	mul := func(scale int64) int64 {
		v, ov := mulOv(val, scale)
		m.overflow = m.overflow || ov
		return v
	}
	switch u {
	case uMicro:
		m.addUs(val)
		m.fracMicros(fval, 1)
	case uMilli:
		m.addUs(mul(1000))
		m.fracMicros(fval, 1000)
	case uSecond:
		m.addUs(mul(usPerSec))
		m.fracMicros(fval, usPerSec)
	case uMinute:
		m.addUs(mul(usPerMinute))
		m.fracMicros(fval, usPerMinute)
	case uHour:
		m.addUs(mul(usPerHour))
		m.fracMicros(fval, usPerHour)
	case uDay:
		m.addDays(val)
		m.fracMicros(fval, usPerDay)
	case uWeek:
		m.addDays(mul(7))
		m.fracDays(fval, 7)
	case uMonth:
		m.addMonths(val)
		m.fracDays(fval, 30)
	case uYear:
		m.addYears(val)
		m.fracYears(fval, 1)
	case uDecade:
		m.addYears(mul(10))
		m.fracYears(fval, 10)
	case uCentury:
		m.addYears(mul(100))
		m.fracYears(fval, 100)
	case uMillennium:
		m.addYears(mul(1000))
		m.fracYears(fval, 1000)
	}
}

// unitMask gives the field a unit occupies; a field may be given once.
func unitMask(u ivUnit) uint32 { return 1 << uint(u) }

const timeMask = 1<<uint(uHour) | 1<<uint(uMinute) | 1<<uint(uSecond)

// parseIvNumber splits a signed decimal into its integer part and its
// fraction, the fraction carrying the sign (Postgres' val and fval).
func parseIvNumber(s string) (int64, float64, dtErr) {
	neg := false
	body := s
	if body != "" && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	ip, fp, hasPoint := strings.Cut(body, ".")
	if ip == "" && (!hasPoint || fp == "") {
		return 0, 0, dtBad
	}
	for _, part := range []string{ip, fp} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return 0, 0, dtBad
			}
		}
	}
	var val int64
	if ip != "" {
		v, err := strconv.ParseInt(ip, 10, 64)
		if err != nil {
			return 0, 0, dtFieldOverflow
		}
		val = v
	}
	var fval float64
	if fp != "" {
		f, err := strconv.ParseFloat("0."+fp, 64)
		if err != nil {
			return 0, 0, dtBad
		}
		fval = f
	}
	if neg {
		val, fval = -val, -fval
	}
	return val, fval, dtOK
}

// splitInterval cuts interval input into words, splitting a number glued
// to its unit ("5days").
func splitInterval(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r < 128 && isSpace(byte(r)) || r == ',' }) {
		if strings.HasPrefix(w, "@") {
			out = append(out, "@")
			w = w[1:]
			if w == "" {
				continue
			}
		}
		i := 0
		for i < len(w) && (w[i] >= '0' && w[i] <= '9' || w[i] == '.' || w[i] == '-' || w[i] == '+' || w[i] == ':') {
			i++
		}
		if i > 0 && i < len(w) && strings.IndexByte(w[:i], ':') < 0 {
			out = append(out, w[:i], w[i:])
			continue
		}
		out = append(out, w)
	}
	return out
}

// parseInterval parses interval input in Postgres style ("1 year 2 mons",
// "-1 day 02:00:00", "@ 1 hour ago", "3 days -04:00", bare numbers are
// seconds) and ISO 8601 designator style ("P1Y2M3DT4H5M6.5S").
func parseInterval(s string) (arrow.MonthDayNanoInterval, error) {
	m, e := decodeInterval(strings.ToLower(trimSpace(s)))
	switch {
	case e == dtFieldOverflow || e == dtOK && m.overflow:
		return arrow.MonthDayNanoInterval{}, sqlerr.New(codeIntervalFieldOverflow, "interval field value out of range: \"%s\"", s)
	case e != dtOK:
		return arrow.MonthDayNanoInterval{}, sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type interval: \"%s\"", s)
	}
	v, ok := m.toArrow()
	if !ok {
		return v, sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
	}
	return v, nil
}

// toArrow checks the interval fits month_day_nano: months and days in
// int32 like Postgres, microseconds within int64 nanoseconds (narrower
// than Postgres' int64 microseconds; see doc.go).
func (m itm) toArrow() (arrow.MonthDayNanoInterval, bool) {
	months := m.years*12 + m.months
	if months > math.MaxInt32 || months < math.MinInt32 || m.days > math.MaxInt32 || m.days < math.MinInt32 {
		return arrow.MonthDayNanoInterval{}, false
	}
	ns, ov := mulOv(m.us, 1000)
	if ov {
		return arrow.MonthDayNanoInterval{}, false
	}
	return arrow.MonthDayNanoInterval{Months: int32(months), Days: int32(m.days), Nanoseconds: ns}, true
}

func decodeInterval(s string) (itm, dtErr) {
	var m itm
	if s == "" {
		return m, dtBad
	}
	if s[0] == 'p' {
		return decodeISOInterval(s)
	}
	toks := splitInterval(s)
	if len(toks) > 0 && toks[0] == "@" {
		toks = toks[1:]
	}
	ago := false
	if n := len(toks); n > 0 && toks[n-1] == "ago" {
		ago = true
		toks = toks[:n-1]
	}
	if len(toks) == 0 {
		return m, dtBad
	}
	var mask uint32
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		if strings.IndexByte(tok, ':') >= 0 {
			if mask&timeMask != 0 {
				return m, dtBad
			}
			mask |= timeMask
			neg := tok[0] == '-'
			if tok[0] == '-' || tok[0] == '+' {
				tok = tok[1:]
			}
			us, e := parseClock(tok, true)
			if e != dtOK {
				return m, e
			}
			if neg {
				us = -us
			}
			m.addUs(us)
			continue
		}
		val, fval, e := parseIvNumber(tok)
		if e == dtBad {
			return m, dtBad
		}
		if e != dtOK {
			return m, e
		}
		u := uSecond // a bare trailing number is seconds
		switch {
		case i+1 < len(toks) && intervalUnits[toks[i+1]] != uNone:
			u = intervalUnits[toks[i+1]]
			i++
		case i+1 < len(toks) && strings.IndexByte(toks[i+1], ':') >= 0:
			u = uDay // "1 02:00:00"
		case i+1 < len(toks):
			return m, dtBad
		}
		if mask&unitMask(u) != 0 {
			return m, dtBad
		}
		mask |= unitMask(u)
		m.apply(u, val, fval)
	}
	if ago {
		m.years, m.months, m.days, m.us = -m.years, -m.months, -m.days, -m.us
	}
	return m, dtOK
}

// decodeISOInterval parses the ISO 8601 "format with designators":
// P[nY][nM][nW][nD][T[nH][nM][nS]], numbers optionally signed and
// fractional.
func decodeISOInterval(s string) (itm, dtErr) {
	var m itm
	s = s[1:]
	if s == "" {
		return m, dtBad
	}
	inTime := false
	for s != "" {
		if s[0] == 't' {
			if inTime || len(s) == 1 {
				return m, dtBad
			}
			inTime = true
			s = s[1:]
			continue
		}
		j := 0
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == '-' || s[j] == '+') {
			j++
		}
		if j == 0 || j == len(s) {
			return m, dtBad
		}
		val, fval, e := parseIvNumber(s[:j])
		if e != dtOK {
			return m, e
		}
		var u ivUnit
		switch d := s[j]; {
		case !inTime && d == 'y':
			u = uYear
		case !inTime && d == 'm':
			u = uMonth
		case !inTime && d == 'w':
			u = uWeek
		case !inTime && d == 'd':
			u = uDay
		case inTime && d == 'h':
			u = uHour
		case inTime && d == 'm':
			u = uMinute
		case inTime && d == 's':
			u = uSecond
		default:
			return m, dtBad
		}
		m.apply(u, val, fval)
		s = s[j+1:]
	}
	return m, dtOK
}
