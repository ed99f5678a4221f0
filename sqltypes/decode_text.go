package sqltypes

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/sqlerr"
)

// Codes Postgres uses that sqlerr does not name.
const (
	codeIntervalFieldOverflow   = "22015"
	codeCharNotInRepertoire     = "22021"
	codeInvalidZoneDisplacement = "22009"
	codeUntranslatable          = "22P05"
)

// DecodeText parses s in Postgres text input syntax for type t and appends
// the value to b, whose Arrow type must be t.Arrow(). On error nothing is
// appended and the error is a *sqlerr.Error with Postgres' SQLSTATE and
// wording. NULL is the caller's business (b.AppendNull()).
func DecodeText(b array.Builder, t Type, s string, o *Options) error {
	switch t.Kind {
	case Bool:
		v, err := parseBool(s)
		if err != nil {
			return err
		}
		b.(*array.BooleanBuilder).Append(v)
	case Int2:
		v, err := parseInt(s, 16, "smallint")
		if err != nil {
			return err
		}
		b.(*array.Int16Builder).Append(int16(v))
	case Int4:
		v, err := parseInt(s, 32, "integer")
		if err != nil {
			return err
		}
		b.(*array.Int32Builder).Append(int32(v))
	case Int8:
		v, err := parseInt(s, 64, "bigint")
		if err != nil {
			return err
		}
		b.(*array.Int64Builder).Append(v)
	case Float4:
		v, err := parseFloat(s, 32)
		if err != nil {
			return err
		}
		b.(*array.Float32Builder).Append(float32(v))
	case Float8:
		v, err := parseFloat(s, 64)
		if err != nil {
			return err
		}
		b.(*array.Float64Builder).Append(v)
	case Numeric:
		db := b.(*array.Decimal128Builder)
		dt := db.Type().(*arrow.Decimal128Type)
		v, err := parseNumeric(s, dt.Precision, dt.Scale)
		if err != nil {
			return err
		}
		db.Append(v)
	case Text, Unknown:
		if err := checkText(s); err != nil {
			return err
		}
		b.(*array.StringBuilder).Append(s)
	case Varchar:
		v, err := checkVarchar(s, t)
		if err != nil {
			return err
		}
		b.(*array.StringBuilder).Append(v)
	case JSON, JSONB:
		v, err := ParseJSON(s, t.Kind == JSONB)
		if err != nil {
			return err
		}
		b.(*array.StringBuilder).Append(v)
	case Bytea:
		v, err := parseBytea(s)
		if err != nil {
			return err
		}
		b.(*array.BinaryBuilder).Append(v)
	case Date:
		v, err := parseDate(s, o)
		if err != nil {
			return err
		}
		b.(*array.Date32Builder).Append(arrow.Date32(v))
	case Timestamp, TimestampTZ:
		v, err := parseTimestamp(s, t, o)
		if err != nil {
			return err
		}
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(v))
	case Interval:
		v, err := parseInterval(s)
		if err != nil {
			return err
		}
		b.(*array.MonthDayNanoIntervalBuilder).Append(v)
	case Array:
		return decodeArrayText(b, t, s, o)
	case Void:
		b.(*array.BooleanBuilder).Append(true) // void_in accepts any text
	default:
		return sqlerr.New(sqlerr.FeatureNotSupported, "text input for type %s is not supported", t)
	}
	return nil
}

func invalidSyntax(typ, s string) *sqlerr.Error {
	return sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type %s: \"%s\"", typ, s)
}

// isSpace is C's isspace in the C locale, which Postgres uses to skip
// blanks around numbers and booleans.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func trimSpace(s string) string {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

// parseBool follows Postgres' parse_bool: surrounding blanks, any case,
// and unique prefixes of true/false/yes/no, "on"/"off" (at least two
// letters), and 1/0.
func parseBool(s string) (bool, error) {
	v := strings.ToLower(trimSpace(s))
	if v != "" {
		switch v[0] {
		case 't':
			if strings.HasPrefix("true", v) {
				return true, nil
			}
		case 'f':
			if strings.HasPrefix("false", v) {
				return false, nil
			}
		case 'y':
			if strings.HasPrefix("yes", v) {
				return true, nil
			}
		case 'n':
			if strings.HasPrefix("no", v) {
				return false, nil
			}
		case 'o':
			if len(v) >= 2 && strings.HasPrefix("on", v) {
				return true, nil
			}
			if len(v) >= 2 && strings.HasPrefix("off", v) {
				return false, nil
			}
		case '1':
			if v == "1" {
				return true, nil
			}
		case '0':
			if v == "0" {
				return false, nil
			}
		}
	}
	return false, invalidSyntax("boolean", s)
}

// parseInt follows Postgres 15's pg_strtoint16/32/64: blanks, an
// optional sign, at least one digit, blanks. Like Postgres it reports an
// overflowing digit run as out of range even when junk follows it.
func parseInt(s string, bits int, typ string) (int64, error) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	if i == len(s) || !isDigitB(s[i]) {
		return 0, invalidSyntax(typ, s)
	}
	// Accumulate negatively so the minimum value fits, as Postgres does.
	lim := int64(-1) << (bits - 1)
	var n int64
	for ; i < len(s) && isDigitB(s[i]); i++ {
		d := int64(s[i] - '0')
		if n < (lim+d)/10 {
			return 0, sqlerr.New(sqlerr.NumericValueOutOfRange, "value \"%s\" is out of range for type %s", s, typ)
		}
		n = n*10 - d
	}
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i != len(s) {
		return 0, invalidSyntax(typ, s)
	}
	if !neg {
		if n == lim {
			return 0, sqlerr.New(sqlerr.NumericValueOutOfRange, "value \"%s\" is out of range for type %s", s, typ)
		}
		n = -n
	}
	return n, nil
}

// parseFloat follows Postgres' float4in/float8in: blanks around a number
// strtod accepts (including NaN, [+-]Inf, [+-]Infinity in any case);
// overflow, and underflow to zero, are out of range.
func parseFloat(s string, bits int) (float64, error) {
	typ := "double precision"
	if bits == 32 {
		typ = "real"
	}
	v := trimSpace(s)
	if v == "" || strings.ContainsRune(v, '_') {
		return 0, invalidSyntax(typ, s)
	}
	num := v
	if lv := strings.ToLower(strings.TrimLeft(v, "+-")); lv == "nan" {
		num = "NaN" // glibc's strtod also takes a signed NaN
	} else if strings.HasPrefix(lv, "0x") && !strings.ContainsAny(lv, "p") {
		num = v + "p0" // strtod's hex floats need no binary exponent
	}
	// Postgres 15 names the number strtod read (float8) or the whole
	// input (float4) when it is out of range.
	outOfRange := func(number string) error {
		if bits == 32 {
			number = s
		}
		return sqlerr.New(sqlerr.NumericValueOutOfRange, "\"%s\" is out of range for type %s", number, typ)
	}
	f, err := strconv.ParseFloat(num, bits)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, outOfRange(v)
		}
		// strtod reads the longest number in front; Postgres reports that
		// number out of range before it looks at what follows.
		if n := decimalPrefix(v); n > 0 && n < len(v) {
			pf, perr := strconv.ParseFloat(v[:n], bits)
			if perr != nil || pf == 0 && hasNonZeroMantissa(v[:n]) {
				return 0, outOfRange(v[:n])
			}
		}
		return 0, invalidSyntax(typ, s)
	}
	if f == 0 && hasNonZeroMantissa(v) {
		return 0, outOfRange(v)
	}
	return f, nil
}

// decimalPrefix is the length of the decimal number strtod would read at
// the start of v: [sign]digits[.digits][e[sign]digits], 0 if none.
func decimalPrefix(v string) int {
	i := 0
	if i < len(v) && (v[i] == '+' || v[i] == '-') {
		i++
	}
	digits := 0
	for i < len(v) && isDigitB(v[i]) {
		i, digits = i+1, digits+1
	}
	if i < len(v) && v[i] == '.' {
		i++
		for i < len(v) && isDigitB(v[i]) {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return 0
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		j := i + 1
		if j < len(v) && (v[j] == '+' || v[j] == '-') {
			j++
		}
		k := j
		for k < len(v) && isDigitB(v[k]) {
			k++
		}
		if k > j {
			i = k
		}
	}
	return i
}

// hasNonZeroMantissa reports whether a decimal float literal has a non-zero
// digit before its exponent (so that a zero result means underflow).
func hasNonZeroMantissa(v string) bool {
	v = strings.TrimLeft(v, "+-")
	stop := "eE"
	if len(v) > 1 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X') {
		v, stop = v[2:], "pP"
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if strings.IndexByte(stop, c) >= 0 {
			return false
		}
		if c != '0' && c != '.' {
			return true
		}
	}
	return false
}

// numericOverflow is Postgres' apply_typmod error.
func numericOverflow(p, s int32) *sqlerr.Error {
	e := sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric field overflow")
	if m := p - s; m > 0 {
		return e.WithDetail("A field with precision %d, scale %d must round to an absolute value less than 10^%d.", p, s, m)
	}
	return e.WithDetail("A field with precision %d, scale %d must round to an absolute value less than 1.", p, s)
}

// parseNumeric parses Postgres numeric input (blanks, sign, digits with an
// optional point, optional exponent) and rounds it half away from zero to
// scale sc, then checks it fits precision p.
func parseNumeric(s string, p, sc int32) (decimal128.Num, error) {
	v := trimSpace(s)
	neg := false
	body := v
	if body != "" && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	switch strings.ToLower(body) {
	case "nan":
		if body == v {
			return decimal128.Num{}, sqlerr.New(sqlerr.FeatureNotSupported, "numeric NaN cannot be stored").
				WithDetail("NUMERIC values are stored as Arrow decimal128, which has no NaN.")
		}
	case "infinity", "inf":
		return decimal128.Num{}, numericOverflow(p, sc).
			WithDetail("A field with precision %d, scale %d cannot hold an infinite value.", p, sc)
	}
	var mant []byte // significant digits, leading zeros dropped
	frac := 0       // digits after the point
	seenDigit, seenPoint := false, false
	i := 0
	for ; i < len(body); i++ {
		c := body[i]
		if c >= '0' && c <= '9' {
			seenDigit = true
			if seenPoint {
				frac++
			}
			if len(mant) > 0 || c != '0' {
				mant = append(mant, c)
			}
			continue
		}
		if c == '.' && !seenPoint {
			seenPoint = true
			continue
		}
		break
	}
	if !seenDigit {
		return decimal128.Num{}, invalidSyntax("numeric", s)
	}
	exp := 0
	if i < len(body) && (body[i] == 'e' || body[i] == 'E') {
		j := i + 1
		if j < len(body) && (body[j] == '+' || body[j] == '-') {
			j++
		}
		k := j
		for k < len(body) && body[k] >= '0' && body[k] <= '9' {
			k++
		}
		if k == j {
			return decimal128.Num{}, invalidSyntax("numeric", s)
		}
		// Postgres bounds the exponent at INT_MAX/2 before anything else.
		e, err := strconv.Atoi(body[i+1 : k])
		if err != nil || e >= math.MaxInt32/2 || e <= -(math.MaxInt32/2) {
			return decimal128.Num{}, sqlerr.New(sqlerr.NumericValueOutOfRange, "value overflows numeric format")
		}
		exp = e
		i = k
	}
	if i != len(body) {
		return decimal128.Num{}, invalidSyntax("numeric", s)
	}
	// Postgres' own limits on any numeric: 131072 digits before the point
	// and a display scale of at most 16383.
	if frac-exp > 16383 || len(mant) > 0 && len(mant)+exp-frac > 131072 {
		return decimal128.Num{}, sqlerr.New(sqlerr.NumericValueOutOfRange, "value overflows numeric format")
	}
	n, err := scaleDigits(mant, exp-frac, p, sc)
	if err != nil {
		return n, err
	}
	if neg {
		n = n.Negate()
	}
	return n, nil
}

// scaleDigits returns round(mant * 10^e10 * 10^sc) half away from zero,
// mant being decimal digits without leading zeros, or numeric field
// overflow when the result needs more than p digits.
func scaleDigits(mant []byte, e10 int, p, sc int32) (decimal128.Num, error) {
	shift := e10 + int(sc)
	if shift >= 0 {
		if len(mant) > 0 {
			if len(mant)+shift > int(p) {
				return decimal128.Num{}, numericOverflow(p, sc)
			}
			for ; shift > 0; shift-- {
				mant = append(mant, '0')
			}
		}
	} else {
		k := -shift
		switch {
		case k > len(mant):
			mant = mant[:0]
		case k == len(mant):
			up := mant[0] >= '5'
			mant = mant[:0]
			if up {
				mant = append(mant, '1')
			}
		default:
			up := mant[len(mant)-k] >= '5'
			mant = mant[:len(mant)-k]
			if up {
				mant = incDigits(mant)
			}
		}
		if len(mant) > int(p) {
			return decimal128.Num{}, numericOverflow(p, sc)
		}
	}
	return digitsToNum(mant), nil
}

// incDigits adds one to a decimal digit string.
func incDigits(d []byte) []byte {
	for j := len(d) - 1; j >= 0; j-- {
		if d[j] != '9' {
			d[j]++
			return d
		}
		d[j] = '0'
	}
	return append([]byte{'1'}, d...)
}

// digitsToNum converts at most 38 decimal digits to a decimal128.
func digitsToNum(d []byte) decimal128.Num {
	if len(d) <= 19 {
		var u uint64
		for _, c := range d {
			u = u*10 + uint64(c-'0')
		}
		return decimal128.FromU64(u)
	}
	var bi big.Int
	bi.SetString(string(d), 10)
	return decimal128.FromBigInt(&bi)
}

// checkText rejects what Postgres' UTF8 server encoding rejects: invalid
// UTF-8 and NUL bytes.
func checkText(s string) error {
	for i := 0; i < len(s); {
		c := s[i]
		if c != 0 && c < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if c == 0 || r == utf8.RuneError && n <= 1 {
			l := 1 // Postgres' pg_utf_mblen: the length the lead byte claims
			switch {
			case c&0xe0 == 0xc0:
				l = 2
			case c&0xf0 == 0xe0:
				l = 3
			case c&0xf8 == 0xf0:
				l = 4
			}
			if i+l > len(s) {
				l = len(s) - i
			}
			var sb strings.Builder
			for j := 0; j < l; j++ {
				if j > 0 {
					sb.WriteByte(' ')
				}
				fmt.Fprintf(&sb, "0x%02x", s[i+j])
			}
			return sqlerr.New(codeCharNotInRepertoire, "invalid byte sequence for encoding \"UTF8\": %s", sb.String())
		}
		i += n
	}
	return nil
}

// checkVarchar applies varchar(n): longer values are an error unless the
// excess is all spaces, which Postgres silently truncates.
func checkVarchar(s string, t Type) (string, error) {
	if err := checkText(s); err != nil {
		return "", err
	}
	if t.Length == NoLimit || len(s) <= t.Length {
		return s, nil
	}
	n := 0
	for i := range s {
		if n == t.Length {
			if strings.TrimRight(s[i:], " ") != "" {
				return "", sqlerr.New(sqlerr.StringDataRightTruncation, "value too long for type character varying(%d)", t.Length)
			}
			return s[:i], nil
		}
		n++
	}
	return s, nil
}

// parseBytea accepts Postgres' hex format (\x followed by hex pairs,
// blanks allowed between pairs) and escape format (\\ and \ooo octal).
func parseBytea(s string) ([]byte, error) {
	if len(s) >= 2 && s[0] == '\\' && s[1] == 'x' {
		out := make([]byte, 0, (len(s)-2)/2)
		for i := 2; i < len(s); {
			c := s[i]
			if c == ' ' || c == '\n' || c == '\t' || c == '\r' { // hex_decode's blanks, between pairs only
				i++
				continue
			}
			hi, ok := unhex(c)
			if !ok {
				return nil, hexDigitErr(s[i:])
			}
			if i+1 >= len(s) {
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "invalid hexadecimal data: odd number of digits")
			}
			lo, ok := unhex(s[i+1])
			if !ok {
				return nil, hexDigitErr(s[i+1:])
			}
			out = append(out, hi<<4|lo)
			i += 2
		}
		return out, nil
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 < len(s) && s[i+1] == '\\' {
			out = append(out, '\\')
			i += 2
			continue
		}
		if i+3 < len(s) && s[i+1] >= '0' && s[i+1] <= '3' && isOctal(s[i+2]) && isOctal(s[i+3]) {
			out = append(out, (s[i+1]-'0')<<6|(s[i+2]-'0')<<3|(s[i+3]-'0'))
			i += 4
			continue
		}
		return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type bytea")
	}
	return out, nil
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

func hexDigitErr(rest string) error {
	r, _ := utf8.DecodeRuneInString(rest)
	return sqlerr.New(sqlerr.InvalidParameterValue, "invalid hexadecimal digit: \"%c\"", r)
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
