//go:build linux

package pgwire

import (
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// threadSock is an accepted TCP or Unix socket that waits for its client
// either in the runtime's poller, as net.Conn does (raw calls: see
// rawSock), or, when threadPool lets it, out of the poller on its own
// thread: in ppoll(2), as a PostgreSQL backend waits in recv in its own
// process.
//
// Why: a connection running one statement at a time goes idle between
// round trips. Parked in the poller, every statement cost the runtime's
// idle path: the thread in epoll_pwait woken, the scheduler's search for
// work, sysmon woken from its deep sleep and polling every 20 µs until
// every P was idle again (wire-lat, wal-commit in docs/benchmarks.md).
// Blocked in a system call, the goroutine keeps its P (sysmon retakes it
// only when another goroutine needs it, or after 10 ms), sysmon backs
// off to 10 ms sleeps instead of being re-armed each statement, and the
// client's bytes wake one thread, the one that handles them.
//
// On the thread path the socket is a dup of the accepted one, whose
// net.Conn is closed: that takes it out of the runtime's epoll set
// (registered there, the client's bytes would also wake the poller's
// thread). It stays non-blocking; a read or write that would block waits
// in ppoll on the socket and an eventfd of its direction, which a
// deadline change, Close or an eviction writes to: deadlines, Close and
// Shutdown's wake-ups behave as net.Conn's, from any goroutine. Back to
// the poller, a new net.Conn is made of another dup.
type threadSock struct {
	laddr, raddr net.Addr
	fd           int // the dup, kept in both modes
	rd, wd       sockDir
	pool         *threadPool
	// inner is the poller-mode connection; nil on the thread path. It
	// changes only with both rd.mu and wd.mu held, and s.mu.
	inner atomic.Pointer[innerConn]
	// wrote is set by a write and cleared by a read: a read after an
	// answer is the end of a round trip (the client's turn), where the
	// mode is chosen, and on the thread path it waits before trying
	// the socket, which is then almost always empty.
	wrote atomic.Bool
	// quietN counts round trips in a row the server was quiet (under
	// rd.mu); evict asks a thread-path socket to go back to the poller.
	quietN int
	evict  atomic.Bool

	mu     sync.Mutex
	refs   int // the descriptors' users, and one for being open
	closed atomic.Bool
}

type innerConn struct{ c net.Conn }

// sockDir is one direction's waiting on the thread path: one reader (or
// writer) at a time, under mu.
type sockDir struct {
	mu       sync.Mutex
	efd      int          // eventfd: a deadline changed, Close, eviction
	deadline atomic.Int64 // Unix ns; 0: none
	waiting  atomic.Bool
	pfd      [2]unix.PollFd
	ts       unix.Timespec
}

// rawWait is how long a wait on the thread path first blocks without
// telling the scheduler (a raw system call), holding its P as if it ran,
// so that sysmon, seeing no system call, backs off; then it waits as a
// system call, the P free to be retaken (ASOFSQL_WIRE_RAWWAIT replaces
// it; 0: always a system call).
var rawWait = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("ASOFSQL_WIRE_RAWWAIT")); err == nil {
		return d
	}
	return 2 * time.Millisecond
}()

// threadSocket returns nc as a threadSock (in poller mode) when it is a
// TCP or Unix socket, pool lets connections take the thread path and
// the descriptors could be made; else as rawSocket does.
func threadSocket(nc net.Conn, pool *threadPool) net.Conn {
	switch nc.(type) {
	case *net.TCPConn, *net.UnixConn:
	default:
		return nc
	}
	if pool.slots() <= 0 {
		return rawSocket(nc)
	}
	rc, err := nc.(syscall.Conn).SyscallConn()
	if err != nil {
		return rawSocket(nc)
	}
	fd := -1
	cerr := rc.Control(func(sfd uintptr) {
		fd, err = unix.FcntlInt(sfd, unix.F_DUPFD_CLOEXEC, 0)
	})
	if cerr != nil || err != nil {
		return rawSocket(nc)
	}
	s := &threadSock{laddr: nc.LocalAddr(), raddr: nc.RemoteAddr(), fd: fd, pool: pool, refs: 1}
	s.rd.efd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(fd)
		return rawSocket(nc)
	}
	s.wd.efd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(s.rd.efd)
		unix.Close(fd)
		return rawSocket(nc)
	}
	s.rd.pfd = [2]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(s.rd.efd), Events: unix.POLLIN}}
	s.wd.pfd = [2]unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}, {Fd: int32(s.wd.efd), Events: unix.POLLIN}}
	s.inner.Store(&innerConn{rawSocket(nc)})
	pool.conns.Add(1)
	return s
}

// acquire takes a reference for a use of the descriptors; false once
// closed.
func (s *threadSock) acquire() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return false
	}
	s.refs++
	return true
}

func (s *threadSock) release() {
	s.mu.Lock()
	s.refs--
	last := s.refs == 0
	s.mu.Unlock()
	if last {
		s.pool.give(s)
		unix.Close(s.fd)
		unix.Close(s.rd.efd)
		unix.Close(s.wd.efd)
	}
}

// Close wakes whoever waits on the socket; the descriptors close when
// the last of them has left.
func (s *threadSock) Close() error {
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return s.opError("close", net.ErrClosed)
	}
	s.closed.Store(true)
	in := s.inner.Load()
	s.mu.Unlock()
	s.pool.conns.Add(-1)
	if in != nil {
		in.c.Close()
	}
	s.rd.wake()
	s.wd.wake()
	s.release()
	return nil
}

func (d *sockDir) wake() {
	one := [8]byte{1}
	unix.Write(d.efd, one[:])
}

// evictReq asks a thread-path socket to go back to the poller: at once
// if it waits for its client, else at its next round trip.
func (s *threadSock) evictReq() {
	s.evict.Store(true)
	if s.rd.waiting.Load() && s.acquire() {
		s.rd.wake()
		s.release()
	}
}

func deadlineTime(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.Unix(0, v)
}

// set changes d's deadline and wakes a waiter to see it.
func (s *threadSock) set(d *sockDir, t time.Time) {
	var v int64
	if !t.IsZero() {
		v = max(t.UnixNano(), 1)
	}
	d.deadline.Store(v)
	if s.inner.Load() != nil {
		s.mu.Lock()
		if in := s.inner.Load(); in != nil {
			// The latest deadline, whoever stored it.
			if d == &s.rd {
				in.c.SetReadDeadline(deadlineTime(d.deadline.Load()))
			} else {
				in.c.SetWriteDeadline(deadlineTime(d.deadline.Load()))
			}
		}
		s.mu.Unlock()
	}
	// A waiter sets waiting before it reads the deadline, and this reads
	// waiting after storing it: either it waits with the new deadline or
	// it is woken (the eventfd keeps the wake-up until it is read).
	if d.waiting.Load() && s.acquire() {
		d.wake()
		s.release()
	}
}

func (s *threadSock) SetReadDeadline(t time.Time) error {
	s.set(&s.rd, t)
	return nil
}

func (s *threadSock) SetWriteDeadline(t time.Time) error {
	s.set(&s.wd, t)
	return nil
}

func (s *threadSock) SetDeadline(t time.Time) error {
	s.set(&s.rd, t)
	s.set(&s.wd, t)
	return nil
}

func (s *threadSock) LocalAddr() net.Addr  { return s.laddr }
func (s *threadSock) RemoteAddr() net.Addr { return s.raddr }

// expired reports whether d's deadline has passed.
func expired(d *sockDir) bool {
	dl := d.deadline.Load()
	return dl != 0 && time.Now().UnixNano() >= dl
}

// steer chooses the mode at the end of a round trip (see threadPool);
// the caller holds rd.mu.
func (s *threadSock) steer() {
	p := s.pool
	if envThreadAlways {
		if s.inner.Load() != nil && p.take(s) && !s.toThread() {
			p.give(s)
		}
		return
	}
	quiet := p.quiet()
	if s.inner.Load() == nil {
		if !quiet || s.evict.Load() {
			s.toPoller()
		}
		return
	}
	if !quiet {
		s.quietN = 0
		if p.held.Load() > 0 {
			p.evictAll()
		}
		return
	}
	if s.quietN++; s.quietN < quietRuns {
		return
	}
	s.quietN = 0
	if p.take(s) && !s.toThread() {
		p.give(s)
	}
}

// toThread takes the socket out of the poller; the caller holds rd.mu
// and a slot. False if a write is under way or the socket is closed.
func (s *threadSock) toThread() bool {
	if !s.wd.mu.TryLock() {
		return false
	}
	defer s.wd.mu.Unlock()
	s.mu.Lock()
	in := s.inner.Load()
	if s.closed.Load() || in == nil {
		s.mu.Unlock()
		return false
	}
	s.inner.Store(nil)
	s.evict.Store(false)
	s.mu.Unlock()
	in.c.Close() // deregisters it; the dup keeps the socket
	return true
}

// toPoller puts the socket back in the poller and gives its slot back;
// the caller holds rd.mu. False if a write is under way or the socket
// could not be registered (it stays on the thread path).
func (s *threadSock) toPoller() bool {
	if !s.wd.mu.TryLock() {
		return false
	}
	defer s.wd.mu.Unlock()
	nfd, err := unix.FcntlInt(uintptr(s.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(nfd), "")
	nc, err := net.FileConn(f) // registers a dup of its own
	f.Close()
	if err != nil {
		return false
	}
	nc = rawSocket(nc)
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		nc.Close()
		return false
	}
	s.inner.Store(&innerConn{nc})
	nc.SetReadDeadline(deadlineTime(s.rd.deadline.Load()))
	nc.SetWriteDeadline(deadlineTime(s.wd.deadline.Load()))
	s.mu.Unlock()
	s.evict.Store(false)
	s.pool.give(s)
	return true
}

// wait blocks in ppoll until the socket is ready in d's direction, the
// eventfd is written or the deadline passes; ready says it was the
// socket. With evict set, an eviction ends it too (evictReq's wake-up
// may have come before waiting was set). The caller holds d.mu and a
// reference.
func (s *threadSock) wait(d *sockDir, evict bool) (ready bool, err error) {
	d.waiting.Store(true)
	defer d.waiting.Store(false)
	if s.closed.Load() || evict && s.evict.Load() {
		return false, nil
	}
	left := int64(-1) // ns until the deadline; -1: none
	if dl := d.deadline.Load(); dl != 0 {
		if left = dl - time.Now().UnixNano(); left <= 0 {
			return false, nil
		}
	}
	d.pfd[0].Revents, d.pfd[1].Revents = 0, 0
	pfd := uintptr(unsafe.Pointer(&d.pfd[0]))
	raw := int64(rawWait)
	if raw > 0 {
		// First a wait the scheduler is not told of (see rawWait).
		t := raw
		if left >= 0 {
			t = min(t, left)
		}
		d.ts = unix.NsecToTimespec(t)
		n, _, e := syscall.RawSyscall6(unix.SYS_PPOLL, pfd, 2, uintptr(unsafe.Pointer(&d.ts)), 0, 0, 0)
		if e != 0 || n != 0 {
			return s.polled(d, e)
		}
		if left >= 0 && left <= raw {
			return false, nil // the deadline passed
		}
		if left >= 0 {
			left -= raw
		}
	}
	ts := uintptr(0)
	if left >= 0 {
		d.ts = unix.NsecToTimespec(left)
		ts = uintptr(unsafe.Pointer(&d.ts))
	}
	_, _, e := syscall.Syscall6(unix.SYS_PPOLL, pfd, 2, ts, 0, 0, 0)
	return s.polled(d, e)
}

// polled is wait's end: what ppoll found, the eventfd read if written.
func (s *threadSock) polled(d *sockDir, e syscall.Errno) (ready bool, err error) {
	if e == syscall.EINTR {
		return false, nil
	}
	if e != 0 {
		return false, os.NewSyscallError("ppoll", e)
	}
	if d.pfd[1].Revents != 0 {
		var b [8]byte
		unix.Read(d.efd, b[:])
	}
	return d.pfd[0].Revents != 0, nil
}

func (s *threadSock) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	d := &s.rd
	d.mu.Lock()
	defer d.mu.Unlock()
	if !s.acquire() {
		return 0, s.opError("read", net.ErrClosed)
	}
	defer s.release()
	waitFirst := s.wrote.Swap(false)
	if waitFirst {
		// The client's turn: choose the mode, and count the
		// connection idle while it waits.
		s.steer()
		s.pool.idle.Add(1)
		defer s.pool.idle.Add(-1)
	}
	tried := false // to go back to the poller when evicted
	for {
		if in := s.inner.Load(); in != nil {
			return in.c.Read(p)
		}
		if s.closed.Load() {
			return 0, s.opError("read", net.ErrClosed)
		}
		if expired(d) {
			return 0, s.opError("read", os.ErrDeadlineExceeded)
		}
		if !tried && s.evict.Load() {
			// A write under way keeps it here until it next waits.
			tried = true
			if s.toPoller() {
				continue
			}
		}
		if !waitFirst {
			n, e := sysRead(uintptr(s.fd), p)
			switch e {
			case 0:
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
			default:
				return 0, s.opError("read", os.NewSyscallError("read", e))
			}
		}
		ready, err := s.wait(d, !tried)
		if err != nil {
			return 0, s.opError("read", err)
		}
		waitFirst = !ready
	}
}

func (s *threadSock) Write(p []byte) (int, error) {
	d := &s.wd
	d.mu.Lock()
	defer d.mu.Unlock()
	if !s.acquire() {
		return 0, s.opError("write", net.ErrClosed)
	}
	defer s.release()
	if in := s.inner.Load(); in != nil {
		n, err := in.c.Write(p)
		s.wrote.Store(true)
		return n, err
	}
	n := 0
	for n < len(p) {
		if s.closed.Load() {
			return n, s.opError("write", net.ErrClosed)
		}
		if expired(d) {
			return n, s.opError("write", os.ErrDeadlineExceeded)
		}
		r, e := sysWrite(uintptr(s.fd), p[n:])
		switch e {
		case 0:
			n += r
			continue
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
		default:
			return n, s.opError("write", os.NewSyscallError("write", e))
		}
		if _, err := s.wait(d, false); err != nil {
			return n, s.opError("write", err)
		}
	}
	s.wrote.Store(true)
	return n, nil
}

func (s *threadSock) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: s.laddr.Network(), Source: s.laddr, Addr: s.raddr, Err: err}
}

// SyscallConn gives the descriptor to Control (peerClosed polls it);
// Read and Write of the raw connection are not supported.
func (s *threadSock) SyscallConn() (syscall.RawConn, error) { return threadRaw{s}, nil }

type threadRaw struct{ s *threadSock }

func (r threadRaw) Control(f func(fd uintptr)) error {
	if !r.s.acquire() {
		return net.ErrClosed
	}
	defer r.s.release()
	f(uintptr(r.s.fd))
	return nil
}

func (threadRaw) Read(func(fd uintptr) bool) error  { return syscall.EOPNOTSUPP }
func (threadRaw) Write(func(fd uintptr) bool) error { return syscall.EOPNOTSUPP }
