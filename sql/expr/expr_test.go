package expr

import (
	"testing"

	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

func TestStringAndHelpers(t *testing.T) {
	price := &Column{Index: 2, Name: "price", T: sqltypes.Float8Type}
	sym := &Column{Index: 1, Name: "sym", T: sqltypes.TextType}
	e := AndAll(
		&Binary{Op: Gt, T: sqltypes.BoolType, L: &Binary{Op: Mul, T: sqltypes.Float8Type, L: price, R: &Literal{Value: 1.5, T: sqltypes.Float8Type}},
			R: &Literal{Value: 10.0, T: sqltypes.Float8Type}},
		&Binary{Op: Eq, T: sqltypes.BoolType, L: sym, R: &Literal{Value: "it's", T: sqltypes.TextType}},
		&IsNull{X: &Param{N: 1, T: sqltypes.Int8Type}, Not: true},
	)
	require.Equal(t, "(((price * 1.5) > 10) AND (sym = 'it''s')) AND ($1 IS NOT NULL))", e.String()[1:])
	require.Len(t, Conjuncts(e), 3)
	require.Equal(t, []int{2, 1}, Columns(e))
	require.Nil(t, AndAll())
	require.Equal(t, sqltypes.BoolType, e.Type())
	c := &Case{Whens: []When{{Cond: &IsNull{X: sym}, Result: &Literal{T: sqltypes.TextType}}}, Else: sym, T: sqltypes.TextType}
	require.Equal(t, "CASE WHEN (sym IS NULL) THEN NULL ELSE sym END", c.String())
	require.Equal(t, "coalesce(sym, 'x')", (&Func{Fn: fnName("coalesce"), Args: []Expr{sym, &Literal{Value: "x", T: sqltypes.TextType}}, T: sqltypes.TextType}).String())
}

// fnName stands in for a functions.Def, which this package cannot import.
type fnName string

func (f fnName) FuncName() string { return string(f) }
