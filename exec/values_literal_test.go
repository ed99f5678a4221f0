package exec_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Rows of literals only (the virtual catalog tables) take the column-wise
// path; every physical type and NULLs come out as through evaluators.
func TestValuesOfLiterals(t *testing.T) {
	l := func(t sqltypes.Type, v any) expr.Expr { return &expr.Literal{Value: v, T: t} }
	n102 := sqltypes.NumericType(10, 2)
	tz := sqltypes.TimestampTZType
	rows := [][]expr.Expr{
		{l(sqltypes.Int2Type, int64(1)), l(sqltypes.Int8Type, int64(16385)), l(sqltypes.Float4Type, 1.5), l(sqltypes.BoolType, true),
			l(sqltypes.TextType, "trades"), l(n102, decimal128.FromI64(1234)), l(sqltypes.DateType, int32(19723)),
			l(tz, int64(1704067200000000)), l(sqltypes.ByteaType, []byte{0xde, 0xad}), l(sqltypes.IntervalType, arrow.MonthDayNanoInterval{Months: 1, Days: 2})},
		{l(sqltypes.Int2Type, nil), l(sqltypes.Int8Type, nil), l(sqltypes.Float4Type, nil), l(sqltypes.BoolType, false),
			l(sqltypes.TextType, nil), l(n102, nil), l(sqltypes.DateType, nil), l(tz, nil), l(sqltypes.ByteaType, nil), l(sqltypes.IntervalType, nil)},
	}
	names := []string{"i2", "i8", "f4", "b", "s", "n", "d", "tz", "by", "iv"}
	exectest.Run(t, exectest.Case{
		Inputs: func(memory.Allocator) []arrow.RecordBatch { return nil },
		Build: func(mem memory.Allocator, _ []exec.Operator) (exec.Operator, error) {
			return exec.NewValues(mem, rows, names, eval.Env{})
		},
		Check: wantRows(
			`1 | 16385 | 1.5 | true | trades | 12.34 | 2024-01-01 | 2024-01-01T00:00:00Z | 3q0= | {"months":1,"days":2,"nanoseconds":0}`,
			"NULL | NULL | NULL | false | NULL | NULL | NULL | NULL | NULL | NULL"),
	})
}
