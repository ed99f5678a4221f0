package eval

import (
	"testing"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// TestNullPropagation checks that every strict operator and function
// returns NULL for every row when one argument is a NULL literal, and that
// the non-strict ones do not.
func TestNullPropagation(t *testing.T) {
	null := func(t sqltypes.Type) expr.Expr { return lit(t, nil) }
	i4t, f8t, tt, nt := sqltypes.Int4Type, sqltypes.Float8Type, sqltypes.TextType, num102
	ts, iv, tz := sqltypes.TimestampType, sqltypes.IntervalType, sqltypes.TimestampTZType
	allNull := "NULL|NULL|NULL|NULL"
	strict := []struct {
		name string
		e    expr.Expr
	}{
		{"int +", bin(expr.Add, i4t, col("i4"), null(i4t))},
		{"int / null", bin(expr.Div, i4t, col("i4"), null(i4t))},
		{"null / 0 raises nothing", bin(expr.Div, i4t, null(i4t), i4(0))},
		{"float *", bin(expr.Mul, f8t, null(f8t), col("f8"))},
		{"numeric -", bin(expr.Sub, nt, col("n"), null(nt))},
		{"neg", &expr.Unary{Op: expr.Neg, X: null(i4t), T: i4t}},
		{"not", &expr.Unary{Op: expr.Not, X: null(bt), T: bt}},
		{"=", bin(expr.Eq, bt, col("s"), null(tt))},
		{"<", bin(expr.Lt, bt, null(ts), col("ts"))},
		{"like", bin(expr.Like, bt, col("s"), null(tt))},
		{"ilike", bin(expr.ILike, bt, null(tt), txt("a"))},
		{"||", bin(expr.Concat, tt, col("s"), null(tt))},
		{"in", &expr.In{X: null(i4t), List: []expr.Expr{i4(1)}}},
		{"cast", cast(null(tt), sqltypes.Int4Type)},
		{"ts + interval", bin(expr.Add, ts, col("ts"), null(iv))},
		{"ts - ts", bin(expr.Sub, iv, null(ts), col("ts"))},
		{"date + int", bin(expr.Add, sqltypes.DateType, col("d"), null(i4t))},
		{"lower", fn("lower", tt, null(tt))},
		{"upper", fn("upper", tt, null(tt))},
		{"length", fn("length", i4t, null(tt))},
		{"substr", fn("substr", tt, col("s"), null(i4t))},
		{"btrim", fn("btrim", tt, col("s"), null(tt))},
		{"abs", fn("abs", f8t, null(f8t))},
		{"round", fn("round", nt, col("n"), null(i4t))},
		{"floor", fn("floor", f8t, null(f8t))},
		{"sqrt of null does not raise", fn("sqrt", f8t, null(f8t))},
		{"ln", fn("ln", f8t, null(f8t))},
		{"exp", fn("exp", f8t, null(f8t))},
		{"power", fn("power", f8t, f8(2), null(f8t))},
		{"date_trunc unit", fn("date_trunc", ts, null(tt), col("ts"))},
		{"date_trunc", fn("date_trunc", ts, txt("hour"), null(ts))},
		{"date_part", fn("date_part", f8t, txt("hour"), null(ts))},
		{"to_timestamp", fn("to_timestamp", tz, null(f8t))},
		{"time_bucket", fn("time_bucket", ts, null(iv), col("ts"))},
		{"nullif", fn("nullif", i4t, null(i4t), i4(1))},
		{"coalesce of nulls", fn("coalesce", i4t, null(i4t), null(i4t))},
		{"greatest of nulls", fn("greatest", i4t, null(i4t), null(i4t))},
		{"case without match", &expr.Case{Whens: []expr.When{{Cond: null(bt), Result: i4(1)}}, T: i4t}},
	}
	for _, tc := range strict {
		t.Run(tc.name, func(t *testing.T) {
			got, err := evalText(t, testCols, tc.e, Env{})
			require.NoError(t, err)
			require.Equal(t, allNull, got)
		})
	}
	nonStrict := []evalCase{
		{"is null", &expr.IsNull{X: null(i4t)}, "t|t|t|t", "", ""},
		{"is distinct from null", bin(expr.IsDistinctFrom, bt, null(i4t), null(i4t)), "f|f|f|f", "", ""},
		{"false and null", bin(expr.And, bt, lit(bt, false), null(bt)), "f|f|f|f", "", ""},
		{"true or null", bin(expr.Or, bt, null(bt), lit(bt, true)), "t|t|t|t", "", ""},
		{"in finds a match despite null", &expr.In{X: i4(1), List: []expr.Expr{null(i4t), i4(1)}}, "t|t|t|t", "", ""},
		{"concat skips null", fn("concat", tt, null(tt), txt("x")), "x|x|x|x", "", ""},
		{"coalesce", fn("coalesce", i4t, null(i4t), i4(3)), "3|3|3|3", "", ""},
		{"least skips null", fn("least", i4t, null(i4t), i4(3)), "3|3|3|3", "", ""},
		{"nullif with null second", fn("nullif", i4t, i4(1), null(i4t)), "1|1|1|1", "", ""},
	}
	runCases(t, nonStrict)
}

// TestCoercion checks that CASE/COALESCE/GREATEST arms of the same kind
// but other modifiers are cast to the result type, not merged raw.
func TestCoercion(t *testing.T) {
	n124 := sqltypes.NumericType(12, 4)
	runCases(t, []evalCase{
		{"case numeric scales", &expr.Case{Whens: []expr.When{{Cond: col("b"), Result: col("n")}},
			Else: litText(n124, "0.1234"), T: n124}, "1.2500|0.1234|0.1234|100.0000", "", ""},
		{"coalesce numeric scales", fn("coalesce", n124, col("n"), litText(n124, "9.8765")), "1.2500|-2.5000|9.8765|100.0000", "", ""},
		{"greatest varchar and text", fn("greatest", sqltypes.TextType, cast(col("s"), sqltypes.VarcharOf(3)), txt("b")), "b|b|b|b", "", ""},
		{"literal out of int4 range", lit(sqltypes.Int4Type, int64(1)<<40), "", "22003", "integer out of range"},
		{"case arm of another kind", &expr.Case{Whens: []expr.When{{Cond: col("b"), Result: col("s")}}, T: sqltypes.Int4Type}, "", "42804", "CASE result"},
	})
}
