//go:build !unix

package catalog

import (
	"os"
	"path/filepath"

	"github.com/asofsql/asofsql/sqlerr"
)

// lockDir only opens dir/LOCK where advisory locks are unavailable: a second
// opener of the same directory is not detected there.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, sqlerr.Wrap(err, sqlerr.IOError, "could not open lock file: %v", err)
	}
	return f, nil
}

func unlockDir(f *os.File) { f.Close() }
