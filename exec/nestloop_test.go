package exec_test

import (
	"context"
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

// TestNestedLoopJoinMatchesHashJoin runs the nested loop with the
// condition tr.sym = syms.sym AND px > 10, which the hash join also runs
// (keys plus residual): every join kind must give the same rows, and the
// streamed kinds the same order.
func TestNestedLoopJoinMatchesHashJoin(t *testing.T) {
	rsym := &expr.Column{Index: 4, Name: "sym", T: sqltypes.TextType}
	residual := bin(expr.Gt, bt, pxCol, f8(10))
	cond := bin(expr.And, bt, bin(expr.Eq, bt, symCol, rsym), residual)
	for _, typ := range []exec.JoinType{exec.InnerJoin, exec.LeftJoin, exec.RightJoin, exec.FullJoin} {
		t.Run(typ.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			in := tradesAndSyms(t)(mem)
			l := exec.NewBatches(in[0].Schema(), in[:1])
			r := exec.NewBatches(in[1].Schema(), in[1:])
			hj, err := exec.NewHashJoin(l, r, mem, typ, []int{1}, []int{0}, residual, eval.Env{}, exec.HashJoinOptions{})
			require.NoError(t, err)
			want, err := exectest.Collect(context.Background(), hj, mem)
			require.NoError(t, err)
			wantRows := pgRows(want)
			want.Release()
			check := wantPG(wantRows...)
			if typ.String() == "RIGHT" || typ.String() == "FULL" {
				check = wantPGUnordered(wantRows...)
			}
			for _, bs := range []int{1, 3, 1024} {
				exectest.Run(t, exectest.Case{
					Inputs: tradesAndSyms(t),
					Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
						return exec.NewNestedLoopJoin(in[0], in[1], mem, typ, cond, eval.Env{}, exec.NestedLoopJoinOptions{BatchSize: bs})
					},
					Check: check,
				})
			}
		})
	}
}

func TestNestedLoopJoinEdges(t *testing.T) {
	// ON true against an empty right side: LEFT keeps every left row.
	exectest.Run(t, exectest.Case{
		Inputs: func(mem memory.Allocator) []arrow.RecordBatch {
			return []arrow.RecordBatch{mkTable(t, mem, tcol{"a", sqltypes.Int4Type, []string{"1", "NULL"}}),
				mkTable(t, mem, tcol{"b", sqltypes.TextType, nil})}
		},
		Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			return exec.NewNestedLoopJoin(in[0], in[1], mem, exec.FullJoin, nil, eval.Env{}, exec.NestedLoopJoinOptions{})
		},
		Check: wantPG("1|", "|"),
	})
	// A non-equality: each trade with the lots below its price (FULL:
	// the lots no price exceeds come last).
	lot := &expr.Cast{X: &expr.Column{Index: 6, Name: "lot", T: sqltypes.Int4Type}, T: sqltypes.Float8Type}
	exectest.Run(t, exectest.Case{
		Inputs: tradesAndSyms(t),
		Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			return exec.NewNestedLoopJoin(in[0], in[1], mem, exec.FullJoin, bin(expr.Lt, bt, pxCol, lot), eval.Env{}, exec.NestedLoopJoinOptions{BatchSize: 4})
		},
		// select * from tr full join syms on px < lot::float8 (PostgreSQL 15).
		Check: wantPGUnordered("0|A|10|1|A|Alpha|100", "0|A|10|1|B|Beta2|20", "1|B|20|2|A|Alpha|100",
			"2|A||3|||", "3||5|4|A|Alpha|100", "3||5|4|B|Beta|10", "3||5|4|B|Beta2|20",
			"4|C|30|5|A|Alpha|100", "5|B|20|6|A|Alpha|100", "6|A|12.5|7|A|Alpha|100", "6|A|12.5|7|B|Beta2|20",
			"7|C|7|8|A|Alpha|100", "7|C|7|8|B|Beta|10", "7|C|7|8|B|Beta2|20",
			"8||1|9|A|Alpha|100", "8||1|9|B|Beta|10", "8||1|9|B|Beta2|20",
			"9|B||10|||", "10|A|10|11|A|Alpha|100", "10|A|10|11|B|Beta2|20", "11|C|30|12|A|Alpha|100",
			"|||||Nil|0", "||||D|Delta|1"),
	})
	exectest.Run(t, exectest.Case{
		Inputs: tradesAndSyms(t),
		Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			return exec.NewNestedLoopJoin(in[0], in[1], mem, exec.LeftJoin, nil, eval.Env{}, exec.NestedLoopJoinOptions{MemoryLimit: 10})
		},
		Check: wantCode("53200", "nested loop join exceeded the memory limit of 10 bytes"),
	})
}

// symRows is the right side of the lateral tests: for sym 'A' the rows
// n = 1, 2; for 'B' n = 1; none otherwise. calls counts its runs.
func symRows(mem memory.Allocator, calls *int) exec.LateralRunner {
	return func(_ context.Context, args []any) (exec.Operator, error) {
		*calls++
		var ns []string
		switch args[0] {
		case "A":
			ns = []string{"1", "2"}
		case "B":
			ns = []string{"1"}
		}
		tbl := mkTable(nil, mem, tcol{"n", sqltypes.Int4Type, ns})
		return exec.NewBatches(tbl.Schema(), []arrow.RecordBatch{tbl}), nil
	}
}

var nSchema = arrow.NewSchema([]arrow.Field{sqltypes.Int4Type.Field("n", true)}, nil)

func TestLateralJoin(t *testing.T) {
	nCol := &expr.Column{Index: 4, Name: "n", T: sqltypes.Int4Type}
	cases := []struct {
		name  string
		typ   exec.JoinType
		cond  expr.Expr
		batch int
		want  []string
	}{
		{"inner", exec.InnerJoin, nil, 0, []string{"0|A|10|1|1", "0|A|10|1|2", "1|B|20|2|1", "2|A||3|1", "2|A||3|2",
			"5|B|20|6|1", "6|A|12.5|7|1", "6|A|12.5|7|2", "9|B||10|1", "10|A|10|11|1", "10|A|10|11|2"}},
		{"left on n > 1", exec.LeftJoin, bin(expr.Gt, bt, nCol, &expr.Literal{Value: int64(1), T: sqltypes.Int4Type}), 2, []string{
			"0|A|10|1|2", "1|B|20|2|", "2|A||3|2", "3||5|4|", "4|C|30|5|", "5|B|20|6|", "6|A|12.5|7|2",
			"7|C|7|8|", "8||1|9|", "9|B||10|", "10|A|10|11|2", "11|C|30|12|"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var calls int
			exectest.Run(t, exectest.Case{
				Inputs: trades(t),
				Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
					calls = 0
					return exec.NewLateralJoin(in[0], []expr.Expr{symCol}, nSchema, symRows(mem, &calls), mem, tc.typ, tc.cond,
						eval.Env{}, exec.LateralJoinOptions{BatchSize: tc.batch})
				},
				Check: func(t *testing.T, got arrow.RecordBatch, err error) {
					wantPG(tc.want...)(t, got, err)
					require.Equal(t, 4, calls, "one run per distinct sym (A, B, NULL, C)")
				},
			})
		})
	}
	// A cache smaller than one result reruns the right side for each row
	// and gives the same rows.
	var calls int
	exectest.Run(t, exectest.Case{
		Inputs: trades(t),
		Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			calls = 0
			return exec.NewLateralJoin(in[0], []expr.Expr{symCol}, nSchema, symRows(mem, &calls), mem, exec.InnerJoin, nil,
				eval.Env{}, exec.LateralJoinOptions{CacheBytes: 1})
		},
		Check: func(t *testing.T, got arrow.RecordBatch, err error) {
			wantPG(cases[0].want...)(t, got, err)
			require.Greater(t, calls, 4)
		},
	})
	exectest.Run(t, exectest.Case{
		Inputs: trades(t),
		Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			return exec.NewLateralJoin(in[0], []expr.Expr{symCol}, nSchema, symRows(mem, &calls), mem, exec.InnerJoin, nil,
				eval.Env{}, exec.LateralJoinOptions{MemoryLimit: 4})
		},
		Check: wantCode("53200", "lateral join exceeded the memory limit of 4 bytes"),
	})
}

func init() {
	extraCancelBuilds = append(extraCancelBuilds,
		struct {
			name  string
			build func(mem memory.Allocator, in exec.Operator) (exec.Operator, error)
		}{"nestedloop", func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
			tbl := mkTable(nil, mem, tcol{"k", sqltypes.Int4Type, []string{"1", "2"}})
			right := exec.NewBatches(tbl.Schema(), []arrow.RecordBatch{tbl})
			return exec.NewNestedLoopJoin(in, right, mem, exec.FullJoin, nil, eval.Env{}, exec.NestedLoopJoinOptions{BatchSize: 2})
		}},
		struct {
			name  string
			build func(mem memory.Allocator, in exec.Operator) (exec.Operator, error)
		}{"lateral", func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
			var calls int
			return exec.NewLateralJoin(in, []expr.Expr{symCol}, nSchema, symRows(mem, &calls), mem, exec.LeftJoin, nil,
				eval.Env{}, exec.LateralJoinOptions{BatchSize: 1})
		}},
	)
}

// BenchmarkNestedLoopJoin: 2,000 trades LEFT JOIN 2,000 trades ON a
// band of quantities (l.qty < r.qty AND r.qty < l.qty + 2): 4M pairs.
func BenchmarkNestedLoopJoin(b *testing.B) {
	const n = 2000
	data := benchData(n)
	defer releaseAll(data)
	rq := &expr.Column{Index: 7, Name: "qty", T: sqltypes.Int8Type}
	cond := bin(expr.And, bt, bin(expr.Lt, bt, bQty, rq), bin(expr.Lt, bt, rq, bin(expr.Add, sqltypes.Int8Type, bQty, i8(2))))
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		side := func() exec.Operator {
			in := make([]arrow.RecordBatch, len(data))
			for i, d := range data {
				d.Retain()
				in[i] = d
			}
			return exec.NewBatches(benchSchema, in)
		}
		op, err := exec.NewNestedLoopJoin(side(), side(), memory.DefaultAllocator, exec.LeftJoin, cond, eval.Env{}, exec.NestedLoopJoinOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := exec.Drain(context.Background(), op, func(arrow.RecordBatch) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*n)*float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
}
