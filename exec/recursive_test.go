package exec_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// recursiveSeries builds WITH RECURSIVE r(n) AS (SELECT 1 [UNION ALL | UNION]
// SELECT n % mod + 1 FROM r [WHERE n < stop]) over mem.
func recursiveSeries(t *testing.T, mem memory.Allocator, distinct bool, mod, stop int64, memoryLimit int64) exec.Operator {
	t.Helper()
	i4 := sqltypes.Int4Type
	lit := func(v int64) expr.Expr { return &expr.Literal{Value: v, T: i4} }
	base, err := exec.NewValues(mem, [][]expr.Expr{{lit(1)}}, []string{"n"}, eval.Env{})
	require.NoError(t, err)
	wt := exec.NewWorkTable(base.Schema())
	n := &expr.Column{Index: 0, Name: "n", T: i4}
	build := func() (exec.Operator, error) {
		var in exec.Operator = exec.NewWorkTableScan(wt)
		if stop > 0 {
			f, err := exec.NewFilter(in, mem, bin(expr.Lt, sqltypes.BoolType, n, lit(stop)), eval.Env{})
			if err != nil {
				return nil, err
			}
			in = f
		}
		next := expr.Expr(bin(expr.Add, i4, n, lit(1)))
		if mod > 0 {
			next = bin(expr.Add, i4, bin(expr.Mod, i4, n, lit(mod)), lit(1))
		}
		return exec.NewProject(in, mem, []expr.Expr{next}, []string{"m"}, eval.Env{})
	}
	r, err := exec.NewRecursiveUnion(base, wt, build, mem, distinct, memoryLimit)
	require.NoError(t, err)
	return r
}

func runRecursive(t *testing.T, op exec.Operator, mem memory.Allocator) ([]string, error) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, op.Open(ctx))
	got, err := exectest.Collect(ctx, op, mem)
	require.NoError(t, op.Close())
	if err != nil {
		return nil, err
	}
	defer got.Release()
	return pgRows(got), nil
}

func TestRecursiveUnion(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)

	rows, err := runRecursive(t, recursiveSeries(t, mem, false, 0, 5, 0), mem)
	require.NoError(t, err)
	require.Equal(t, []string{"1", "2", "3", "4", "5"}, rows)

	// UNION: n % 3 + 1 cycles through 2, 3, 1; the repeat ends it.
	rows, err = runRecursive(t, recursiveSeries(t, mem, true, 3, 0, 0), mem)
	require.NoError(t, err)
	require.Equal(t, []string{"1", "2", "3"}, rows)

	// Endless, under a LIMIT: closed mid-iteration.
	lim, err := exec.NewLimit(recursiveSeries(t, mem, false, 0, 0, 0), 4, 0)
	require.NoError(t, err)
	rows, err = runRecursive(t, lim, mem)
	require.NoError(t, err)
	require.Equal(t, []string{"1", "2", "3", "4"}, rows)

	// Endless and distinct: the rows seen exceed the memory limit.
	_, err = runRecursive(t, recursiveSeries(t, mem, true, 0, 0, 4096), mem)
	require.ErrorContains(t, err, "recursive query exceeded the memory limit of 4096 bytes")
}

func TestRecursiveUnionCancelled(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	op := recursiveSeries(t, mem, false, 0, 0, 0)
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, op.Open(ctx))
	for i := 0; i < 10; i++ {
		b, err := op.Next(ctx)
		require.NoError(t, err)
		b.Release()
	}
	cancel()
	_, err := op.Next(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, op.Close())
}
