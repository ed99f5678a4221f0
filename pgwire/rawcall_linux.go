//go:build linux && !race

package pgwire

import (
	"syscall"
	"unsafe"
)

// sysRead is read(2) of p, as a raw system call (rawsock_linux.go).
func sysRead(fd uintptr, p []byte) (int, syscall.Errno) {
	r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(r), e
}

// sysWrite is a send of p with MSG_NOSIGNAL (a peer gone is EPIPE, not
// SIGPIPE, for a Unix socket's peer too), as a raw system call.
func sysWrite(fd uintptr, p []byte) (int, syscall.Errno) {
	r, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)),
		syscall.MSG_NOSIGNAL, 0, 0)
	return int(r), e
}
