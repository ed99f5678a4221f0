//go:build unix

package catalog

import (
	"os"
	"path/filepath"
	"syscall"

	"github.com/asofsql/asofsql/sqlerr"
)

// lockDir takes an exclusive advisory lock on dir/LOCK so two processes never
// write one data directory. The kernel drops it when the process dies, so a
// crash never leaves the directory locked.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, sqlerr.Wrap(err, sqlerr.IOError, "could not open lock file: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, sqlerr.Wrap(err, "55006", "data directory %s is in use by another catalog", dir)
	}
	return f, nil
}

func unlockDir(f *os.File) {
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}
