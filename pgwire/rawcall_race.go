//go:build linux && race

package pgwire

import "syscall"

// sysRead is syscall.Read under the race detector: its annotations order
// what a peer wrote before the read (rawsock_linux.go).
func sysRead(fd uintptr, p []byte) (int, syscall.Errno) {
	n, err := syscall.Read(int(fd), p)
	return max(n, 0), errnoOf(err)
}

// sysWrite is syscall.Write under the race detector (SIGPIPE is ignored
// for sockets: a peer gone is EPIPE).
func sysWrite(fd uintptr, p []byte) (int, syscall.Errno) {
	n, err := syscall.Write(int(fd), p)
	return max(n, 0), errnoOf(err)
}

func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	return err.(syscall.Errno)
}
