package exec_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// tradesAndSyms: trades plus a reference table with a duplicate key, a
// NULL key and a key no trade has.
func tradesAndSyms(t testing.TB) func(mem memory.Allocator) []arrow.RecordBatch {
	return func(mem memory.Allocator) []arrow.RecordBatch {
		return append(trades(t)(mem), mkTable(t, mem,
			tcol{"sym", sqltypes.TextType, []string{"A", "B", "B", "NULL", "D"}},
			tcol{"name", sqltypes.TextType, []string{"Alpha", "Beta", "Beta2", "Nil", "Delta"}},
			tcol{"lot", sqltypes.Int4Type, []string{"100", "10", "20", "0", "1"}},
		))
	}
}

// Expected rows from PostgreSQL 15:
//
//	select * from tr join syms on tr.sym = syms.sym order by id, lot;
var innerJoinRows = []string{
	"0|A|10|1|A|Alpha|100", "1|B|20|2|B|Beta|10", "1|B|20|2|B|Beta2|20", "2|A||3|A|Alpha|100",
	"5|B|20|6|B|Beta|10", "5|B|20|6|B|Beta2|20", "6|A|12.5|7|A|Alpha|100", "9|B||10|B|Beta|10",
	"9|B||10|B|Beta2|20", "10|A|10|11|A|Alpha|100",
}

// select * from tr left join syms on tr.sym = syms.sym and px > 10 order by id, lot;
var leftJoinResidualRows = []string{
	"0|A|10|1|||", "1|B|20|2|B|Beta|10", "1|B|20|2|B|Beta2|20", "2|A||3|||", "3||5|4|||",
	"4|C|30|5|||", "5|B|20|6|B|Beta|10", "5|B|20|6|B|Beta2|20", "6|A|12.5|7|A|Alpha|100",
	"7|C|7|8|||", "8||1|9|||", "9|B||10|||", "10|A|10|11|||", "11|C|30|12|||",
}

func wantPGUnordered(want ...string) func(t *testing.T, got arrow.RecordBatch, err error) {
	return func(t *testing.T, got arrow.RecordBatch, err error) {
		t.Helper()
		require.NoError(t, err)
		rows := pgRows(got)
		slices.Sort(rows)
		w := slices.Clone(want)
		slices.Sort(w)
		require.Equal(t, w, rows)
	}
}

func TestHashJoin(t *testing.T) {
	residual := bin(expr.Gt, bt, pxCol, f8(10)) // column 2 of the joined row is tr.px
	cases := []struct {
		name     string
		typ      exec.JoinType
		residual expr.Expr
		opts     exec.HashJoinOptions
		check    func(t *testing.T, got arrow.RecordBatch, err error)
	}{
		// Building the right side keeps the left order; ties in build order.
		{"inner build right", exec.InnerJoin, nil, exec.HashJoinOptions{}, wantPG(innerJoinRows...)},
		{"left residual build right", exec.LeftJoin, residual, exec.HashJoinOptions{}, wantPG(leftJoinResidualRows...)},
		{"inner build left", exec.InnerJoin, nil, exec.HashJoinOptions{LeftRows: 1, RightRows: 1000}, wantPGUnordered(innerJoinRows...)},
		{"left residual build left", exec.LeftJoin, residual, exec.HashJoinOptions{LeftRows: 1, RightRows: 1000}, wantPGUnordered(leftJoinResidualRows...)},
		{"inner residual", exec.InnerJoin, residual, exec.HashJoinOptions{}, wantPG(
			"1|B|20|2|B|Beta|10", "1|B|20|2|B|Beta2|20", "5|B|20|6|B|Beta|10", "5|B|20|6|B|Beta2|20", "6|A|12.5|7|A|Alpha|100")},
		{"memory limit", exec.InnerJoin, nil, exec.HashJoinOptions{MemoryLimit: 50}, wantCode("53200", "hash join exceeded the memory limit of 50 bytes")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			exectest.Run(t, exectest.Case{
				Inputs: tradesAndSyms(t),
				Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
					return exec.NewHashJoin(in[0], in[1], mem, tc.typ, []int{1}, []int{0}, tc.residual, eval.Env{}, tc.opts)
				},
				Check: tc.check,
			})
		})
	}
}

func TestHashJoinErrors(t *testing.T) {
	mk := func() (exec.Operator, exec.Operator) {
		l := exec.NewBatches(arrow.NewSchema([]arrow.Field{sqltypes.Int4Type.Field("a", true)}, nil), nil)
		r := exec.NewBatches(arrow.NewSchema([]arrow.Field{sqltypes.TextType.Field("b", true)}, nil), nil)
		return l, r
	}
	l, r := mk()
	_, err := exec.NewHashJoin(l, r, memory.DefaultAllocator, exec.InnerJoin, []int{0}, []int{0}, nil, eval.Env{}, exec.HashJoinOptions{})
	require.Equal(t, sqlerr.UndefinedFunction, sqlerr.Code(err))
	l, r = mk()
	_, err = exec.NewHashJoin(l, r, memory.DefaultAllocator, exec.InnerJoin, []int{0}, []int{3}, nil, eval.Env{}, exec.HashJoinOptions{})
	require.Equal(t, sqlerr.UndefinedColumn, sqlerr.Code(err))
	l, r = mk()
	_, err = exec.NewHashJoin(l, r, memory.DefaultAllocator, exec.InnerJoin, nil, nil, nil, eval.Env{}, exec.HashJoinOptions{})
	require.Equal(t, sqlerr.InternalError, sqlerr.Code(err))
}

func TestCrossJoin(t *testing.T) {
	exectest.Run(t, exectest.Case{
		Inputs: tradesAndSyms(t),
		Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			return exec.NewCrossJoin(in[0], in[1], mem, exec.CrossJoinOptions{BatchSize: 7})
		},
		Check: func(t *testing.T, got arrow.RecordBatch, err error) {
			require.NoError(t, err)
			require.EqualValues(t, 60, got.NumRows())
			rows := pgRows(got)
			require.Equal(t, "0|A|10|1|A|Alpha|100", rows[0])
			require.Equal(t, "0|A|10|1|D|Delta|1", rows[4])
			require.Equal(t, "1|B|20|2|A|Alpha|100", rows[5])
			require.Equal(t, "11|C|30|12|D|Delta|1", rows[59])
		},
	})
	exectest.Run(t, exectest.Case{
		Inputs: tradesAndSyms(t),
		Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			return exec.NewCrossJoin(in[0], in[1], mem, exec.CrossJoinOptions{MemoryLimit: 10})
		},
		Check: wantCode("53200", "cross join exceeded the memory limit of 10 bytes"),
	})
}

func TestDistinct(t *testing.T) {
	exectest.Run(t, exectest.Case{
		Inputs: trades(t),
		Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			p, err := exec.NewProject(in[0], mem, []expr.Expr{symCol, pxCol}, []string{"sym", "px"}, eval.Env{})
			if err != nil {
				return nil, err
			}
			return exec.NewDistinct(p, mem, 0)
		},
		// First occurrences, in input order; (NULL, ...) rows are equal
		// to each other only when all columns are.
		Check: wantPG("A|10", "B|20", "A|", "|5", "C|30", "A|12.5", "C|7", "|1", "B|"),
	})
	exectest.Run(t, exectest.Case{
		Inputs: trades(t),
		Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			return exec.NewDistinct(in[0], mem, 100)
		},
		Check: wantCode("53200", "distinct exceeded the memory limit of 100 bytes"),
	})
}

func init() {
	extraCancelBuilds = append(extraCancelBuilds,
		struct {
			name  string
			build func(mem memory.Allocator, in exec.Operator) (exec.Operator, error)
		}{"hashagg", func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
			// Cancel after the first output batch: the aggregate emits
			// batches of 1 group.
			return exec.NewHashAggregate(in, mem, []expr.Expr{idCol}, []string{"id"}, []exec.AggSpec{agg("count", false)}, eval.Env{}, exec.AggOptions{BatchSize: 1})
		}},
		struct {
			name  string
			build func(mem memory.Allocator, in exec.Operator) (exec.Operator, error)
		}{"streamagg", func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
			return exec.NewStreamAggregate(in, mem, []expr.Expr{idCol}, []string{"id"}, []exec.AggSpec{agg("count", false)}, eval.Env{}, exec.AggOptions{})
		}},
		struct {
			name  string
			build func(mem memory.Allocator, in exec.Operator) (exec.Operator, error)
		}{"distinct", func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
			return exec.NewDistinct(in, mem, 0)
		}},
		struct {
			name  string
			build func(mem memory.Allocator, in exec.Operator) (exec.Operator, error)
		}{"hashjoin", func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
			right := exec.NewBatches(arrow.NewSchema([]arrow.Field{sqltypes.Int4Type.Field("k", true)}, nil), nil)
			return exec.NewHashJoin(in, right, mem, exec.LeftJoin, []int{0}, []int{0}, nil, eval.Env{}, exec.HashJoinOptions{})
		}},
		struct {
			name  string
			build func(mem memory.Allocator, in exec.Operator) (exec.Operator, error)
		}{"crossjoin", func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
			tbl := mkTable(nil, mem, tcol{"k", sqltypes.Int4Type, []string{"1", "2"}})
			right := exec.NewBatches(tbl.Schema(), []arrow.RecordBatch{tbl})
			return exec.NewCrossJoin(in, right, mem, exec.CrossJoinOptions{BatchSize: 2})
		}},
	)
}

// TestHashJoinFanOutIsChunked checks that a probe batch whose rows match
// many build rows is joined in pieces rather than in one huge batch.
func TestHashJoinFanOutIsChunked(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ones := func(n int) []string { return ints(n, func(int) string { return "1" }) }
	l := mkTable(t, mem, tcol{"k", sqltypes.Int4Type, ones(10)})
	r := mkTable(t, mem, tcol{"k", sqltypes.Int4Type, ones(10000)}, tcol{"i", sqltypes.Int4Type, ints(10000, func(i int) string { return fmt.Sprint(i) })})
	j, err := exec.NewHashJoin(exec.NewBatches(l.Schema(), []arrow.RecordBatch{l}), exec.NewBatches(r.Schema(), []arrow.RecordBatch{r}),
		mem, exec.InnerJoin, []int{0}, []int{0}, nil, eval.Env{}, exec.HashJoinOptions{})
	require.NoError(t, err)
	var sizes []int64
	require.NoError(t, exec.Drain(context.Background(), j, func(b arrow.RecordBatch) error {
		sizes = append(sizes, b.NumRows())
		return nil
	}))
	require.Equal(t, []int64{70000, 30000}, sizes, "64K pairs per piece, whole probe rows")
}
