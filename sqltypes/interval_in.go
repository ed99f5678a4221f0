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
	uInvalid // what follows "ago": a number there is an error
)

// intervalUnits is Postgres' deltatktbl (units Postgres 15 accepts in
// interval input), looked up with the first 10 characters of a word.
var intervalUnits = map[string]ivUnit{
	"microsecon": uMicro, "us": uMicro, "usec": uMicro, "usecs": uMicro, "useconds": uMicro,
	"millisecon": uMilli, "ms": uMilli, "msec": uMilli, "msecs": uMilli, "mseconds": uMilli,
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
		m.addDays32(val)
		m.fracMicros(fval, usPerDay)
	case uWeek:
		m.addDays32(mul(7))
		m.fracDays(fval, 7)
	case uMonth:
		m.addMonths32(val)
		m.fracDays(fval, 30)
	case uYear:
		m.addYears32(val)
		m.fracYears(fval, 1)
	case uDecade:
		m.addYears32(mul(10))
		m.fracYears(fval, 10)
	case uCentury:
		m.addYears32(mul(100))
		m.fracYears(fval, 100)
	case uMillennium:
		m.addYears32(mul(1000))
		m.fracYears(fval, 1000)
	}
}

// The AdjustDays/Months/Years of Postgres refuse a value outside int32
// before adding it.
func fits32(v int64) bool { return v >= math.MinInt32 && v <= math.MaxInt32 }

func (m *itm) addDays32(v int64) {
	m.overflow = m.overflow || !fits32(v)
	m.addDays(v)
}

func (m *itm) addMonths32(v int64) {
	m.overflow = m.overflow || !fits32(v)
	m.addMonths(v)
}

func (m *itm) addYears32(v int64) {
	m.overflow = m.overflow || !fits32(v)
	m.addYears(v)
}

// Field masks, as Postgres' DTK_M bits: a field may be given once; a time
// field "hh:mm:ss" occupies hours, minutes and all the second units.
func unitMask(u ivUnit) uint32 { return 1 << uint(u) }

const (
	allSecsMask = 1<<uint(uSecond) | 1<<uint(uMilli) | 1<<uint(uMicro)
	timeMask    = 1<<uint(uHour) | 1<<uint(uMinute) | allSecsMask
)

type ivKind uint8

const (
	ivTime   ivKind = iota // 01:02:03.5
	ivSigned               // +5, -1.5, -01:02, -1-2 (Postgres' DTK_TZ)
	ivDate                 // 1-2, 1.5, 25.minute (DTK_DATE)
	ivNumber               // 5, .5
	ivString               // day, ago, @ is punctuation
)

type ivField struct {
	kind ivKind
	s    string
}

func isDigitB(c byte) bool { return c >= '0' && c <= '9' }
func isAlphaB(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isPunct(c byte) bool  { return c > ' ' && c < 0x7f && !isDigitB(c) && !isAlphaB(c) }

// splitInterval is Postgres' ParseDateTime as interval input sees it: it
// returns false on a character it does not accept, on more than 25 fields
// or when the fields overflow its 256-byte work buffer.
func splitInterval(s string) ([]ivField, bool) {
	var fs []ivField
	used := 0
	lower := func(b []byte) string {
		for i, c := range b {
			if c >= 'A' && c <= 'Z' {
				b[i] = c + 'a' - 'A'
			}
		}
		return string(b)
	}
	for i := 0; i < len(s); {
		c := s[i]
		var buf []byte
		var kind ivKind
		switch {
		case isDigitB(c):
			for i < len(s) && isDigitB(s[i]) {
				buf = append(buf, s[i])
				i++
			}
			kind = ivNumber
			if i < len(s) {
				switch d := s[i]; {
				case d == ':':
					kind = ivTime
					for i < len(s) && (isDigitB(s[i]) || s[i] == ':' || s[i] == '.') {
						buf = append(buf, s[i])
						i++
					}
				case d == '-' || d == '/' || d == '.':
					buf = append(buf, d)
					i++
					if i < len(s) && isDigitB(s[i]) {
						kind = ivDate
						if d == '.' {
							kind = ivNumber
						}
						for i < len(s) && isDigitB(s[i]) {
							buf = append(buf, s[i])
							i++
						}
						if i < len(s) && s[i] == d {
							kind = ivDate
							for i < len(s) && (isDigitB(s[i]) || s[i] == d) {
								buf = append(buf, s[i])
								i++
							}
						}
					} else {
						kind = ivDate
						for i < len(s) && (isDigitB(s[i]) || isAlphaB(s[i]) || s[i] == d) {
							buf = append(buf, s[i])
							i++
						}
					}
				}
			}
		case c == '.':
			buf = append(buf, c)
			i++
			for i < len(s) && isDigitB(s[i]) {
				buf = append(buf, s[i])
				i++
			}
			kind = ivNumber
		case isAlphaB(c):
			kind = ivString
			for i < len(s) && isAlphaB(s[i]) {
				buf = append(buf, s[i])
				i++
			}
			if i < len(s) && (s[i] == '-' || s[i] == '/' || s[i] == '.') {
				kind = ivDate
				for i < len(s) && (s[i] == '+' || s[i] == '-' || s[i] == '/' || s[i] == '_' || s[i] == '.' || s[i] == ':' || isDigitB(s[i]) || isAlphaB(s[i])) {
					buf = append(buf, s[i])
					i++
				}
			}
		case isSpace(c):
			i++
			continue
		case c == '+' || c == '-':
			buf = append(buf, c)
			i++
			for i < len(s) && isSpace(s[i]) {
				i++
			}
			switch {
			case i < len(s) && isDigitB(s[i]):
				kind = ivSigned
				for i < len(s) && (isDigitB(s[i]) || s[i] == ':' || s[i] == '.' || s[i] == '-') {
					buf = append(buf, s[i])
					i++
				}
			case i < len(s) && isAlphaB(s[i]):
				kind = ivString
				for i < len(s) && isAlphaB(s[i]) {
					buf = append(buf, s[i])
					i++
				}
			default:
				return nil, false
			}
		case isPunct(c):
			i++
			continue
		default:
			return nil, false
		}
		used += len(buf) + 1
		if len(fs) == 25 || used > 255 {
			return nil, false
		}
		fs = append(fs, ivField{kind, lower(buf)})
	}
	return fs, true
}

// parseIvNumber is strtoi64 followed by Postgres' fraction handling: the
// integer part, and the fraction carrying the field's sign. rest is what
// follows the integer when it is neither a fraction nor the end.
func parseIvNumber(s string) (val int64, fval float64, rest string, e dtErr) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	j := i
	for j < len(s) && isDigitB(s[j]) {
		j++
	}
	if j > i {
		v, err := strconv.ParseInt(s[:j], 10, 64)
		if err != nil {
			return 0, 0, "", dtFieldOverflow
		}
		val = v
	} else {
		j = 0 // strtol consumed nothing
	}
	rest = s[j:]
	if rest != "" && rest[0] == '.' {
		if len(rest) > 1 {
			f, err := strconv.ParseFloat(rest, 64)
			if err != nil || strings.ContainsAny(rest, "_xXpPnNiI") {
				return 0, 0, "", dtBad
			}
			fval = f
		}
		if s[0] == '-' {
			fval = -fval
		}
		rest = ""
	}
	return val, fval, rest, dtOK
}

// parseIntervalTime is Postgres' DecodeTimeForInterval for "h:m[:s[.f]]"
// and "m:s.f": minutes below 60, seconds up to 60 inclusive.
func parseIntervalTime(s string) (int64, dtErr) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, dtBad
	}
	var frac string
	last := parts[len(parts)-1]
	if k := strings.IndexByte(last, '.'); k >= 0 {
		frac, parts[len(parts)-1] = last[k:], last[:k]
	}
	var v [3]int64
	for k, p := range parts {
		if strings.IndexByte(p, '.') >= 0 {
			return 0, dtBad
		}
		if p == "" {
			continue // strtoint of nothing is 0
		}
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return 0, dtFieldOverflow
		}
		v[k] = n
	}
	h, m, sec := v[0], v[1], v[2]
	if len(parts) == 2 && frac != "" {
		h, m, sec = 0, v[0], v[1]
	}
	var fsec int64
	if frac != "" {
		f, err := strconv.ParseFloat("0"+frac+"0", 64) // "." alone is 0
		if err != nil {
			return 0, dtBad
		}
		fsec = int64(math.RoundToEven(f * 1e6))
	}
	if m > 59 || sec > 60 || fsec > usPerSec {
		return 0, dtFieldOverflow
	}
	us, ov := mulOv(h, usPerHour)
	us, ov = addOv(us, m*usPerMinute+sec*usPerSec+fsec, ov)
	if ov {
		return 0, dtFieldOverflow
	}
	return us, dtOK
}

// parseInterval parses interval input like Postgres 15's interval_in:
// Postgres style ("1 year 2 mons", "-1 day +02:00:00", "@ 1 hour ago",
// "3 days -04:00", "1-2" years-months, a bare number is seconds) and,
// when that is not the syntax, ISO 8601 ("P1Y2M3DT4H5M6.5S",
// "P0001-02-03T04:05:06").
func parseInterval(s string) (arrow.MonthDayNanoInterval, error) {
	m, e := decodeInterval(s)
	if e == dtBad {
		m, e = decodeISOInterval(s)
	}
	if e == dtOK && m.overflow {
		e = dtFieldOverflow
	}
	switch e {
	case dtOK:
	case dtFieldOverflow:
		return arrow.MonthDayNanoInterval{}, sqlerr.New(codeIntervalFieldOverflow, "interval field value out of range: \"%s\"", s)
	default:
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

// decodeInterval is Postgres 15's DecodeInterval for IntervalStyle
// postgres: fields are read right to left, a unit word gives the unit of
// the number before it, the number left of a time or of an hour count is
// days, and any other bare number takes the unit last seen (seconds at
// first).
func decodeInterval(s string) (itm, dtErr) {
	var m itm
	fs, ok := splitInterval(s)
	if !ok {
		return m, dtBad
	}
	var fmask uint32
	typ := uNone
	parsingUnit, before := false, false
	for i := len(fs) - 1; i >= 0; i-- {
		f := fs[i]
		var tmask uint32
		switch f.kind {
		case ivTime, ivSigned:
			body := f.s
			if f.kind == ivSigned {
				if strings.IndexByte(body[1:], ':') < 0 {
					goto number
				}
				body = body[1:]
			}
			{
				us, e := parseIntervalTime(body)
				if e != dtOK {
					if f.kind == ivSigned {
						goto number
					}
					return m, e
				}
				// Postgres stores the time over the microseconds read so
				// far, then flips the sign of the whole.
				m.us = us
				if f.kind == ivSigned && f.s[0] == '-' {
					m.us = -m.us
				}
				tmask = timeMask
				typ = uDay
				parsingUnit = false
			}
			goto checkMask
		case ivDate, ivNumber:
			goto number
		case ivString:
			if parsingUnit {
				return m, dtBad
			}
			w := f.s
			if len(w) > 10 {
				w = w[:10]
			}
			switch {
			case w == "ago":
				before = true
				typ = uInvalid
			case intervalUnits[w] != uNone:
				typ = intervalUnits[w]
				parsingUnit = true
			default:
				return m, dtBad
			}
			goto checkMask
		}
	number:
		{
			if typ == uNone {
				typ = uSecond
			}
			val, fval, rest, e := parseIvNumber(f.s)
			if e != dtOK {
				return m, e
			}
			switch {
			case rest == "":
			case rest[0] == '-': // SQL "years-months"
				j := 1
				for j < len(rest) && isDigitB(rest[j]) {
					j++
				}
				v2 := int64(0)
				if j > 1 {
					n, err := strconv.ParseInt(rest[1:j], 10, 64)
					if err != nil {
						return m, dtFieldOverflow
					}
					v2 = n
				}
				if v2 >= 12 {
					return m, dtFieldOverflow
				}
				if j != len(rest) {
					return m, dtBad
				}
				typ = uMonth
				if f.s[0] == '-' {
					v2 = -v2
				}
				v, ov := mulOv(val, 12)
				v, ov = addOv(v, v2, ov)
				if ov {
					return m, dtFieldOverflow
				}
				val, fval = v, 0
			default:
				return m, dtBad
			}
			if typ == uInvalid {
				return m, dtBad
			}
			m.apply(typ, val, fval)
			if m.overflow {
				return m, dtFieldOverflow
			}
			switch typ {
			case uSecond:
				tmask = unitMask(uSecond)
				if fval != 0 {
					tmask = allSecsMask
				}
			case uHour:
				tmask = unitMask(uHour)
				typ = uDay
			default:
				tmask = unitMask(typ)
			}
			parsingUnit = false
		}
	checkMask:
		if tmask&fmask != 0 {
			return m, dtBad
		}
		fmask |= tmask
	}
	if fmask == 0 || parsingUnit {
		return m, dtBad
	}
	if before {
		m.years, m.months, m.days, m.us = -m.years, -m.months, -m.days, -m.us
	}
	return m, dtOK
}

// parseISONumber is Postgres' ParseISO8601Number: a strtod number (not
// NaN, |v| <= 1e15) split into a truncated integer and a fraction.
func parseISONumber(s string) (val int64, fval float64, rest string, e dtErr) {
	if s == "" || !(isDigitB(s[0]) || s[0] == '-' || s[0] == '.') {
		return 0, 0, "", dtBad
	}
	// The longest prefix strtod accepts: [-]digits[.digits][e[+-]digits].
	i := 0
	if s[i] == '-' {
		i++
	}
	start := i
	for i < len(s) && isDigitB(s[i]) {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigitB(s[i]) {
			i++
		}
	}
	if i == start || i == start+1 && s[start] == '.' {
		return 0, 0, "", dtBad
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && isDigitB(s[k]) {
			k++
		}
		if k > j {
			i = k
		}
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, 0, "", dtBad
	}
	if v < -1e15 || v > 1e15 {
		return 0, 0, "", dtFieldOverflow
	}
	if v >= 0 {
		val = int64(math.Floor(v))
	} else {
		val = -int64(math.Floor(-v))
	}
	return val, v - float64(val), s[i:], dtOK
}

func isoIntegerWidth(s string) int {
	s = strings.TrimPrefix(s, "-")
	n := 0
	for n < len(s) && isDigitB(s[n]) {
		n++
	}
	return n
}

// decodeISOInterval is Postgres 15's DecodeISO8601Interval: the format
// with designators (P1Y2M3W4DT5H6M7S, upper case) and the alternative
// formats P0001-02-03T04:05:06 and P00010203T040506.
func decodeISOInterval(s string) (itm, dtErr) {
	var m itm
	if len(s) < 2 || s[0] != 'P' {
		return m, dtBad
	}
	s = s[1:]
	datePart, haveField := true, false
	ok := func() dtErr {
		if m.overflow {
			return dtFieldOverflow
		}
		return dtOK
	}
	for s != "" {
		if s[0] == 'T' {
			datePart, haveField = false, false
			s = s[1:]
			continue
		}
		fieldStart := s
		val, fval, rest, e := parseISONumber(s)
		if e != dtOK {
			return m, e
		}
		var unit byte
		if rest != "" {
			unit, s = rest[0], rest[1:]
		} else {
			s = ""
		}
		if datePart {
			switch unit {
			case 'Y':
				m.apply(uYear, val, fval)
			case 'M':
				m.apply(uMonth, val, fval)
			case 'W':
				m.apply(uWeek, val, fval)
			case 'D':
				m.apply(uDay, val, fval)
			case 'T', 0, '-':
				if unit != '-' && isoIntegerWidth(fieldStart) == 8 && !haveField {
					m.addYears32(val / 10000)
					m.addMonths32(val / 100 % 100)
					m.addDays32(val % 100)
					m.fracMicros(fval, usPerDay)
					if unit == 0 {
						return m, ok()
					}
					datePart, haveField = false, false
					continue
				}
				if haveField {
					return m, dtBad
				}
				m.apply(uYear, val, fval)
				if unit == 0 {
					return m, ok()
				}
				if unit == 'T' {
					datePart, haveField = false, false
					continue
				}
				if val, fval, s, e = parseISONumber(s); e != dtOK {
					return m, e
				}
				m.apply(uMonth, val, fval)
				if s == "" {
					return m, ok()
				}
				if s[0] == 'T' {
					datePart, haveField = false, false
					s = s[1:]
					continue
				}
				if s[0] != '-' {
					return m, dtBad
				}
				if val, fval, s, e = parseISONumber(s[1:]); e != dtOK {
					return m, e
				}
				m.apply(uDay, val, fval)
				if s == "" {
					return m, ok()
				}
				if s[0] == 'T' {
					datePart, haveField = false, false
					s = s[1:]
					continue
				}
				return m, dtBad
			default:
				return m, dtBad
			}
		} else {
			switch unit {
			case 'H':
				m.apply(uHour, val, fval)
			case 'M':
				m.apply(uMinute, val, fval)
			case 'S':
				m.apply(uSecond, val, fval)
			case 0, ':':
				if unit == 0 && isoIntegerWidth(fieldStart) == 6 && !haveField {
					m.apply(uHour, val/10000, 0)
					m.apply(uMinute, val/100%100, 0)
					m.apply(uSecond, val%100, 0)
					m.fracMicros(fval, 1)
					return m, ok()
				}
				if haveField {
					return m, dtBad
				}
				m.apply(uHour, val, fval)
				if unit == 0 {
					return m, ok()
				}
				if val, fval, s, e = parseISONumber(s); e != dtOK {
					return m, e
				}
				m.apply(uMinute, val, fval)
				if s == "" {
					return m, ok()
				}
				if s[0] != ':' {
					return m, dtBad
				}
				if val, fval, s, e = parseISONumber(s[1:]); e != dtOK {
					return m, e
				}
				m.apply(uSecond, val, fval)
				if s == "" {
					return m, ok()
				}
				return m, dtBad
			default:
				return m, dtBad
			}
		}
		if m.overflow {
			return m, dtFieldOverflow
		}
		haveField = true
	}
	return m, ok()
}
