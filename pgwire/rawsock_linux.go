package pgwire

import (
	"io"
	"net"
	"os"
	"syscall"
)

// rawSock is an accepted TCP or Unix socket whose reads and writes are
// raw system calls on its non-blocking descriptor, waiting (for input, or
// for room to write) through the runtime's poller as net.Conn does.
//
// Why: a Go system call (syscall.Syscall) tells the scheduler it may
// block, and the first one after the process went idle wakes the
// runtime's sysmon thread from its deep sleep; sysmon then polls every
// 20 µs until every P is idle again. A server answering one round trip at
// a time goes idle between statements, so every statement paid for
// waking sysmon (a futex wake and its nanosleeps): a quarter of the
// server's CPU for single-row INSERTs in a profile of the real server
// (perf, 2 vCPUs). A read or write of a non-blocking socket never
// blocks, so nothing is lost by not telling the scheduler, as the runtime
// itself does for its own non-blocking calls. (Built with -race, the
// calls are syscall.Read and Write, whose annotations tell the race
// detector that what a peer wrote before is seen by the reader:
// rawcall_race.go.)
type rawSock struct {
	net.Conn // deadlines, Close, addresses
	sc       syscall.Conn
	rc       syscall.RawConn
}

// rawSocket returns nc with raw reads and writes when it is a TCP or Unix
// socket, else nc.
func rawSocket(nc net.Conn) net.Conn {
	switch nc.(type) {
	case *net.TCPConn, *net.UnixConn:
	default:
		return nc
	}
	sc := nc.(syscall.Conn)
	rc, err := sc.SyscallConn()
	if err != nil {
		return nc
	}
	return &rawSock{Conn: nc, sc: sc, rc: rc}
}

// SyscallConn is the socket's (peerClosed polls it).
func (s *rawSock) SyscallConn() (syscall.RawConn, error) { return s.sc.SyscallConn() }

func (s *rawSock) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := s.rc.Read(func(fd uintptr) bool {
		for {
			r, e := sysRead(fd, p)
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait until readable (or the deadline)
			}
			n, errno = int(r), e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, &net.OpError{Op: "read", Net: s.LocalAddr().Network(), Source: s.LocalAddr(), Addr: s.RemoteAddr(), Err: err}
	case errno != 0:
		return 0, &net.OpError{Op: "read", Net: s.LocalAddr().Network(), Source: s.LocalAddr(), Addr: s.RemoteAddr(), Err: os.NewSyscallError("read", errno)}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (s *rawSock) Write(p []byte) (int, error) {
	var n int
	var errno syscall.Errno
	err := s.rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			r, e := sysWrite(fd, p[n:])
			switch e {
			case 0:
				n += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // wait until writable (or the deadline)
			default:
				errno = e
				return true
			}
		}
		return true
	})
	if err == nil && errno != 0 {
		err = os.NewSyscallError("write", errno)
	}
	if err != nil {
		return n, &net.OpError{Op: "write", Net: s.LocalAddr().Network(), Source: s.LocalAddr(), Addr: s.RemoteAddr(), Err: err}
	}
	return n, nil
}
