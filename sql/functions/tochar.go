package functions

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// ToChar is to_char(timestamp | timestamptz | date, format): the value
// written by a Postgres template (YYYY, MM, DD, HH24, MI, SS, MS, US,
// FF1-FF6, Mon/Month/Day/Dy in the pattern's case, AM/PM, TZ, OF, Q, WW,
// IW, IYYY, J, ..., with the FM prefix, TH/th suffixes, "quoted text" and
// backslash escapes). A timestamptz is written on the session's clock;
// an infinite value gives NULL, as in Postgres. to_char(number, format)
// (integer, bigint, numeric, double precision; smallint and real
// convert) follows Postgres' number templates (tochar_num.go). to_char
// of intervals is not built (0A000).
var ToChar = register(&Def{
	Name: "to_char", MinArgs: 2, MaxArgs: 2,
	Rule: func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		var err error
		switch t := args[0].Type(); {
		case t.Kind == sqltypes.Date:
			if args[0], err = b.Coerce(args[0], 0, ts); err != nil {
				return nil, text, err
			}
		case t.Kind == sqltypes.Timestamp || t.Kind == sqltypes.TimestampTZ:
		case t.Kind == sqltypes.Int2:
			if args[0], err = b.Coerce(args[0], 0, i4); err != nil {
				return nil, text, err
			}
		case t.Kind == sqltypes.Float4:
			if args[0], err = b.Coerce(args[0], 0, sqltypes.Float8Type); err != nil {
				return nil, text, err
			}
		case t.IsInteger() || t.Kind == sqltypes.Numeric || t.Kind == sqltypes.Float8:
		case t.Kind == sqltypes.Interval:
			return nil, text, b.Errorf(sqlerr.FeatureNotSupported, "to_char(%s, text) is not supported", t).
				WithHint("to_char formats dates, timestamps and numbers.")
		default:
			return nil, text, b.NoMatch(args)
		}
		if args[1], err = b.Coerce(args[1], 1, text); err != nil {
			return nil, text, err
		}
		return args, text, nil
	},
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		k := args[0].Type().Kind
		if k == sqltypes.Int4 || k == sqltypes.Int8 || k == sqltypes.Float8 || k == sqltypes.Numeric {
			if !vec.IsStringKind(args[1].Type().Kind) {
				return nil, errTypes
			}
			var scale int32
			if k == sqltypes.Numeric {
				scale = args[0].Type().Arrow().(*arrow.Decimal128Type).Scale
			}
			return rowKernel(text, 2, true, func(v []any) (any, error) {
				var nv numValue
				switch x := v[0].(type) {
				case int32:
					nv.exact = strconv.FormatInt(int64(x), 10)
				case int64:
					nv.exact = strconv.FormatInt(x, 10)
				case float64:
					nv.isFloat, nv.f = true, x
				case decimal128.Num:
					nv.exact = sqltypes.Decimal{Coef: x, Scale: scale}.String()
				default:
					return nil, errTypes
				}
				return toCharNumber(nv, v[1].(string))
			}), nil
		}
		if k != sqltypes.Timestamp && k != sqltypes.TimestampTZ || !vec.IsStringKind(args[1].Type().Kind) {
			return nil, errTypes
		}
		tz := k == sqltypes.TimestampTZ
		return func(in Input) (arrow.Array, error) {
			loc := time.UTC
			if tz {
				loc = in.Location()
			}
			return rowKernel(text, 2, true, func(v []any) (any, error) {
				us := v[0].(int64)
				if vec.IsInfTimestamp(us) {
					return nil, nil
				}
				return toChar(time.UnixMicro(us).In(loc), us, v[1].(string), tz)
			})(in)
		}, nil
	},
	Examples: []Example{
		{"to_char(TIMESTAMP '2024-03-05 14:07:09.123456', 'YYYY-MM-DD HH24:MI:SS.US')", "2024-03-05 14:07:09.123456"},
		{"to_char(TIMESTAMP '2024-03-05 04:07:09', 'FMMonth FMDDth, HH12 am')", "March 5th, 04 am"},
		{"to_char(DATE '2024-01-01', 'Dy DD Mon YYYY')", "Mon 01 Jan 2024"},
		{"to_char(1234567.891, 'FM9,999,999.00')", "1,234,567.89"},
		{"to_char(-5, '999PR')", "  <5>"},
		{"to_char(0.000123::float8, '9.99EEEE')", " 1.23e-04"},
	},
})

// toCharKeys are the template patterns, longest first within each start,
// as Postgres matches them.
var toCharKeys = []string{
	"A.D.", "A.M.", "AD", "AM", "B.C.", "BC", "CC", "DAY", "DDD", "DD", "DY", "Day", "Dy", "D",
	"FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "HH24", "HH12", "HH", "IDDD", "ID", "IW", "IYYY", "IYY", "IY", "I",
	"J", "MI", "MM", "MONTH", "MON", "MS", "Month", "Mon", "OF", "P.M.", "PM", "Q", "SSSSS", "SSSS", "SS",
	"TZ", "US", "WW", "W", "Y,YYY", "YYYY", "YYY", "YY", "Y",
	"a.d.", "a.m.", "ad", "am", "b.c.", "bc", "cc", "day", "ddd", "dd", "dy", "d", "ff1", "ff2", "ff3", "ff4",
	"ff5", "ff6", "hh24", "hh12", "hh", "iddd", "id", "iw", "iyyy", "iyy", "iy", "i", "j", "mi", "mm", "month",
	"mon", "ms", "of", "p.m.", "pm", "q", "sssss", "ssss", "ss", "tz", "us", "ww", "w", "y,yyy", "yyyy", "yyy",
	"yy", "y",
}

func matchToCharKey(f string) string {
	for _, k := range toCharKeys {
		if strings.HasPrefix(f, k) {
			return k
		}
	}
	return ""
}

// ordinal is the English suffix Postgres' TH gives n.
func ordinal(n int64, upper bool) string {
	s := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			s = "st"
		case 2:
			s = "nd"
		case 3:
			s = "rd"
		}
	}
	if upper {
		return strings.ToUpper(s)
	}
	return s
}

// caseLike writes name in the case of the pattern: all capitals,
// capitalised, or lower case.
func caseLike(pattern, name string) string {
	switch {
	case pattern == strings.ToUpper(pattern):
		return strings.ToUpper(name)
	case pattern == strings.ToLower(pattern):
		return strings.ToLower(name)
	}
	return name
}

func toChar(t time.Time, us int64, f string, tz bool) (string, error) {
	var out strings.Builder
	year, month, day := t.Date()
	hour, min, sec := t.Clock()
	frac := int64(t.Nanosecond() / 1000)
	bc := year <= 0
	y := int64(year)
	if bc {
		y = 1 - y // 1 BC is year 0 on Go's clock
	}
	isoYear, isoWeek := t.ISOWeek()
	for i := 0; i < len(f); {
		fm := false
		if strings.HasPrefix(f[i:], "FM") || strings.HasPrefix(f[i:], "fm") {
			fm = true
			i += 2
		}
		key := matchToCharKey(f[i:])
		if key == "" {
			switch c := f[i]; {
			case c == '"':
				// quoted text, with \" inside it
				i++
				for i < len(f) && f[i] != '"' {
					if f[i] == '\\' && i+1 < len(f) {
						i++
					}
					out.WriteByte(f[i])
					i++
				}
				i++
			case c == '\\' && i+1 < len(f) && f[i+1] == '"':
				out.WriteByte('"')
				i += 2
			default:
				out.WriteByte(c)
				i++
			}
			continue
		}
		i += len(key)
		num := func(v int64, width int) {
			var s string
			if fm {
				s = strconv.FormatInt(v, 10)
			} else {
				s = fmt.Sprintf("%0*d", width, v)
			}
			out.WriteString(s)
			switch {
			case strings.HasPrefix(f[i:], "TH"):
				out.WriteString(ordinal(v, true))
				i += 2
			case strings.HasPrefix(f[i:], "th"):
				out.WriteString(ordinal(v, false))
				i += 2
			}
		}
		name := func(s string, pad int) {
			s = caseLike(key, s)
			if !fm && len(s) < pad {
				s += strings.Repeat(" ", pad-len(s))
			}
			out.WriteString(s)
		}
		h12 := int64(hour % 12)
		if h12 == 0 {
			h12 = 12
		}
		switch strings.ToUpper(key) {
		case "YYYY":
			num(y, 4)
		case "Y,YYY":
			out.WriteString(fmt.Sprintf("%d,%03d", y/1000, y%1000))
		case "YYY":
			num(y%1000, 3)
		case "YY":
			num(y%100, 2)
		case "Y":
			num(y%10, 1)
		case "IYYY":
			num(int64(isoYear), 4)
		case "IYY":
			num(int64(isoYear)%1000, 3)
		case "IY":
			num(int64(isoYear)%100, 2)
		case "I":
			num(int64(isoYear)%10, 1)
		case "CC":
			c := (y + 99) / 100
			if bc {
				c = -c
			}
			num(c, 2)
		case "Q":
			num(int64(month-1)/3+1, 1)
		case "MM":
			num(int64(month), 2)
		case "MONTH":
			name(month.String(), 9)
		case "MON":
			name(month.String()[:3], 0)
		case "DD":
			num(int64(day), 2)
		case "DDD":
			num(int64(t.YearDay()), 3)
		case "IDDD":
			num(int64(isoWeek-1)*7+int64((int(t.Weekday())+6)%7)+1, 3)
		case "D":
			num(int64(t.Weekday())+1, 1)
		case "ID":
			num(int64((int(t.Weekday())+6)%7)+1, 1)
		case "DAY":
			name(t.Weekday().String(), 9)
		case "DY":
			name(t.Weekday().String()[:3], 0)
		case "WW":
			num(int64(t.YearDay()-1)/7+1, 2)
		case "W":
			num(int64(day-1)/7+1, 1)
		case "IW":
			num(int64(isoWeek), 2)
		case "J":
			num(us/vec.UsPerDay+2440588+floorAdj(us, t), 1)
		case "HH", "HH12":
			num(h12, 2)
		case "HH24":
			num(int64(hour), 2)
		case "MI":
			num(int64(min), 2)
		case "SS":
			num(int64(sec), 2)
		case "SSSS", "SSSSS":
			num(int64(hour*3600+min*60+sec), 1)
		case "MS":
			num(frac/1000, 3)
		case "US":
			num(frac, 6)
		case "FF1", "FF2", "FF3", "FF4", "FF5", "FF6":
			n := int(key[2] - '0')
			v := frac
			for k := n; k < 6; k++ {
				v /= 10
			}
			num(v, n)
		case "AM", "PM":
			out.WriteString(caseLike(key, map[bool]string{true: "PM", false: "AM"}[hour >= 12]))
		case "A.M.", "P.M.":
			out.WriteString(caseLike(key, map[bool]string{true: "P.M.", false: "A.M."}[hour >= 12]))
		case "AD", "BC":
			out.WriteString(caseLike(key, map[bool]string{true: "BC", false: "AD"}[bc]))
		case "A.D.", "B.C.":
			out.WriteString(caseLike(key, map[bool]string{true: "B.C.", false: "A.D."}[bc]))
		case "TZ":
			if tz {
				abbr, _ := t.Zone()
				out.WriteString(caseLike(key, abbr))
			}
		case "OF":
			if tz {
				_, off := t.Zone()
				sign := "+"
				if off < 0 {
					sign, off = "-", -off
				}
				out.WriteString(fmt.Sprintf("%s%02d", sign, off/3600))
				if m := off % 3600 / 60; m != 0 {
					out.WriteString(fmt.Sprintf(":%02d", m))
				}
			}
		default:
			return "", sqlerr.New(sqlerr.InternalError, "to_char: pattern %s", key)
		}
	}
	return out.String(), nil
}

// floorAdj corrects the Julian day of a wall-clock time: J counts days of
// the local date, not of the UTC instant.
func floorAdj(us int64, t time.Time) int64 {
	_, off := t.Zone()
	local := us + int64(off)*vec.UsPerSec
	return vec.FloorDiv(local, vec.UsPerDay) - us/vec.UsPerDay
}
