package eval

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/functions"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

type colSpec struct {
	name string
	t    sqltypes.Type
	vals []string // Postgres text input; "NULL" is NULL
}

var num102 = sqltypes.NumericType(10, 2)

// testCols is the input of most expression tests: four rows, row 2 all
// NULL.
var testCols = []colSpec{
	{"i2", sqltypes.Int2Type, []string{"1", "-32768", "NULL", "100"}},
	{"i4", sqltypes.Int4Type, []string{"10", "2147483647", "NULL", "-7"}},
	{"i8", sqltypes.Int8Type, []string{"3", "-9223372036854775808", "NULL", "0"}},
	{"f8", sqltypes.Float8Type, []string{"1.5", "-2.5", "NULL", "NaN"}},
	{"n", num102, []string{"1.25", "-2.50", "NULL", "100.00"}},
	{"s", sqltypes.TextType, []string{"abc", "Hello World", "NULL", ""}},
	{"ts", sqltypes.TimestampType, []string{"2024-01-31 10:30:05.25", "2023-12-31 23:59:59", "NULL", "infinity"}},
	{"tz", sqltypes.TimestampTZType, []string{"2024-03-10 06:30:00+00", "2024-01-01 00:00:00+00", "NULL", "2024-11-03 05:00:00+00"}},
	{"b", sqltypes.BoolType, []string{"true", "false", "NULL", "true"}},
	{"d", sqltypes.DateType, []string{"2024-02-29", "1999-12-31", "NULL", "infinity"}},
	{"iv", sqltypes.IntervalType, []string{"1 mon 2 days 03:00:00", "-1 day", "NULL", "1 year 6 mons"}},
	{"z", sqltypes.Int4Type, []string{"0", "2", "NULL", "0"}},
	{"f0", sqltypes.Float8Type, []string{"0", "4", "NULL", "-1"}},
	{"pat", sqltypes.TextType, []string{"a%", "%o W%", "NULL", "_"}},
}

func mkBatch(t testing.TB, mem memory.Allocator, cols []colSpec) arrow.RecordBatch {
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	rows := -1
	for i, c := range cols {
		fields[i] = c.t.Field(c.name, true)
		b := array.NewBuilder(mem, c.t.Arrow())
		for _, v := range c.vals {
			if v == "NULL" {
				b.AppendNull()
				continue
			}
			require.NoError(t, sqltypes.DecodeText(b, c.t, v, nil), "%s: %q", c.name, v)
		}
		arrs[i] = b.NewArray()
		b.Release()
		rows = len(c.vals)
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(rows))
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

func col(name string) *expr.Column {
	for i, c := range testCols {
		if c.name == name {
			return &expr.Column{Index: i, Name: name, T: c.t}
		}
	}
	panic("no column " + name)
}

func lit(t sqltypes.Type, v any) *expr.Literal { return &expr.Literal{Value: v, T: t} }
func i4(v int64) *expr.Literal                 { return lit(sqltypes.Int4Type, v) }
func txt(s string) *expr.Literal               { return lit(sqltypes.TextType, s) }
func f8(v float64) *expr.Literal               { return lit(sqltypes.Float8Type, v) }

// litText builds a literal of t from its text form.
func litText(t sqltypes.Type, s string) *expr.Literal {
	b := array.NewBuilder(memory.DefaultAllocator, t.Arrow())
	defer b.Release()
	if err := sqltypes.DecodeText(b, t, s, nil); err != nil {
		panic(err)
	}
	a := b.NewArray()
	defer a.Release()
	var v any
	switch x := a.(type) {
	case *array.Decimal128:
		v = x.Value(0)
	case *array.Date32:
		v = int32(x.Value(0))
	case *array.Timestamp:
		v = int64(x.Value(0))
	case *array.MonthDayNanoInterval:
		v = x.Value(0)
	default:
		panic("litText: unsupported " + t.String())
	}
	return lit(t, v)
}

func bin(op expr.BinaryOp, t sqltypes.Type, l, r expr.Expr) *expr.Binary {
	return &expr.Binary{Op: op, L: l, R: r, T: t}
}

// fn calls the function registered as name (any other name stands for a
// function the evaluator has no definition of).
func fn(name string, t sqltypes.Type, args ...expr.Expr) *expr.Func {
	if d, ok := functions.Lookup(name); ok {
		return &expr.Func{Fn: d, Args: args, T: t}
	}
	return &expr.Func{Fn: undefinedFn(name), Args: args, T: t}
}

type undefinedFn string

func (f undefinedFn) FuncName() string { return string(f) }

func cast(x expr.Expr, t sqltypes.Type) *expr.Cast { return &expr.Cast{X: x, T: t} }

var bt = sqltypes.BoolType

type evalCase struct {
	name string
	e    expr.Expr
	want string // rows joined by "|", NULL as NULL
	code string // expected SQLSTATE instead
	msg  string // substring of the error message
}

// evalText evaluates e over cols and renders the result in Postgres text
// format, rows joined by "|".
func evalText(t *testing.T, cols []colSpec, e expr.Expr, env Env) (string, error) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := mkBatch(t, mem, cols)
	defer rec.Release()
	env.Mem = mem
	if env.Now.IsZero() {
		env.Now = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	}
	ev, err := Compile(e, rec.Schema(), env)
	if err != nil {
		return "", err
	}
	out, err := ev.Eval(context.Background(), rec)
	if err != nil {
		return "", err
	}
	defer out.Release()
	require.Equal(t, int(rec.NumRows()), out.Len())
	require.True(t, arrow.TypeEqual(ev.Type().Arrow(), out.DataType()), "got %s want %s", out.DataType(), ev.Type().Arrow())
	parts := make([]string, out.Len())
	for i := range parts {
		if out.IsNull(i) {
			parts[i] = "NULL"
			continue
		}
		parts[i] = string(sqltypes.EncodeText(nil, out, i, ev.Type(), env.Options))
	}
	return strings.Join(parts, "|"), nil
}

func runCases(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := evalText(t, testCols, tc.e, Env{})
			if tc.code != "" {
				require.Error(t, err)
				require.Equal(t, tc.code, sqlerr.Code(err), "error %v", err)
				require.Contains(t, err.Error(), tc.msg)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestArithmetic(t *testing.T) {
	i2, i8 := sqltypes.Int2Type, sqltypes.Int8Type
	i4t := sqltypes.Int4Type
	runCases(t, []evalCase{
		{"int4 add", bin(expr.Add, i4t, col("i4"), i4(1)), "", "22003", "integer out of range"},
		{"int4 add ok", bin(expr.Add, i4t, col("i4"), i4(-1)), "9|2147483646|NULL|-8", "", ""},
		{"int4 sub", bin(expr.Sub, i4t, i4(0), col("i4")), "-10|-2147483647|NULL|7", "", ""},
		{"int4 mul overflow", bin(expr.Mul, i4t, col("i4"), i4(2)), "", "22003", "integer out of range"},
		{"int4 div truncates", bin(expr.Div, i4t, col("i4"), i4(-3)), "-3|-715827882|NULL|2", "", ""},
		{"int4 mod sign of dividend", bin(expr.Mod, i4t, col("i4"), i4(3)), "1|1|NULL|-1", "", ""},
		{"int4 div by zero", bin(expr.Div, i4t, col("i4"), col("z")), "", "22012", "division by zero"},
		{"int4 mod by zero", bin(expr.Mod, i4t, col("i4"), i4(0)), "", "22012", "division by zero"},
		{"int2 neg overflow", &expr.Unary{Op: expr.Neg, X: col("i2"), T: i2}, "", "22003", "smallint out of range"},
		{"int2 add overflow", bin(expr.Sub, i2, col("i2"), lit(i2, int64(1))), "", "22003", "smallint out of range"},
		{"int8 min / -1", bin(expr.Div, i8, col("i8"), lit(i8, int64(-1))), "", "22003", "bigint out of range"},
		{"int8 min % -1", bin(expr.Mod, i8, col("i8"), lit(i8, int64(-1))), "0|0|NULL|0", "", ""},
		{"int8 mul overflow", bin(expr.Mul, i8, col("i8"), col("i8")), "", "22003", "bigint out of range"},
		{"null row does not raise", bin(expr.Div, i4t, i4(1), cast(col("b"), i4t)), "1", "22012", "division by zero"},
		{"float ops", bin(expr.Mul, sqltypes.Float8Type, col("f8"), f8(2)), "3|-5|NULL|NaN", "", ""},
		{"float div zero", bin(expr.Div, sqltypes.Float8Type, col("f8"), col("f0")), "", "22012", "division by zero"},
		{"float overflow", bin(expr.Mul, sqltypes.Float8Type, col("f8"), f8(1e308)), "", "22003", "value out of range: overflow"},
		{"numeric add", bin(expr.Add, num102, col("n"), litText(num102, "0.75")), "2.00|-1.75|NULL|100.75", "", ""},
		{"numeric mul rounds", bin(expr.Mul, num102, col("n"), litText(num102, "0.10")), "0.13|-0.25|NULL|10.00", "", ""},
		{"numeric div", bin(expr.Div, sqltypes.NumericType(20, 6), col("n"), litText(num102, "3")), "0.416667|-0.833333|NULL|33.333333", "", ""},
		{"numeric div zero", bin(expr.Div, num102, col("n"), litText(num102, "0")), "", "22012", "division by zero"},
		{"numeric overflow", bin(expr.Mul, sqltypes.NumericType(4, 2), col("n"), litText(num102, "100")), "", "22003", "numeric field overflow"},
		{"numeric add overflow", bin(expr.Add, sqltypes.NumericType(4, 2), col("n"), litText(num102, "0.75")), "", "22003", "numeric field overflow"},
		{"numeric sub other scales", bin(expr.Sub, sqltypes.NumericType(12, 3), col("n"), litText(sqltypes.NumericType(10, 3), "0.125")), "1.125|-2.625|NULL|99.875", "", ""},
		{"numeric neg", &expr.Unary{Op: expr.Neg, X: col("n"), T: num102}, "-1.25|2.50|NULL|-100.00", "", ""},
	})
}

func TestComparisonAndLogic(t *testing.T) {
	runCases(t, []evalCase{
		{"int lt", bin(expr.Lt, bt, col("i4"), i4(10)), "f|f|NULL|t", "", ""},
		{"float NaN is largest", bin(expr.Gt, bt, col("f8"), f8(1e300)), "f|f|NULL|t", "", ""},
		{"text eq", bin(expr.Eq, bt, col("s"), txt("abc")), "t|f|NULL|f", "", ""},
		{"text ge", bin(expr.Ge, bt, col("s"), txt("H")), "t|t|NULL|f", "", ""},
		{"numeric ne", bin(expr.Ne, bt, col("n"), litText(num102, "1.25")), "f|t|NULL|t", "", ""},
		{"timestamp le", bin(expr.Le, bt, col("ts"), litText(sqltypes.TimestampType, "2024-01-01")), "f|t|NULL|f", "", ""},
		{"date eq", bin(expr.Eq, bt, col("d"), litText(sqltypes.DateType, "2024-02-29")), "t|f|NULL|f", "", ""},
		{"interval cmp 30-day month", bin(expr.Gt, bt, col("iv"), litText(sqltypes.IntervalType, "32 days")), "t|f|NULL|t", "", ""},
		{"bool eq", bin(expr.Eq, bt, col("b"), lit(bt, true)), "t|f|NULL|t", "", ""},
		{"is distinct from", bin(expr.IsDistinctFrom, bt, col("i4"), lit(sqltypes.Int4Type, nil)), "t|t|f|t", "", ""},
		{"is not distinct from", bin(expr.IsNotDistinctFrom, bt, col("f8"), f8(1.5)), "t|f|f|f", "", ""},
		{"and 3vl", bin(expr.And, bt, col("b"), lit(bt, nil)), "NULL|f|NULL|NULL", "", ""},
		{"or 3vl", bin(expr.Or, bt, col("b"), lit(bt, nil)), "t|NULL|NULL|t", "", ""},
		{"and false wins over null", bin(expr.And, bt, lit(bt, nil), lit(bt, false)), "f|f|f|f", "", ""},
		{"not", &expr.Unary{Op: expr.Not, X: col("b"), T: bt}, "f|t|NULL|f", "", ""},
		{"and short-circuits the right side", bin(expr.And, bt,
			bin(expr.Ne, bt, col("z"), i4(0)),
			bin(expr.Gt, bt, bin(expr.Div, sqltypes.Int4Type, i4(10), col("z")), i4(1))), "f|t|NULL|f", "", ""},
		{"or short-circuits", bin(expr.Or, bt,
			bin(expr.Eq, bt, col("z"), i4(0)),
			bin(expr.Gt, bt, bin(expr.Div, sqltypes.Int4Type, i4(10), col("z")), i4(1))), "t|t|NULL|t", "", ""},
		{"is null", &expr.IsNull{X: col("s")}, "f|f|t|f", "", ""},
		{"is not null", &expr.IsNull{X: col("s"), Not: true}, "t|t|f|t", "", ""},
		{"in", &expr.In{X: col("i4"), List: []expr.Expr{i4(10), i4(-7)}}, "t|f|NULL|t", "", ""},
		{"in with null: no match is null", &expr.In{X: col("i4"), List: []expr.Expr{i4(10), lit(sqltypes.Int4Type, nil)}}, "t|NULL|NULL|NULL", "", ""},
		{"in varchar vs text", &expr.In{X: cast(col("s"), sqltypes.VarcharOf(5)), List: []expr.Expr{txt("Hello")}}, "f|t|NULL|f", "", ""},
		{"not in", &expr.In{X: col("s"), List: []expr.Expr{txt("abc")}, Not: true}, "f|t|NULL|t", "", ""},
		{"like", bin(expr.Like, bt, col("s"), txt("%l_o%")), "f|t|NULL|f", "", ""},
		{"like column pattern", bin(expr.Like, bt, col("s"), col("pat")), "t|t|NULL|f", "", ""},
		{"not like", bin(expr.NotLike, bt, col("s"), txt("a%")), "f|t|NULL|t", "", ""},
		{"ilike", bin(expr.ILike, bt, col("s"), txt("hello%")), "f|t|NULL|f", "", ""},
		{"like escape", bin(expr.Like, bt, txt("50%"), txt("50\\%")), "t|t|t|t", "", ""},
		{"like escaped literal mismatch", bin(expr.Like, bt, txt("50x"), txt("50\\%")), "f|f|f|f", "", ""},
		{"like trailing escape", bin(expr.Like, bt, col("s"), txt("a\\")), "", "22025", "LIKE pattern must not end with escape character"},
		{"like empty", bin(expr.Like, bt, col("s"), txt("")), "f|f|NULL|t", "", ""},
		{"not bool is an error", &expr.Unary{Op: expr.Not, X: col("i4"), T: bt}, "", "42804", "argument of NOT must be type boolean"},
		{"mismatched compare", bin(expr.Eq, bt, col("i4"), col("s")), "", "42883", "operator ="},
	})
}

func TestConditionals(t *testing.T) {
	i4t := sqltypes.Int4Type
	runCases(t, []evalCase{
		{"searched case", &expr.Case{Whens: []expr.When{
			{Cond: bin(expr.Gt, bt, col("i4"), i4(100)), Result: txt("big")},
			{Cond: bin(expr.Gt, bt, col("i4"), i4(0)), Result: txt("pos")},
		}, Else: txt("other"), T: sqltypes.TextType}, "pos|big|other|other", "", ""},
		{"case without else", &expr.Case{Whens: []expr.When{
			{Cond: col("b"), Result: col("i4")},
		}, T: i4t}, "10|NULL|NULL|-7", "", ""},
		{"case is lazy", &expr.Case{Whens: []expr.When{
			{Cond: bin(expr.Eq, bt, col("z"), i4(0)), Result: i4(0)},
		}, Else: bin(expr.Div, i4t, i4(10), col("z")), T: i4t}, "0|5|NULL|0", "", ""},
		{"simple case", &expr.Case{Operand: col("s"), Whens: []expr.When{
			{Cond: txt("abc"), Result: i4(1)}, {Cond: txt(""), Result: i4(2)},
		}, Else: i4(0), T: i4t}, "1|0|0|2", "", ""},
		{"coalesce", fn("coalesce", i4t, col("i4"), col("z"), i4(-1)), "10|2147483647|-1|-7", "", ""},
		{"coalesce is lazy", fn("coalesce", i4t, i4(5), bin(expr.Div, i4t, i4(1), col("z"))), "5|5|5|5", "", ""},
		{"nullif", fn("nullif", i4t, col("z"), i4(0)), "NULL|2|NULL|NULL", "", ""},
		{"greatest ignores null", fn("greatest", i4t, col("i4"), col("z"), lit(i4t, nil)), "10|2147483647|NULL|0", "", ""},
		{"least", fn("least", sqltypes.TextType, col("s"), txt("b")), "abc|Hello World|b|", "", ""},
		{"greatest float nan", fn("greatest", sqltypes.Float8Type, col("f8"), f8(0)), "1.5|0|0|NaN", "", ""},
		{"case with non-bool when", &expr.Case{Whens: []expr.When{{Cond: col("i4"), Result: i4(1)}}, T: i4t}, "", "42804", "argument of CASE/WHEN must be type boolean"},
	})
}

func TestStringFunctions(t *testing.T) {
	tt := sqltypes.TextType
	runCases(t, []evalCase{
		{"lower", fn("lower", tt, col("s")), "abc|hello world|NULL|", "", ""},
		{"upper", fn("upper", tt, col("s")), "ABC|HELLO WORLD|NULL|", "", ""},
		{"length", fn("length", sqltypes.Int4Type, txt("héllo")), "5|5|5|5", "", ""},
		{"length null", fn("length", sqltypes.Int4Type, col("s")), "3|11|NULL|0", "", ""},
		{"substr", fn("substr", tt, col("s"), i4(2), i4(3)), "bc|ell|NULL|", "", ""},
		{"substr from 0", fn("substr", tt, txt("hello"), i4(0), i4(3)), "he|he|he|he", "", ""},
		{"substr negative start no count", fn("substr", tt, txt("hello"), i4(-1)), "hello|hello|hello|hello", "", ""},
		{"substr multibyte", fn("substr", tt, txt("héllo"), i4(2), i4(2)), "él|él|él|él", "", ""},
		{"substr negative length", fn("substr", tt, col("s"), i4(1), i4(-1)), "", "22011", "negative substring length not allowed"},
		{"concat skips nulls", fn("concat", tt, col("s"), txt("-"), col("i4")), "abc-10|Hello World-2147483647|-|--7", "", ""},
		{"|| is strict", bin(expr.Concat, tt, col("s"), txt("!")), "abc!|Hello World!|NULL|!", "", ""},
		{"btrim", fn("btrim", tt, txt("xxhixx"), txt("x")), "hi|hi|hi|hi", "", ""},
		{"ltrim", fn("ltrim", tt, txt("  hi  ")), "hi  |hi  |hi  |hi  ", "", ""},
		{"rtrim", fn("rtrim", tt, txt("  hi  ")), "  hi|  hi|  hi|  hi", "", ""},
		{"unknown function", fn("nope", tt, col("s")), "", "42883", "function nope(s) does not exist"},
	})
}

func TestMathFunctions(t *testing.T) {
	f8t := sqltypes.Float8Type
	runCases(t, []evalCase{
		{"abs int", fn("abs", sqltypes.Int4Type, col("i4")), "10|2147483647|NULL|7", "", ""},
		{"abs int2 min", fn("abs", sqltypes.Int2Type, col("i2")), "", "22003", "smallint out of range"},
		{"abs float", fn("abs", f8t, col("f8")), "1.5|2.5|NULL|NaN", "", ""},
		{"abs numeric", fn("abs", num102, col("n")), "1.25|2.50|NULL|100.00", "", ""},
		{"round float is rint", fn("round", f8t, col("f8")), "2|-2|NULL|NaN", "", ""},
		{"round numeric half away", fn("round", num102, col("n")), "1.00|-3.00|NULL|100.00", "", ""},
		{"round numeric places", fn("round", num102, col("n"), i4(1)), "1.30|-2.50|NULL|100.00", "", ""},
		{"round numeric negative places", fn("round", num102, col("n"), i4(-2)), "0.00|0.00|NULL|100.00", "", ""},
		{"floor", fn("floor", f8t, col("f8")), "1|-3|NULL|NaN", "", ""},
		{"ceil numeric", fn("ceil", num102, col("n")), "2.00|-2.00|NULL|100.00", "", ""},
		{"floor numeric", fn("floor", num102, col("n")), "1.00|-3.00|NULL|100.00", "", ""},
		{"sqrt", fn("sqrt", f8t, col("f0")), "", "2201F", "cannot take square root of a negative number"},
		{"sqrt ok", fn("sqrt", f8t, f8(16)), "4|4|4|4", "", ""},
		{"sqrt numeric", fn("sqrt", sqltypes.NumericType(20, 10), col("n")), "", "2201F", "cannot take square root of a negative number"},
		{"sqrt numeric exact", fn("sqrt", sqltypes.NumericType(20, 10), litText(num102, "2.00")), "1.4142135624|1.4142135624|1.4142135624|1.4142135624", "", ""},
		{"sqrt numeric perfect", fn("sqrt", sqltypes.NumericType(20, 4), litText(num102, "1.21")), "1.1000|1.1000|1.1000|1.1000", "", ""},
		{"ln zero", fn("ln", f8t, col("f0")), "", "2201E", "cannot take logarithm of zero"},
		{"ln negative", fn("ln", f8t, f8(-1)), "", "2201E", "cannot take logarithm of a negative number"},
		{"exp", fn("exp", f8t, f8(0)), "1|1|1|1", "", ""},
		{"exp overflow", fn("exp", f8t, f8(1000)), "", "22003", "value out of range: overflow"},
		{"power", fn("power", f8t, f8(2), f8(10)), "1024|1024|1024|1024", "", ""},
		{"power zero negative", fn("power", f8t, f8(0), f8(-1)), "", "2201F", "zero raised to a negative power is undefined"},
		{"power complex", fn("power", f8t, f8(-8), f8(0.5)), "", "2201F", "a negative number raised to a non-integer power"},
	})
}

func TestCasts(t *testing.T) {
	runCases(t, []evalCase{
		{"int4 to int2 overflow", cast(col("i4"), sqltypes.Int2Type), "", "22003", "smallint out of range"},
		{"int2 to int8", cast(col("i2"), sqltypes.Int8Type), "1|-32768|NULL|100", "", ""},
		{"float to int rounds to even", cast(f8(2.5), sqltypes.Int4Type), "2|2|2|2", "", ""},
		{"float NaN to int", cast(col("f8"), sqltypes.Int4Type), "", "22003", "integer out of range"},
		{"numeric to int half away", cast(col("n"), sqltypes.Int4Type), "1|-3|NULL|100", "", ""},
		{"int to numeric", cast(col("i4"), sqltypes.NumericType(12, 2)), "10.00|2147483647.00|NULL|-7.00", "", ""},
		{"int to numeric overflow", cast(col("i4"), sqltypes.NumericType(5, 2)), "", "22003", "numeric field overflow"},
		{"numeric rescale", cast(col("n"), sqltypes.NumericType(10, 1)), "1.3|-2.5|NULL|100.0", "", ""},
		{"numeric to float", cast(col("n"), sqltypes.Float8Type), "1.25|-2.5|NULL|100", "", ""},
		{"float NaN to numeric cannot be stored", cast(col("f8"), num102), "", "0A000", "NaN"},
		{"int to text", cast(col("i8"), sqltypes.TextType), "3|-9223372036854775808|NULL|0", "", ""},
		{"text to int", cast(col("s"), sqltypes.Int4Type), "", "22P02", `invalid input syntax for type integer: "abc"`},
		{"text to int ok", cast(txt(" 42 "), sqltypes.Int4Type), "42|42|42|42", "", ""},
		{"text to timestamp", cast(txt("2024-01-02 03:04:05"), sqltypes.TimestampType), "2024-01-02 03:04:05|2024-01-02 03:04:05|2024-01-02 03:04:05|2024-01-02 03:04:05", "", ""},
		{"timestamp to date", cast(col("ts"), sqltypes.DateType), "2024-01-31|2023-12-31|NULL|infinity", "", ""},
		{"date to timestamp", cast(col("d"), sqltypes.TimestampType), "2024-02-29 00:00:00|1999-12-31 00:00:00|NULL|infinity", "", ""},
		{"timestamptz to text", cast(col("tz"), sqltypes.TextType), "2024-03-10 06:30:00+00|2024-01-01 00:00:00+00|NULL|2024-11-03 05:00:00+00", "", ""},
		{"bool to int", cast(col("b"), sqltypes.Int4Type), "1|0|NULL|1", "", ""},
		{"int to bool", cast(col("z"), bt), "f|t|NULL|f", "", ""},
		{"text to varchar(2) truncates", cast(col("s"), sqltypes.VarcharOf(2)), "ab|He|NULL|", "", ""},
		{"interval to text", cast(col("iv"), sqltypes.TextType), "1 mon 2 days 03:00:00|-1 days|NULL|1 year 6 mons", "", ""},
		{"bool to date is an error", cast(col("b"), sqltypes.DateType), "", "42846", "cannot cast type boolean to date"},
	})
}

func TestTimeFunctions(t *testing.T) {
	ts, tz, iv := sqltypes.TimestampType, sqltypes.TimestampTZType, sqltypes.IntervalType
	runCases(t, []evalCase{
		{"now", fn("now", tz), "2024-05-06 07:08:09+00|2024-05-06 07:08:09+00|2024-05-06 07:08:09+00|2024-05-06 07:08:09+00", "", ""},
		{"ts + interval clamps month end", bin(expr.Add, ts, col("ts"), litText(iv, "1 month")), "2024-02-29 10:30:05.25|2024-01-31 23:59:59|NULL|infinity", "", ""},
		{"ts - interval", bin(expr.Sub, ts, col("ts"), col("iv")), "2023-12-29 07:30:05.25|2024-01-01 23:59:59|NULL|infinity", "", ""},
		{"interval + ts", bin(expr.Add, ts, litText(iv, "1 day 01:00"), col("ts")), "2024-02-01 11:30:05.25|2024-01-02 00:59:59|NULL|infinity", "", ""},
		{"ts - ts", bin(expr.Sub, iv, litText(ts, "2024-03-01 12:00"), col("ts")), "", "22008", "cannot subtract infinite timestamps"},
		{"ts - ts finite", bin(expr.Sub, iv, litText(ts, "2024-03-01 12:00"), litText(ts, "2024-01-31 10:00")), "30 days 02:00:00|30 days 02:00:00|30 days 02:00:00|30 days 02:00:00", "", ""},
		{"interval + interval", bin(expr.Add, iv, col("iv"), litText(iv, "1 day")), "1 mon 3 days 03:00:00|00:00:00|NULL|1 year 6 mons 1 day", "", ""},
		{"date + interval is a timestamp", bin(expr.Add, ts, col("d"), litText(iv, "1 month 1 hour")), "2024-03-29 01:00:00|2000-01-31 01:00:00|NULL|infinity", "", ""},
		{"date - interval", bin(expr.Sub, ts, col("d"), litText(iv, "1 day")), "2024-02-28 00:00:00|1999-12-30 00:00:00|NULL|infinity", "", ""},
		// select interval '1 mon 2 days 03:00' * 1.5, ... in PG15:
		{"interval * float", bin(expr.Mul, iv, col("iv"), f8(1.5)), "1 mon 18 days 04:30:00|-1 days -12:00:00|NULL|2 years 3 mons", "", ""},
		{"interval * fraction cascades", bin(expr.Mul, iv, litText(iv, "1 mon 2 days 03:00"), f8(0.3)), "9 days 15:18:00|9 days 15:18:00|9 days 15:18:00|9 days 15:18:00", "", ""},
		{"interval / float", bin(expr.Div, iv, litText(iv, "1 year 6 mons"), f8(7)), "2 mons 17 days 03:25:42.8448|2 mons 17 days 03:25:42.8448|2 mons 17 days 03:25:42.8448|2 mons 17 days 03:25:42.8448", "", ""},
		{"float * interval", bin(expr.Mul, iv, f8(2.5), litText(iv, "-1 day")), "-2 days -12:00:00|-2 days -12:00:00|-2 days -12:00:00|-2 days -12:00:00", "", ""},
		{"interval / 3", bin(expr.Div, iv, litText(iv, "5 hours"), f8(3)), "01:40:00|01:40:00|01:40:00|01:40:00", "", ""},
		{"interval * 0.01", bin(expr.Mul, iv, litText(iv, "1 mon"), f8(0.01)), "07:12:00|07:12:00|07:12:00|07:12:00", "", ""},
		{"interval / 0", bin(expr.Div, iv, col("iv"), f8(0)), "", "22012", "division by zero"},
		{"interval * huge", bin(expr.Mul, iv, col("iv"), f8(1e300)), "", "22008", "interval out of range"},
		{"date + int", bin(expr.Add, sqltypes.DateType, col("d"), i4(1)), "2024-03-01|2000-01-01|NULL|infinity", "", ""},
		{"date - date", bin(expr.Sub, sqltypes.Int4Type, litText(sqltypes.DateType, "2024-03-01"), litText(sqltypes.DateType, "2024-02-01")), "29|29|29|29", "", ""},
		{"date_trunc hour", fn("date_trunc", ts, txt("hour"), col("ts")), "2024-01-31 10:00:00|2023-12-31 23:00:00|NULL|infinity", "", ""},
		{"date_trunc week", fn("date_trunc", ts, txt("week"), col("ts")), "2024-01-29 00:00:00|2023-12-25 00:00:00|NULL|infinity", "", ""},
		{"date_trunc century", fn("date_trunc", ts, txt("century"), col("ts")), "2001-01-01 00:00:00|2001-01-01 00:00:00|NULL|infinity", "", ""},
		{"date_trunc quarter", fn("date_trunc", ts, txt("quarter"), col("ts")), "2024-01-01 00:00:00|2023-10-01 00:00:00|NULL|infinity", "", ""},
		{"date_trunc bad unit", fn("date_trunc", ts, txt("fortnight"), col("ts")), "", "22023", `unit "fortnight" not recognized for type timestamp without time zone`},
		{"date_part second", fn("date_part", sqltypes.Float8Type, txt("second"), col("ts")), "5.25|59|NULL|NULL", "", ""},
		{"date_part epoch", fn("date_part", sqltypes.Float8Type, txt("epoch"), col("ts")), "1706697005.25|1704067199|NULL|Infinity", "", ""},
		{"date_part dow", fn("date_part", sqltypes.Float8Type, txt("dow"), col("d")), "4|5|NULL|NULL", "", ""},
		{"extract numeric", fn("extract", sqltypes.NumericType(sqltypes.NoLimit, sqltypes.NoLimit), txt("second"), col("ts")), "5.25|59|NULL|NULL", "", ""},
		{"date_part interval", fn("date_part", sqltypes.Float8Type, txt("month"), col("iv")), "1|0|NULL|6", "", ""},
		{"date_part interval epoch", fn("date_part", sqltypes.Float8Type, txt("epoch"), col("iv")), "2775600|-86400|NULL|47109600", "", ""},
		{"to_timestamp", fn("to_timestamp", tz, f8(1.5)), "1970-01-01 00:00:01.5+00|1970-01-01 00:00:01.5+00|1970-01-01 00:00:01.5+00|1970-01-01 00:00:01.5+00", "", ""},
		{"to_timestamp nan", fn("to_timestamp", tz, col("f8")), "", "22008", "timestamp cannot be NaN"},
		{"time_bucket 15 min", fn("time_bucket", ts, litText(iv, "15 minutes"), col("ts")), "2024-01-31 10:30:00|2023-12-31 23:45:00|NULL|infinity", "", ""},
		{"time_bucket week aligns to monday", fn("time_bucket", ts, litText(iv, "7 days"), col("ts")), "2024-01-29 00:00:00|2023-12-25 00:00:00|NULL|infinity", "", ""},
		{"time_bucket month", fn("time_bucket", ts, litText(iv, "3 months"), col("ts")), "2024-01-01 00:00:00|2023-10-01 00:00:00|NULL|infinity", "", ""},
		{"time_bucket bad width", fn("time_bucket", ts, litText(iv, "1 month 1 day"), col("ts")), "", "22023", "month intervals cannot have day or time component"},
	})
}

// TestTimeZone checks that timestamptz arithmetic and truncation happen on
// the session zone's wall clock, across a DST change.
func TestTimeZone(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	env := Env{Options: &sqltypes.Options{Location: ny, ExtraFloatDigits: 1}}
	tz := sqltypes.TimestampTZType
	cases := []struct {
		name string
		e    expr.Expr
		want string
	}{
		// 2024-03-10 06:30 UTC is 01:30 EST; one day later is 01:30 EDT.
		{"plus a day keeps wall clock", bin(expr.Add, tz, col("tz"), litText(sqltypes.IntervalType, "1 day")),
			"2024-03-11 01:30:00-04|2024-01-01 19:00:00-05|NULL|2024-11-04 01:00:00-05"},
		{"plus 24 hours is elapsed time", bin(expr.Add, tz, col("tz"), litText(sqltypes.IntervalType, "24 hours")),
			"2024-03-11 02:30:00-04|2024-01-01 19:00:00-05|NULL|2024-11-04 00:00:00-05"},
		{"date_trunc day in zone", fn("date_trunc", tz, txt("day"), col("tz")),
			"2024-03-10 00:00:00-05|2023-12-31 00:00:00-05|NULL|2024-11-03 00:00:00-04"},
		{"cast to timestamp uses zone", cast(col("tz"), sqltypes.TimestampType),
			"2024-03-10 01:30:00|2023-12-31 19:00:00|NULL|2024-11-03 01:00:00"},
		{"cast to date uses zone", cast(col("tz"), sqltypes.DateType),
			"2024-03-10|2023-12-31|NULL|2024-11-03"},
		{"date to timestamptz is local midnight", cast(col("d"), tz),
			"2024-02-29 00:00:00-05|1999-12-31 00:00:00-05|NULL|infinity"},
		{"timestamp to timestamptz reads the wall clock in the zone", cast(col("ts"), tz),
			"2024-01-31 10:30:05.25-05|2023-12-31 23:59:59-05|NULL|infinity"},
		{"date_part hour in zone", fn("date_part", sqltypes.Float8Type, txt("hour"), col("tz")),
			"1|19|NULL|1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := evalText(t, testCols, tc.e, env)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestCompileErrors(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{sqltypes.Int4Type.Field("a", true)}, nil)
	cases := []struct {
		name string
		e    expr.Expr
		code string
	}{
		{"column out of range", &expr.Column{Index: 3, T: sqltypes.Int4Type}, sqlerr.UndefinedColumn},
		{"column type mismatch", &expr.Column{Index: 0, T: sqltypes.TextType}, sqlerr.DatatypeMismatch},
		{"param unbound", &expr.Param{N: 1, T: sqltypes.Int4Type}, "42P02"},
		{"literal of wrong Go type", lit(sqltypes.Int4Type, "x"), sqlerr.InternalError},
		{"function arity", fn("lower", sqltypes.TextType), sqlerr.UndefinedFunction},
		{"int plus text", bin(expr.Add, sqltypes.Int4Type, &expr.Column{Index: 0, T: sqltypes.Int4Type}, txt("x")), sqlerr.UndefinedFunction},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(tc.e, schema, Env{})
			require.Error(t, err)
			require.Equal(t, tc.code, sqlerr.Code(err), "%v", err)
		})
	}
}

func TestCancelled(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := mkBatch(t, mem, testCols)
	defer rec.Release()
	ev, err := Compile(col("i4"), rec.Schema(), Env{Mem: mem})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = ev.Eval(ctx, rec)
	require.Equal(t, sqlerr.QueryCanceled, sqlerr.Code(err))
}

// TestColumnPassThrough checks that a bare column reference returns the
// input array itself.
func TestColumnPassThrough(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := mkBatch(t, mem, testCols)
	defer rec.Release()
	ev, err := Compile(col("s"), rec.Schema(), Env{Mem: mem})
	require.NoError(t, err)
	out, err := ev.Eval(context.Background(), rec)
	require.NoError(t, err)
	defer out.Release()
	require.Same(t, rec.Column(5), out)
}
