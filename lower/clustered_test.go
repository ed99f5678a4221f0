package lower

import (
	"testing"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/ordering"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

func TestClustered(t *testing.T) {
	col := func(i int) expr.Expr { return &expr.Column{Index: i, T: sqltypes.Int8Type} }
	byAB := ordering.Props{Lex: ordering.Lex{ordering.Asc(0), {Col: 1, Desc: true}, ordering.Asc(2)}}
	cases := []struct {
		name  string
		p     ordering.Props
		group []expr.Expr
		want  bool
	}{
		{"prefix", byAB, []expr.Expr{col(0)}, true},
		{"prefix in another order", byAB, []expr.Expr{col(1), col(0)}, true},
		{"not a prefix", byAB, []expr.Expr{col(1)}, false},
		{"gap", byAB, []expr.Expr{col(0), col(2)}, false},
		{"constant leading key skipped", ordering.Props{Lex: ordering.Lex{ordering.Asc(3), ordering.Asc(1)}, Const: []int{3}}, []expr.Expr{col(1)}, true},
		{"constant group key", ordering.Props{Const: []int{4}}, []expr.Expr{col(4)}, true},
		{"unordered", ordering.Props{}, []expr.Expr{col(0)}, false},
		{"expression key", byAB, []expr.Expr{&expr.Unary{Op: expr.Neg, X: col(0), T: sqltypes.Int8Type}}, false},
		{"no group by", byAB, nil, false},
	}
	for _, c := range cases {
		require.Equal(t, c.want, planner.Clustered(c.p, c.group), c.name)
	}
}
