package catalog

import (
	"os"
	"syscall"
)

// fdatasync makes a log file's appended bytes durable without waiting for
// unrelated metadata (the size change it must include is data for
// fdatasync's purposes).
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
