package eval

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// A tree deeper than the planner ever builds is refused before compile
// recurses through it, and one just inside the bound compiles.
func TestCompileDepthLimit(t *testing.T) {
	deep := func(n int) expr.Expr {
		var e expr.Expr = &expr.Literal{Value: int64(1), T: sqltypes.Int8Type}
		for i := 0; i < n; i++ {
			e = &expr.Unary{Op: expr.Neg, X: e, T: sqltypes.Int8Type}
		}
		return e
	}
	schema := arrow.NewSchema(nil, nil)
	_, err := Compile(deep(maxCompileDepth-1), schema, Env{})
	require.NoError(t, err)
	_, err = Compile(deep(10*maxCompileDepth), schema, Env{})
	require.Equal(t, sqlerr.StatementTooComplex, sqlerr.Code(err), "%v", err)
}
