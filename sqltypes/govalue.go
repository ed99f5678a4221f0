package sqltypes

import (
	"database/sql/driver"
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/sqlerr"
)

// Decimal is a NUMERIC value: Coef × 10^-Scale. It prints like Postgres
// (String keeps the scale: "12.340").
type Decimal struct {
	Coef  decimal128.Num
	Scale int32
}

// String returns the Postgres text form of d.
func (d Decimal) String() string { return string(appendNumeric(nil, d.Coef, d.Scale, int(d.Scale))) }

// DisplayDecimal is v, a stored value of NUMERIC type t, at the scale it
// prints with: t's display scale when known (rounded half away from zero
// to it), else its own digits without trailing fractional zeros. It is
// the value Postgres' numeric functions see, whose result scales depend
// on their arguments' scales.
func DisplayDecimal(v decimal128.Num, t Type) Decimal {
	_, s := t.numericPS()
	if d, ok := t.DisplayScale(); ok && int32(d) <= s {
		if k := s - int32(d); k > 0 {
			num := v.BigInt()
			den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil)
			q, r := new(big.Int).QuoRem(num, den, new(big.Int))
			if r.Abs(r).Lsh(r, 1).Cmp(den) >= 0 {
				q.Add(q, big.NewInt(int64(num.Sign())))
			}
			v = decimal128.FromBigInt(q)
		}
		return Decimal{Coef: v, Scale: int32(d)}
	}
	for s > 0 {
		q, r := v.Div(decimal128.FromU64(10))
		if r != (decimal128.Num{}) {
			break
		}
		v, s = q, s-1
	}
	return Decimal{Coef: v, Scale: s}
}

// FormatNumeric returns the Postgres text form of v, a value of the
// NUMERIC type t in t's storage (Arrow) scale, printed with t's display
// scale.
func FormatNumeric(v decimal128.Num, t Type) string {
	_, s := t.numericPS()
	return string(appendNumeric(nil, v, s, t.displayArg()))
}

// Float64 returns the nearest float64 to d.
func (d Decimal) Float64() float64 {
	f, _ := strconv.ParseFloat(d.String(), 64)
	return f
}

// IntervalValue is an INTERVAL value with Postgres' fields: months, days and
// microseconds are kept apart because their lengths vary (a month is not
// always 30 days, a day not always 24 hours across a DST change).
type IntervalValue struct {
	Months       int32
	Days         int32
	Microseconds int64
}

// String returns the Postgres text form of iv (IntervalStyle postgres).
func (iv IntervalValue) String() string {
	return string(appendInterval(nil, iv.Months, iv.Days, iv.Microseconds))
}

// GoValue returns a[i] as a natural Go value, nil for NULL:
// BOOLEAN bool; SMALLINT/INTEGER/BIGINT int64; REAL/DOUBLE float64;
// NUMERIC Decimal; TEXT/VARCHAR string; BYTEA []byte (a copy); DATE
// time.Time at midnight UTC; TIMESTAMP time.Time whose UTC wall clock is
// the value; TIMESTAMPTZ time.Time in UTC; INTERVAL IntervalValue. Infinite
// dates and timestamps are the strings "infinity" and "-infinity", as
// lib/pq returns them, because time.Time has no infinity. A VOID value is
// "", its text form.
func GoValue(a arrow.Array, i int, t Type) any {
	if a.IsNull(i) {
		return nil
	}
	switch t.Kind {
	case Bool:
		return a.(*array.Boolean).Value(i)
	case Int2:
		return int64(a.(*array.Int16).Value(i))
	case Int4:
		return int64(a.(*array.Int32).Value(i))
	case Int8:
		return a.(*array.Int64).Value(i)
	case Float4:
		return float64(a.(*array.Float32).Value(i))
	case Float8:
		return a.(*array.Float64).Value(i)
	case Numeric:
		d := a.(*array.Decimal128)
		v, scale := d.Value(i), d.DataType().(*arrow.Decimal128Type).Scale
		if disp, ok := t.DisplayScale(); ok && int32(disp) < scale {
			v, scale = roundScale(v, scale, int32(disp)), int32(disp)
		}
		return Decimal{Coef: v, Scale: scale}
	case Text, Varchar, Unknown, JSON, JSONB:
		return a.(*array.String).Value(i)
	case Bytea:
		return append([]byte{}, a.(*array.Binary).Value(i)...)
	case Date:
		switch d := int64(a.(*array.Date32).Value(i)); d {
		case DateInfinity:
			return "infinity"
		case DateNegInfinity:
			return "-infinity"
		default:
			y, m, dd := j2date(d + unixEpochJD)
			return time.Date(int(y), time.Month(m), int(dd), 0, 0, 0, 0, time.UTC)
		}
	case Timestamp, TimestampTZ:
		switch us := int64(a.(*array.Timestamp).Value(i)); us {
		case TimestampInfinity:
			return "infinity"
		case TimestampNegInfinity:
			return "-infinity"
		default:
			return time.UnixMicro(us).UTC()
		}
	case Interval:
		v := a.(*array.MonthDayNanoInterval).Value(i)
		return IntervalValue{Months: v.Months, Days: v.Days, Microseconds: v.Nanoseconds / 1000}
	case Array:
		return goArray(a, i, t)
	case Void:
		return "" // its text form, as pgx returns it; nil is NULL
	}
	return nil
}

func mismatch(v any, t Type) error {
	return sqlerr.New(sqlerr.DatatypeMismatch, "cannot store Go value of type %T in a column of type %s", v, t)
}

// AppendGo appends a Go value to b (Arrow type t.Arrow()). nil appends
// NULL; strings (and []byte for non-BYTEA types) go through DecodeText;
// otherwise the value must suit the type: integers and floats for the
// numeric types (floats round to integers as Postgres' casts do), bool,
// Decimal, time.Time for DATE (its own calendar date), TIMESTAMP (its own
// wall clock, as pgx does) and TIMESTAMPTZ (its instant), IntervalValue or
// time.Duration for INTERVAL, []byte for BYTEA. A driver.Valuer is
// unwrapped first.
func AppendGo(b array.Builder, t Type, v any, o *Options) error {
	if vr, ok := v.(driver.Valuer); ok {
		inner, err := vr.Value()
		if err != nil {
			return sqlerr.Wrap(err, sqlerr.InvalidParameterValue, "%s", err.Error())
		}
		v = inner
	}
	if t.Kind == Array {
		if _, ok := v.(string); !ok {
			if done, err := appendGoArray(b, t, v, o); done {
				return err
			}
		}
	}
	switch x := v.(type) {
	case nil:
		b.AppendNull()
		return nil
	case string:
		return DecodeText(b, t, x, o)
	case []byte:
		if t.Kind == Bytea {
			b.(*array.BinaryBuilder).Append(x)
			return nil
		}
		return DecodeText(b, t, string(x), o)
	case bool:
		if t.Kind != Bool {
			return mismatch(v, t)
		}
		b.(*array.BooleanBuilder).Append(x)
		return nil
	case int:
		return appendInt(b, t, int64(x), v)
	case int8:
		return appendInt(b, t, int64(x), v)
	case int16:
		return appendInt(b, t, int64(x), v)
	case int32:
		return appendInt(b, t, int64(x), v)
	case int64:
		return appendInt(b, t, x, v)
	case uint8:
		return appendInt(b, t, int64(x), v)
	case uint16:
		return appendInt(b, t, int64(x), v)
	case uint32:
		return appendInt(b, t, int64(x), v)
	case uint:
		if uint64(x) > math.MaxInt64 {
			return appendNumericText(b, t, strconv.FormatUint(uint64(x), 10), v)
		}
		return appendInt(b, t, int64(x), v)
	case uint64:
		if x > math.MaxInt64 {
			return appendNumericText(b, t, strconv.FormatUint(x, 10), v)
		}
		return appendInt(b, t, int64(x), v)
	case float32:
		return appendFloatGo(b, t, float64(x), 32, v)
	case float64:
		return appendFloatGo(b, t, x, 64, v)
	case Decimal:
		switch t.Kind {
		case Numeric, Float4, Float8, Int2, Int4, Int8:
			return appendNumericText(b, t, x.String(), v)
		}
		return mismatch(v, t)
	case time.Time:
		return appendTime(b, t, x, v)
	case IntervalValue:
		if t.Kind != Interval {
			return mismatch(v, t)
		}
		return appendItm(b, itm{months: int64(x.Months), days: int64(x.Days), us: x.Microseconds})
	case time.Duration:
		if t.Kind != Interval {
			return mismatch(v, t)
		}
		return appendItm(b, itm{us: x.Microseconds()})
	}
	return mismatch(v, t)
}

func appendItm(b array.Builder, m itm) error {
	iv, ok := m.toArrow()
	if !ok {
		return sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
	}
	b.(*array.MonthDayNanoIntervalBuilder).Append(iv)
	return nil
}

// appendNumericText converts via text for numeric targets, keeping
// Postgres' rounding, range checks and messages.
func appendNumericText(b array.Builder, t Type, s string, v any) error {
	switch t.Kind {
	case Numeric, Float4, Float8:
		return DecodeText(b, t, s, nil)
	case Int2, Int4, Int8:
		// Round like Postgres' numeric-to-integer cast: half away from zero.
		n, err := parseNumeric(s, MaxNumericPrecision, 0)
		if err != nil {
			return outOfRange(t)
		}
		bi := n.BigInt()
		if !bi.IsInt64() {
			return outOfRange(t)
		}
		return appendInt(b, t, bi.Int64(), v)
	}
	return mismatch(v, t)
}

func outOfRange(t Type) error {
	return sqlerr.New(sqlerr.NumericValueOutOfRange, "%s out of range", t)
}

func appendInt(b array.Builder, t Type, n int64, v any) error {
	switch t.Kind {
	case Int2:
		if n < math.MinInt16 || n > math.MaxInt16 {
			return outOfRange(t)
		}
		b.(*array.Int16Builder).Append(int16(n))
	case Int4:
		if n < math.MinInt32 || n > math.MaxInt32 {
			return outOfRange(t)
		}
		b.(*array.Int32Builder).Append(int32(n))
	case Int8:
		b.(*array.Int64Builder).Append(n)
	case Float4:
		b.(*array.Float32Builder).Append(float32(n))
	case Float8:
		b.(*array.Float64Builder).Append(float64(n))
	case Numeric:
		return appendNumericText(b, t, strconv.FormatInt(n, 10), v)
	default:
		return mismatch(v, t)
	}
	return nil
}

// appendFloatGo stores a float: as is in float columns, rounded half to
// even into integers (Postgres' float-to-int casts use rint), and through
// its 15 (float32: 6) significant digits into NUMERIC, as Postgres'
// float8_numeric does.
func appendFloatGo(b array.Builder, t Type, f float64, bits int, v any) error {
	switch t.Kind {
	case Float4:
		if !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) > math.MaxFloat32 {
			return sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
		}
		b.(*array.Float32Builder).Append(float32(f))
	case Float8:
		b.(*array.Float64Builder).Append(f)
	case Int2, Int4, Int8:
		r := math.RoundToEven(f)
		if math.IsNaN(r) || r < -9.223372036854775808e18 || r >= 9.223372036854775808e18 {
			return outOfRange(t)
		}
		return appendInt(b, t, int64(r), v)
	case Numeric:
		if math.IsNaN(f) {
			return DecodeText(b, t, "NaN", nil)
		}
		if math.IsInf(f, 0) {
			return DecodeText(b, t, "Infinity", nil)
		}
		digs := 15
		if bits == 32 {
			digs = 6
		}
		return DecodeText(b, t, strconv.FormatFloat(f, 'g', digs, 64), nil)
	default:
		return mismatch(v, t)
	}
	return nil
}

func appendTime(b array.Builder, t Type, tm time.Time, v any) error {
	switch t.Kind {
	case Date:
		y, m, d := tm.Date()
		if !validJulianDate(int64(y), int64(m), int64(d)) {
			return sqlerr.New(sqlerr.DatetimeFieldOverflow, "date out of range: \"%s\"", tm.Format("2006-01-02"))
		}
		days := date2j(int64(y), int64(m), int64(d)) - unixEpochJD
		if !validDate32(days) {
			return sqlerr.New(sqlerr.DatetimeFieldOverflow, "date out of range: \"%s\"", tm.Format("2006-01-02"))
		}
		b.(*array.Date32Builder).Append(arrow.Date32(days))
		return nil
	case Timestamp, TimestampTZ:
		if t.Kind == Timestamp {
			// The wall clock, whatever the time's location.
			y, m, d := tm.Date()
			h, mi, s := tm.Clock()
			tm = time.Date(y, m, d, h, mi, s, tm.Nanosecond(), time.UTC)
		}
		// Sub-microsecond nanoseconds round half to even, as Postgres'
		// rint() does for fractional seconds.
		sec := tm.Unix()
		ns := int64(tm.Nanosecond())
		us := ns / 1000
		if rem := ns % 1000; rem > 500 || rem == 500 && us%2 == 1 {
			us++
		}
		total, ov := mulOv(sec, usPerSec)
		total, ov = addOv(total, us, ov)
		total = roundTimestamp(total, t)
		if ov || !validTimestamp(total) || total == TimestampNegInfinity {
			return sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
		}
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(total))
		return nil
	}
	return mismatch(v, t)
}
