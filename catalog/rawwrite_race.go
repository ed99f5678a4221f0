//go:build linux && race

package catalog

import "syscall"

// pwriteRaw is syscall.Pwrite under the race detector.
func pwriteRaw(fd uintptr, b []byte, off int64) error {
	for len(b) > 0 {
		n, err := syscall.Pwrite(int(fd), b, off)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}
