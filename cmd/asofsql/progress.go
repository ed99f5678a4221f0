package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// progress reports how far a load has got: on a terminal, one status line
// with a bar, redrawn in place at most every tick; elsewhere (a log, a
// pipe) a plain line every interval. update is called by the loader after
// each batch, on the loader's goroutine.
type progress struct {
	w     io.Writer
	tty   bool
	width int           // terminal columns (tty)
	every time.Duration // minimum time between two outputs
	label string        // the table, naming the load in the output
	// total is how much work the load is (the file size in bytes for CSV,
	// its rows for Parquet); done reports how much of it is done when
	// rows rows are loaded. total 0 means unknown: no percentage, no ETA.
	total int64
	done  func(rows int64) int64
	now   func() time.Time

	start, last time.Time
	shown       bool // something was printed since start
	drawn       bool // a status line is on the terminal, not yet cleared
}

// barTick is the redraw interval on a terminal: fast enough to look
// alive, slow enough to cost nothing.
const barTick = 200 * time.Millisecond

// barTail is the room kept for the numbers after the bar.
const barTail = 44

func newProgress(w io.Writer, tty bool, width int, every time.Duration, label string, total int64, done func(int64) int64) *progress {
	p := &progress{w: w, tty: tty, width: width, every: every, label: label, total: total, done: done, now: time.Now}
	if tty {
		p.every = barTick
		if p.width <= 0 {
			p.width = 80
		}
	}
	p.start = p.now()
	p.last = p.start
	return p
}

// update reports rows loaded so far; it prints if the interval has passed.
func (p *progress) update(rows int64) {
	now := p.now()
	if p.shown && now.Sub(p.last) < p.every || !p.shown && now.Sub(p.start) < p.every {
		return
	}
	p.last, p.shown = now, true
	p.print(rows, now, "")
}

// committing reports that every row is read and the transaction commits.
func (p *progress) committing(rows int64) {
	now := p.now()
	p.shown = true
	p.print(rows, now, "committing")
}

// clear removes the status line from the terminal, so what follows
// (the summary, an error) starts on a clean line.
func (p *progress) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

func (p *progress) print(rows int64, now time.Time, state string) {
	elapsed := now.Sub(p.start)
	frac := -1.0
	if p.total > 0 {
		frac = math.Min(1, float64(p.done(rows))/float64(p.total))
	}
	rate := 0.0
	if elapsed > 0 {
		rate = float64(rows) / elapsed.Seconds()
	}
	eta := time.Duration(-1)
	if frac > 0 && elapsed > 0 {
		eta = time.Duration(float64(elapsed) * (1 - frac) / frac)
	}
	if state != "" {
		frac, eta = 1, -1
	}
	if p.tty {
		p.drawBar(rows, frac, rate, eta, state)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "asofsql import: %s: %s rows", p.label, commas(rows))
	if frac >= 0 {
		fmt.Fprintf(&b, ", %d%%", int(frac*100))
	}
	fmt.Fprintf(&b, ", %s rows/s", commas(int64(rate)))
	if eta >= 0 {
		fmt.Fprintf(&b, ", ETA %s", eta.Round(time.Second))
	}
	if state != "" {
		b.WriteString(", " + state)
	}
	b.WriteByte('\n')
	io.WriteString(p.w, b.String())
}

// drawBar redraws the status line: label, bar, percentage, rows, rows/s
// and ETA (or state), fitted to the terminal width.
func (p *progress) drawBar(rows int64, frac, rate float64, eta time.Duration, state string) {
	tail := fmt.Sprintf(" %s rows  %s rows/s", commas(rows), compact(rate))
	switch {
	case state != "":
		tail += "  " + state
	case eta >= 0:
		tail += "  ETA " + clock(eta)
	}
	head := p.label + " "
	line := head + tail
	if frac >= 0 {
		pct := fmt.Sprintf(" %3d%%", int(frac*100))
		// The bar takes what is left of the line once a typical tail is
		// reserved (so its width does not jump as the numbers grow),
		// between 10 and 40 cells.
		n := p.width - 1 - len(head) - len(pct) - 2 - barTail
		if n > 40 {
			n = 40
		}
		if n >= 10 {
			fill := int(frac * float64(n))
			bar := strings.Repeat("=", fill)
			if fill < n {
				bar += ">" + strings.Repeat(" ", n-fill-1)
			}
			line = head + "[" + bar + "]" + pct + tail
		} else {
			line = head + strings.TrimLeft(pct, " ") + tail
		}
	}
	if len(line) > p.width-1 {
		line = line[:p.width-1]
	}
	fmt.Fprint(p.w, "\r"+line+"\x1b[K")
	p.drawn = true
}

// commas writes n with thousands separators: 1,234,567.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// compact writes a rate in three significant digits: 812, 81.2k, 1.23M.
func compact(v float64) string {
	switch {
	case v >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', digits(v/1e9), 64) + "G"
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', digits(v/1e6), 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', digits(v/1e3), 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func digits(v float64) int {
	switch {
	case v >= 100:
		return 0
	case v >= 10:
		return 1
	}
	return 2
}

// clock writes a duration as m:ss or h:mm:ss.
func clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
