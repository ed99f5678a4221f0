package eval

import (
	"testing"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Expected values from PostgreSQL 15 (col("s") is 'abc', 'Hello World',
// NULL, ”).
func TestMoreStringFunctions(t *testing.T) {
	tt, i4t := sqltypes.TextType, sqltypes.Int4Type
	runCases(t, []evalCase{
		{"replace", fn("replace", tt, col("s"), txt("l"), txt("L")), "abc|HeLLo WorLd|NULL|", "", ""},
		{"replace empty from", fn("replace", tt, txt("abc"), txt(""), txt("x")), "abc|abc|abc|abc", "", ""},
		{"strpos", fn("strpos", i4t, col("s"), txt("o")), "0|5|NULL|0", "", ""},
		{"strpos empty", fn("strpos", i4t, col("s"), txt("")), "1|1|NULL|1", "", ""},
		{"strpos multibyte", fn("strpos", i4t, txt("héllo"), txt("l")), "3|3|3|3", "", ""},
		{"left", fn("left", tt, col("s"), i4(2)), "ab|He|NULL|", "", ""},
		{"left negative", fn("left", tt, col("s"), i4(-2)), "a|Hello Wor|NULL|", "", ""},
		{"right", fn("right", tt, col("s"), i4(2)), "bc|ld|NULL|", "", ""},
		{"right negative", fn("right", tt, txt("héllo"), i4(-2)), "llo|llo|llo|llo", "", ""},
		{"lpad", fn("lpad", tt, col("s"), i4(5), txt("xy")), "xyabc|Hello|NULL|xyxyx", "", ""},
		{"rpad default fill", fn("rpad", tt, txt("hi"), i4(4)), "hi  |hi  |hi  |hi  ", "", ""},
		{"lpad negative", fn("lpad", tt, txt("hi"), i4(-1)), "|||", "", ""},
		{"lpad null fill", fn("lpad", tt, txt("hi"), i4(5), lit(tt, nil)), "NULL|NULL|NULL|NULL", "", ""},
		{"split_part", fn("split_part", tt, col("s"), txt(" "), i4(2)), "|World|NULL|", "", ""},
		{"split_part from the end", fn("split_part", tt, txt("a.b.c"), txt("."), i4(-3)), "a|a|a|a", "", ""},
		{"split_part zero", fn("split_part", tt, col("s"), txt(" "), i4(0)), "", "22023", "field position must not be zero"},
		{"starts_with", fn("starts_with", sqltypes.BoolType, col("s"), txt("a")), "t|f|NULL|f", "", ""},
		{"pg_typeof", fn("pg_typeof", tt, col("s"), txt("text")), "text|text|text|text", "", ""},
		{"pg_typeof evaluates its argument", fn("pg_typeof", tt, bin(expr.Div, i4t, i4(1), i4(0)), txt("integer")), "", "22012", "division by zero"},
		{"wrong argument types", fn("left", tt, i4(1), i4(2)), "", "42883", "function left"},
	})
}
