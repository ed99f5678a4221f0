package sqltypes

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// EncodeText appends the Postgres text output of a[i] to dst. The caller
// checks a.IsNull(i) first; a must have type t.Arrow() (a mismatch is a
// programming error and panics like any failed type assertion).
func EncodeText(dst []byte, a arrow.Array, i int, t Type, o *Options) []byte {
	switch t.Kind {
	case Bool:
		if a.(*array.Boolean).Value(i) {
			return append(dst, 't')
		}
		return append(dst, 'f')
	case Int2:
		return strconv.AppendInt(dst, int64(a.(*array.Int16).Value(i)), 10)
	case Int4:
		return strconv.AppendInt(dst, int64(a.(*array.Int32).Value(i)), 10)
	case Int8:
		return strconv.AppendInt(dst, a.(*array.Int64).Value(i), 10)
	case Float4:
		return appendFloat(dst, float64(a.(*array.Float32).Value(i)), 32, o.efd())
	case Float8:
		return appendFloat(dst, a.(*array.Float64).Value(i), 64, o.efd())
	case Numeric:
		d := a.(*array.Decimal128)
		scale := d.DataType().(*arrow.Decimal128Type).Scale
		return appendNumeric(dst, d.Value(i), scale, t.displayArg())
	case Text, Varchar, Unknown, JSON, JSONB:
		return append(dst, a.(*array.String).Value(i)...)
	case Bytea:
		return appendByteaHex(dst, a.(*array.Binary).Value(i))
	case Date:
		return appendDate(dst, int64(a.(*array.Date32).Value(i)))
	case Timestamp:
		return appendTimestamp(dst, int64(a.(*array.Timestamp).Value(i)), nil)
	case TimestampTZ:
		return appendTimestamp(dst, int64(a.(*array.Timestamp).Value(i)), o.loc())
	case Interval:
		v := a.(*array.MonthDayNanoInterval).Value(i)
		return appendInterval(dst, v.Months, v.Days, v.Nanoseconds/1000)
	case Array:
		return encodeArrayText(dst, a, i, t, o)
	case Void:
		return dst
	}
	panic(fmt.Sprintf("sqltypes: EncodeText of unhandled type %s", t))
}

// appendFloat formats like Postgres' float4out/float8out: with
// extra_float_digits > 0 the shortest round-trip digits, in exponent form
// when the decimal exponent is < -4 or >= 6 (float4) / 15 (float8);
// otherwise C's %.{N}g with N = 6 or 15 plus extra_float_digits.
func appendFloat(dst []byte, f float64, bits int, efd int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	digs := 15
	if bits == 32 {
		digs = 6
	}
	if efd <= 0 {
		p := digs + efd
		if p < 1 {
			p = 1
		}
		// Go's 'g' with a precision behaves like C's %g: trailing zeros
		// dropped, exponent of at least two digits.
		return strconv.AppendFloat(dst, f, 'g', p, 64)
	}
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], f, 'e', -1, bits) // -d.ddde±XX
	if math.Abs(f) >= boundaryMin[bits/64] {
		s = strictShortest(buf[:0], s, f, bits)
	}
	neg := s[0] == '-'
	if neg {
		s = s[1:]
		dst = append(dst, '-')
	}
	e := 0
	for j := len(s) - 1; j >= 0; j-- {
		if s[j] == 'e' {
			for _, c := range s[j+2:] {
				e = e*10 + int(c-'0')
			}
			if s[j+1] == '-' {
				e = -e
			}
			s = s[:j]
			break
		}
	}
	var dig [24]byte
	nd := 0
	for _, c := range s {
		if c != '.' {
			dig[nd] = c
			nd++
		}
	}
	digits := dig[:nd]
	if e < -4 || e >= digs {
		dst = append(dst, digits[0])
		if nd > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if e < 0 {
			dst = append(dst, '-')
			e = -e
		} else {
			dst = append(dst, '+')
		}
		if e < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendInt(dst, int64(e), 10)
	}
	if e < 0 {
		dst = append(dst, '0', '.')
		for j := 0; j < -e-1; j++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	if nd <= e+1 {
		dst = append(dst, digits...)
		for j := nd; j < e+1; j++ {
			dst = append(dst, '0')
		}
		return dst
	}
	dst = append(dst, digits[:e+1]...)
	dst = append(dst, '.')
	return append(dst, digits[e+1:]...)
}

// boundaryMin is the magnitude below which no short decimal can lie
// exactly on the rounding boundary between two floats (float32, float64):
// a boundary m·2^e with e < -1 (float32) or e < 0 (float64) needs more
// significant digits than the shortest representation ever has.
var boundaryMin = [2]float64{1 << 22, 1 << 51}

// strictShortest returns the shortest digits that lie strictly inside f's
// rounding interval. Go's shortest formatting, like Ryu with
// acceptBounds, may return a decimal exactly halfway to the neighbouring
// float (it still reads back as f by round-half-even); Postgres' Ryu
// does not accept the bounds and prints one more digit then.
func strictShortest(dst, s []byte, f float64, bits int) []byte {
	var next, prev float64
	if bits == 32 {
		f32 := float32(f)
		next = float64(math.Nextafter32(f32, float32(math.Inf(1))))
		prev = float64(math.Nextafter32(f32, float32(math.Inf(-1))))
	} else {
		next, prev = math.Nextafter(f, math.Inf(1)), math.Nextafter(f, math.Inf(-1))
	}
	hi, lo := midpoint(f, next), midpoint(f, prev)
	for {
		e := 0
		for e < len(s) && s[e] != 'e' {
			e++
		}
		var r big.Rat
		if _, ok := r.SetString(string(s)); !ok || (r.Cmp(hi) != 0 && r.Cmp(lo) != 0) {
			return s
		}
		nd := e
		if nd > 1 {
			nd-- // the point
		}
		if s[0] == '-' {
			nd--
		}
		s = strconv.AppendFloat(dst[:0], f, 'e', nd, bits)
	}
}

// midpoint returns (a+b)/2 exactly; for infinite b (next to MaxFloat) the
// boundary is never met by a short decimal, so a's own value is returned
// shifted past it.
func midpoint(a, b float64) *big.Rat {
	ra := new(big.Rat)
	if math.IsInf(b, 0) {
		ra.SetFloat64(a)
		return ra.Add(ra, ra)
	}
	ra.SetFloat64(a)
	rb := new(big.Rat).SetFloat64(b)
	ra.Add(ra, rb)
	return ra.Quo(ra, big.NewRat(2, 1))
}

// appendNumeric prints a decimal stored at scale with disp fractional
// digits ("12.340"). disp < 0 (an unconstrained NUMERIC of unknown display
// scale, stored at a fixed scale) drops trailing fractional zeros: Postgres
// would print the scale the value was entered with, which a fixed-scale
// decimal does not remember.
func appendNumeric(dst []byte, n decimal128.Num, scale int32, disp int) []byte {
	neg, digits, s := numericDigits(n, scale, disp)
	if neg {
		dst = append(dst, '-')
	}
	if s <= 0 {
		return append(dst, digits...)
	}
	if len(digits) <= s {
		dst = append(dst, '0', '.')
		for j := len(digits); j < s; j++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[:len(digits)-s]...)
	dst = append(dst, '.')
	return append(dst, digits[len(digits)-s:]...)
}

func appendByteaHex(dst, b []byte) []byte {
	dst = append(dst, '\\', 'x')
	n := len(dst)
	dst = append(dst, make([]byte, hex.EncodedLen(len(b)))...)
	hex.Encode(dst[n:], b)
	return dst
}

func append2(dst []byte, v int64) []byte {
	return append(dst, byte('0'+v/10), byte('0'+v%10))
}

// appendYMD prints an astronomical year as Postgres does: at least four
// digits, BC years as their positive count (the caller appends " BC").
func appendYMD(dst []byte, y, m, d int64) []byte {
	if y <= 0 {
		y = 1 - y
	}
	if y < 1000 {
		for p := int64(1000); p > y && p > 1; p /= 10 {
			dst = append(dst, '0')
		}
	}
	dst = strconv.AppendInt(dst, y, 10)
	dst = append(dst, '-')
	dst = append2(dst, m)
	dst = append(dst, '-')
	return append2(dst, d)
}

func appendDate(dst []byte, days int64) []byte {
	switch days {
	case DateInfinity:
		return append(dst, "infinity"...)
	case DateNegInfinity:
		return append(dst, "-infinity"...)
	}
	y, m, d := j2date(days + unixEpochJD)
	dst = appendYMD(dst, y, m, d)
	if y <= 0 {
		dst = append(dst, " BC"...)
	}
	return dst
}

// appendTimestamp prints a timestamp in ISO style; with a location it is a
// timestamptz printed in that zone followed by its UTC offset.
func appendTimestamp(dst []byte, us int64, loc *time.Location) []byte {
	switch us {
	case TimestampInfinity:
		return append(dst, "infinity"...)
	case TimestampNegInfinity:
		return append(dst, "-infinity"...)
	}
	off := int64(0)
	days, tod := floorDiv(us, usPerDay)
	if loc != nil && loc != time.UTC {
		sec, _ := floorDiv(us, usPerSec)
		_, o := time.Unix(sec, 0).In(loc).Zone()
		off = int64(o)
		// Shift the time of day, not us: near the int64 limits the local
		// time may not fit in microseconds.
		tod += off * usPerSec
		if tod < 0 {
			days--
			tod += usPerDay
		} else if tod >= usPerDay {
			days++
			tod -= usPerDay
		}
	}
	y, m, d := j2date(days + unixEpochJD)
	dst = appendYMD(dst, y, m, d)
	dst = append(dst, ' ')
	dst = appendClock(dst, tod/usPerHour, tod/usPerMinute%60, tod/usPerSec%60, tod%usPerSec)
	if loc != nil {
		dst = appendOffset(dst, off)
	}
	if y <= 0 {
		dst = append(dst, " BC"...)
	}
	return dst
}

// appendClock prints hh:mm:ss with the fraction trimmed of trailing zeros
// and left out when zero. Hours may exceed two digits (intervals).
func appendClock(dst []byte, h, m, s, frac int64) []byte {
	if h < 10 {
		dst = append(dst, '0')
	}
	dst = strconv.AppendInt(dst, h, 10)
	dst = append(dst, ':')
	dst = append2(dst, m)
	dst = append(dst, ':')
	dst = append2(dst, s)
	if frac != 0 {
		var f [7]byte
		f[0] = '.'
		for j := 6; j >= 1; j-- {
			f[j] = byte('0' + frac%10)
			frac /= 10
		}
		n := 7
		for f[n-1] == '0' {
			n--
		}
		dst = append(dst, f[:n]...)
	}
	return dst
}

// appendOffset prints a UTC offset in seconds east as Postgres does: +hh,
// then :mm and :ss only when non-zero.
func appendOffset(dst []byte, off int64) []byte {
	if off < 0 {
		dst = append(dst, '-')
		off = -off
	} else {
		dst = append(dst, '+')
	}
	dst = append2(dst, off/3600)
	if off%3600 != 0 {
		dst = append(dst, ':')
		dst = append2(dst, off/60%60)
		if off%60 != 0 {
			dst = append(dst, ':')
			dst = append2(dst, off%60)
		}
	}
	return dst
}

// appendInterval prints an interval in IntervalStyle postgres, following
// Postgres' EncodeInterval: each non-zero field signed on its own, a "+"
// on a positive field that follows a negative one, and the time part
// printed when non-zero or when everything is zero.
func appendInterval(dst []byte, months, days int32, us int64) []byte {
	isZero, isBefore := true, false
	part := func(v int64, unit string) {
		if v == 0 {
			return
		}
		if !isZero {
			dst = append(dst, ' ')
		}
		if isBefore && v > 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, v, 10)
		dst = append(dst, ' ')
		dst = append(dst, unit...)
		if v != 1 {
			dst = append(dst, 's')
		}
		isBefore = v < 0
		isZero = false
	}
	part(int64(months/12), "year")
	part(int64(months%12), "mon")
	part(int64(days), "day")
	if isZero || us != 0 {
		h := us / usPerHour
		rest := us - h*usPerHour
		m := rest / usPerMinute
		rest -= m * usPerMinute
		s := rest / usPerSec
		f := rest - s*usPerSec
		if !isZero {
			dst = append(dst, ' ')
		}
		if us < 0 {
			dst = append(dst, '-')
		} else if isBefore {
			dst = append(dst, '+')
		}
		dst = appendClock(dst, abs64(h), abs64(m), abs64(s), abs64(f))
	}
	return dst
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
