package exec_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sql/expr"
)

func TestGroupingSets(t *testing.T) {
	aggs := []exec.AggSpec{agg("count", false), agg("sum", false, qtyCol)}
	// select sym, grouping(sym), count(*), sum(qty) from tr group by rollup (sym):
	// the per-symbol rows (set 0) in order of first appearance, then the total (set 1).
	runOp(t, func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
		return exec.NewGroupingSets(in[0], mem, []expr.Expr{symCol}, []string{"sym"}, [][]int{{0}, {}}, "set", aggs, eval.Env{}, exec.AggOptions{BatchSize: 2})
	}, wantPG("A|0|4|22", "B|0|3|18", "|0|2|13", "C|0|3|25", "|1|12|78"))
	// Two keys, each set grouping by one: the other key is NULL.
	runOp(t, func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
		return exec.NewGroupingSets(in[0], mem, []expr.Expr{symCol, symCol}, []string{"a", "b"}, [][]int{{1}, {0}}, "set", aggs[:1], eval.Env{}, exec.AggOptions{})
	}, wantPG("|A|0|4", "|B|0|3", "||0|2", "|C|0|3", "A||1|4", "B||1|3", "||1|2", "C||1|3"))
}

func TestGroupingSetsEmptyInput(t *testing.T) {
	runOp(t, func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
		f, err := exec.NewFilter(in[0], mem, &expr.IsNull{X: idCol}, eval.Env{})
		if err != nil {
			return nil, err
		}
		return exec.NewGroupingSets(f, mem, []expr.Expr{symCol}, []string{"sym"}, [][]int{{0}, {}, {}}, "set", []exec.AggSpec{agg("count", false)}, eval.Env{}, exec.AggOptions{})
	}, wantPG("|1|0", "|2|0"))
}

func TestGroupingSetsMemoryLimit(t *testing.T) {
	// The sets share one budget: each alone fits.
	runOp(t, func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
		return exec.NewGroupingSets(in[0], mem, []expr.Expr{idCol}, []string{"id"}, [][]int{{0}, {0}, {0}}, "set", []exec.AggSpec{agg("count", false)}, eval.Env{}, exec.AggOptions{MemoryLimit: 20000})
	}, wantCode("53200", "hash aggregate exceeded the memory limit of 20000 bytes"))
}
