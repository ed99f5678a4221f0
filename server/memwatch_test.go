package server_test

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The hostile suite bounds the server's memory in-process, with
// runtime/metrics, rather than the RSS of a server subprocess: the suite
// runs the real engine in the test binary so that its cleanup can check
// the engine's Arrow allocator at zero and count leaked goroutines, which
// a subprocess would hide. RSS would not measure the server there anyway
// (the clients live in the same process, and the Go runtime returns freed
// pages to the OS lazily), so the watcher samples the live heap (the
// bytes reachable at the end of each garbage collection, which is what
// memory_limit's accounting bounds) and reports its growth over the
// heap's live size when the watch started.
//
// memOverhead is what the server may hold beyond the configured
// --memory-limit: the state memory_limit does not cover (sessions and their
// 16 kB read buffers, up to 100 connections' and the test's clients'
// buffers, at most one batch of fixed-width values past the limit, one
// unread 32 kB write buffer a session, Go's runtime structures). It is
// documented in docs/sql.md where memory_limit is.
const memOverhead = 64 << 20

// memWatch samples the live heap every few milliseconds until stop.
type memWatch struct {
	base    uint64
	mu      sync.Mutex
	peak    uint64
	samples int
	stop    chan struct{}
	done    chan struct{}
}

var liveHeap = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

func readLive() uint64 {
	metrics.Read(liveHeap)
	return liveHeap[0].Value.Uint64()
}

func watchMemory(t *testing.T) *memWatch {
	t.Helper()
	runtime.GC()
	w := &memWatch{base: readLive(), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
			v := readLive()
			w.mu.Lock()
			w.peak = max(w.peak, v)
			w.samples++
			w.mu.Unlock()
		}
	}()
	return w
}

// growth is the peak live heap seen so far over the base.
func (w *memWatch) growth() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return int64(w.peak) - int64(w.base)
}

// check stops the watcher (once) and fails the test when the live heap
// grew past limit plus memOverhead.
func (w *memWatch) check(t *testing.T, limit int64) {
	t.Helper()
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
	runtime.GC() // one last sample of what is live now
	v := readLive()
	w.mu.Lock()
	w.peak = max(w.peak, v)
	w.mu.Unlock()
	g := w.growth()
	t.Logf("live heap: %d MiB at the start, peak growth %d MiB (%d samples); limit %d MiB + overhead %d MiB",
		w.base>>20, g>>20, w.samples, limit>>20, memOverhead>>20)
	require.LessOrEqual(t, g, limit+memOverhead, "the server's live heap grew past --memory-limit plus the documented overhead")
}
