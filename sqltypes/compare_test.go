package sqltypes

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

func TestCompareFloat(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		a, b float64
		want int
	}{
		{1, 2, -1}, {2, 1, 1}, {1, 1, 0},
		{math.Copysign(0, -1), 0, 0},
		{nan, nan, 0}, {nan, inf, 1}, {inf, nan, -1}, {-inf, nan, -1},
	} {
		if got := CompareFloat(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareFloat(%v, %v) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := CompareFloat(float32(tc.a), float32(tc.b)); got != tc.want {
			t.Errorf("CompareFloat[float32](%v, %v) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestDisplayDecimal(t *testing.T) {
	num := func(s string, t Type) decimal128.Num {
		v, err := decimal128.FromString(s, MaxNumericPrecision, int32(DefaultNumericScale))
		if err != nil {
			panic(err)
		}
		if t.Precision != NoLimit {
			v, _ = decimal128.FromString(s, int32(t.Precision), int32(t.Scale))
		}
		return v
	}
	for _, tc := range []struct {
		v    string
		t    Type
		want string
	}{
		{"1.2500", NumericType(NoLimit, NoLimit), "1.25"}, // unknown scale: its digits
		{"3", NumericType(NoLimit, NoLimit), "3"},
		{"1.25", NumericDisplay(4), "1.2500"},
		{"1.25", NumericDisplay(1), "1.3"}, // half away from zero
		{"-1.25", NumericDisplay(1), "-1.3"},
		{"2.50", NumericType(10, 2), "2.50"},
	} {
		if got := DisplayDecimal(num(tc.v, tc.t), tc.t).String(); got != tc.want {
			t.Errorf("DisplayDecimal(%s, %s) = %s, want %s", tc.v, tc.t, got, tc.want)
		}
	}
}
