package eval

import (
	"testing"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Expected values were checked against PostgreSQL 15.
func TestPgFunctions(t *testing.T) {
	tt, bt, i4t, i8t := sqltypes.TextType, sqltypes.BoolType, sqltypes.Int4Type, sqltypes.Int8Type
	i8 := func(v int64) expr.Expr { return lit(i8t, v) }
	ft := func(oid, mod expr.Expr) expr.Expr { return fn("format_type", tt, oid, mod) }
	runCases(t, []evalCase{
		{"regex match", fn("textregexeq", bt, col("s"), txt("^[a-z]+$")), "t|f|NULL|f", "", ""},
		{"regex no match", fn("textregexne", bt, col("s"), txt("o W")), "t|f|NULL|t", "", ""},
		{"psql pattern", fn("textregexeq", bt, txt("trades"), txt("^(t.*)$")), "t|t|t|t", "", ""},
		{"bad regex", fn("textregexeq", bt, col("s"), txt("(")), "", "2201B", "invalid regular expression"},
		{"numeric typmod", ft(i8(1700), i4(655366)), "numeric(10,2)|numeric(10,2)|numeric(10,2)|numeric(10,2)", "", ""},
		{"varchar typmod", ft(i8(1043), i4(12)), "character varying(8)|character varying(8)|character varying(8)|character varying(8)", "", ""},
		{"timestamptz typmod", ft(i8(1184), i4(3)), "timestamp(3) with time zone|timestamp(3) with time zone|timestamp(3) with time zone|timestamp(3) with time zone", "", ""},
		{"timestamp(0)", ft(i8(1114), i4(0)), "timestamp(0) without time zone|timestamp(0) without time zone|timestamp(0) without time zone|timestamp(0) without time zone", "", ""},
		{"no typmod", ft(i8(1043), lit(i4t, nil)), "character varying|character varying|character varying|character varying", "", ""},
		{"unknown oid", ft(i8(99999), i4(-1)), "???|???|???|???", "", ""},
		{"name", ft(i8(19), i4(-1)), "name|name|name|name", "", ""},
		{"null oid", ft(lit(i8t, nil), i4(1)), "NULL|NULL|NULL|NULL", "", ""},
		{"encodings", fn("pg_encoding_to_char", tt, col("i4")), "LATIN3||NULL|", "", ""},
		{"utf8", fn("pg_encoding_to_char", tt, i4(6)), "UTF8|UTF8|UTF8|UTF8", "", ""},
		{"array_to_string", fn("array_to_string", tt, txt(`{a,NULL,"b,c", "d\"e" , null}`), txt(","), txt("*")), `a,*,b,c,d"e,*|a,*,b,c,d"e,*|a,*,b,c,d"e,*|a,*,b,c,d"e,*`, "", ""},
		{"array_to_string nested", fn("array_to_string", tt, txt(`{{1,2},{3,4}}`), txt("-")), "1-2-3-4|1-2-3-4|1-2-3-4|1-2-3-4", "", ""},
		{"array_to_string skips nulls", fn("array_to_string", tt, txt(`{x,NULL,"NULL"}`), txt(",")), "x,NULL|x,NULL|x,NULL|x,NULL", "", ""},
		{"array_to_string empty", fn("array_to_string", tt, txt(`{}`), txt(",")), "|||", "", ""},
		{"array_to_string null array", fn("array_to_string", tt, lit(tt, nil), txt(",")), "NULL|NULL|NULL|NULL", "", ""},
		{"malformed array", fn("array_to_string", tt, col("s"), txt(",")), "", "22P02", "malformed array literal"},
		{"any text", anyOp(col("s"), "=", txt("{abc,x}")), "t|f|NULL|f", "", ""},
		{"any int with null element", anyOp(col("i4"), ">", txt("{5,NULL}")), "t|t|NULL|NULL", "", ""},
		{"any empty", anyOp(col("i4"), "=", txt("{}")), "f|f|f|f", "", ""},
		{"any null array", anyOp(col("i4"), "=", lit(tt, nil)), "NULL|NULL|NULL|NULL", "", ""},
		{"any bool", anyOp(col("b"), "<>", txt("{t}")), "f|t|NULL|f", "", ""},
		{"any bad element", anyOp(col("i2"), "=", txt("{x}")), "", "22P02", `invalid input syntax for type smallint: "x"`},
		{"pg_get_expr of null", fn("pg_get_expr", tt, lit(tt, nil), i8(1)), "NULL|NULL|NULL|NULL", "", ""},
		{"pg_get_expr of text", fn("pg_get_expr", tt, txt("{OPEXPR}"), i8(1)), "", "22023", "not an expression tree"},
	})
}

func anyOp(x expr.Expr, op string, arr expr.Expr) expr.Expr {
	return fn("scalar_op_any", sqltypes.BoolType, x, arr, txt(op))
}
