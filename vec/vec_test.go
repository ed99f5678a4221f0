package vec

import (
	"math"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

func floats(mem memory.Allocator, vals []float64, valid []bool) arrow.Array {
	return MakeFixed(mem, arrow.PrimitiveTypes.Float64, vals, valid)
}

func TestComparatorAndGather(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	a := floats(mem, []float64{1, math.NaN(), 3}, []bool{true, true, false})
	defer a.Release()
	b := floats(mem, []float64{2, 5, 0}, nil)
	defer b.Release()
	cmp, err := Comparator(sqltypes.Float8Type, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if cmp(0, 0) != -1 || cmp(1, 1) != 1 || cmp(1, 0) != 1 {
		t.Errorf("NaN must sort above every number: %d %d %d", cmp(0, 0), cmp(1, 1), cmp(1, 0))
	}
	// Row 0 from b, row 1 NULL, row 2 from a (NULL there).
	g := Pick(mem, sqltypes.Float8Type, []arrow.Array{a, b}, []int{1, -1, 0}, 3)
	defer g.Release()
	got := g.(*array.Float64)
	if !got.IsValid(0) || got.Value(0) != 2 || got.IsValid(1) || got.IsValid(2) {
		t.Errorf("Pick = %v", g)
	}
}

func TestWriteIntsRange(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	out, err := WriteInts(mem, sqltypes.Int2Type, []int64{1, 1 << 20}, []bool{true, false})
	if err != nil {
		t.Fatalf("a NULL row out of range must not fail: %v", err)
	}
	out.Release()
	_, err = WriteInts(mem, sqltypes.Int2Type, []int64{1, 1 << 20}, nil)
	if e, ok := sqlerr.As(err); !ok || e.Code != sqlerr.NumericValueOutOfRange || e.Message != "smallint out of range" {
		t.Errorf("err = %v", err)
	}
}

func TestAddIntervalClampsMonths(t *testing.T) {
	jan31 := int64(1706659200) * UsPerSec // 2024-01-31 00:00 UTC
	got, err := AddInterval(jan31, arrow.MonthDayNanoInterval{Months: 1}, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(1709164800) * UsPerSec; got != want { // 2024-02-29
		t.Errorf("AddInterval = %d, want %d", got, want)
	}
}
