package pgwire

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// A connection whose client runs one statement at a time waits for it
// best on a thread of its own (threadsock_linux.go); many connections
// wait best in the runtime's poller, which serves any number of them on
// the Ps there are. threadPool decides, at each round trip's wait, which
// a connection uses.
//
// A connection waiting on its thread holds the thread, and for up to
// 10 ms (until sysmon retakes it) the P it ran on: with every P so held,
// any other goroutine that becomes runnable waits for sysmon. So a
// connection takes the thread path only when the server has been quiet
// (no other connection busy) for quietRuns of its round trips in a row,
// at most GOMAXPROCS-1 connections hold it at a time (none with one P),
// and it goes back to the poller at its first round trip with another
// connection busy; one that waits idle in its thread is told to leave
// (evicted) when another connection wants the slot or the server gets
// busy.
type threadPool struct {
	// conns counts the sockets open; idle those waiting for their
	// client at a round trip's end. conns-idle are busy.
	conns, idle atomic.Int64
	held        atomic.Int64 // len(holders)
	mu          sync.Mutex
	holders     []*threadSock
	// max, when set, replaces the bound (negative: none), for tests.
	max atomic.Int64
}

// quietRuns is how many round trips in a row a connection must see no
// other busy before it takes the thread path.
const quietRuns = 16

// threadSlotsEnv, when set to a number, replaces the bound on the
// connections on the thread path (0: none take it), for measuring the
// two paths with one binary; "N:always" makes every connection take it
// at its first round trip while one of N slots is free, busy or not,
// for running the tests on it.
const threadSlotsEnv = "ASOFSQL_WIRE_THREADS"

var envThreadSlots, envThreadAlways = func() (int, bool) {
	v, always := strings.CutSuffix(os.Getenv(threadSlotsEnv), ":always")
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return -1, false
	}
	return n, always
}()

// slots is how many connections may wait on their own thread.
func (p *threadPool) slots() int {
	if n := p.max.Load(); n != 0 {
		return int(max(n, 0))
	}
	if envThreadSlots >= 0 {
		return envThreadSlots
	}
	return runtime.GOMAXPROCS(0) - 1
}

// quiet reports whether no connection but the caller (busy) is busy.
func (p *threadPool) quiet() bool { return p.conns.Load()-p.idle.Load() <= 1 }

// take gives s a slot if one is free; if none is, it asks the holders
// to leave, so that the slot is free at s's next try.
func (p *threadPool) take(s *threadSock) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.holders) < p.slots() {
		p.holders = append(p.holders, s)
		p.held.Store(int64(len(p.holders)))
		return true
	}
	for _, h := range p.holders {
		h.evictReq()
	}
	return false
}

// give takes s's slot back, if it holds one.
func (p *threadPool) give(s *threadSock) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, h := range p.holders {
		if h == s {
			p.holders = append(p.holders[:i], p.holders[i+1:]...)
			p.held.Store(int64(len(p.holders)))
			return
		}
	}
}

// evictAll asks every holder to go back to the poller.
func (p *threadPool) evictAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, h := range p.holders {
		h.evictReq()
	}
}
