package exec_test

import (
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
)

// parallelSort wires a ParallelSort over in[0] cut into morsels, each
// worker's pipeline built by pipe over its view (nil: the view).
func parallelSort(keys []exec.SortKey, opts exec.SortOptions,
	pipe func(mem memory.Allocator, in exec.Operator) (exec.Operator, error)) func(memory.Allocator, []exec.Operator, int) (exec.Operator, error) {
	return func(mem memory.Allocator, in []exec.Operator, workers int) (exec.Operator, error) {
		m, views, inputs, err := morselPipes(mem, in[0], workers, pipe)
		if err != nil {
			return nil, err
		}
		return exec.NewParallelSort(m, views, inputs, mem, keys, opts)
	}
}

func TestParallelSortMatchesSerial(t *testing.T) {
	// Ties keep input order at every degree: by px DESC NULLS FIRST, then
	// by sym (NULLs last); equal (px, sym) rows in id order.
	for _, tc := range []struct {
		keys []exec.SortKey
		want []string
	}{
		{[]exec.SortKey{{Col: 2, Desc: true, Nulls: exec.NullsFirst}},
			[]string{"2|A||3", "9|B||10", "4|C|30|5", "11|C|30|12", "1|B|20|2", "5|B|20|6", "6|A|12.5|7",
				"0|A|10|1", "10|A|10|11", "7|C|7|8", "3||5|4", "8||1|9"}},
		{[]exec.SortKey{{Col: 1}},
			[]string{"0|A|10|1", "2|A||3", "6|A|12.5|7", "10|A|10|11", "1|B|20|2", "5|B|20|6", "9|B||10",
				"4|C|30|5", "7|C|7|8", "11|C|30|12", "3||5|4", "8||1|9"}},
	} {
		exectest.Run(t, exectest.Case{
			Inputs:   trades(t),
			Parallel: parallelSort(tc.keys, exec.SortOptions{BatchSize: 5}, nil),
			Check:    wantPG(tc.want...),
		})
	}
}

func TestParallelSortPipeline(t *testing.T) {
	// select qty % 4 as m, id from tr where px is not null order by m desc
	pipe := func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
		f, err := exec.NewFilter(in, mem, &expr.IsNull{X: pxCol, Not: true}, eval.Env{})
		if err != nil {
			return nil, err
		}
		p, err := exec.NewProject(f, mem, []expr.Expr{bin(expr.Mod, sqltypes.Int8Type, qtyCol, i8(4)), idCol}, []string{"m", "id"}, eval.Env{})
		if err != nil {
			f.Close()
		}
		return p, err
	}
	exectest.Run(t, exectest.Case{
		Inputs:   trades(t),
		Parallel: parallelSort([]exec.SortKey{{Col: 0, Desc: true}}, exec.SortOptions{}, pipe),
		Check:    wantPG("3|6", "3|10", "2|1", "2|5", "1|0", "1|4", "1|8", "0|3", "0|7", "0|11"),
	})
}

func TestParallelSortErrors(t *testing.T) {
	before := runtime.NumGoroutine()
	div := bin(expr.Div, sqltypes.Int8Type, i8(10), bin(expr.Sub, sqltypes.Int8Type, qtyCol, i8(7)))
	exectest.Run(t, exectest.Case{
		Inputs: trades(t),
		Parallel: parallelSort([]exec.SortKey{{Col: 0}}, exec.SortOptions{}, func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
			return exec.NewProject(in, mem, []expr.Expr{div}, []string{"d"}, eval.Env{})
		}),
		Check: wantCode("22012", "division by zero"),
	})
	exectest.Run(t, exectest.Case{
		Inputs:   trades(t),
		Parallel: parallelSort([]exec.SortKey{{Col: 0}}, exec.SortOptions{MemoryLimit: 200}, nil),
		Workers:  []int{1},
		Check:    wantCode("53200", "sort exceeded the memory limit of 200 bytes"),
	})
	requireGoroutines(t, before)
}
