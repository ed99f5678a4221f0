package planner

import (
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// planMem allocates the one-value arrays used to decode literals; they
// are released before the planner returns.
var planMem = memory.NewGoAllocator()

// decodeLiteral converts the text of a literal to a constant of type t
// with Postgres' input rules (sqltypes.DecodeText), as Postgres does for
// an unknown-typed literal meeting a typed context.
func decodeLiteral(t sqltypes.Type, s string, o *sqltypes.Options) (*expr.Literal, error) {
	if t.Kind == sqltypes.Unknown {
		return &expr.Literal{Value: s, T: t}, nil
	}
	b := array.NewBuilder(planMem, t.Arrow())
	defer b.Release()
	if err := sqltypes.DecodeText(b, t, s, o); err != nil {
		return nil, err
	}
	a := b.NewArray()
	defer a.Release()
	return &expr.Literal{Value: physical(a, 0), T: t}, nil
}

// physical returns a[i] in expr.Literal's representation.
func physical(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch x := a.(type) {
	case *array.Boolean:
		return x.Value(i)
	case *array.Int16:
		return int64(x.Value(i))
	case *array.Int32:
		return int64(x.Value(i))
	case *array.Int64:
		return x.Value(i)
	case *array.Float32:
		return float64(x.Value(i))
	case *array.Float64:
		return x.Value(i)
	case *array.Decimal128:
		return x.Value(i)
	case *array.String:
		return x.Value(i)
	case *array.Binary:
		return append([]byte(nil), x.Value(i)...)
	case *array.Date32:
		return int32(x.Value(i))
	case *array.Timestamp:
		return int64(x.Value(i))
	case *array.MonthDayNanoInterval:
		return x.Value(i)
	case *array.List:
		return vec.Value(x, i)
	}
	return nil
}

// literalText renders a constant as Postgres input text, so a literal
// can be converted to another type through the input function (the way
// Postgres folds '5'::int, 5::numeric, 1.5::float8). ok is false for
// values without a faithful text form here.
func literalText(l *expr.Literal) (string, bool) {
	switch v := l.Value.(type) {
	case string:
		return v, true
	case int64:
		if l.T.IsInteger() {
			return strconv.FormatInt(v, 10), true
		}
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), true
	case decimal128.Num:
		return sqltypes.FormatNumeric(v, l.T), true
	case bool:
		return strconv.FormatBool(v), true
	}
	return "", false
}

// isPlainNumeric reports whether t is an unconstrained NUMERIC (with or
// without a display scale): all of them are stored alike.
func isPlainNumeric(t sqltypes.Type) bool {
	return t.Kind == sqltypes.Numeric && t.Precision == sqltypes.NoLimit
}

// divScale is the display scale of a numeric quotient. Postgres'
// select_div_scale gives at least NUMERIC_MIN_SIG_DIGITS (16) significant
// digits, more fractional ones when the quotient is below 1 (1.0/3 prints
// 20 digits) and fewer when it is large (100000.0/3 prints 12), per value.
// asofsql fixes the scale at plan time and stores 16 fractional digits, so
// a quotient always prints 16 (Postgres' answer for quotients from 1 to
// 9999 and operands of at most 16 fractional digits).
const divScale = sqltypes.DefaultNumericScale

// numericResult is the type of l op r on numerics, with the display scale
// Postgres gives the result (the common cases of its per-value dscale
// rules): + - % the larger operand scale, * their sum, / divScale. An
// operand of unknown display scale makes the result's unknown (values
// print with trailing zeros trimmed), except for /.
func numericResult(op expr.BinaryOp, l, r sqltypes.Type) sqltypes.Type {
	if op == expr.Div {
		return sqltypes.NumericDisplay(divScale)
	}
	dl, okl := l.DisplayScale()
	dr, okr := r.DisplayScale()
	if !okl || !okr {
		return sqltypes.NumericDisplay(-1)
	}
	if op == expr.Mul {
		return sqltypes.NumericDisplay(dl + dr)
	}
	return sqltypes.NumericDisplay(max(dl, dr))
}

// numericInputScale is the display scale Postgres' numeric_in gives the
// text s: its fractional digits less a decimal exponent ("12.50" 2,
// "1.5e-3" 4, "15e1" 0).
func numericInputScale(s string) int {
	s = strings.ToLower(strings.TrimSpace(s))
	exp := 0
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil {
			return 0
		}
		exp, s = e, s[:i]
	}
	frac := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		frac = len(s) - i - 1
	}
	return max(0, frac-exp)
}

// truncateChars cuts s to at most n characters.
func truncateChars(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// numericScale is the storage scale of a NUMERIC type.
func numericScale(t sqltypes.Type) int {
	if t.Precision == sqltypes.NoLimit {
		return sqltypes.DefaultNumericScale
	}
	if t.Scale == sqltypes.NoLimit {
		return 0
	}
	return t.Scale
}

// category is Postgres' type category: implicit casts stay inside one.
type category uint8

const (
	catUnknown category = iota
	catBool
	catNumeric
	catString
	catDateTime
	catTimespan
	catBinary
	catJSON // Postgres' "U": json and jsonb convert to each other explicitly only
)

func categoryOf(t sqltypes.Type) category {
	switch t.Kind {
	case sqltypes.Bool:
		return catBool
	case sqltypes.Int2, sqltypes.Int4, sqltypes.Int8, sqltypes.Float4, sqltypes.Float8, sqltypes.Numeric:
		return catNumeric
	case sqltypes.Text, sqltypes.Varchar:
		return catString
	case sqltypes.Date, sqltypes.Timestamp, sqltypes.TimestampTZ:
		return catDateTime
	case sqltypes.Interval:
		return catTimespan
	case sqltypes.Bytea:
		return catBinary
	case sqltypes.JSON, sqltypes.JSONB:
		return catJSON
	}
	return catUnknown
}

// numRank orders the numeric types by Postgres' implicit-cast direction:
// int2 -> int4 -> int8 -> numeric -> float4 -> float8.
func numRank(k sqltypes.Kind) int {
	switch k {
	case sqltypes.Int2:
		return 1
	case sqltypes.Int4:
		return 2
	case sqltypes.Int8:
		return 3
	case sqltypes.Numeric:
		return 4
	case sqltypes.Float4:
		return 5
	case sqltypes.Float8:
		return 6
	}
	return 0
}

// dtRank: date -> timestamp -> timestamptz.
func dtRank(k sqltypes.Kind) int {
	switch k {
	case sqltypes.Date:
		return 1
	case sqltypes.Timestamp:
		return 2
	case sqltypes.TimestampTZ:
		return 3
	}
	return 0
}

// implicitCast reports whether Postgres converts from to to without an
// explicit cast (in expressions).
func implicitCast(from, to sqltypes.Type) bool {
	if from.IsArray() || to.IsArray() {
		return from.IsArray() && to.IsArray() && implicitCast(from.ElemType(), to.ElemType())
	}
	if from.Kind == to.Kind {
		return true
	}
	cf, ct := categoryOf(from), categoryOf(to)
	if cf != ct {
		return false
	}
	switch cf {
	case catNumeric:
		return numRank(from.Kind) < numRank(to.Kind)
	case catString:
		return true
	case catDateTime:
		return dtRank(from.Kind) < dtRank(to.Kind)
	}
	return false
}

// assignmentCast reports whether a value of type from may be stored in a
// column of type to (INSERT): implicit casts plus Postgres' assignment
// casts (narrowing numerics, timestamp to date, anything to a string).
func assignmentCast(from, to sqltypes.Type) bool {
	if from.IsArray() && to.IsArray() {
		return assignmentCast(from.ElemType(), to.ElemType())
	}
	if implicitCast(from, to) {
		return true
	}
	cf, ct := categoryOf(from), categoryOf(to)
	switch {
	case cf == ct && (cf == catNumeric || cf == catDateTime):
		return true
	case ct == catString:
		return true
	}
	return false
}

// commonType is the type both operands of a comparison or arithmetic are
// converted to (Postgres' preferred-type resolution within a category).
func commonType(a, b sqltypes.Type) (sqltypes.Type, bool) {
	switch {
	case a.Kind == sqltypes.Unknown && b.Kind == sqltypes.Unknown:
		return sqltypes.TextType, true
	case a.Kind == sqltypes.Unknown:
		return b, true
	case b.Kind == sqltypes.Unknown:
		return a, true
	case a == b:
		return a, true
	case a.IsArray() || b.IsArray():
		if !a.IsArray() || !b.IsArray() {
			return sqltypes.Type{}, false
		}
		e, ok := commonType(a.ElemType(), b.ElemType())
		return sqltypes.ArrayOf(e), ok
	case a.Kind == b.Kind:
		if a.Kind == sqltypes.Numeric {
			return sqltypes.NumericType(sqltypes.NoLimit, sqltypes.NoLimit), true
		}
		if a.Kind == sqltypes.Varchar {
			return sqltypes.VarcharType, true
		}
		return a, true
	}
	ca, cb := categoryOf(a), categoryOf(b)
	if ca != cb {
		return sqltypes.Type{}, false
	}
	switch ca {
	case catNumeric:
		if numRank(a.Kind) > numRank(b.Kind) {
			return sqltypes.Base(a.Kind), true
		}
		return sqltypes.Base(b.Kind), true
	case catString:
		return sqltypes.TextType, true
	case catDateTime:
		if dtRank(a.Kind) > dtRank(b.Kind) {
			return sqltypes.Base(a.Kind), true
		}
		return sqltypes.Base(b.Kind), true
	}
	return sqltypes.Type{}, false
}

// errDatatype is 42804 at pos.
func errDatatype(pos int, format string, args ...any) *sqlerr.Error {
	return sqlerr.New(sqlerr.DatatypeMismatch, format, args...).WithPosition(pos)
}

// literalSQL renders a constant in Postgres' text form (for EXPLAIN and
// messages): '2024-01-02 03:04:05', 1.50, interval '-00:00:05'.
func literalSQL(v any, t sqltypes.Type) string {
	if v == nil {
		return "NULL"
	}
	b := array.NewBuilder(planMem, t.Arrow())
	defer b.Release()
	ok := vec.TryAppendValue(b, v)
	if !ok {
		return (&expr.Literal{Value: v, T: t}).String()
	}
	a := b.NewArray()
	defer a.Release()
	s := string(sqltypes.EncodeText(nil, a, 0, t, nil))
	switch {
	case t.IsNumeric():
		return s
	case t.Kind == sqltypes.Interval:
		return "INTERVAL '" + s + "'"
	case t.IsArray():
		return "'" + strings.ReplaceAll(s, "'", "''") + "'::" + t.String()
	}
	return "'" + s + "'"
}
