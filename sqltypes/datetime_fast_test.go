package sqltypes

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// randomCanonical makes strings in and around the fast path's format:
// valid ones, out-of-range fields, and small mutations.
func randomCanonical(r *rand.Rand) string {
	s := fmt.Sprintf("%04d-%02d-%02d", r.IntN(10001), r.IntN(14), r.IntN(33))
	if r.IntN(5) > 0 {
		s += string(" T"[r.IntN(2)])
		s += fmt.Sprintf("%02d:%02d:%02d", r.IntN(26), r.IntN(61), r.IntN(62))
		if r.IntN(2) == 0 {
			f := fmt.Sprintf("%07d", r.IntN(10000000))
			s += "." + f[:1+r.IntN(7)]
		}
		switch r.IntN(5) {
		case 0:
			s += "Z"
		case 1:
			s += fmt.Sprintf("%c%02d", "+-"[r.IntN(2)], r.IntN(17))
		case 2:
			s += fmt.Sprintf("%c%02d:%02d", "+-"[r.IntN(2)], r.IntN(17), r.IntN(61))
		}
	}
	if r.IntN(6) == 0 { // mutate one byte
		b := []byte(s)
		b[r.IntN(len(b))] = " -:.T+Z0912ab"[r.IntN(13)]
		s = string(b)
	}
	return s
}

// TestFastDateTimeAgreesWithParser: the allocation-free fast path gives
// exactly what the general parser gives, value or error.
func TestFastDateTimeAgreesWithParser(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 4))
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	p3 := Type{Kind: TimestampTZ, Precision: 3, Scale: NoLimit, Length: NoLimit}
	hits := 0
	for i := 0; i < 20000; i++ {
		s := randomCanonical(r)
		o := &Options{Location: ny}
		if i%2 == 0 {
			o = nil
		}
		if _, _, _, _, _, ok := fastDateTime(s); ok {
			hits++
		}
		d1, e1 := parseDate(s, o)
		d2, e2 := parseDateSlow(s, o)
		require.Equal(t, e2, e1, s)
		require.Equal(t, d2, d1, s)
		for _, typ := range []Type{TimestampType, TimestampTZType, p3} {
			u1, e1 := parseTimestamp(s, typ, o)
			u2, e2 := parseTimestampSlow(s, typ, o)
			require.Equal(t, e2, e1, "%s %s", typ, s)
			require.Equal(t, u2, u1, "%s %s", typ, s)
		}
	}
	require.Greater(t, hits, 5000, "the fast path is exercised")
}
