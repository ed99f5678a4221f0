//go:build !linux

package catalog

import "os"

// startWriteback is a no-op where sync_file_range does not exist: the
// fsync at the segment's end writes everything.
func startWriteback(f *os.File, off, n int64) {}
