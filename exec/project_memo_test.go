package exec_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// TestProjectMemo: projections built with one memo share its schema
// while their expressions keep its types (the reruns of exectest build
// one each), and get a schema of their own when the types differ.
func TestProjectMemo(t *testing.T) {
	var m exec.ProjectMemo
	var first, input *arrow.Schema
	exectest.Run(t, exectest.Case{
		Inputs: trades(t),
		Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			p, err := exec.NewProjectMemo(in[0], mem, []expr.Expr{symCol, pxCol}, []string{"sym", "px"}, eval.Env{}, &m)
			if err != nil {
				return nil, err
			}
			if first == nil {
				first, input = p.Schema(), in[0].Schema()
			}
			require.Same(t, first, p.Schema())
			return p, nil
		},
		Check: wantPG("A|10", "B|20", "A|", "|5", "C|30", "B|20", "A|12.5", "C|7", "|1", "B|", "A|10", "C|30"),
	})
	require.NotNil(t, first)

	// The same names over other types: a schema of their own, the
	// memo's from then on.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	in := exec.NewBatches(input, nil)
	p, err := exec.NewProjectMemo(in, mem, []expr.Expr{pxCol, symCol}, []string{"sym", "px"}, eval.Env{}, &m)
	require.NoError(t, err)
	require.NotSame(t, first, p.Schema())
	require.True(t, arrow.TypeEqual(sqltypes.Float8Type.Arrow(), p.Schema().Field(0).Type), "%v", p.Schema())
	q, err := exec.NewProjectMemo(in, mem, []expr.Expr{pxCol, symCol}, []string{"sym", "px"}, eval.Env{}, &m)
	require.NoError(t, err)
	require.Same(t, p.Schema(), q.Schema())
}
