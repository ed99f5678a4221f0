package exec_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/functions"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// tcol is a test column: values in Postgres text form, "NULL" for NULL.
type tcol struct {
	name string
	t    sqltypes.Type
	vals []string
}

func mkTable(t testing.TB, mem memory.Allocator, cols ...tcol) arrow.RecordBatch {
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	rows := 0
	for i, c := range cols {
		fields[i] = c.t.Field(c.name, true)
		b := array.NewBuilder(mem, c.t.Arrow())
		for _, v := range c.vals {
			if v == "NULL" {
				b.AppendNull()
				continue
			}
			require.NoError(t, sqltypes.DecodeText(b, c.t, v, nil))
		}
		arrs[i] = b.NewArray()
		b.Release()
		rows = len(c.vals)
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(rows))
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

func ints(n int, f func(i int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// trades: 12 rows (id, sym, px, qty), with NULLs in sym and px.
func trades(t testing.TB) func(mem memory.Allocator) []arrow.RecordBatch {
	return func(mem memory.Allocator) []arrow.RecordBatch {
		return []arrow.RecordBatch{mkTable(t, mem,
			tcol{"id", sqltypes.Int4Type, ints(12, func(i int) string { return fmt.Sprint(i) })},
			tcol{"sym", sqltypes.TextType, []string{"A", "B", "A", "NULL", "C", "B", "A", "C", "NULL", "B", "A", "C"}},
			tcol{"px", sqltypes.Float8Type, []string{"10", "20", "NULL", "5", "30", "20", "12.5", "7", "1", "NULL", "10", "30"}},
			tcol{"qty", sqltypes.Int8Type, []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"}},
		)}
	}
}

var (
	idCol  = &expr.Column{Index: 0, Name: "id", T: sqltypes.Int4Type}
	symCol = &expr.Column{Index: 1, Name: "sym", T: sqltypes.TextType}
	pxCol  = &expr.Column{Index: 2, Name: "px", T: sqltypes.Float8Type}
	qtyCol = &expr.Column{Index: 3, Name: "qty", T: sqltypes.Int8Type}
)

func f8(v float64) *expr.Literal { return &expr.Literal{Value: v, T: sqltypes.Float8Type} }
func i8(v int64) *expr.Literal   { return &expr.Literal{Value: v, T: sqltypes.Int8Type} }
func txt(s string) *expr.Literal { return &expr.Literal{Value: s, T: sqltypes.TextType} }
func bin(op expr.BinaryOp, t sqltypes.Type, l, r expr.Expr) expr.Expr {
	return &expr.Binary{Op: op, T: t, L: l, R: r}
}

func wantRows(want ...string) func(t *testing.T, got arrow.RecordBatch, err error) {
	return func(t *testing.T, got arrow.RecordBatch, err error) {
		t.Helper()
		require.NoError(t, err)
		exectest.RequireRows(t, want, got)
	}
}

func wantCode(code, msg string) func(t *testing.T, got arrow.RecordBatch, err error) {
	return func(t *testing.T, got arrow.RecordBatch, err error) {
		t.Helper()
		require.Error(t, err)
		require.Equal(t, code, sqlerr.Code(err), "%v", err)
		require.Contains(t, err.Error(), msg)
	}
}

func TestFilter(t *testing.T) {
	bt := sqltypes.BoolType
	cases := []struct {
		name  string
		pred  expr.Expr
		check func(t *testing.T, got arrow.RecordBatch, err error)
	}{
		{"px > 10 and sym = A (NULL is false)", expr.AndAll(bin(expr.Gt, bt, pxCol, f8(10)), bin(expr.Eq, bt, symCol, txt("A"))),
			wantRows("6 | A | 12.5 | 7")},
		{"or keeps null-free matches", bin(expr.Or, bt, bin(expr.Lt, bt, pxCol, f8(6)), &expr.IsNull{X: symCol}),
			wantRows("3 | NULL | 5 | 4", "8 | NULL | 1 | 9")},
		{"nothing passes", bin(expr.Gt, bt, qtyCol, i8(100)), wantRows()},
		{"everything passes", &expr.IsNull{X: qtyCol, Not: true}, func(t *testing.T, got arrow.RecordBatch, err error) {
			require.NoError(t, err)
			require.EqualValues(t, 12, got.NumRows())
		}},
		{"division by zero surfaces", bin(expr.Gt, bt, bin(expr.Div, sqltypes.Int8Type, i8(1), bin(expr.Sub, sqltypes.Int8Type, qtyCol, i8(5))), i8(0)),
			wantCode("22012", "division by zero")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			exectest.Run(t, exectest.Case{
				Inputs: trades(t),
				Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
					return exec.NewFilter(in[0], mem, tc.pred, eval.Env{})
				},
				Check: tc.check,
			})
		})
	}
}

func TestFilterRejectsNonBoolean(t *testing.T) {
	src := exec.NewBatches(arrow.NewSchema([]arrow.Field{sqltypes.Int4Type.Field("id", true)}, nil), nil)
	_, err := exec.NewFilter(src, memory.DefaultAllocator, idCol, eval.Env{})
	require.Equal(t, sqlerr.DatatypeMismatch, sqlerr.Code(err))
}

func TestProject(t *testing.T) {
	exectest.Run(t, exectest.Case{
		Inputs: trades(t),
		Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			return exec.NewProject(in[0], mem, []expr.Expr{
				symCol,
				bin(expr.Mul, sqltypes.Float8Type, pxCol, &expr.Cast{X: qtyCol, T: sqltypes.Float8Type}),
				&expr.Func{Fn: functions.Coalesce, T: sqltypes.TextType, Args: []expr.Expr{symCol, txt("?")}},
			}, []string{"sym", "notional", "s"}, eval.Env{})
		},
		Check: wantRows(
			"A | 10 | A", "B | 40 | B", "A | NULL | A", "NULL | 20 | ?", "C | 150 | C", "B | 120 | B",
			"A | 87.5 | A", "C | 56 | C", "NULL | 9 | ?", "B | NULL | B", "A | 110 | A", "C | 360 | C"),
	})
}

// TestProjectPassThrough checks that column references are not copied.
func TestProjectPassThrough(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	in := trades(t)(mem)[0]
	sym := in.Column(1)
	p, err := exec.NewProject(exec.NewBatches(in.Schema(), []arrow.RecordBatch{in}), mem,
		[]expr.Expr{symCol, idCol}, []string{"s", "i"}, eval.Env{})
	require.NoError(t, err)
	defer p.Close()
	require.NoError(t, p.Open(context.Background()))
	b, err := p.Next(context.Background())
	require.NoError(t, err)
	defer b.Release()
	require.Same(t, sym, b.Column(0))
	require.Equal(t, "s", b.Schema().Field(0).Name)
}

func TestLimit(t *testing.T) {
	cases := []struct {
		count, offset int64
		want          []int
	}{
		{3, 0, []int{0, 1, 2}},
		{3, 5, []int{5, 6, 7}},
		{-1, 10, []int{10, 11}},
		{0, 0, nil},
		{100, 11, []int{11}},
		{5, 12, nil},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("limit=%d,offset=%d", tc.count, tc.offset), func(t *testing.T) {
			var want []string
			for _, id := range tc.want {
				want = append(want, fmt.Sprint(id))
			}
			exectest.Run(t, exectest.Case{
				Inputs: trades(t),
				Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
					p, err := exec.NewProject(in[0], mem, []expr.Expr{idCol}, []string{"id"}, eval.Env{})
					if err != nil {
						return nil, err
					}
					return exec.NewLimit(p, tc.count, tc.offset)
				},
				Check: wantRows(want...),
			})
		})
	}
	_, err := exec.NewLimit(exec.NewBatches(emptySchema(), nil), 1, -1)
	require.Equal(t, "2201X", sqlerr.Code(err))
}

func emptySchema() *arrow.Schema { return arrow.NewSchema(nil, nil) }

// countingOp counts Next calls on its child.
type countingOp struct {
	exec.Operator
	calls int
}

func (c *countingOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	c.calls++
	return c.Operator.Next(ctx)
}

func TestLimitStopsReading(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tbl := trades(t)(mem)[0]
	src := &countingOp{Operator: exec.NewBatches(tbl.Schema(), exectest.Split(tbl, exectest.Layout{Size: 2}, 0))}
	tbl.Release()
	l, err := exec.NewLimit(src, 3, 1)
	require.NoError(t, err)
	got, err := exectest.Collect(context.Background(), l, mem)
	require.NoError(t, err)
	defer got.Release()
	require.EqualValues(t, 3, got.NumRows())
	require.Equal(t, 2, src.calls, "rows 1..3 live in the first two batches of 2")
}

func sortCase(keys []exec.SortKey, opts exec.SortOptions, check func(*testing.T, arrow.RecordBatch, error)) func(t *testing.T) {
	return func(t *testing.T) {
		exectest.Run(t, exectest.Case{
			Inputs: trades(t),
			Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
				s, err := exec.NewSort(in[0], mem, keys, opts)
				if err != nil {
					return nil, err
				}
				return exec.NewProject(s, mem, []expr.Expr{idCol}, []string{"id"}, eval.Env{})
			},
			Check: check,
		})
	}
}

func idsOf(got arrow.RecordBatch) string { return strings.Join(exectest.Rows(got), ",") }

func wantIDs(ids string) func(t *testing.T, got arrow.RecordBatch, err error) {
	return func(t *testing.T, got arrow.RecordBatch, err error) {
		t.Helper()
		require.NoError(t, err)
		require.Equal(t, ids, idsOf(got))
	}
}

func TestSort(t *testing.T) {
	// sym: A B A NULL C B A C NULL B A C; px: 10 20 NULL 5 30 20 12.5 7 1 NULL 10 30
	t.Run("sym asc (nulls last), stable", sortCase([]exec.SortKey{{Col: 1}}, exec.SortOptions{}, wantIDs("0,2,6,10,1,5,9,4,7,11,3,8")))
	t.Run("sym desc (nulls first)", sortCase([]exec.SortKey{{Col: 1, Desc: true}}, exec.SortOptions{}, wantIDs("3,8,4,7,11,1,5,9,0,2,6,10")))
	t.Run("sym asc nulls first", sortCase([]exec.SortKey{{Col: 1, Nulls: exec.NullsFirst}}, exec.SortOptions{}, wantIDs("3,8,0,2,6,10,1,5,9,4,7,11")))
	t.Run("sym desc nulls last, px asc", sortCase([]exec.SortKey{{Col: 1, Desc: true, Nulls: exec.NullsLast}, {Col: 2}},
		exec.SortOptions{BatchSize: 5}, wantIDs("7,4,11,1,5,9,0,10,6,2,8,3")))
	t.Run("px desc, qty desc", sortCase([]exec.SortKey{{Col: 2, Desc: true}, {Col: 3, Desc: true}}, exec.SortOptions{BatchSize: 1},
		wantIDs("9,2,11,4,5,1,6,10,0,7,3,8")))
	t.Run("memory limit", sortCase([]exec.SortKey{{Col: 0}}, exec.SortOptions{MemoryLimit: 100},
		wantCode("53200", "sort exceeded the memory limit of 100 bytes")))
}

func TestSortBadKey(t *testing.T) {
	_, err := exec.NewSort(exec.NewBatches(emptySchema(), nil), memory.DefaultAllocator, []exec.SortKey{{Col: 0}}, exec.SortOptions{})
	require.Equal(t, sqlerr.UndefinedColumn, sqlerr.Code(err))
}

func TestTopN(t *testing.T) {
	for _, n := range []int64{0, 1, 3, 5, 12, 20} {
		for _, keys := range [][]exec.SortKey{
			{{Col: 1}},
			{{Col: 1, Desc: true, Nulls: exec.NullsLast}, {Col: 2}},
			{{Col: 2, Desc: true}},
			// Numeric first keys take TopN's normalized prefilter (in
			// batches without NULLs there), ties on them the full compare.
			{{Col: 3, Desc: true}},
			{{Col: 2, Nulls: exec.NullsLast}, {Col: 3, Desc: true}},
			{{Col: 2, Desc: true, Nulls: exec.NullsLast}, {Col: 1}},
		} {
			t.Run(fmt.Sprintf("n=%d,keys=%v", n, keys), func(t *testing.T) {
				// The expectation is a full Sort + Limit over the same input.
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				tbl := trades(t)(mem)[0]
				s, err := exec.NewSort(exec.NewBatches(tbl.Schema(), []arrow.RecordBatch{tbl}), mem, keys, exec.SortOptions{})
				require.NoError(t, err)
				l, err := exec.NewLimit(s, n, 0)
				require.NoError(t, err)
				ref, err := exectest.Collect(context.Background(), l, mem)
				require.NoError(t, err)
				want := exectest.Rows(ref)
				ref.Release()
				mem.AssertSize(t, 0)
				exectest.Run(t, exectest.Case{
					Inputs: trades(t),
					Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
						return exec.NewTopN(in[0], mem, keys, n, exec.SortOptions{BatchSize: 2})
					},
					Check: wantRows(want...),
				})
			})
		}
	}
}

func TestValues(t *testing.T) {
	i4 := func(v int64) expr.Expr { return &expr.Literal{Value: v, T: sqltypes.Int4Type} }
	exectest.Run(t, exectest.Case{
		Inputs: func(memory.Allocator) []arrow.RecordBatch { return nil },
		Build: func(mem memory.Allocator, _ []exec.Operator) (exec.Operator, error) {
			return exec.NewValues(mem, [][]expr.Expr{
				{i4(1), txt("a")},
				{bin(expr.Add, sqltypes.Int4Type, i4(1), i4(1)), &expr.Literal{T: sqltypes.TextType}},
				{i4(3), &expr.Func{Fn: functions.Upper, T: sqltypes.TextType, Args: []expr.Expr{txt("c")}}},
			}, []string{"n", "s"}, eval.Env{})
		},
		Check: wantRows("1 | a", "2 | NULL", "3 | C"),
	})
	_, err := exec.NewValues(memory.DefaultAllocator, [][]expr.Expr{{i4(1)}, {txt("x")}}, []string{"n"}, eval.Env{})
	require.Equal(t, sqlerr.DatatypeMismatch, sqlerr.Code(err))
	_, err = exec.NewValues(memory.DefaultAllocator, [][]expr.Expr{{i4(1)}, {i4(1), i4(2)}}, []string{"n"}, eval.Env{})
	require.Equal(t, sqlerr.SyntaxError, sqlerr.Code(err))
}

func TestUnionAll(t *testing.T) {
	exectest.Run(t, exectest.Case{
		Inputs: func(mem memory.Allocator) []arrow.RecordBatch {
			return []arrow.RecordBatch{
				mkTable(t, mem, tcol{"a", sqltypes.Int4Type, []string{"1", "2"}}, tcol{"b", sqltypes.TextType, []string{"x", "NULL"}}),
				mkTable(t, mem, tcol{"c", sqltypes.Int4Type, nil}, tcol{"d", sqltypes.TextType, nil}),
				mkTable(t, mem, tcol{"c", sqltypes.Int4Type, []string{"3"}}, tcol{"d", sqltypes.TextType, []string{"z"}}),
			}
		},
		Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			return exec.NewUnionAll(in...)
		},
		Check: func(t *testing.T, got arrow.RecordBatch, err error) {
			require.NoError(t, err)
			exectest.RequireRows(t, []string{"1 | x", "2 | NULL", "3 | z"}, got)
			require.Equal(t, "a", got.Schema().Field(0).Name)
		},
	})
	a := exec.NewBatches(arrow.NewSchema([]arrow.Field{sqltypes.Int4Type.Field("a", true)}, nil), nil)
	b := exec.NewBatches(arrow.NewSchema([]arrow.Field{sqltypes.TextType.Field("a", true)}, nil), nil)
	_, err := exec.NewUnionAll(a, b)
	require.Equal(t, sqlerr.DatatypeMismatch, sqlerr.Code(err))
}

// TestCancellation checks that every operator returns the context's error
// (SQLSTATE 57014) once it is cancelled.
func TestCancellation(t *testing.T) {
	builds := map[string]func(mem memory.Allocator, in exec.Operator) (exec.Operator, error){
		"filter": func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
			return exec.NewFilter(in, mem, &expr.IsNull{X: idCol, Not: true}, eval.Env{})
		},
		"project": func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
			return exec.NewProject(in, mem, []expr.Expr{idCol}, []string{"id"}, eval.Env{})
		},
		"limit": func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) { return exec.NewLimit(in, 5, 0) },
		"sort": func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
			return exec.NewSort(in, mem, []exec.SortKey{{Col: 0}}, exec.SortOptions{})
		},
		"topn": func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
			return exec.NewTopN(in, mem, []exec.SortKey{{Col: 0}}, 3, exec.SortOptions{})
		},
		"union": func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) { return exec.NewUnionAll(in) },
	}
	for _, extra := range extraCancelBuilds {
		builds[extra.name] = extra.build
	}
	for name, build := range builds {
		t.Run(name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			tbl := trades(t)(mem)[0]
			src := exec.NewBatches(tbl.Schema(), exectest.Split(tbl, exectest.Layout{Size: 3}, 0))
			tbl.Release()
			op, err := build(mem, src)
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			require.NoError(t, op.Open(ctx))
			b, err := op.Next(ctx)
			require.NoError(t, err)
			b.Release()
			cancel()
			_, err = op.Next(ctx)
			require.Equal(t, sqlerr.QueryCanceled, sqlerr.Code(err), "%v", err)
			require.NoError(t, op.Close())
		})
	}
}

// extraCancelBuilds lets the tests of later operators join TestCancellation.
var extraCancelBuilds []struct {
	name  string
	build func(mem memory.Allocator, in exec.Operator) (exec.Operator, error)
}
