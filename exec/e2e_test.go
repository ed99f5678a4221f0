package exec_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/asof"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/functions"
	"github.com/asofsql/asofsql/sqltypes"
)

// TestASOFPipeline runs the example end to end through the
// operators: the average quoted spread at each trade, per symbol name and
// hour, for trades of more than one lot:
//
//	SELECT s.name, date_trunc('hour', t.ts) AS h, count(*), avg(q.ask - q.bid)
//	FROM trades t ASOF JOIN quotes q ON t.sym = q.sym AND t.ts >= q.ts
//	JOIN syms s ON t.sym = s.sym
//	WHERE t.qty > 1
//	GROUP BY 1, 2 ORDER BY 1, 2;
//
// The expected rows come from PostgreSQL 15, with the ASOF join written as
// a LATERAL subquery (latest quote at or before the trade).
func TestASOFPipeline(t *testing.T) {
	ts, txtT, i8T, f8T := sqltypes.TimestampType, sqltypes.TextType, sqltypes.Int8Type, sqltypes.Float8Type
	exectest.Run(t, exectest.Case{
		Inputs: func(mem memory.Allocator) []arrow.RecordBatch {
			return []arrow.RecordBatch{
				mkTable(t, mem,
					tcol{"ts", ts, []string{"2024-01-02 09:00", "2024-01-02 09:10", "2024-01-02 09:20", "2024-01-02 09:40", "2024-01-02 09:50",
						"2024-01-02 10:05", "2024-01-02 10:15", "2024-01-02 10:30", "2024-01-02 10:45", "2024-01-02 10:50"}},
					tcol{"sym", txtT, []string{"A", "A", "B", "A", "B", "A", "B", "C", "A", "B"}},
					tcol{"qty", i8T, []string{"5", "1", "3", "2", "7", "4", "2", "9", "6", "8"}}),
				mkTable(t, mem,
					tcol{"ts", ts, []string{"2024-01-02 09:05", "2024-01-02 09:15", "2024-01-02 09:30", "2024-01-02 09:45",
						"2024-01-02 10:00", "2024-01-02 10:20", "2024-01-02 10:40", "2024-01-02 10:41"}},
					tcol{"sym", txtT, []string{"A", "B", "A", "B", "A", "C", "B", "A"}},
					tcol{"bid", f8T, []string{"10", "20", "10.25", "20.5", "10.5", "5", "21", "11"}},
					tcol{"ask", f8T, []string{"10.5", "20.25", "10.5", "21", "11.5", "5.125", "21.5", "11.25"}}),
				mkTable(t, mem,
					tcol{"sym", txtT, []string{"A", "B", "C"}},
					tcol{"name", txtT, []string{"Alpha", "Beta", "Gamma"}}),
			}
		},
		Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			j, err := asof.New(in[0], []asof.Right{{
				Name: "quotes", Input: in[1], LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1},
				Lo: asof.Unbounded, Hi: asof.IntBound(0), Kind: asof.Inner, Payload: []int{2, 3},
			}}, asof.Options{Allocator: mem, LeftName: "trades"})
			if err != nil {
				in[2].Close()
				return nil, err
			}
			// j: ts, sym, qty, bid, ask
			f, err := exec.NewFilter(j, mem, bin(expr.Gt, bt, &expr.Column{Index: 2, Name: "qty", T: i8T}, i8(1)), eval.Env{})
			if err != nil {
				in[2].Close()
				return nil, err
			}
			hj, err := exec.NewHashJoin(f, in[2], mem, exec.InnerJoin, []int{1}, []int{0}, nil, eval.Env{}, exec.HashJoinOptions{})
			if err != nil {
				return nil, err
			}
			// hj: ts, sym, qty, bid, ask, sym, name
			p, err := exec.NewProject(hj, mem, []expr.Expr{
				&expr.Column{Index: 6, Name: "name", T: txtT},
				&expr.Func{Fn: functions.DateTrunc, T: ts, Args: []expr.Expr{txt("hour"), &expr.Column{Index: 0, Name: "ts", T: ts}}},
				bin(expr.Sub, f8T, &expr.Column{Index: 4, Name: "ask", T: f8T}, &expr.Column{Index: 3, Name: "bid", T: f8T}),
			}, []string{"name", "h", "spread"}, eval.Env{})
			if err != nil {
				return nil, err
			}
			a, err := exec.NewHashAggregate(p, mem,
				[]expr.Expr{&expr.Column{Index: 0, T: txtT}, &expr.Column{Index: 1, T: ts}}, []string{"name", "h"},
				[]exec.AggSpec{agg("count", false), agg("avg", false, &expr.Column{Index: 2, T: f8T})}, eval.Env{}, exec.AggOptions{})
			if err != nil {
				return nil, err
			}
			return exec.NewSort(a, mem, []exec.SortKey{{Col: 0}, {Col: 1}}, exec.SortOptions{})
		},
		Check: wantPG(
			"Alpha|2024-01-02 09:00:00|1|0.25",
			"Alpha|2024-01-02 10:00:00|2|0.625",
			"Beta|2024-01-02 09:00:00|2|0.375",
			"Beta|2024-01-02 10:00:00|2|0.5",
			"Gamma|2024-01-02 10:00:00|1|0.125"),
	})
}
