package functions

import (
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// Reading a date or timestamp by a to_char template, as Postgres 15's
// to_timestamp(text, text) and to_date(text, text) do (formatting.c's
// DCH_from_char, outside its "std" mode): template spaces and separators
// match one space or separator of the input or none, other template
// characters (and "quoted text") skip one input character, spaces before
// a field are skipped, a numeric field followed by a separator (or the end,
// or with FM) takes as many digits as there are and otherwise exactly its
// width, names match case-insensitively, trailing input is ignored. FX
// switches to fixed mode. Fields that only to_char writes, or that
// asofsql does not read, are 0A000.

// fromCharFields are the values a template read.
type fromCharFields struct {
	year, yearDigits, month, day, doy, julian int
	hour, minute, second, micro               int
	hasYear, hasMonth, hasDay, hasDoy, hasJ   bool
	clock12, pm, hasAMPM                      bool
	tzSign, tzh, tzm                          int
	hasTZ                                     bool
}

var (
	monthNamesFull = []string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"}
	dayNamesFull   = []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}
)

// fromCharKeys are the fields to_timestamp reads, longest first.
var fromCharKeys = []string{
	"A.M.", "P.M.", "a.m.", "p.m.", "Y,YYY", "y,yyy", "MONTH", "Month", "month", "HH24", "HH12", "hh24", "hh12",
	"YYYY", "yyyy", "IDDD", "iddd", "IYYY", "iyyy", "FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "ff1", "ff2", "ff3", "ff4", "ff5", "ff6",
	"SSSSS", "sssss", "SSSS", "ssss", "DDD", "ddd", "YYY", "yyy", "MON", "Mon", "mon", "DAY", "Day", "day", "TZH", "TZM", "tzh", "tzm",
	"IYY", "iyy", "AM", "PM", "am", "pm", "AD", "BC", "ad", "bc", "A.D.", "B.C.", "a.d.", "b.c.", "CC", "cc", "DD", "dd", "DY", "Dy", "dy",
	"HH", "hh", "ID", "id", "IW", "iw", "IY", "iy", "MI", "mi", "MM", "mm", "MS", "ms", "OF", "of", "RM", "rm", "SS", "ss", "TZ", "tz",
	"US", "us", "WW", "ww", "YY", "yy", "D", "d", "I", "i", "J", "j", "Q", "q", "W", "w", "Y", "y", "FX", "fx",
}

type fcNode struct {
	kind byte   // 'k' field, ' ' space, 's' separator, 'c' other character
	key  string // upper-cased field name
	name string // as the template spells it, for messages
	fm   bool
	th   bool
}

func isFCSeparator(c byte) bool {
	return c > 0x20 && c < 0x7f && !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9')
}

func isFCSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func parseFromCharTemplate(f string) []fcNode {
	var nodes []fcNode
	for i := 0; i < len(f); {
		fm := false
		if strings.HasPrefix(f[i:], "FM") || strings.HasPrefix(f[i:], "fm") {
			fm, i = true, i+2
		}
		key := ""
		for _, k := range fromCharKeys {
			if strings.HasPrefix(f[i:], k) {
				key = k
				break
			}
		}
		if key != "" {
			n := fcNode{kind: 'k', key: strings.ToUpper(key), name: key, fm: fm}
			i += len(key)
			if strings.HasPrefix(f[i:], "TH") || strings.HasPrefix(f[i:], "th") {
				n.th, i = true, i+2
			}
			nodes = append(nodes, n)
			continue
		}
		if fm {
			i -= 2 // FM before no field: literal characters
			nodes = append(nodes, fcNode{kind: 'c'}, fcNode{kind: 'c'})
			i += 2
			continue
		}
		switch c := f[i]; {
		case c == '"':
			i++
			for i < len(f) && f[i] != '"' {
				if f[i] == '\\' && i+1 < len(f) {
					i++
				}
				nodes = append(nodes, fcNode{kind: 'c'})
				i++
			}
			i++
		case c == '\\' && i+1 < len(f) && f[i+1] == '"':
			nodes = append(nodes, fcNode{kind: 'c'})
			i += 2
		case isFCSpace(c):
			nodes = append(nodes, fcNode{kind: ' '})
			i++
		case isFCSeparator(c):
			nodes = append(nodes, fcNode{kind: 's'})
			i++
		default:
			nodes = append(nodes, fcNode{kind: 'c'})
			i += max(1, len(string([]rune(f[i:])[:1])))
		}
	}
	return nodes
}

// numericFieldWidth is the digits a numeric field reads when the next
// template item is a digit; 0 for fields that are not numeric.
var numericFieldWidth = map[string]int{
	"YYYY": 4, "YYY": 3, "YY": 2, "Y": 1, "MM": 2, "DD": 2, "DDD": 3, "HH": 2, "HH12": 2, "HH24": 2,
	"MI": 2, "SS": 2, "MS": 3, "US": 6, "FF1": 1, "FF2": 2, "FF3": 3, "FF4": 4, "FF5": 5, "FF6": 6,
	"J": 1, "TZH": 2, "TZM": 2,
}

// nextIsSeparator is formatting.c's is_next_separator: whether the input
// after node k's digits is known not to be a digit.
func nextIsSeparator(nodes []fcNode, k int) bool {
	if nodes[k].th {
		return true
	}
	if k+1 >= len(nodes) {
		return true
	}
	n := nodes[k+1]
	if n.kind == 'k' {
		return numericFieldWidth[n.key] == 0
	}
	return true // Postgres also counts a digit in the template here; see the caller
}

func errFromChar(format string, a ...any) *sqlerr.Error {
	return sqlerr.New(sqlerr.InvalidDatetimeFormat, format, a...)
}

const fmHint = `If your source string is not fixed-width, try using the "FM" modifier.`

// readFromChar reads s by template f.
func readFromChar(s, f string) (fromCharFields, error) {
	var out fromCharFields
	nodes := parseFromCharTemplate(f)
	pos, extra, fx := 0, 0, false
	for k, n := range nodes {
		if pos >= len(s) {
			break // the input ended: later fields keep their defaults, as in Postgres
		}
		switch n.kind {
		case ' ', 's':
			if fx {
				if pos < len(s) {
					pos++
				}
			} else {
				extra--
				if pos < len(s) && (isFCSpace(s[pos]) || isFCSeparator(s[pos])) {
					pos++
					extra++
				}
			}
			continue
		case 'c':
			if !fx && extra > 0 {
				extra--
			} else if pos < len(s) {
				pos++
			}
			continue
		}
		if n.key == "FX" {
			fx = true
			continue
		}
		if !fx {
			for pos < len(s) && isFCSpace(s[pos]) {
				pos++
				extra++
			}
		}
		num := func(width int) (int, int, error) {
			p := pos
			for p < len(s) && isFCSpace(s[p]) {
				p++
			}
			copyEnd := min(len(s), p+width)
			copyText := s[p:copyEnd]
			var v, used int
			var ok bool
			if n.fm || nextIsSeparator(nodes, k) {
				limit := -1
				if strings.HasPrefix(n.key, "FF") {
					limit = width // a fraction's digits past its precision are not its
				}
				v, used, ok = strtol(s[p:], limit)
			} else {
				if len(s)-p < width {
					return 0, 0, errFromChar("source string too short for \"%s\" formatting field", n.name).
						WithDetail("Field requires %d characters, but only %d remain.", width, len(s)-p).WithHint(fmHint)
				}
				v, used, ok = strtol(copyText, -1)
				if used > 0 && used < width {
					return 0, 0, errFromChar("invalid value \"%s\" for \"%s\"", copyText, n.name).
						WithDetail("Field requires %d characters, but only %d could be parsed.", width, used).WithHint(fmHint)
				}
			}
			if used == 0 {
				return 0, 0, errFromChar("invalid value \"%s\" for \"%s\"", copyText, n.name).WithDetail("Value must be an integer.")
			}
			if !ok {
				return 0, 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "value for \"%s\" in source string is out of range", n.name).
					WithDetail("Value must be in the range %d to %d.", -2147483648, 2147483647)
			}
			pos = p + used
			if n.th && pos+2 <= len(s) {
				pos += 2
			}
			return v, used, nil
		}
		name := func(names []string, abbrev bool) (int, error) {
			rest := strings.ToLower(s[pos:])
			for i, nm := range names {
				if abbrev {
					nm = nm[:3]
				}
				if strings.HasPrefix(rest, nm) {
					pos += len(nm)
					return i, nil
				}
			}
			word := s[pos:]
			if len(word) > 9 {
				word = word[:9]
			}
			return 0, errFromChar("invalid value \"%s\" for \"%s\"", word, n.name).
				WithDetail("The given value did not match any of the allowed values for this field.")
		}
		var err error
		var v, used int
		switch n.key {
		case "YYYY", "YYY", "YY", "Y":
			if v, used, err = num(numericFieldWidth[n.key]); err == nil {
				if n.key != "YYYY" && used < 4 {
					v = adjustPartialYear(v)
				}
				out.year, out.hasYear = v, true
			}
		case "Y,YYY":
			var millennia, years, used2 int
			var ok bool
			if millennia, used, ok = strtol(s[pos:], -1); used > 0 && ok && pos+used < len(s) && s[pos+used] == ',' {
				years, used2, ok = strtol(s[pos+used+1:], 3)
			}
			if used == 0 || used2 == 0 || !ok {
				return out, errFromChar("invalid input string for \"Y,YYY\"")
			}
			pos += used + 1 + used2
			out.year, out.hasYear = millennia*1000+years, true
		case "MM":
			v, _, err = num(2)
			out.month, out.hasMonth = v, true
		case "MONTH":
			v, err = name(monthNamesFull, false)
			out.month, out.hasMonth = v+1, true
		case "MON":
			v, err = name(monthNamesFull, true)
			out.month, out.hasMonth = v+1, true
		case "DAY":
			_, err = name(dayNamesFull, false)
		case "DY":
			_, err = name(dayNamesFull, true)
		case "DD":
			v, _, err = num(2)
			out.day, out.hasDay = v, true
		case "DDD":
			v, _, err = num(3)
			out.doy, out.hasDoy = v, true
		case "J":
			v, _, err = num(1)
			out.julian, out.hasJ = v, true
		case "HH", "HH12":
			v, _, err = num(2)
			out.hour, out.clock12 = v, true
		case "HH24":
			v, _, err = num(2)
			out.hour = v
		case "MI":
			v, _, err = num(2)
			out.minute = v
		case "SS":
			v, _, err = num(2)
			out.second = v
		case "MS", "US", "FF1", "FF2", "FF3", "FF4", "FF5", "FF6":
			width := numericFieldWidth[n.key]
			if v, used, err = num(width); err == nil {
				if used > width {
					return out, sqlerr.New(sqlerr.DatetimeFieldOverflow, "date/time field value out of range: \"%s\"", s)
				}
				scale := 6 - used
				if n.key == "MS" {
					scale = 3 - used
				}
				for ; scale > 0; scale-- {
					v *= 10
				}
				if n.key == "MS" {
					v *= 1000
				}
				out.micro = v
			}
		case "AM", "PM", "A.M.", "P.M.":
			rest := strings.ToLower(s[pos:])
			dots := strings.Contains(n.key, ".")
			switch {
			case !dots && strings.HasPrefix(rest, "am"), dots && strings.HasPrefix(rest, "a.m."):
				out.pm = false
			case !dots && strings.HasPrefix(rest, "pm"), dots && strings.HasPrefix(rest, "p.m."):
				out.pm = true
			default:
				return out, errFromChar("invalid value \"%s\" for \"%s\"", s[pos:min(len(s), pos+len(n.name))], n.name).
					WithDetail("The given value did not match any of the allowed values for this field.")
			}
			pos += len(n.key)
			out.hasAMPM, out.clock12 = true, true
		case "TZH":
			switch {
			case pos < len(s) && (s[pos] == '+' || s[pos] == '-' || s[pos] == ' '):
				out.tzSign = 1
				if s[pos] == '-' {
					out.tzSign = -1
				}
				pos++
			case extra > 0 && pos > 0 && s[pos-1] == '-':
				out.tzSign = -1
			default:
				out.tzSign = 1
			}
			v, _, err = num(2)
			out.tzh, out.hasTZ = v, true
		case "TZM":
			if out.tzSign == 0 {
				out.tzSign = 1
			}
			v, _, err = num(2)
			out.tzm, out.hasTZ = v, true
		case "TZ", "OF":
			return out, sqlerr.New(sqlerr.FeatureNotSupported, "formatting field \"%s\" is only supported in to_char", n.name)
		default:
			return out, sqlerr.New(sqlerr.FeatureNotSupported, "formatting field \"%s\" is not supported in to_timestamp and to_date", n.name).
				WithHint("Supported: YYYY YYY YY Y Y,YYY MM Mon Month DD DDD Dy Day J HH HH12 HH24 MI SS MS US FF1-FF6 AM PM TZH TZM, with FM, TH and FX.")
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// strtol reads an optionally signed decimal integer at the start of s
// (after spaces), at most max characters of it when max >= 0: the value,
// the characters used (0: none) and whether it fits an int32.
func strtol(s string, maxLen int) (int, int, bool) {
	if maxLen >= 0 && len(s) > maxLen {
		s = s[:maxLen]
	}
	i := 0
	for i < len(s) && isFCSpace(s[i]) {
		i++
	}
	start := i
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	d := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == d {
		return 0, 0, true
	}
	v, err := strconv.ParseInt(s[start:i], 10, 32)
	return int(v), i, err == nil
}

// adjustPartialYear is formatting.c's adjust_partial_year_to_2020.
func adjustPartialYear(y int) int {
	switch {
	case y < 70:
		return y + 2000
	case y < 100:
		return y + 1900
	case y < 520:
		return y + 2000
	case y < 1000:
		return y + 1000
	}
	return y
}

// fromCharTime assembles the fields into a wall-clock time (UTC fields)
// as do_to_timestamp does; the error names the input as Postgres does.
func fromCharTime(f fromCharFields, input string) (time.Time, error) {
	bad := func() error {
		return sqlerr.New(sqlerr.DatetimeFieldOverflow, "date/time field value out of range: \"%s\"", input)
	}
	if f.clock12 {
		if f.hour < 1 || f.hour > 12 {
			return time.Time{}, errFromChar("hour \"%d\" is invalid for the 12-hour clock", f.hour).
				WithHint("Use the 24-hour clock, or give an hour between 1 and 12.")
		}
		if f.pm && f.hour < 12 {
			f.hour += 12
		} else if !f.pm && f.hour == 12 {
			f.hour = 0
		}
	}
	year, month, day := 0, 1, 1 // no year: 1 BC, as in Postgres
	if f.hasYear {
		year = f.year
	}
	if f.hasMonth {
		month = f.month
	}
	if f.hasDay {
		day = f.day
	}
	var date time.Time
	switch {
	case f.hasJ:
		date = time.Date(-4713, time.November, 24, 0, 0, 0, 0, time.UTC).AddDate(0, 0, f.julian)
	case f.hasDoy && !f.hasMonth && !f.hasDay:
		if f.doy < 1 || f.doy > 366 || f.doy == 366 && isLeap(int64(year)) == 0 {
			return time.Time{}, bad()
		}
		date = time.Date(year, time.January, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, f.doy-1)
	default:
		if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) {
			return time.Time{}, bad()
		}
		date = time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC)
	}
	if f.hour < 0 || f.hour > 23 || f.minute < 0 || f.minute > 59 || f.second < 0 || f.second > 60 || f.micro < 0 || f.micro > 999999 {
		return time.Time{}, bad()
	}
	return date.Add(time.Duration(f.hour)*time.Hour + time.Duration(f.minute)*time.Minute +
		time.Duration(f.second)*time.Second + time.Duration(f.micro)*time.Microsecond), nil
}

func daysIn(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// prepareToTimestampText is to_timestamp(text, template)'s kernel: the
// timestamptz the text denotes, read by a to_char template in the session
// time zone (or the TZH:TZM the text gives).
func prepareToTimestampText(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
	if len(args) != 2 || t.Kind != sqltypes.TimestampTZ || !kindsAre(args, stringKind, stringKind) {
		return nil, errTypes
	}
	return func(in Input) (arrow.Array, error) {
		loc := in.Location()
		return rowKernel(tstz, 2, true, func(v []any) (any, error) {
			s := v[0].(string)
			f, err := readFromChar(s, v[1].(string))
			if err != nil {
				return nil, err
			}
			wall, err := fromCharTime(f, s)
			if err != nil {
				return nil, err
			}
			us := wall.UnixMicro()
			if f.hasTZ {
				return us - int64(f.tzSign*(f.tzh*3600+f.tzm*60))*1_000_000, nil
			}
			utc, ok := sqltypes.LocalToUTC(us, loc)
			if !ok {
				return nil, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
			}
			return utc, nil
		})(in)
	}, nil
}

// ToDate is to_date(text, template): the date the text denotes, read by
// a to_char template (time fields are read and ignored).
var ToDate = register(&Def{
	Name: "to_date", MinArgs: 2, MaxArgs: 2,
	Rule: fixed(sqltypes.DateType, text, text),
	Prepare: prepareIf(func([]expr.Expr, sqltypes.Type) Kernel {
		return rowKernel(sqltypes.DateType, 2, true, func(v []any) (any, error) {
			s := v[0].(string)
			f, err := readFromChar(s, v[1].(string))
			if err != nil {
				return nil, err
			}
			wall, err := fromCharTime(f, s)
			if err != nil {
				return nil, err
			}
			return vec.FloorDiv(wall.Unix(), 86400), nil
		})
	}, sqltypes.Date, stringKind, stringKind),
	Examples: []Example{{"to_date('05.03.2024', 'DD.MM.YYYY')", "2024-03-05"}, {"to_date('2024 065', 'YYYY DDD')", "2024-03-05"}},
})
