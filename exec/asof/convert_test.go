package asof

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestMixedOnTypes joins on columns of different numeric classes by value
// (spec §3): the output keeps each input's own columns and types.
func TestMixedOnTypes(t *testing.T) {
	dec2 := &arrow.Decimal128Type{Precision: 10, Scale: 2}
	dec3 := &arrow.Decimal128Type{Precision: 10, Scale: 3}
	big := int64(1) << 53
	cases := []joinCase{
		{
			// bigint left, double right: compared as double precision.
			name:   "int64-float64",
			left:   rowsOf([]arrow.Field{f("t", i64), f("id", i64)}, []any{1, 1}, []any{3, 2}, []any{big + 1, 3}),
			rights: []func(mem memory.Allocator) arrow.RecordBatch{rowsOf([]arrow.Field{f("t", f64), f("v", i64)}, []any{0.5, 10}, []any{2.5, 11}, []any{3.0, 12}, []any{float64(big), 13})},
			specs:  []Right{{Name: "r", LeftOn: 0, On: 0, Lo: FloatBound(-1), Hi: FloatBound(0), Kind: Left, Payload: []int{0, 1}}},
			// 2^53 + 1 is 2^53 as a double (PostgreSQL: int8 = float8 casts).
			want: []string{"1 | 1 | 0.5 | 10", "3 | 2 | 3 | 12", "9007199254740993 | 3 | 9.007199254740992e+15 | 13"},
		},
		{
			// double left, integer right.
			name:   "float64-int32",
			left:   rowsOf([]arrow.Field{f("t", f64), f("id", i64)}, []any{1.5, 1}, []any{math.Inf(1), 2}),
			rights: []func(mem memory.Allocator) arrow.RecordBatch{rowsOf([]arrow.Field{f("t", arrow.PrimitiveTypes.Int32), f("v", i64)}, []any{1, 10}, []any{2, 11})},
			specs:  []Right{{Name: "r", LeftOn: 0, On: 0, Lo: Unbounded, Hi: FloatBound(0), Kind: Left, Payload: []int{0, 1}}},
			want:   []string{"1.5 | 1 | 1 | 10", "+Inf | 2 | 2 | 11"},
		},
		{
			// bigint left, numeric(10,2) right: bounds in hundredths.
			name:   "int64-decimal",
			left:   rowsOf([]arrow.Field{f("t", i64), f("id", i64)}, []any{1, 1}, []any{2, 2}),
			rights: []func(mem memory.Allocator) arrow.RecordBatch{rowsOf([]arrow.Field{f("t", dec2), f("v", i64)}, []any{decimal128.FromI64(99), 10}, []any{decimal128.FromI64(150), 11})},
			specs:  []Right{{Name: "r", LeftOn: 0, On: 0, Lo: DecBound(decimal128.FromI64(-50)), Hi: DecBound(decimal128.FromI64(0)), Kind: Left, Payload: []int{0, 1}}},
			want:   []string{"1 | 1 | 0.99 | 10", "2 | 2 | 1.5 | 11"},
		},
		{
			// numeric(10,3) left, numeric(10,2) right: compared at scale 3.
			name:   "decimal-scales",
			left:   rowsOf([]arrow.Field{f("t", dec3), f("id", i64)}, []any{decimal128.FromI64(1005), 1}, []any{decimal128.FromI64(1010), 2}),
			rights: []func(mem memory.Allocator) arrow.RecordBatch{rowsOf([]arrow.Field{f("t", dec2), f("v", i64)}, []any{decimal128.FromI64(100), 10}, []any{decimal128.FromI64(101), 11})},
			specs:  []Right{{Name: "r", LeftOn: 0, On: 0, Lo: Unbounded, Hi: DecBound(decimal128.FromI64(0)), Kind: Inner, Payload: []int{0, 1}}},
			want:   []string{"1.005 | 1 | 1 | 10", "1.01 | 2 | 1.01 | 11"},
		},
		{
			// RIGHT: an unmatched right row keeps its own type.
			name:   "right-int64-float64",
			left:   rowsOf([]arrow.Field{f("t", i64), f("id", i64)}, []any{1, 1}),
			rights: []func(mem memory.Allocator) arrow.RecordBatch{rowsOf([]arrow.Field{f("t", f64), f("v", i64)}, []any{0.5, 10}, []any{2.5, 11})},
			specs:  []Right{{Name: "r", LeftOn: 0, On: 0, Lo: FloatBound(-1), Hi: FloatBound(0), Kind: RightOuter, Payload: []int{0, 1}}},
			want:   []string{"1 | 1 | 0.5 | 10", "NULL | NULL | 2.5 | 11"},
		},
	}
	for _, c := range cases {
		runJoinCase(t, c)
	}
}
