package eval_test

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Evaluate `CASE WHEN qty = 0 THEN 0 ELSE notional / qty END` over a batch:
// the division never sees the zero row.
func ExampleCompile() {
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		sqltypes.Int8Type.Field("notional", true),
		sqltypes.Int8Type.Field("qty", true),
	}, nil)
	bld := array.NewRecordBuilder(mem, schema)
	defer bld.Release()
	bld.Field(0).(*array.Int64Builder).AppendValues([]int64{100, 50, 7}, nil)
	bld.Field(1).(*array.Int64Builder).AppendValues([]int64{4, 0, 2}, []bool{true, true, false})
	batch := bld.NewRecordBatch()
	defer batch.Release()

	i8 := sqltypes.Int8Type
	notional := &expr.Column{Index: 0, Name: "notional", T: i8}
	qty := &expr.Column{Index: 1, Name: "qty", T: i8}
	zero := &expr.Literal{Value: int64(0), T: i8}
	e := &expr.Case{T: i8,
		Whens: []expr.When{{Cond: &expr.Binary{Op: expr.Eq, L: qty, R: zero, T: sqltypes.BoolType}, Result: zero}},
		Else:  &expr.Binary{Op: expr.Div, L: notional, R: qty, T: i8}}

	ev, err := eval.Compile(e, schema, eval.Env{Mem: mem, Now: time.Now()})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := ev.Eval(context.Background(), batch)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer out.Release()
	fmt.Println(out)
	// Output: [25 0 (null)]
}
