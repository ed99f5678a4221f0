package exec_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// Expected rows from PostgreSQL 15:
//
//	select id, row_number() over w, rank() over (partition by sym order by px),
//	  dense_rank() over (partition by sym order by px), lag(px) over w,
//	  lead(qty, 2, -1::int8) over w, lag(id, 0) over w
//	from tr window w as (partition by sym order by px, id) order by sym, px, id;
func TestWindow(t *testing.T) {
	exectest.Run(t, exectest.Case{
		Inputs: trades(t),
		Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			s, err := exec.NewSort(in[0], mem, []exec.SortKey{{Col: 1}, {Col: 2}, {Col: 0}}, exec.SortOptions{BatchSize: 5})
			if err != nil {
				return nil, err
			}
			w, err := exec.NewWindow(s, mem, []int{1}, []exec.SortKey{{Col: 2}}, []exec.WindowFunc{
				{Func: "row_number", Name: "rn"},
				{Func: "rank", Name: "rk"},
				{Func: "dense_rank", Name: "drk"},
				{Func: "lag", Arg: pxCol, Name: "prev"},
				{Func: "lead", Arg: qtyCol, Offset: 2, Default: i8(-1), Name: "next2"},
				{Func: "lag", Arg: idCol, Zero: true, Name: "self"},
			}, eval.Env{}, exec.WindowOptions{BatchSize: 4})
			if err != nil {
				return nil, err
			}
			cols := []expr.Expr{idCol}
			for i, n := range []string{"rn", "rk", "drk"} {
				cols = append(cols, &expr.Column{Index: 4 + i, Name: n, T: sqltypes.Int8Type})
			}
			cols = append(cols, &expr.Column{Index: 7, T: sqltypes.Float8Type}, &expr.Column{Index: 8, T: sqltypes.Int8Type}, &expr.Column{Index: 9, T: sqltypes.Int4Type})
			return exec.NewProject(w, mem, cols, []string{"id", "rn", "rk", "drk", "prev", "next2", "self"}, eval.Env{})
		},
		Check: wantPG("0|1|1|1||7|0", "10|2|1|1|10|3|10", "6|3|3|2|10|-1|6", "2|4|4|3|12.5|-1|2",
			"1|1|1|1||10|1", "5|2|1|1|20|-1|5", "9|3|3|2|20|-1|9",
			"7|1|1|1||12|7", "4|2|2|2|7|-1|4", "11|3|2|2|30|-1|11",
			"8|1|1|1||-1|8", "3|2|2|2|1|-1|3"),
	})
}

func TestWindowErrors(t *testing.T) {
	src := func() exec.Operator {
		tbl := trades(t)(memory.DefaultAllocator)[0]
		return exec.NewBatches(tbl.Schema(), nil)
	}
	cases := []struct {
		name string
		f    exec.WindowFunc
		code string
	}{
		{"unknown", exec.WindowFunc{Func: "median", Name: "x"}, sqlerr.UndefinedFunction},
		{"ntile zero", exec.WindowFunc{Func: "ntile", Name: "x"}, "22014"},
		{"rows negative", exec.WindowFunc{Func: "sum", Arg: idCol, Frame: exec.WindowFrame{Unit: exec.FrameRows, Start: exec.FrameBound{Kind: exec.OffsetPreceding, N: -1}, End: exec.FrameBound{Kind: exec.CurrentRow}}, Name: "x"}, "22013"},
		{"groups without order", exec.WindowFunc{Func: "sum", Arg: idCol, Frame: exec.WindowFrame{Unit: exec.FrameGroups, Start: exec.FrameBound{Kind: exec.OffsetPreceding, N: 1}, End: exec.FrameBound{Kind: exec.CurrentRow}}, Name: "x"}, "42P20"},
		{"sum of text", exec.WindowFunc{Func: "sum", Arg: txt("a"), Frame: exec.DefaultFrame(), Name: "x"}, sqlerr.UndefinedFunction},
		{"lag without arg", exec.WindowFunc{Func: "lag", Name: "x"}, sqlerr.UndefinedFunction},
		{"row_number with arg", exec.WindowFunc{Func: "row_number", Arg: idCol, Name: "x"}, sqlerr.UndefinedFunction},
		{"default type", exec.WindowFunc{Func: "lead", Arg: idCol, Default: txt("x"), Name: "x"}, sqlerr.DatatypeMismatch},
		{"negative offset", exec.WindowFunc{Func: "lead", Arg: idCol, Offset: -1, Name: "x"}, sqlerr.InvalidParameterValue},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := exec.NewWindow(src(), memory.DefaultAllocator, nil, nil, []exec.WindowFunc{tc.f}, eval.Env{}, exec.WindowOptions{})
			require.Equal(t, tc.code, sqlerr.Code(err), "%v", err)
		})
	}
}

func TestWindowMemoryLimit(t *testing.T) {
	exectest.Run(t, exectest.Case{
		Inputs: trades(t),
		Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			return exec.NewWindow(in[0], mem, nil, nil, []exec.WindowFunc{{Func: "row_number", Name: "rn"}}, eval.Env{}, exec.WindowOptions{MemoryLimit: 64})
		},
		Check: wantCode("53200", "window exceeded the memory limit of 64 bytes"),
	})
}

func init() {
	extraCancelBuilds = append(extraCancelBuilds, struct {
		name  string
		build func(mem memory.Allocator, in exec.Operator) (exec.Operator, error)
	}{"window", func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
		return exec.NewWindow(in, mem, []int{1}, nil, []exec.WindowFunc{{Func: "row_number", Name: "rn"}}, eval.Env{}, exec.WindowOptions{BatchSize: 2})
	}})
}
