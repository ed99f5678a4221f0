package pgwire

import (
	"io"
	"net"
	"os"
	"sync"
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
	// The calls' state and callbacks (made once: a closure per call would
	// be two allocations), one set per direction, each under its lock.
	rmu     sync.Mutex
	rp      []byte
	rn      int
	rerr    syscall.Errno
	readFn  func(uintptr) bool
	wmu     sync.Mutex
	wp      []byte
	wn      int
	werr    syscall.Errno
	writeFn func(uintptr) bool
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
	s := &rawSock{Conn: nc, sc: sc, rc: rc}
	s.readFn, s.writeFn = s.read, s.write
	return s
}

// SyscallConn is the socket's (peerClosed polls it).
func (s *rawSock) SyscallConn() (syscall.RawConn, error) { return s.sc.SyscallConn() }

func (s *rawSock) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.rmu.Lock()
	s.rp, s.rn, s.rerr = p, 0, 0
	err := s.rc.Read(s.readFn)
	n, errno := s.rn, s.rerr
	s.rp = nil
	s.rmu.Unlock()
	switch {
	case err != nil:
		return 0, s.opError("read", err)
	case errno != 0:
		return 0, s.opError("read", os.NewSyscallError("read", errno))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// read is Read's callback: false to wait until readable (or the
// deadline).
func (s *rawSock) read(fd uintptr) bool {
	for {
		r, e := sysRead(fd, s.rp)
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		s.rn, s.rerr = r, e
		return true
	}
}

func (s *rawSock) Write(p []byte) (int, error) {
	s.wmu.Lock()
	s.wp, s.wn, s.werr = p, 0, 0
	err := s.rc.Write(s.writeFn)
	n, errno := s.wn, s.werr
	s.wp = nil
	s.wmu.Unlock()
	if err == nil && errno != 0 {
		err = os.NewSyscallError("write", errno)
	}
	if err != nil {
		return n, s.opError("write", err)
	}
	return n, nil
}

// write is Write's callback: false to wait until writable (or the
// deadline).
func (s *rawSock) write(fd uintptr) bool {
	for s.wn < len(s.wp) {
		r, e := sysWrite(fd, s.wp[s.wn:])
		switch e {
		case 0:
			s.wn += r
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			s.werr = e
			return true
		}
	}
	return true
}

func (s *rawSock) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: s.LocalAddr().Network(), Source: s.LocalAddr(), Addr: s.RemoteAddr(), Err: err}
}
