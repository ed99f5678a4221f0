package eval

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
)

// LiteralColumn builds one array of type t from a column of literals
// (Value nil for NULL), checked as Compile checks a literal. It is the fast
// path for VALUES lists of constants, such as the virtual catalog tables.
func LiteralColumn(mem memory.Allocator, t sqltypes.Type, lits []*expr.Literal) (arrow.Array, error) {
	for _, l := range lits {
		if err := checkLiteral(l); err != nil {
			return nil, err
		}
	}
	bld := array.NewBuilder(mem, t.Arrow())
	defer bld.Release()
	bld.Reserve(len(lits))
	for _, l := range lits {
		if l.Value == nil {
			bld.AppendNull()
			continue
		}
		switch b := bld.(type) {
		case *array.BooleanBuilder:
			b.Append(l.Value.(bool))
		case *array.Int16Builder:
			b.Append(int16(l.Value.(int64)))
		case *array.Int32Builder:
			b.Append(int32(l.Value.(int64)))
		case *array.Int64Builder:
			b.Append(l.Value.(int64))
		case *array.Float32Builder:
			b.Append(float32(l.Value.(float64)))
		case *array.Float64Builder:
			b.Append(l.Value.(float64))
		case *array.StringBuilder:
			b.Append(l.Value.(string))
		case *array.BinaryBuilder:
			b.Append(l.Value.([]byte))
		case *array.Date32Builder:
			b.Append(arrow.Date32(l.Value.(int32)))
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(l.Value.(int64)))
		case *array.Decimal128Builder:
			b.Append(l.Value.(decimalNum))
		case *array.MonthDayNanoIntervalBuilder:
			b.Append(l.Value.(arrow.MonthDayNanoInterval))
		default:
			return nil, internalf("LiteralColumn: builder %T", bld)
		}
	}
	return bld.NewArray(), nil
}
