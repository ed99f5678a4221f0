package sqltypes

import (
	"math"
	"testing"
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
