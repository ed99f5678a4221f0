package sqltypes

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/asofsql/asofsql/sqlerr"
)

// ParseTimeZone resolves a value of the TimeZone setting as Postgres'
// SET TimeZone does: an IANA name (any case: "America/New_York",
// "utc"), a POSIX zone without daylight-saving rules counted west of
// Greenwich ("UTC+3", "<+0530>-05:30", "+05:30"), or a bare number of
// hours east ("-7", "5.5"). The location's String is what SHOW TimeZone
// prints. Anything else is 22023 invalid value for parameter "TimeZone".
func ParseTimeZone(name string) (*time.Location, error) {
	bad := sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"TimeZone\": \"%s\"", name)
	s := strings.TrimSpace(name)
	if s == "" {
		return nil, bad
	}
	// A number is hours east, as in SET TIME ZONE -7.
	if h, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "xXnNiI_") {
		if math.Abs(h) > 168 {
			return nil, bad
		}
		off := int(math.Round(h * 3600))
		return time.FixedZone(posixName(off), off), nil
	}
	if loc, ok := loadZone(s); ok {
		return loc, nil
	}
	// POSIX: a name (letters or <...>, possibly empty), then the offset.
	rest, zname := s, ""
	if strings.HasPrefix(rest, "<") {
		end := strings.IndexByte(rest, '>')
		if end < 0 {
			return nil, bad
		}
		zname, rest = rest[:end+1], rest[end+1:]
	} else {
		i := 0
		for i < len(rest) && isAlphaB(rest[i]) {
			i++
		}
		zname, rest = rest[:i], rest[i:]
	}
	if rest == "" || zname != "" && len(strings.Trim(zname, "<>")) == 0 {
		return nil, bad
	}
	off, ok := parsePosixOffset("x" + rest)
	if !ok {
		return nil, bad
	}
	return time.FixedZone(s, int(off)), nil
}

// posixName is how Postgres names a zone set by a number of hours:
// "<-07>+07", "<+05:30>-05:30".
func posixName(off int) string {
	f := func(o int) string {
		sign := '+'
		if o < 0 {
			sign, o = '-', -o
		}
		str := fmt.Sprintf("%c%02d", sign, o/3600)
		if o%3600 != 0 {
			str += fmt.Sprintf(":%02d", o/60%60)
			if o%60 != 0 {
				str += fmt.Sprintf(":%02d", o%60)
			}
		}
		return str
	}
	return "<" + f(off) + ">" + f(-off)
}

// LocalToUTC converts a wall-clock time in loc (microseconds, as a
// timestamp stores it) to the instant a timestamptz stores, as Postgres'
// DetermineTimeZoneOffset does: a time skipped by a spring-forward
// transition is read with the offset before it, a time repeated by a
// fall-back transition with the offset after it. ok is false on overflow.
func LocalToUTC(localUs int64, loc *time.Location) (us int64, ok bool) {
	us, ov := localToUTC(localUs, loc)
	return us, !ov
}
