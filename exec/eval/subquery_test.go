package eval

import (
	"context"
	"testing"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// fakeRuns answers a subquery from a table keyed by its one outer value
// (the i2 or z column of testCols) and counts the runs.
type fakeRuns struct {
	rows  map[any][]any
	calls int
}

func (f *fakeRuns) run(_ context.Context, _ *expr.Subquery, args []any, max int) ([]any, error) {
	f.calls++
	var key any
	if len(args) > 0 {
		key = args[0]
	}
	out := f.rows[key]
	if max >= 0 && len(out) > max {
		out = out[:max]
	}
	return out, nil
}

func TestSubqueryKinds(t *testing.T) {
	i2 := col("i2") // 1, -32768, NULL, 100
	bt, tt := sqltypes.BoolType, sqltypes.TextType
	for _, tc := range []struct {
		name string
		kind expr.SubqueryKind
		t    sqltypes.Type
		rows map[any][]any
		want string
	}{
		{"scalar", expr.ScalarSub, sqltypes.Int8Type,
			map[any][]any{int64(1): {int64(5)}, nil: {nil}, int64(100): {int64(7)}}, "5|NULL|NULL|7"},
		{"exists", expr.ExistsSub, bt,
			map[any][]any{int64(1): {int64(5), int64(6)}, nil: {nil}, int64(100): {int64(7)}}, "t|f|t|t"},
		{"any", expr.AnySub, bt,
			map[any][]any{int64(1): {false, nil}, int64(-32768): {false, true}, int64(100): {false}}, "NULL|t|f|f"},
		{"all", expr.AllSub, bt,
			map[any][]any{int64(1): {true, nil}, int64(-32768): {true, false, nil}, int64(100): {nil, true}}, "NULL|f|t|NULL"},
		{"array", expr.ArraySub, sqltypes.ArrayOf(tt),
			map[any][]any{int64(1): {"a", "b c", nil, "", "NULL", `q"\`}, int64(100): {"x"}}, `{a,"b c",NULL,"","NULL","q\"\\"}|{}|{}|{x}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeRuns{rows: tc.rows}
			e := &expr.Subquery{Kind: tc.kind, Args: []expr.Expr{i2}, T: tc.t, ID: 1}
			got, err := evalText(t, testCols, e, Env{Subquery: f.run})
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestSubqueryRunsOncePerOuterValue(t *testing.T) {
	// z is 0, 2, NULL, 0: three distinct values, three runs.
	f := &fakeRuns{rows: map[any][]any{int64(0): {int64(1)}, int64(2): {int64(2)}}}
	e := &expr.Subquery{Kind: expr.ScalarSub, Args: []expr.Expr{col("z")}, T: sqltypes.Int8Type}
	got, err := evalText(t, testCols, e, Env{Subquery: f.run})
	require.NoError(t, err)
	require.Equal(t, "1|2|NULL|1", got)
	require.Equal(t, 3, f.calls)

	// Uncorrelated: one run for the batch.
	f = &fakeRuns{rows: map[any][]any{nil: {"v"}}}
	got, err = evalText(t, testCols, &expr.Subquery{Kind: expr.ScalarSub, T: sqltypes.TextType}, Env{Subquery: f.run})
	require.NoError(t, err)
	require.Equal(t, "v|v|v|v", got)
	require.Equal(t, 1, f.calls)
}

func TestSubqueryErrors(t *testing.T) {
	f := &fakeRuns{rows: map[any][]any{int64(100): {int64(1), int64(2)}}}
	e := &expr.Subquery{Kind: expr.ScalarSub, Args: []expr.Expr{col("i2")}, T: sqltypes.Int8Type}
	_, err := evalText(t, testCols, e, Env{Subquery: f.run})
	require.Equal(t, "21000", sqlerr.Code(err))
	require.Contains(t, err.Error(), "more than one row returned by a subquery used as an expression")

	_, err = evalText(t, testCols, e, Env{})
	require.Equal(t, sqlerr.FeatureNotSupported, sqlerr.Code(err))
}

// Expected values were checked against PostgreSQL 15.
func TestArrayFunctions(t *testing.T) {
	i4t, tt := sqltypes.Int4Type, sqltypes.TextType
	i8 := func(v int64) expr.Expr { return lit(sqltypes.Int8Type, v) }
	runCases(t, []evalCase{
		{"array_upper", fn("array_upper", i4t, txt("{4,5,6}"), i4(1)), "3|3|3|3", "", ""},
		{"array_upper vector", fn("array_upper", i4t, txt("1 2"), i4(1)), "1|1|1|1", "", ""},
		{"array_lower bounds", fn("array_lower", i4t, txt("[2:3]={7,8}"), i4(1)), "2|2|2|2", "", ""},
		{"array_upper empty", fn("array_upper", i4t, txt("{}"), i4(1)), "NULL|NULL|NULL|NULL", "", ""},
		{"array_upper dim 2", fn("array_upper", i4t, txt("{1}"), i4(2)), "NULL|NULL|NULL|NULL", "", ""},
		{"subscript", fn("array_subscript", tt, txt("{4,5,NULL}"), i8(2)), "5|5|5|5", "", ""},
		{"subscript null element", fn("array_subscript", tt, txt("{4,5,NULL}"), i8(3)), "NULL|NULL|NULL|NULL", "", ""},
		{"subscript out of range", fn("array_subscript", tt, txt("{4}"), i8(0)), "NULL|NULL|NULL|NULL", "", ""},
		{"subscript vector from 0", fn("array_subscript", tt, txt("7 8"), i8(0)), "7|7|7|7", "", ""},
		{"malformed", fn("array_upper", i4t, txt("{1"), i4(1)), "", "22P02", "malformed array literal"},
	})
}
