package catalog

import (
	"os"
	"syscall"
)

// walSyncFlag opens a log file so that a write returns once its bytes are
// durable (O_DSYNC: what an fdatasync after it would guarantee, including
// a size change, in the same system call). A commit then costs one pwrite
// instead of a pwrite and an fdatasync: one system call, one time the
// committing thread enters the kernel and the Go scheduler's syscall path.
const walSyncFlag = syscall.O_DSYNC

// walWrite writes b at off of a log file opened with walSyncFlag; it
// returns once the bytes are on disk.
func walWrite(f *os.File, b []byte, off int64) error {
	_, err := f.WriteAt(b, off)
	return err
}
