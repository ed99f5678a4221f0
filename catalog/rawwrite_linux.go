//go:build !race

package catalog

import (
	"syscall"
	"unsafe"
)

// pwriteRaw writes all of b at off of fd as raw system calls (see
// walWrite).
func pwriteRaw(fd uintptr, b []byte, off int64) error {
	for len(b) > 0 {
		n, _, e := syscall.RawSyscall6(syscall.SYS_PWRITE64, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(off), 0, 0)
		switch {
		case e == syscall.EINTR:
			continue
		case e != 0:
			return e
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}
