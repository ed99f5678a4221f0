package catalog

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing n bytes of f from off
// to disk without waiting for them (sync_file_range WRITE), so that the
// fsync that makes the file durable finds little left to write. A failure
// only loses the head start: the fsync still writes everything.
func startWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
