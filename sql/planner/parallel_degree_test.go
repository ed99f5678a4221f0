package planner

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParallelDegree: PostgreSQL's rule with the leader counted: serial
// below min, 2 from min, one more each time the size triples, at most
// max; max at min 0; serial at max 1.
func TestParallelDegree(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		bytes, min int64
		max, want  int
	}{
		{0, 8 * mb, 16, 1},
		{8*mb - 1, 8 * mb, 16, 1},
		{8 * mb, 8 * mb, 16, 2},
		{24*mb - 1, 8 * mb, 16, 2},
		{24 * mb, 8 * mb, 16, 3},
		{72 * mb, 8 * mb, 16, 4},
		{1 << 40, 8 * mb, 16, 12},   // 131072 × min: 3^10 ≤ it < 3^11
		{1 << 62, 8 * mb, 1024, 26}, // no overflow
		{1 << 40, 8 * mb, 2, 2},
		{1 << 40, 8 * mb, 1, 1},
		{0, 0, 4, 4},
		{0, 0, 1, 1},
	} {
		require.Equal(t, c.want, parallelDegree(c.bytes, c.min, c.max), "%+v", c)
	}
}

func TestSizeText(t *testing.T) {
	for n, want := range map[int64]string{0: "0B", 512: "512B", 1024: "1kB", 1536: "1.5kB", 8 << 20: "8MB", 3 << 30: "3GB"} {
		require.Equal(t, want, sizeText(n))
	}
}
