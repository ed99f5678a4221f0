package asof

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/stretchr/testify/require"
)

// backCase is a random join that the backward kernel can run: a range with
// hi <= 0, payloads of every width it copies (NULLs included) and the on
// column itself.
type backCase struct {
	onType     arrow.DataType
	left, rght arrow.RecordBatch
	spec       Right
	layout     exectest.Layout
}

var backPayloadTypes = []arrow.DataType{
	arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32,
	arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Int64,
}

var backOnTypes = []arrow.DataType{
	arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint64, arrow.FixedWidthTypes.Timestamp_us,
	arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float64,
}

func genBackCase(mem memory.Allocator, seed uint64) *backCase {
	rng := rand.New(rand.NewPCG(seed, 3))
	c := &backCase{onType: backOnTypes[rng.IntN(len(backOnTypes))]}
	float := c.onType.ID() == arrow.FLOAT64
	card := 1 + rng.IntN(5)
	payTypes := []arrow.DataType{}
	for p := rng.IntN(4); p > 0; p-- {
		payTypes = append(payTypes, backPayloadTypes[rng.IntN(len(backPayloadTypes))])
	}
	build := func(rows int, withPay bool) arrow.RecordBatch {
		fields := []arrow.Field{{Name: "t", Type: c.onType, Nullable: true}, {Name: "k", Type: i64, Nullable: true}}
		if withPay {
			for p, dt := range payTypes {
				fields = append(fields, arrow.Field{Name: fmt.Sprintf("p%d", p), Type: dt, Nullable: true})
			}
		}
		b := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
		defer b.Release()
		t := int64(rng.IntN(20))
		if c.onType.ID() == arrow.INT64 && rng.IntN(6) == 0 {
			t = math.MinInt64 + int64(rng.IntN(3))
		}
		nullT := rng.IntN(3) == 0
		for i := 0; i < rows; i++ {
			t += int64(rng.IntN(3))
			if nullT && rng.IntN(5) == 0 {
				b.Field(0).AppendNull()
			} else {
				switch tb := b.Field(0).(type) {
				case *array.Int64Builder:
					tb.Append(t)
				case *array.Uint64Builder:
					tb.Append(uint64(t) + math.MaxInt64)
				case *array.TimestampBuilder:
					tb.Append(arrow.Timestamp(t))
				case *array.Int32Builder:
					tb.Append(int32(t))
				case *array.Float64Builder:
					tb.Append(float64(t) / 2)
				}
			}
			if rng.IntN(10) == 0 {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.Int64Builder).Append(int64(rng.IntN(card)))
			}
			if !withPay {
				continue
			}
			for p := range payTypes {
				fb := b.Field(2 + p)
				if rng.IntN(4) == 0 {
					fb.AppendNull()
					continue
				}
				v := rng.IntN(200) - 100
				switch pb := fb.(type) {
				case *array.Int8Builder:
					pb.Append(int8(v))
				case *array.Int16Builder:
					pb.Append(int16(v * 300))
				case *array.Int32Builder:
					pb.Append(int32(v * 70000))
				case *array.Int64Builder:
					pb.Append(int64(v) << 40)
				case *array.Float32Builder:
					pb.Append(float32(v) / 3)
				case *array.Float64Builder:
					pb.Append(float64(v) / 7)
				}
			}
		}
		return b.NewRecordBatch()
	}
	c.left = build(rng.IntN(40), false)
	c.rght = build(rng.IntN(40), true)
	var lo, hi Bound
	switch rng.IntN(5) {
	case 0:
		lo, hi = Unbounded, IntBound(0)
	case 1:
		lo, hi = Unbounded, IntBound(0)
		hi.Exclusive = true
	case 2:
		lo, hi = IntBound(-int64(rng.IntN(6))), IntBound(0)
	case 3:
		lo, hi = IntBound(-int64(3+rng.IntN(4))), IntBound(-int64(rng.IntN(3)))
	default:
		lo, hi = IntBound(math.MinInt64), IntBound(-int64(rng.IntN(2)))
	}
	if float {
		if !lo.Unbounded {
			lo = FloatBound(float64(lo.Int) / 2)
		}
		hi = Bound{Float: float64(hi.Int) / 2, Exclusive: hi.Exclusive}
	}
	payload := []int{}
	for p := range payTypes {
		payload = append(payload, 2+p)
	}
	// The on column among the payloads, anywhere.
	at := rng.IntN(len(payload) + 1)
	payload = append(payload[:at], append([]int{0}, payload[at:]...)...)
	c.spec = Right{Name: "r", LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1}, Lo: lo, Hi: hi,
		Kind: Kind(rng.IntN(2)), Payload: payload}
	if rng.IntN(4) == 0 {
		c.spec.LeftKeys, c.spec.Keys = nil, nil
	}
	c.layout = exectest.Layout{Name: "random", Size: []int{0, 1, 2, 3, 7, 1024}[rng.IntN(6)], Empty: rng.IntN(2) == 0, Seed: seed}
	return c
}

// runBack joins c on the backward kernel (or, generalOnly, the general
// path) and returns the output batches, concatenated.
func runBack(t *testing.T, mem memory.Allocator, c *backCase, generalOnly bool) arrow.RecordBatch {
	sp := c.spec
	sp.Input = operator.NewBatches(c.rght.Schema(), exectest.Split(c.rght, c.layout, 1))
	j, err := New(operator.NewBatches(c.left.Schema(), exectest.Split(c.left, c.layout, 0)), []Right{sp},
		Options{Allocator: mem, generalOnly: generalOnly})
	require.NoError(t, err)
	require.Equal(t, !generalOnly, lineInput(j, 0).back != nil)
	got, err := exectest.Collect(context.Background(), j, mem)
	require.NoError(t, err)
	return got
}

// TestBackwardKernel checks that the backward kernel's output equals the
// general path's: the same values, the same NULLs, and the same bytes
// (zero under every NULL), over 3,000 random cases in every batch layout.
// The general path is itself checked against the spec's reference by
// TestDifferential.
func TestBackwardKernel(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		c := genBackCase(mem, seed)
		want := runBack(t, mem, c, true)
		got := runBack(t, mem, c, false)
		if !array.RecordEqual(want, got) {
			t.Fatalf("seed %d: spec %s on %s\nleft:\n%s\nright:\n%s\nwant:\n%s\ngot:\n%s", seed, describe([]Right{c.spec}), c.onType,
				exectest.Format(c.left), exectest.Format(c.rght), exectest.Format(want), exectest.Format(got))
		}
		for col := int(c.left.NumCols()); col < int(got.NumCols()); col++ {
			wd, gd := want.Column(col).Data(), got.Column(col).Data()
			if wd.Len() == 0 {
				continue
			}
			w := fixedWidth(wd.DataType())
			wb := wd.Buffers()[1].Bytes()[wd.Offset()*w : (wd.Offset()+wd.Len())*w]
			gb := gd.Buffers()[1].Bytes()[gd.Offset()*w : (gd.Offset()+gd.Len())*w]
			require.True(t, bytes.Equal(wb, gb), "seed %d: column %d bytes differ", seed, col)
			require.Equal(t, want.Column(col).NullN(), got.Column(col).NullN())
		}
		want.Release()
		got.Release()
		c.left.Release()
		c.rght.Release()
		mem.AssertSize(t, 0)
	}
}

// TestBackwardKernelOrderError: a right t below its predecessor is an
// error naming the input and the row on the kernel too.
func TestBackwardKernelOrderError(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	left := table(mem, append([]arrow.Field(nil), lf...), []any{10, "a", 1})
	right := table(mem, append([]arrow.Field(nil), rf...), []any{1, "a", 1}, []any{5, "a", 2}, []any{3, "a", 3})
	defer left.Release()
	defer right.Release()
	sp := keyed(Unbounded, IntBound(0), Left)
	sp.Input = operator.NewBatches(right.Schema(), []arrow.RecordBatch{right})
	right.Retain()
	left.Retain()
	j, err := New(operator.NewBatches(left.Schema(), []arrow.RecordBatch{left}), []Right{sp}, Options{Allocator: mem})
	require.NoError(t, err)
	require.NotNil(t, lineInput(j, 0).back)
	_, err = exectest.Collect(context.Background(), j, mem)
	require.ErrorContains(t, err, "ASOF input quotes is not ordered by t: row 3 has t = 3")
}
