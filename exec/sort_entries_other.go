//go:build !linux

package exec

// allocEntryBytes returns n bytes of the Go heap (the pool still keeps
// them across sorts).
func allocEntryBytes(n int) (b []byte, mapped bool) { return make([]byte, n), false }

// freeEntryBytes leaves b to the GC.
func freeEntryBytes(b []byte, mapped bool) {}
