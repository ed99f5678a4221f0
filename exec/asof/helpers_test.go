package asof

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/stretchr/testify/require"
)

// table builds one batch from rows of Go values (nil is NULL).
func table(mem memory.Allocator, fields []arrow.Field, rows ...[]any) arrow.RecordBatch {
	for i := range fields {
		fields[i].Nullable = true
	}
	b := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
	defer b.Release()
	for _, row := range rows {
		for c, v := range row {
			appendAny(b.Field(c), v)
		}
	}
	return b.NewRecordBatch()
}

func appendAny(b array.Builder, v any) {
	if v == nil {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.Int64Builder:
		b.Append(int64(toInt(v)))
	case *array.Int32Builder:
		b.Append(int32(toInt(v)))
	case *array.Int16Builder:
		b.Append(int16(toInt(v)))
	case *array.Int8Builder:
		b.Append(int8(toInt(v)))
	case *array.Uint64Builder:
		switch x := v.(type) {
		case uint64:
			b.Append(x)
		default:
			b.Append(uint64(toInt(v)))
		}
	case *array.Uint32Builder:
		b.Append(uint32(toInt(v)))
	case *array.Uint16Builder:
		b.Append(uint16(toInt(v)))
	case *array.Uint8Builder:
		b.Append(uint8(toInt(v)))
	case *array.Float64Builder:
		switch x := v.(type) {
		case float64:
			b.Append(x)
		default:
			b.Append(float64(toInt(v)))
		}
	case *array.Float32Builder:
		switch x := v.(type) {
		case float64:
			b.Append(float32(x))
		default:
			b.Append(float32(toInt(v)))
		}
	case *array.Date32Builder:
		b.Append(arrow.Date32(toInt(v)))
	case *array.Date64Builder:
		b.Append(arrow.Date64(toInt(v)))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(toInt(v)))
	case *array.Decimal128Builder:
		if n, ok := v.(decimal128.Num); ok {
			b.Append(n)
			return
		}
		b.Append(decimal128.FromI64(int64(toInt(v))))
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.LargeStringBuilder:
		b.Append(v.(string))
	case *array.BinaryBuilder:
		switch x := v.(type) {
		case string:
			b.Append([]byte(x))
		default:
			b.Append(x.([]byte))
		}
	case *array.FixedSizeBinaryBuilder:
		b.Append([]byte(v.(string)))
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	default:
		panic(fmt.Sprintf("appendAny: builder %T", b))
	}
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int64:
		return x
	case int32:
		return int64(x)
	}
	panic(fmt.Sprintf("toInt: %T", v))
}

func f(name string, dt arrow.DataType) arrow.Field { return arrow.Field{Name: name, Type: dt} }

var (
	i64 = arrow.PrimitiveTypes.Int64
	str = arrow.BinaryTypes.String
	f64 = arrow.PrimitiveTypes.Float64
)

// joinCase runs a join over the given whole tables through every exectest
// layout, serial and concurrent, requiring the expected rows (in
// exectest.Format notation) and, if wantErr is set, an error containing it.
type joinCase struct {
	name    string
	left    func(memory.Allocator) arrow.RecordBatch
	rights  []func(memory.Allocator) arrow.RecordBatch
	specs   []Right
	want    []string
	wantErr string
	opts    Options
}

func runJoinCase(t *testing.T, c joinCase) {
	t.Helper()
	for _, serial := range []bool{true, false} {
		t.Run(fmt.Sprintf("%s/serial=%v", c.name, serial), func(t *testing.T) {
			// The split join's partitions are serial joins, so the
			// worker counts run once, with the serial setting.
			workers := exectest.Workers
			if !serial {
				workers = []int{1}
			}
			exectest.Run(t, exectest.Case{
				Workers: workers,
				Inputs: func(mem memory.Allocator) []arrow.RecordBatch {
					out := []arrow.RecordBatch{c.left(mem)}
					for _, r := range c.rights {
						out = append(out, r(mem))
					}
					return out
				},
				// At 1 worker NewParallel is New; above, the join split by
				// key must give the same rows.
				Parallel: func(mem memory.Allocator, in []operator.Operator, workers int) (operator.Operator, error) {
					specs := append([]Right(nil), c.specs...)
					for i := range specs {
						specs[i].Input = in[i+1]
					}
					opts := c.opts
					opts.Allocator = mem
					opts.Serial = serial
					return NewParallel(in[0], specs, opts, workers)
				},
				Check: func(t *testing.T, got arrow.RecordBatch, err error) {
					if c.wantErr != "" {
						require.Error(t, err)
						require.Contains(t, err.Error(), c.wantErr)
						return
					}
					require.NoError(t, err)
					exectest.RequireRows(t, c.want, got)
				},
			})
		})
	}
}

// rowsOf returns a table builder for fixed rows.
func rowsOf(fields []arrow.Field, rows ...[]any) func(memory.Allocator) arrow.RecordBatch {
	return func(mem memory.Allocator) arrow.RecordBatch {
		return table(mem, append([]arrow.Field(nil), fields...), rows...)
	}
}

// lineInput is right input i of j, which runs on the number line.
func lineInput(j *Join, i int) *lineRight { return j.rights[i].(*lineRight) }
