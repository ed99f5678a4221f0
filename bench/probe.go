package main

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Measure is what one timed run cost.
type Measure struct {
	Elapsed time.Duration
	// CPU is the user+system CPU time of the whole process during the run
	// (every thread: DuckDB's workers, asofsql's goroutines, Go's GC). On
	// a shared machine it moves less with load than Elapsed does.
	CPU time.Duration
	// PeakRSS is the growth of the process's peak resident set during the
	// run over its resident set at the start, in bytes; -1 when the run did
	// not measure it (see MeasureRSS) or the kernel does not let us reset
	// the peak (/proc/self/clear_refs).
	PeakRSS int64
	// PeakArrow is the peak of Arrow memory the engine allocated through
	// the probe's allocator during the run, or -1 when the engine does not
	// allocate through it (DuckDB).
	PeakArrow int64
}

// Probe times one run and measures its memory. Both engines live in one
// process, so peak RSS is measured per run: for a run after MeasureRSS,
// Begin collects Go garbage, returns freed pages to the OS and resets the
// kernel's high-water mark (VmHWM) to the current RSS; End reads the mark.
// The delta is the memory the run itself made resident (including its
// materialised result).
type Probe struct {
	alloc    *TrackingAllocator
	start    time.Time
	rss0     int64
	live0    int64
	cpu0     time.Duration
	resetOK  bool
	wantRSS  bool
	tracking bool
}

// NewProbe returns a probe whose allocator wraps mem.
func NewProbe(mem memory.Allocator) *Probe { return &Probe{alloc: NewTrackingAllocator(mem)} }

// Allocator is the allocator an engine should give the code it times;
// calling it during a run makes End report PeakArrow.
func (p *Probe) Allocator() memory.Allocator {
	p.tracking = true
	return p.alloc
}

// Tracker is the probe's counting allocator, for a component that
// allocates outside the timed runs too (a database holding its tables):
// give it Tracker, and call Allocator in each run to report PeakArrow.
func (p *Probe) Tracker() memory.Allocator { return p.alloc }

// MeasureRSS makes the next Begin/End pair measure peak RSS. It is for an
// untimed warm-up run only: it returns the Go heap's free pages to the OS,
// and the page faults that follow would make a timed Go run pay a cost
// that DuckDB, whose allocator keeps its pages, does not.
func (p *Probe) MeasureRSS() { p.wantRSS = true }

// Begin starts a measurement; nothing the caller does before it is timed.
// Every run starts from a collected Go heap, so one run's garbage is not
// the next one's work.
func (p *Probe) Begin() {
	runtime.GC()
	p.resetOK = false
	if p.wantRSS {
		debug.FreeOSMemory()
		p.resetOK = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
		p.rss0 = procStatus("VmRSS")
	}
	p.alloc.ResetPeak()
	p.live0 = p.alloc.Live()
	p.cpu0 = cpuTime()
	p.start = time.Now()
}

// End finishes the measurement started by Begin.
func (p *Probe) End() Measure {
	m := Measure{Elapsed: time.Since(p.start), PeakRSS: -1, PeakArrow: -1}
	m.CPU = cpuTime() - p.cpu0
	if p.resetOK {
		if hwm := procStatus("VmHWM"); hwm >= 0 && p.rss0 >= 0 {
			m.PeakRSS = max(0, hwm-p.rss0)
		}
	}
	if p.tracking {
		m.PeakArrow = p.alloc.Peak() - p.live0
	}
	p.tracking, p.wantRSS, p.resetOK = false, false, false
	return m
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procStatus reads a "kB" field of /proc/self/status in bytes, or -1.
func procStatus(field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	prefix := []byte(field + ":")
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, prefix) {
			continue
		}
		f := bytes.Fields(line[len(prefix):])
		if len(f) == 0 {
			return -1
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return -1
		}
		return kb << 10
	}
	return -1
}

// TrackingAllocator counts the bytes live through it and their peak. It
// costs two atomic operations per allocation, which an Arrow batch of
// thousands of rows amortises.
type TrackingAllocator struct {
	mem        memory.Allocator
	live, peak atomic.Int64
}

// NewTrackingAllocator wraps mem.
func NewTrackingAllocator(mem memory.Allocator) *TrackingAllocator {
	return &TrackingAllocator{mem: mem}
}

func (a *TrackingAllocator) add(n int64) {
	v := a.live.Add(n)
	for {
		p := a.peak.Load()
		if v <= p || a.peak.CompareAndSwap(p, v) {
			return
		}
	}
}

func (a *TrackingAllocator) Allocate(size int) []byte {
	b := a.mem.Allocate(size)
	a.add(int64(len(b)))
	return b
}

func (a *TrackingAllocator) Reallocate(size int, b []byte) []byte {
	old := len(b)
	nb := a.mem.Reallocate(size, b)
	a.add(int64(len(nb) - old))
	return nb
}

func (a *TrackingAllocator) Free(b []byte) {
	a.add(-int64(len(b)))
	a.mem.Free(b)
}

// Live is the number of bytes currently allocated.
func (a *TrackingAllocator) Live() int64 { return a.live.Load() }

// Peak is the highest Live since the last ResetPeak.
func (a *TrackingAllocator) Peak() int64 { return a.peak.Load() }

// ResetPeak makes the current live bytes the new peak.
func (a *TrackingAllocator) ResetPeak() { a.peak.Store(a.live.Load()) }
