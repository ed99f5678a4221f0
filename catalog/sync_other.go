//go:build !linux

package catalog

import "os"

// walSyncFlag: elsewhere the log is written, then synced (walWrite).
const walSyncFlag = 0

// walWrite writes b at off of a log file and returns once it is on disk.
func walWrite(f *os.File, b []byte, off int64) error {
	if _, err := f.WriteAt(b, off); err != nil {
		return err
	}
	return f.Sync()
}
