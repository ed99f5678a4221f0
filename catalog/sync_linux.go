package catalog

import (
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

// walSyncFlag opens a log file so that a write returns once its bytes are
// durable (O_DSYNC: what an fdatasync after it would guarantee, including
// a size change, in the same system call). A commit then costs one pwrite
// instead of a pwrite and an fdatasync: one system call, one time the
// committing thread enters the kernel and the Go scheduler's syscall path.
const walSyncFlag = syscall.O_DSYNC

// walWrite writes b at off of a log file opened with walSyncFlag; it
// returns once the bytes are on disk.
//
// The write is a raw system call (rawWrite), not one the scheduler is
// told of, while the device answers fast. A system call the scheduler is
// told of wakes sysmon from its deep sleep when every P was idle before
// it, which is the case for each commit of a client that waits for its
// answer: sysmon then polled every 20 µs for the whole flush, a fifth
// of the server's CPU for one client's durable INSERTs (perf, session
// 12, conn-block in docs/benchmarks.md) and two context switches a
// commit. A raw call keeps its P for the flush, as if it ran: with a
// single P nothing else could run meanwhile (so then it is never raw),
// and a stop-the-world (the collector's) waits for the write to end.
// So a write that took longer than rawSlow sends the next ones through
// the scheduler for rawBackoff or a hundred times its time, whichever is
// longer: a device that stalls can hold up the server's other goroutines
// for one write, and then at most 1% of the time.
func walWrite(f *os.File, b []byte, off int64) error {
	if rawWrite && time.Now().UnixNano() >= rawSlowUntil.Load() && runtime.GOMAXPROCS(0) >= 2 {
		if rc, err := f.SyscallConn(); err == nil {
			var werr error
			if cerr := rc.Control(func(fd uintptr) {
				start := time.Now()
				werr = pwriteRaw(fd, b, off)
				if end := time.Now(); end.Sub(start) > rawSlow {
					back := max(rawBackoff, 100*end.Sub(start))
					rawSlowUntil.Store(end.Add(back).UnixNano())
				}
			}); cerr == nil {
				if werr != nil {
					return &os.PathError{Op: "write", Path: f.Name(), Err: werr}
				}
				return nil
			}
		}
	}
	_, err := f.WriteAt(b, off)
	return err
}

// rawSlow and rawBackoff: see walWrite. rawSlowUntil is the time (Unix
// ns) raw writes resume after a slow one; rawWrite is false in tests
// that want the scheduler's write.
// (Variables for tests.)
var (
	rawSlow      = 5 * time.Millisecond
	rawBackoff   = time.Second
	rawSlowUntil atomic.Int64
	rawWrite     = true
)
