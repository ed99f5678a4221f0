package exec_test

import (
	"strings"
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

// pgRows renders a batch in Postgres' text format, one "a|b|c" string per
// row (NULL as empty, like psql -At), so expectations can be pasted from
// a real PG15 session.
func pgRows(b arrow.RecordBatch) []string {
	var out []string
	for r := 0; r < int(b.NumRows()); r++ {
		parts := make([]string, b.NumCols())
		for c := range parts {
			col := b.Column(c)
			if col.IsNull(r) {
				continue
			}
			t, err := sqltypes.FromField(b.Schema().Field(c))
			if err != nil {
				panic(err)
			}
			parts[c] = string(sqltypes.EncodeText(nil, col, r, t, nil))
		}
		out = append(out, strings.Join(parts, "|"))
	}
	return out
}

func wantPG(want ...string) func(t *testing.T, got arrow.RecordBatch, err error) {
	return func(t *testing.T, got arrow.RecordBatch, err error) {
		t.Helper()
		require.NoError(t, err)
		require.Equal(t, want, pgRows(got))
	}
}

func agg(fn string, distinct bool, args ...expr.Expr) exec.AggSpec {
	return exec.AggSpec{Func: fn, Args: args, Distinct: distinct, Name: fn}
}

var bt = sqltypes.BoolType

// tradeAggs and the expectations below were computed by PostgreSQL 15 on
// the same table:
//
//	select sym, count(*), count(px), count(distinct px), sum(qty), sum(px),
//	  avg(qty), avg(px), min(px), max(px), stddev(qty), stddev(px),
//	  bool_and(px > 9), bool_or(px > 25), sum(id), sum(qty::numeric(10,2)),
//	  var_pop(qty), stddev_pop(px)
//	from tr group by sym order by min(id);
//
// (numeric results print without trailing zeros here; see sqltypes), plus
// first(px)/last(px), which Postgres lacks.
var tradeAggs = []exec.AggSpec{
	agg("count", false), agg("count", false, pxCol), agg("count", true, pxCol),
	agg("sum", false, qtyCol), agg("sum", false, pxCol), agg("avg", false, qtyCol), agg("avg", false, pxCol),
	agg("min", false, pxCol), agg("max", false, pxCol), agg("stddev", false, qtyCol), agg("stddev", false, pxCol),
	agg("bool_and", false, bin(expr.Gt, bt, pxCol, f8(9))), agg("bool_or", false, bin(expr.Gt, bt, pxCol, f8(25))),
	agg("sum", false, idCol), agg("sum", false, &expr.Cast{X: qtyCol, T: sqltypes.NumericType(10, 2)}),
	agg("var_pop", false, qtyCol), agg("stddev_pop", false, pxCol),
	agg("first", false, pxCol), agg("last", false, pxCol),
}

var tradeAggRows = map[string]string{
	"A": "A|4|3|2|22|32.5|5.5|10.833333333333334|10|12.5|4.4347115652166902|1.4433756729740645|t|f|18|22|14.75|1.1785113019775793|10|10",
	"B": "B|3|2|1|18|40|6|20|20|20|4|0|t|f|15|18|10.6666666666666667|0|20|",
	"":  "|2|2|2|13|6|6.5|3|1|5|3.5355339059327376|2.8284271247461903|f|f|11|13|6.25|2|5|1",
	"C": "C|3|3|2|25|67|8.3333333333333333|22.333333333333332|7|30|3.5118845842842463|13.279056191361393|f|t|22|25|8.2222222222222222|10.842303978193728|30|30",
}

func TestHashAggregate(t *testing.T) {
	runOp(t, func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
		return exec.NewHashAggregate(in[0], mem, []expr.Expr{symCol}, []string{"sym"}, tradeAggs, eval.Env{}, exec.AggOptions{BatchSize: 3})
	}, wantPG(tradeAggRows["A"], tradeAggRows["B"], tradeAggRows[""], tradeAggRows["C"]))
}

func TestStreamAggregate(t *testing.T) {
	runOp(t, func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
		s, err := exec.NewSort(in[0], mem, []exec.SortKey{{Col: 1}}, exec.SortOptions{BatchSize: 5})
		if err != nil {
			return nil, err
		}
		return exec.NewStreamAggregate(s, mem, []expr.Expr{symCol}, []string{"sym"}, tradeAggs, eval.Env{}, exec.AggOptions{})
	}, wantPG(tradeAggRows["A"], tradeAggRows["B"], tradeAggRows["C"], tradeAggRows[""]))
}

func TestGlobalAggregate(t *testing.T) {
	aggs := []exec.AggSpec{agg("count", false), agg("sum", false, qtyCol), agg("avg", false, qtyCol), agg("stddev", false, qtyCol), agg("max", false, symCol)}
	for _, stream := range []bool{false, true} {
		build := func(pred expr.Expr) func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			return func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
				f, err := exec.NewFilter(in[0], mem, pred, eval.Env{})
				if err != nil {
					return nil, err
				}
				if stream {
					return exec.NewStreamAggregate(f, mem, nil, nil, aggs, eval.Env{}, exec.AggOptions{})
				}
				return exec.NewHashAggregate(f, mem, nil, nil, aggs, eval.Env{}, exec.AggOptions{})
			}
		}
		// select count(*), sum(qty), avg(qty), stddev(qty), max(sym) from tr [where id > 100];
		runOp(t, build(&expr.IsNull{X: idCol, Not: true}), wantPG("12|78|6.5|3.6055512754639893|C"))
		runOp(t, build(bin(expr.Gt, bt, idCol, &expr.Literal{Value: int64(100), T: sqltypes.Int4Type})), wantPG("0||||"))
	}
}

func TestAggregateEmptyGrouped(t *testing.T) {
	runOp(t, func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
		f, err := exec.NewFilter(in[0], mem, &expr.IsNull{X: idCol}, eval.Env{})
		if err != nil {
			return nil, err
		}
		return exec.NewHashAggregate(f, mem, []expr.Expr{symCol}, []string{"sym"}, tradeAggs, eval.Env{}, exec.AggOptions{})
	}, wantPG())
}

func TestAggregateHaving(t *testing.T) {
	// select sym, count(*) from tr group by sym having count(*) > 2
	runOp(t, func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
		a, err := exec.NewHashAggregate(in[0], mem, []expr.Expr{symCol}, []string{"sym"}, []exec.AggSpec{agg("count", false)}, eval.Env{}, exec.AggOptions{})
		if err != nil {
			return nil, err
		}
		cnt := &expr.Column{Index: 1, Name: "count", T: sqltypes.Int8Type}
		return exec.NewFilter(a, mem, bin(expr.Gt, bt, cnt, i8(2)), eval.Env{})
	}, wantPG("A|4", "B|3", "C|3"))
}

func TestAggregateGroupByExpression(t *testing.T) {
	// select qty % 3, sum(px), count(distinct sym) from tr group by 1
	runOp(t, func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
		return exec.NewHashAggregate(in[0], mem, []expr.Expr{bin(expr.Mod, sqltypes.Int8Type, qtyCol, i8(3))}, []string{"m"},
			[]exec.AggSpec{agg("sum", false, pxCol), agg("count", true, symCol)}, eval.Env{}, exec.AggOptions{})
	}, wantPG("1|27.5|2", "2|67|3", "0|51|3"))
}

func TestAggregateErrors(t *testing.T) {
	src := func() exec.Operator {
		return exec.NewBatches(arrow.NewSchema([]arrow.Field{
			sqltypes.Int4Type.Field("id", true), sqltypes.TextType.Field("sym", true),
			sqltypes.Float8Type.Field("px", true), sqltypes.Int8Type.Field("qty", true)}, nil), nil)
	}
	cases := []struct {
		name string
		spec exec.AggSpec
		code string
	}{
		{"sum of text", agg("sum", false, symCol), sqlerr.UndefinedFunction},
		{"bool_and of int", agg("bool_and", false, idCol), sqlerr.UndefinedFunction},
		{"unknown aggregate", agg("median", false, idCol), sqlerr.UndefinedFunction},
		{"wrong declared type", exec.AggSpec{Func: "sum", Args: []expr.Expr{idCol}, Type: sqltypes.Int4Type, Name: "s"}, sqlerr.DatatypeMismatch},
		{"two arguments", agg("max", false, idCol, idCol), sqlerr.UndefinedFunction},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := exec.NewHashAggregate(src(), memory.DefaultAllocator, nil, nil, []exec.AggSpec{tc.spec}, eval.Env{}, exec.AggOptions{})
			require.Equal(t, tc.code, sqlerr.Code(err), "%v", err)
		})
	}
	rt, err := exec.AggResultType("sum", sqltypes.Int4Type)
	require.NoError(t, err)
	require.Equal(t, sqltypes.Int8Type, rt)
	rt, err = exec.AggResultType("avg", sqltypes.Int8Type)
	require.NoError(t, err)
	require.Equal(t, sqltypes.Numeric, rt.Kind)
}

func TestHashAggregateMemoryLimit(t *testing.T) {
	runOp(t, func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
		return exec.NewHashAggregate(in[0], mem, []expr.Expr{idCol}, []string{"id"}, []exec.AggSpec{agg("count", false)}, eval.Env{}, exec.AggOptions{MemoryLimit: 300})
	}, wantCode("53200", "hash aggregate exceeded the memory limit of 300 bytes"))
}

func TestSumOverflow(t *testing.T) {
	exectestInputs(t, func(mem memory.Allocator) []arrow.RecordBatch {
		return []arrow.RecordBatch{mkTable(t, mem, tcol{"v", sqltypes.Int8Type, []string{"9223372036854775807", "9223372036854775807", "1"}})}
	}, func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
		v := &expr.Column{Index: 0, T: sqltypes.Int8Type}
		return exec.NewHashAggregate(in[0], mem, nil, nil, []exec.AggSpec{agg("sum", false, v), agg("avg", false, v)}, eval.Env{}, exec.AggOptions{})
	}, wantPG("18446744073709551615|6148914691236517205"))
}

func runOp(t *testing.T, build func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error), check func(*testing.T, arrow.RecordBatch, error)) {
	t.Helper()
	exectestInputs(t, trades(t), build, check)
}

func exectestInputs(t *testing.T, inputs func(memory.Allocator) []arrow.RecordBatch, build func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error), check func(*testing.T, arrow.RecordBatch, error)) {
	t.Helper()
	exectest.Run(t, exectest.Case{Inputs: inputs, Build: build, Check: check})
}

func TestStreamAggregateMemoryLimit(t *testing.T) {
	// One group whose DISTINCT set grows past the limit.
	runOp(t, func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
		return exec.NewStreamAggregate(in[0], mem, nil, nil, []exec.AggSpec{agg("count", true, idCol)}, eval.Env{}, exec.AggOptions{MemoryLimit: 200})
	}, wantCode("53200", "stream aggregate exceeded the memory limit of 200 bytes"))
}

func TestStringAgg(t *testing.T) {
	// select qty % 3, string_agg(sym, ','), string_agg(DISTINCT sym, '-'),
	//   string_agg(sym, NULL) from tr group by 1
	// in input order (Postgres leaves the order unspecified without ORDER BY).
	text := func(s string) expr.Expr { return &expr.Literal{Value: s, T: sqltypes.TextType} }
	aggs := []exec.AggSpec{
		agg("string_agg", false, symCol, text(",")),
		agg("string_agg", true, symCol, text("-")),
		agg("string_agg", false, symCol, &expr.Literal{T: sqltypes.TextType}),
	}
	for _, stream := range []bool{false, true} {
		want := wantPG("1|A,A,B|A-B|AAB", "2|B,C,C,A|B-C-A|BCCA", "0|A,B,C|A-B-C|ABC")
		if stream {
			want = wantPG("||")
		}
		runOp(t, func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			if stream {
				f, err := exec.NewFilter(in[0], mem, &expr.IsNull{X: idCol}, eval.Env{})
				if err != nil {
					return nil, err
				}
				return exec.NewStreamAggregate(f, mem, nil, nil, aggs, eval.Env{}, exec.AggOptions{})
			}
			return exec.NewHashAggregate(in[0], mem, []expr.Expr{bin(expr.Mod, sqltypes.Int8Type, qtyCol, i8(3))}, []string{"m"},
				aggs, eval.Env{}, exec.AggOptions{})
		}, want)
	}
	_, err := exec.NewHashAggregate(exec.NewBatches(arrow.NewSchema([]arrow.Field{sqltypes.TextType.Field("s", true)}, nil), nil),
		memory.DefaultAllocator, nil, nil, []exec.AggSpec{agg("string_agg", false, &expr.Column{Index: 0, Name: "s", T: sqltypes.TextType}, i8(1))}, eval.Env{}, exec.AggOptions{})
	require.Equal(t, sqlerr.UndefinedFunction, sqlerr.Code(err), "%v", err)
}
