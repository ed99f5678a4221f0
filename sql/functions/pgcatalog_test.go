package functions

import (
	"testing"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

func TestParseArrayText(t *testing.T) {
	for _, bad := range []string{"", "a", "{a", "{a}}", "{a,}", `{"a}`} {
		_, err := parseArrayText(bad)
		require.Error(t, err, bad)
	}
	got, err := parseArrayText(` { "x y" , \N , z\,w } `)
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.Equal(t, "x y", *got[0])
	require.Equal(t, "N", *got[1])
	require.Equal(t, "z,w", *got[2])
}

// TestSizePretty: every figure was printed by PostgreSQL 15's
// pg_size_pretty(bigint).
func TestSizePretty(t *testing.T) {
	for _, c := range []struct {
		v    int64
		want string
	}{
		{0, "0 bytes"}, {1, "1 bytes"}, {-1, "-1 bytes"}, {1536, "1536 bytes"},
		{10239, "10239 bytes"}, {10240, "10 kB"}, {-10239, "-10239 bytes"}, {-10240, "-10 kB"},
		{10751, "10 kB"}, {10752, "11 kB"}, {15359, "15 kB"}, {15360, "15 kB"},
		{10485247, "10239 kB"}, {10485248, "10 MB"}, {-10485247, "-10239 kB"}, {-10485248, "-10 MB"},
		{20970496, "20 MB"}, {20971519, "20 MB"}, {20971520, "20 MB"},
		{10737418239, "10 GB"}, {10737418240, "10 GB"}, {1099511627775, "1024 GB"},
		{10995116277760, "10 TB"}, {11258999068426239, "10 PB"}, {11258999068426240, "10 PB"},
		{1125899906842624000, "1000 PB"}, {9223372036854775807, "8192 PB"}, {-9223372036854775808, "-8192 PB"},
	} {
		require.Equal(t, c.want, sizePretty(c.v), "%d", c.v)
	}
}

func TestArrayDimensionsLimit(t *testing.T) {
	_, err := parseArrayText("{{{{{{1}}}}}}")
	require.NoError(t, err)
	_, err = parseArrayText("{{{{{{{1}}}}}}}")
	require.Equal(t, sqlerr.ProgramLimitExceeded, sqlerr.Code(err))
	require.EqualError(t, err, "number of array dimensions (7) exceeds the maximum allowed (6)")
}
