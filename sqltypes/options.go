package sqltypes

import (
	"time"

	// The session TimeZone may name any IANA zone; embedding the database
	// makes that independent of the host's /usr/share/zoneinfo.
	_ "time/tzdata"
)

// Options carries the session settings that affect value I/O. A nil
// *Options means DefaultOptions(). Build one from DefaultOptions(): a zero
// Options{} means extra_float_digits 0 (15 significant digits), not the
// session default 1.
type Options struct {
	// Location is the session TimeZone: timestamptz values are printed in it
	// and zone-less timestamptz input is read in it. nil means UTC.
	Location *time.Location
	// ExtraFloatDigits is extra_float_digits (-15..3, Postgres default 1).
	// Above 0 floats print the shortest digits that round-trip; at 0 or
	// below they print with 15+n (float8) or 6+n (float4) significant digits.
	ExtraFloatDigits int
	// DateStyle is always ISO, MDY and IntervalStyle always postgres: those
	// are the only styles implemented.
}

// DefaultOptions returns the settings of a fresh Postgres session whose
// TimeZone is UTC.
func DefaultOptions() *Options {
	return &Options{Location: time.UTC, ExtraFloatDigits: 1}
}

func (o *Options) loc() *time.Location {
	if o == nil || o.Location == nil {
		return time.UTC
	}
	return o.Location
}

func (o *Options) efd() int {
	if o == nil {
		return 1
	}
	return o.ExtraFloatDigits
}
