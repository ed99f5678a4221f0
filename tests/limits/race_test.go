//go:build race

package limits_test

// The race detector makes lexing and binding several times slower; the
// table runs at smaller sizes under it (still on all three paths).
func init() { raceEnabled = true }
