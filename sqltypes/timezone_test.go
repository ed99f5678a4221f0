package sqltypes

import (
	"testing"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

// TestParseTimeZone: SET timezone = <in>; SHOW timezone; and
// SELECT '2024-01-02 03:00+00'::timestamptz, recorded from PG15.
func TestParseTimeZone(t *testing.T) {
	cases := []struct{ in, show, jan string }{
		{"-7", "<-07>+07", "2024-01-01 20:00:00-07"},
		{"5.5", "<+05:30>-05:30", "2024-01-02 08:30:00+05:30"},
		{"UTC+3", "UTC+3", "2024-01-02 00:00:00-03"},
		{"america/new_york", "America/New_York", "2024-01-01 22:00:00-05"},
		{"+05:30", "+05:30", "2024-01-01 21:30:00-05:30"},
		{"<+0530>-05:30", "<+0530>-05:30", "2024-01-02 08:30:00+05:30"},
		{"utc", "UTC", "2024-01-02 03:00:00+00"},
		{"EST", "EST", "2024-01-01 22:00:00-05"},
		{"PST8PDT", "PST8PDT", "2024-01-01 19:00:00-08"},
		{"etc/utc", "Etc/UTC", "2024-01-02 03:00:00+00"},
	}
	for _, c := range cases {
		loc, err := ParseTimeZone(c.in)
		require.NoError(t, err, c.in)
		require.Equal(t, c.show, loc.String(), c.in)
		us, err := parseTimestamp("2024-01-02 03:00+00", TimestampTZType, nil)
		require.NoError(t, err)
		require.Equal(t, c.jan, string(appendTimestamp(nil, us, loc)), c.in)
	}
	for _, in := range []string{"Foo", "Z", "", "Foo/Bar", "abc+", "<+05", "UTC+200"} {
		_, err := ParseTimeZone(in)
		require.Equal(t, sqlerr.InvalidParameterValue, sqlerr.Code(err), in)
		require.Equal(t, `invalid value for parameter "TimeZone": "`+in+`"`, err.Error())
	}
}
