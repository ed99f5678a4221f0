package sqltypes

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/asofsql/asofsql/sqlerr"
)

// nowFunc is the clock behind 'now', 'today', 'tomorrow' and 'yesterday';
// tests replace it.
var nowFunc = time.Now

type dtKind uint8

const (
	fNumber dtKind = iota // 2024, 20240102
	fDate                 // 2024-01-02, 01/02/2024, 2024-jan-02
	fTime                 // 03:04:05.123
	fSigned               // +05, -05:30 (a zone offset)
	fWord                 // jan, bc, utc, -infinity
	fGlued                // america/new_york, utc+3, jan-02-2024
)

// dateKeywords are the words of Postgres' datetktbl that a following
// '+' or digit does not glue to (read-only after package initialisation).
var dateKeywords = func() map[string]bool {
	m := map[string]bool{
		"ad": true, "allballs": true, "am": true, "at": true, "bc": true, "d": true, "dow": true,
		"doy": true, "epoch": true, "h": true, "infinity": true, "isodow": true, "isoyear": true,
		"j": true, "jd": true, "julian": true, "m": true, "mm": true, "now": true, "on": true,
		"pm": true, "s": true, "t": true, "today": true, "tomorrow": true, "y": true,
		"yesterday": true,
	}
	for w := range monthNames {
		m[w] = true
	}
	for w := range dayNames {
		m[w] = true
	}
	return m
}()

type dtField struct {
	kind dtKind
	s    string // lower-cased
	orig string // as written (zone names are case-sensitive on disk)
}

// splitDateTime is a reduced form of Postgres' ParseDateTime: it cuts the
// input into numbers, dates, times, signed offsets and words. Blanks and
// punctuation separate fields; an ISO "T" between digits separates date
// and time.
func splitDateTime(s string) ([]dtField, bool) {
	var fs []dtField
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	isAlpha := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	isT := func(i int) bool {
		return i+1 < len(s) && (s[i] == 'T' || s[i] == 't') && isDigit(s[i+1])
	}
	for i := 0; i < len(s); {
		c := s[i]
		start := i
		switch {
		case isSpace(c) || c == ',':
			i++
			continue
		case isDigit(c):
			for i < len(s) && isDigit(s[i]) {
				i++
			}
			kind := fNumber
			if i < len(s) {
				switch s[i] {
				case ':':
					kind = fTime
					for i < len(s) && (isDigit(s[i]) || s[i] == ':' || s[i] == '.') {
						i++
					}
				case '-', '/', '.':
					kind = fDate
					// As Postgres' ParseDateTime: all digits and matching
					// separators; with a month name as second part, any
					// letters and digits too (so "2024-jan-02T03" is one
					// field, which then fails).
					sep := s[i]
					i++
					if i < len(s) && isDigit(s[i]) {
						for i < len(s) && (isDigit(s[i]) || s[i] == sep) {
							i++
						}
					} else {
						for i < len(s) && (isDigit(s[i]) || s[i] == sep || isAlpha(s[i])) {
							i++
						}
					}
				}
			}
			fs = append(fs, dtField{kind, strings.ToLower(s[start:i]), s[start:i]})
			if i < len(s) && isT(i) {
				i++
			}
		case c == '+' || c == '-':
			i++
			if i < len(s) && isDigit(s[i]) {
				for i < len(s) && (isDigit(s[i]) || s[i] == ':' || s[i] == '.') {
					i++
				}
				fs = append(fs, dtField{fSigned, s[start:i], s[start:i]})
				continue
			}
			for i < len(s) && isAlpha(s[i]) {
				i++
			}
			if i == start+1 {
				return nil, false
			}
			fs = append(fs, dtField{fWord, strings.ToLower(s[start:i]), s[start:i]})
		case isAlpha(c):
			// As Postgres' ParseDateTime: letters, glued to what follows
			// when that is '-', '/' or '.', or '+' or a digit after a word
			// that is not a date keyword ("America/New_York", "UTC+3",
			// "EST5EDT", "jan-02-2024").
			for i < len(s) && isAlpha(s[i]) {
				i++
			}
			glue := false
			if i < len(s) {
				switch d := s[i]; {
				case d == '-' || d == '/' || d == '.':
					glue = true
				case d == '+' || isDigit(d):
					glue = !dateKeywords[strings.ToLower(s[start:i])]
				}
			}
			kind := fWord
			if glue {
				kind = fGlued
				for i < len(s) && (isAlpha(s[i]) || isDigit(s[i]) || strings.IndexByte("+-/_.:", s[i]) >= 0) {
					i++
				}
			}
			fs = append(fs, dtField{kind, strings.ToLower(s[start:i]), s[start:i]})
		case c != '.' && isPunct(c):
			i++ // other punctuation only delimits, as in ParseDateTime
		default:
			return nil, false
		}
	}
	return fs, true
}

var monthNames = map[string]int64{
	"jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3,
	"apr": 4, "april": 4, "may": 5, "jun": 6, "june": 6, "jul": 7, "july": 7,
	"aug": 8, "august": 8, "sep": 9, "sept": 9, "september": 9, "oct": 10,
	"october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12,
}

var dayNames = map[string]bool{
	"sun": true, "sunday": true, "mon": true, "monday": true, "tue": true,
	"tues": true, "tuesday": true, "wed": true, "wednesday": true, "thu": true,
	"thur": true, "thurs": true, "thursday": true, "fri": true, "friday": true,
	"sat": true, "saturday": true,
}

// zoneAbbrevs is a small subset of Postgres' Default timezone abbreviation
// set: fixed offsets in seconds east of UTC.
var zoneAbbrevs = map[string]int64{
	"utc": 0, "gmt": 0, "ut": 0, "z": 0, "zulu": 0,
	"est": -5 * 3600, "edt": -4 * 3600, "cst": -6 * 3600, "cdt": -5 * 3600,
	"mst": -7 * 3600, "mdt": -6 * 3600, "pst": -8 * 3600, "pdt": -7 * 3600,
	"cet": 3600, "cest": 2 * 3600, "eet": 2 * 3600, "eest": 3 * 3600,
	"wet": 0, "west": 3600, "bst": 3600, "jst": 9 * 3600,
}

// dtResult is a decoded date/time: either a special value or fields.
type dtResult struct {
	special string // "", "infinity", "-infinity", "epoch", "now", "today", "tomorrow", "yesterday"
	hasDate bool
	year    int64 // astronomical (1 BC = 0)
	mon     int64
	day     int64
	hasTime bool
	tod     int64 // microseconds since midnight (may be 24:00:00)
	hour    int64 // the hour as written, for AM/PM
	zone    zoneSpec
}

type zoneSpec struct {
	set bool
	off int64          // seconds east, when loc is nil
	loc *time.Location // named zone
}

type dtErr uint8

const (
	dtOK dtErr = iota
	dtBad
	dtFieldOverflow
	dtMDYOverflow // month > 12 read in MDY order: Postgres adds a datestyle hint
	dtBadZone
	dtZoneDisplacement
)

// decodeDateTime interprets the fields like Postgres' DecodeDateTime for
// the formats listed in doc.go.
func decodeDateTime(s string) (dtResult, dtErr, string) {
	var r dtResult
	fs, ok := splitDateTime(s)
	if !ok || len(fs) == 0 {
		return r, dtBad, ""
	}
	if len(fs) == 1 && fs[0].kind == fWord {
		switch w := fs[0].s; w {
		case "infinity", "-infinity", "epoch", "now":
			r.special = w
			return r, dtOK, ""
		}
	}
	var (
		bc, pm, am   bool
		textMonth    bool
		yearDigits   = 0 // digits of the year field, for two-digit years
		mdyOrder     bool
		yearSet      bool
		dayPending   []dtField // numbers seen next to a month name
		haveRelative bool
	)
	setYMD := func(y, m, d dtField, mdy bool) dtErr {
		if r.hasDate {
			return dtBad
		}
		yv, err1 := strconv.ParseInt(y.s, 10, 64)
		dv, err2 := strconv.ParseInt(d.s, 10, 64)
		if err1 != nil || err2 != nil {
			return dtBad
		}
		if mv, ok := monthNames[m.s]; ok {
			r.mon = mv
			textMonth = true
		} else if mv, err := strconv.ParseInt(m.s, 10, 64); err == nil {
			r.mon = mv
		} else {
			return dtBad
		}
		r.year, r.day, r.hasDate, yearSet = yv, dv, true, true
		yearDigits = len(y.s)
		mdyOrder = mdy
		return dtOK
	}
	for idx, f := range fs {
		switch f.kind {
		case fDate:
			sep := string(f.s[strings.IndexAny(f.s, "-/.")])
			parts := strings.Split(f.s, sep)
			if len(parts) != 3 {
				return r, dtBad, ""
			}
			for _, p := range parts {
				if p == "" {
					return r, dtBad, ""
				}
			}
			var e dtErr
			_, m0 := monthNames[parts[0]]
			_, m1 := monthNames[parts[1]]
			switch {
			case len(parts[0]) >= 3 && !m0: // YYYY-MM-DD, YYYY-Mon-DD
				// Three digits after a year are a day of the year to
				// Postgres, which then has no place for the third field.
				if len(parts[1]) == 3 && !m1 {
					return r, dtBad, ""
				}
				e = setYMD(dtField{s: parts[0]}, dtField{s: parts[1]}, dtField{s: parts[2]}, false)
			case m0: // Mon-DD-YYYY
				e = setYMD(dtField{s: parts[2]}, dtField{s: parts[0]}, dtField{s: parts[1]}, false)
			case m1: // DD-Mon-YYYY
				e = setYMD(dtField{s: parts[2]}, dtField{s: parts[1]}, dtField{s: parts[0]}, false)
			default: // MM-DD-YYYY (DateStyle MDY)
				e = setYMD(dtField{s: parts[2]}, dtField{s: parts[0]}, dtField{s: parts[1]}, true)
			}
			if e != dtOK {
				return r, e, ""
			}
		case fNumber:
			// Postgres' DecodeNumberField: six digits after a date and
			// before any time are hhmmss.
			if r.hasDate && !r.hasTime && len(f.s) == 6 && len(dayPending) == 0 {
				tod, hour, e := parseClock(f.s[:2] + ":" + f.s[2:4] + ":" + f.s[4:])
				if e != dtOK {
					return r, e, ""
				}
				r.hasTime, r.tod, r.hour = true, tod, hour
				continue
			}
			// Six or more digits before any date are ...YYMMDD, the year
			// being what is left.
			if !r.hasDate && !textMonth && len(dayPending) == 0 && len(f.s) >= 6 {
				if len(f.s) > 14 {
					return r, dtBad, ""
				}
				n := len(f.s) - 4
				if e := setYMD(dtField{s: f.s[:n]}, dtField{s: f.s[n : n+2]}, dtField{s: f.s[n+2:]}, false); e != dtOK {
					return r, e, ""
				}
				continue
			}
			dayPending = append(dayPending, f)
		case fTime:
			if r.hasTime {
				return r, dtBad, ""
			}
			tod, hour, e := parseClock(f.s)
			if e != dtOK {
				return r, e, ""
			}
			r.hasTime, r.tod, r.hour = true, tod, hour
		case fSigned:
			if r.zone.set || (!r.hasTime && !r.hasDate) {
				return r, dtBad, ""
			}
			off, ok := parseOffset(f.s)
			if !ok {
				return r, dtBad, ""
			}
			if off == math.MinInt64 {
				return r, dtZoneDisplacement, ""
			}
			r.zone = zoneSpec{set: true, off: off}
		case fGlued:
			if !r.hasDate && !textMonth && strings.IndexAny(f.s, "-/.") > 0 {
				// A date starting with a month name: "jan-02-2024".
				sep := string(f.s[strings.IndexAny(f.s, "-/.")])
				parts := strings.Split(f.s, sep)
				if len(parts) != 3 || monthNames[parts[0]] == 0 {
					return r, dtBad, ""
				}
				if e := setYMD(dtField{s: parts[2]}, dtField{s: parts[0]}, dtField{s: parts[1]}, false); e != dtOK {
					return r, e, ""
				}
				continue
			}
			if r.zone.set || !(r.hasDate || textMonth && len(dayPending) > 0) {
				return r, dtBad, ""
			}
			if loc, ok := loadZone(f.orig); ok {
				r.zone = zoneSpec{set: true, loc: loc}
				continue
			}
			if off, ok := parsePosixOffset(f.s); ok {
				r.zone = zoneSpec{set: true, off: off}
				continue
			}
			return r, dtBadZone, f.s
		case fWord:
			w := f.s
			switch {
			case w == "bc":
				bc = true
			case w == "ad":
			case w == "am":
				am = true
			case w == "pm":
				pm = true
			case w == "t" && idx+1 < len(fs) && fs[idx+1].kind == fTime:
			case w == "today" || w == "tomorrow" || w == "yesterday":
				if haveRelative || r.hasDate {
					return r, dtBad, ""
				}
				haveRelative = true
				r.special = w
			case monthNames[w] != 0:
				if textMonth || r.hasDate {
					return r, dtBad, ""
				}
				// A short number before the month name was taken as the
				// month by Postgres and becomes the day only if it can be
				// one; otherwise the month is given twice.
				if len(dayPending) == 1 && len(dayPending[0].s) <= 2 {
					if v, _ := strconv.ParseInt(dayPending[0].s, 10, 64); v < 1 || v > 31 {
						return r, dtBad, ""
					}
				}
				r.mon = monthNames[w]
				textMonth = true
			case dayNames[w]:
			default:
				if r.zone.set {
					return r, dtBad, ""
				}
				if off, ok := zoneAbbrevs[w]; ok {
					r.zone = zoneSpec{set: true, off: off}
					continue
				}
				if loc, ok := loadZone(f.orig); ok {
					r.zone = zoneSpec{set: true, loc: loc}
					continue
				}
				return r, dtBad, ""
			}
		}
	}
	if textMonth && !r.hasDate {
		// "Jan 2 2024", "2 Jan 2024", "January 8, 1999": the larger or
		// longer number is the year.
		if len(dayPending) != 2 {
			return r, dtBad, ""
		}
		a, b := dayPending[0], dayPending[1]
		if len(a.s) >= 3 {
			a, b = b, a
		}
		yv, err1 := strconv.ParseInt(b.s, 10, 64)
		dv, err2 := strconv.ParseInt(a.s, 10, 64)
		if err1 != nil || err2 != nil {
			return r, dtBad, ""
		}
		r.year, r.day, r.hasDate, yearSet, yearDigits = yv, dv, true, true, len(b.s)
		dayPending = nil
	}
	if len(dayPending) > 0 {
		return r, dtBad, ""
	}
	if haveRelative {
		if r.hasDate {
			return r, dtBad, ""
		}
	} else if !r.hasDate {
		return r, dtBad, ""
	}
	if r.hasDate && yearSet {
		if bc {
			if r.year <= 0 {
				return r, dtFieldOverflow, ""
			}
			r.year = -(r.year - 1)
		} else if yearDigits <= 2 {
			if r.year < 70 {
				r.year += 2000
			} else if r.year < 100 {
				r.year += 1900
			}
		} else if r.year == 0 {
			return r, dtFieldOverflow, ""
		}
	} else if bc {
		return r, dtBad, ""
	}
	if am || pm {
		if !r.hasTime || am && pm {
			return r, dtBad, ""
		}
		h := r.hour
		if h > 12 {
			return r, dtFieldOverflow, ""
		}
		if am && h == 12 {
			r.tod -= 12 * usPerHour
		} else if pm && h != 12 {
			r.tod += 12 * usPerHour
		}
	}
	if r.hasDate {
		if r.mon < 1 || r.mon > 12 {
			if mdyOrder {
				return r, dtMDYOverflow, ""
			}
			return r, dtFieldOverflow, ""
		}
		if r.day < 1 || r.day > monthDays(r.year, r.mon) {
			return r, dtFieldOverflow, ""
		}
	}
	return r, dtOK, ""
}

// loadZone resolves an IANA zone name. Postgres matches names without
// regard to case; the zone database is case-sensitive, so the written form
// is tried, then each word capitalised ("america/new_york"), then all upper
// case ("utc", "est5edt"), then the area capitalised and the rest upper
// case ("etc/utc").
func loadZone(name string) (*time.Location, bool) {
	if name == "" || strings.EqualFold(name, "local") || strings.ContainsAny(name, " \x00") {
		return nil, false
	}
	if loc, err := time.LoadLocation(name); err == nil {
		return loc, true
	}
	lower := strings.ToLower(name)
	b := []byte(lower)
	up := true
	for i, c := range b {
		if up && c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
		up = c == '/' || c == '_' || c == '-'
	}
	candidates := []string{string(b), strings.ToUpper(name)}
	if area, rest, ok := strings.Cut(lower, "/"); ok && area != "" {
		candidates = append(candidates, strings.ToUpper(area[:1])+area[1:]+"/"+strings.ToUpper(rest))
	}
	for _, c := range candidates {
		if loc, err := time.LoadLocation(c); err == nil {
			return loc, true
		}
	}
	return nil, false
}

// parsePosixOffset reads a POSIX TZ string without daylight-saving part,
// "UTC+3", "abc-1:30", "foo+0130": a name, then hours (up to 167, all the
// digits) with optional :mm and :ss, counted west of Greenwich. It
// returns seconds east.
func parsePosixOffset(w string) (int64, bool) {
	i := 0
	for i < len(w) && w[i] >= 'a' && w[i] <= 'z' {
		i++
	}
	if i == 0 || i == len(w) {
		return 0, false
	}
	rest := w[i:]
	sign := int64(1)
	if rest[0] == '+' || rest[0] == '-' {
		if rest[0] == '-' {
			sign = -1
		}
		rest = rest[1:]
	}
	parts := strings.Split(rest, ":")
	if len(parts) > 3 {
		return 0, false
	}
	var v [3]int64
	for k, p := range parts {
		if p == "" || k > 0 && len(p) > 2 || len(p) > 9 {
			return 0, false
		}
		for j := 0; j < len(p); j++ {
			if !isDigitB(p[j]) {
				return 0, false
			}
		}
		v[k], _ = strconv.ParseInt(p, 10, 64)
	}
	if v[0] > 167 || v[1] > 59 || v[2] > 59 {
		return 0, false
	}
	return -sign * (v[0]*3600 + v[1]*60 + v[2]), true
}

// parseClock parses a time of day h:mm[:ss[.ffffff]] ("mm:ss.fff" with a
// fraction and two parts is minutes and seconds, as in Postgres): hour <=
// 24 (24:00:00 only exactly), leap second 60 allowed. It returns the
// microseconds since midnight and the hour field, which AM/PM adjusts.
func parseClock(s string) (tod, hour int64, e dtErr) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, 0, dtBad
	}
	var fracStr string
	last := parts[len(parts)-1]
	if i := strings.IndexByte(last, '.'); i >= 0 {
		fracStr = last[i:]
		parts[len(parts)-1] = last[:i]
	}
	var v [3]int64
	for i, p := range parts {
		if p == "" || strings.IndexByte(p, '.') >= 0 {
			return 0, 0, dtBad
		}
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return 0, 0, dtFieldOverflow
		}
		v[i] = n
	}
	h, m, sec := v[0], v[1], v[2]
	if len(parts) == 2 && fracStr != "" {
		h, m, sec = 0, v[0], v[1]
	}
	var fsec int64
	if fracStr != "" {
		f, err := strconv.ParseFloat("0"+fracStr+"0", 64) // "." alone is 0
		if err != nil {
			return 0, 0, dtBad
		}
		fsec = int64(math.RoundToEven(f * 1e6))
	}
	if h > 24 || m > 59 || sec > 60 || h == 24 && (m > 0 || sec > 0 || fsec > 0) {
		return 0, 0, dtFieldOverflow
	}
	return h*usPerHour + m*usPerMinute + sec*usPerSec + fsec, h, dtOK
}

// parseOffset parses a numeric zone offset: ±h, ±hh, ±hmm, ±hhmm,
// ±hh:mm, ±hh:mm:ss. It returns seconds east; MinInt64 when a field is out
// of range (Postgres allows up to 15:59:59).
func parseOffset(s string) (int64, bool) {
	neg := s[0] == '-'
	body := s[1:]
	var h, m, sec int64
	var err error
	if strings.Contains(body, ":") {
		parts := strings.Split(body, ":")
		if len(parts) > 3 {
			return 0, false
		}
		var v [3]int64
		for i, p := range parts {
			if p == "" || len(p) > 2 && i > 0 {
				return 0, false
			}
			if v[i], err = strconv.ParseInt(p, 10, 64); err != nil {
				return 0, false
			}
		}
		h, m, sec = v[0], v[1], v[2]
	} else {
		if strings.Contains(body, ".") {
			return 0, false
		}
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return 0, false
		}
		// As DecodeTimezone: more than two digits end in the minutes
		// (there is no run-together hhmmss).
		h = n
		if len(body) > 2 {
			h, m = n/100, n%100
		}
	}
	if h > 15 || m > 59 || sec > 59 {
		return math.MinInt64, true
	}
	off := h*3600 + m*60 + sec
	if neg {
		off = -off
	}
	return off, true
}

// zoneOffsetAt returns the UTC offset (seconds east) of loc at instant sec.
func zoneOffsetAt(loc *time.Location, sec int64) int64 {
	_, off := time.Unix(sec, 0).In(loc).Zone()
	return int64(off)
}

// localToUTC converts a wall-clock time in loc to an instant the way
// Postgres' DetermineTimeZoneOffset does: a time skipped by a
// spring-forward transition is read with the offset before it, a time
// repeated by a fall-back transition with the offset after it.
func localToUTC(localUs int64, loc *time.Location) (int64, bool) {
	if loc == time.UTC {
		return localUs, false
	}
	sec, _ := floorDiv(localUs, usPerSec)
	type period struct {
		off        int64
		start, end int64 // [start, end); MinInt64/MaxInt64 when unbounded
	}
	periodAt := func(at int64) period {
		t := time.Unix(at, 0).In(loc)
		_, off := t.Zone()
		st, en := t.ZoneBounds()
		p := period{off: int64(off), start: math.MinInt64, end: math.MaxInt64}
		if !st.IsZero() {
			p.start = st.Unix()
		}
		if !en.IsZero() {
			p.end = en.Unix()
		}
		return p
	}
	mid := periodAt(sec - zoneOffsetAt(loc, sec))
	var buf [3]period
	ps := buf[:0]
	if mid.start != math.MinInt64 {
		ps = append(ps, periodAt(mid.start-1))
	}
	ps = append(ps, mid)
	if mid.end != math.MaxInt64 {
		ps = append(ps, periodAt(mid.end))
	}
	chosen, found := mid.off, false
	for _, p := range ps { // later periods win: "after" on fall-back
		if u := sec - p.off; u >= p.start && u < p.end {
			chosen, found = p.off, true
		}
	}
	if !found {
		for i := 0; i+1 < len(ps); i++ {
			a, b := ps[i], ps[i+1]
			if sec-a.off >= b.start && sec-b.off < b.start {
				chosen = a.off // spring-forward gap: "before"
				break
			}
		}
	}
	return addOv(localUs, -chosen*usPerSec, false)
}

// dateTimeError builds the Postgres error for a failed date/time decode.
func dateTimeError(e dtErr, typ, s, zone string) error {
	switch e {
	case dtFieldOverflow:
		return sqlerr.New(sqlerr.DatetimeFieldOverflow, "date/time field value out of range: \"%s\"", s)
	case dtMDYOverflow:
		return sqlerr.New(sqlerr.DatetimeFieldOverflow, "date/time field value out of range: \"%s\"", s).
			WithHint("Perhaps you need a different \"datestyle\" setting.")
	case dtZoneDisplacement:
		return sqlerr.New(codeInvalidZoneDisplacement, "time zone displacement out of range: \"%s\"", s)
	case dtBadZone:
		return sqlerr.New(sqlerr.InvalidParameterValue, "time zone \"%s\" not recognized", zone)
	}
	return sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type %s: \"%s\"", typ, s)
}

// relativeDay resolves today/tomorrow/yesterday/now to a date in loc.
func relativeDay(special string, loc *time.Location) (y, m, d int64) {
	t := nowFunc().In(loc)
	switch special {
	case "tomorrow":
		t = t.AddDate(0, 0, 1)
	case "yesterday":
		t = t.AddDate(0, 0, -1)
	}
	return int64(t.Year()), int64(t.Month()), int64(t.Day())
}

// parseDate parses DATE input; a time of day and zone may follow and are
// ignored, as in Postgres.
func parseDate(s string, o *Options) (int64, error) {
	if days, _, _, _, _, ok := fastDateTime(s); ok && validDate32(days) {
		return days, nil
	}
	return parseDateSlow(s, o)
}

// parseDateSlow is parseDate without the fast path (tests compare them).
func parseDateSlow(s string, o *Options) (int64, error) {
	r, e, zone := decodeDateTime(s)
	if e != dtOK {
		return 0, dateTimeError(e, "date", s, zone)
	}
	switch r.special {
	case "infinity":
		return DateInfinity, nil
	case "-infinity":
		return DateNegInfinity, nil
	case "epoch":
		return 0, nil
	case "now", "today", "tomorrow", "yesterday":
		r.year, r.mon, r.day = relativeDay(r.special, o.loc())
	}
	if !validJulianDate(r.year, r.mon, r.day) {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "date out of range: \"%s\"", s)
	}
	days := date2j(r.year, r.mon, r.day) - unixEpochJD
	if !validDate32(days) {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "date out of range: \"%s\"", s)
	}
	return days, nil
}

// parseTimestamp parses TIMESTAMP and TIMESTAMPTZ input. For timestamptz
// a written zone (offset, abbreviation or IANA name) wins over the session
// zone; for timestamp any zone is ignored, as in Postgres.
func parseTimestamp(s string, t Type, o *Options) (int64, error) {
	if days, tod, off, _, hasOff, ok := fastDateTime(s); ok {
		us := days*usPerDay + tod // a 4-digit year cannot overflow
		ov := false
		if t.Kind == TimestampTZ {
			if hasOff {
				us -= off * usPerSec
			} else {
				us, ov = localToUTC(us, o.loc())
			}
		}
		if us = roundTimestamp(us, t); !ov && validTimestamp(us) {
			return us, nil
		}
	}
	return parseTimestampSlow(s, t, o)
}

// parseTimestampSlow is parseTimestamp without the fast path.
func parseTimestampSlow(s string, t Type, o *Options) (int64, error) {
	typ := "timestamp"
	if t.Kind == TimestampTZ {
		typ = "timestamp with time zone"
	}
	loc := o.loc()
	r, e, zone := decodeDateTime(s)
	if e != dtOK {
		return 0, dateTimeError(e, typ, s, zone)
	}
	switch r.special {
	case "infinity":
		return TimestampInfinity, nil
	case "-infinity":
		return TimestampNegInfinity, nil
	case "epoch":
		return 0, nil
	case "now":
		return roundTimestamp(nowFunc().UnixMicro(), t), nil
	case "today", "tomorrow", "yesterday":
		r.year, r.mon, r.day = relativeDay(r.special, loc)
	}
	if !validJulianDate(r.year, r.mon, r.day) {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range: \"%s\"", s)
	}
	days := date2j(r.year, r.mon, r.day) - unixEpochJD
	us, ov := mulOv(days, usPerDay)
	us, ov = addOv(us, r.tod, ov)
	// The local time of an instant near the int64 limit may itself not
	// fit (it is printed that way in zones east of UTC): work a day
	// earlier and add the day back after the zone shift.
	shift := int64(0)
	if ov && days > 0 && t.Kind == TimestampTZ {
		shift = usPerDay
		us, ov = mulOv(days-1, usPerDay)
		us, ov = addOv(us, r.tod, ov)
	}
	if t.Kind == TimestampTZ && !ov {
		switch {
		case r.zone.set && r.zone.loc != nil:
			us, ov = localToUTC(us, r.zone.loc)
		case r.zone.set:
			us, ov = addOv(us, -r.zone.off*usPerSec, ov)
		default:
			us, ov = localToUTC(us, loc)
		}
	}
	us, ov = addOv(us, shift, ov)
	if ov {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range: \"%s\"", s)
	}
	us = roundTimestamp(us, t)
	if !validTimestamp(us) {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range: \"%s\"", s)
	}
	return us, nil
}

// roundTimestamp applies a TIMESTAMP(p) precision, rounding half away from
// zero like Postgres' AdjustTimestampForTypmod. Postgres counts from
// 2000-01-01, so "away from zero" is away from that instant: between 1970
// and 2000 half-way values round down.
func roundTimestamp(us int64, t Type) int64 {
	if t.Precision == NoLimit || t.Precision >= 6 || us == TimestampInfinity || us == TimestampNegInfinity {
		return us
	}
	scale := int64(1)
	for i := t.Precision; i < 6; i++ {
		scale *= 10
	}
	half := scale / 2
	if us < math.MinInt64+pgEpochMicros+half || us > math.MaxInt64-half {
		return us // (at the ends of int64: left to the range check)
	}
	x := us - pgEpochMicros // pgEpochMicros is a multiple of every scale
	if x >= 0 {
		return (x+half)/scale*scale + pgEpochMicros
	}
	return -((-x + half) / scale * scale) + pgEpochMicros
}
