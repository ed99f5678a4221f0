package pgwire

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/asofsql/asofsql/sqlerr"
)

// The connection goroutine reads, executes and writes, as a Postgres
// backend does: client messages come from a buffer it fills itself, and
// a pipelined Bind/Describe/Execute/Sync is handled without any other
// goroutine taking part. Only a statement that runs long (watchAfter)
// gets a watcher: a goroutine that reads ahead for it, so that a client
// that hangs up or sends Terminate has that statement cancelled.
//
// The input buffer belongs to one goroutine at a time: the connection's,
// or, while a long statement runs, its watcher's (c.mu hands it over).
// A frame taken from the buffer aliases it until the next one is read:
// the connection goroutine is done with it by then, and a watcher only
// ever writes past the unread bytes, or into a new array.

// inputSize is the input buffer's usual size; a message of this size or
// less is read into it, a larger one into a buffer of its own.
const inputSize = 16 << 10

// maxReadAhead bounds the bytes of client messages read ahead of their
// processing (a watcher reads no further), so a client cannot make the
// server hold unbounded input.
const maxReadAhead = 1 << 20

// watchAfter is how long a statement runs before a watcher reads ahead
// for it: statements shorter than that (a prepared INSERT, SELECT 1)
// cost no goroutine.
const watchAfter = 10 * time.Millisecond

// hangupCheck is how often a watcher held back by the read-ahead limit
// looks whether its client hung up.
const hangupCheck = 250 * time.Millisecond

// input is a connection's buffer of client bytes: buf[r:w] are unread.
type input struct {
	buf  []byte
	r, w int
	// err is the read error that ended the input (EOF, a reset), after
	// the bytes before it.
	err error
}

// Who reads the socket (conn.rstate, under conn.mu), so that another
// goroutine knows whether a read deadline would wake someone and whom.
const (
	rsNone  = iota // nobody: the connection goroutine is busy
	rsWait         // the connection goroutine waits for the client
	rsCopy         // the connection goroutine reads COPY data in a call
	rsWatch        // a watcher reads ahead for a running statement
)

// watcher is the goroutine that reads ahead during a long statement.
type watcher struct {
	stop chan struct{}
	done chan struct{}
}

// complete takes the next message if the buffer holds all of it. A
// header that is bad in itself (a type not in allowed, a bad length) is
// an error at once, before its body is waited for.
func (in *input) complete(limit int, allowed string) (f frame, ok bool, n int, err error) {
	avail := in.w - in.r
	if avail == 0 {
		return frame{}, false, -1, nil
	}
	typ := in.buf[in.r]
	// Like Postgres, judge the type before trusting the length, so
	// garbage is refused at once instead of waiting for a body that
	// never comes.
	if strings.IndexByte(allowed, typ) < 0 {
		return frame{}, false, 0, sqlerr.New(sqlerr.ProtocolViolation, "invalid frontend message type %d", typ)
	}
	if avail < 5 {
		return frame{}, false, -1, nil
	}
	n = int(int32(binary.BigEndian.Uint32(in.buf[in.r+1:]))) - 4
	if n < 0 {
		return frame{}, false, 0, sqlerr.New(sqlerr.ProtocolViolation, "invalid message length")
	}
	if n > limit {
		return frame{}, false, 0, errTooLarge{n, limit}
	}
	if avail < 5+n {
		return frame{}, false, n, nil
	}
	start := in.r + 5
	in.r = start + n
	return frame{typ: typ, body: in.buf[start:in.r:in.r]}, true, n, nil
}

// hasMessage reports whether a whole message (or a bad header) is
// buffered, so that reading the next one will not wait for the client.
func (in *input) hasMessage() bool {
	avail := in.w - in.r
	if avail < 5 {
		return avail > 0 && strings.IndexByte(frontendTypes, in.buf[in.r]) < 0
	}
	n := int(int32(binary.BigEndian.Uint32(in.buf[in.r+1:]))) - 4
	return n < 0 || avail >= 5+n
}

// room makes space for at least need more bytes after the unread ones
// (and a useful read's worth), moving them to the front or into a larger
// buffer. Only the connection goroutine calls it, between messages.
func (in *input) room(need int) {
	if in.r == in.w {
		in.r, in.w = 0, 0
		if len(in.buf) > inputSize {
			in.buf = nil // give back what a watcher grew
		}
	}
	if in.buf == nil {
		in.buf = make([]byte, max(inputSize, need))
		return
	}
	free := len(in.buf) - in.w
	if free >= need && (free >= 512 || in.r == 0) {
		return
	}
	unread := in.w - in.r
	if len(in.buf) >= unread+max(need, 512) {
		copy(in.buf, in.buf[in.r:in.w])
	} else {
		nb := make([]byte, max(unread+need, inputSize))
		copy(nb, in.buf[in.r:in.w])
		in.buf = nb
	}
	in.r, in.w = 0, unread
}

// readMsg returns the next client message, reading from the socket when
// the buffer holds no whole one: the wait is bounded by the idle
// timeouts, and ends at shutdown or when the connection does.
func (c *conn) readMsg() (frame, error) {
	in := &c.in
	var deadline time.Time
	deadlineSet := false
	for {
		f, ok, n, err := in.complete(c.srv.cfg.MaxMessageSize, frontendTypes)
		if err != nil {
			return frame{}, c.inputFailure(err)
		}
		if ok {
			c.ready = false
			return f, nil
		}
		if in.err != nil {
			return frame{}, c.inputFailure(in.err)
		}
		// Whatever was answered goes out before waiting for the client.
		if len(c.w.buf) > 0 {
			if err := c.w.flush(); err != nil {
				return frame{}, err
			}
		}
		if !deadlineSet {
			deadlineSet = true
			if d := c.idleTimeout(); d > 0 {
				deadline = time.Now().Add(d)
			}
		}
		if n+5 > inputSize {
			// A large message gets a buffer of its own, grown as its
			// bytes arrive: a length that is declared but never sent
			// costs nothing.
			return c.readLargeFor(n, nil, deadline)
		}
		in.room(max(5+n-(in.w-in.r), 1))
		m, err := c.waitRead(in.buf[in.w:], nil, deadline)
		in.w += m
		if err != nil {
			return frame{}, err
		}
	}
}

// readLargeFor reads a message of n body bytes, whose header and first bytes
// are buffered, into a buffer of its own.
func (c *conn) readLargeFor(n int, call context.Context, deadline time.Time) (frame, error) {
	in := &c.in
	typ := in.buf[in.r]
	const chunk = 64 << 10
	body := make([]byte, 0, min(n, chunk))
	body = append(body, in.buf[in.r+5:in.w]...)
	in.r, in.w = 0, 0
	for len(body) < n {
		if len(body) == cap(body) {
			body = slices.Grow(body, min(len(body), n-len(body)))
		}
		m, err := c.waitRead(body[len(body):min(cap(body), n)], call, deadline)
		body = body[:len(body)+m]
		if err != nil {
			return frame{}, err
		}
	}
	c.ready = false
	return frame{typ: typ, body: body}, nil
}

// waitRead reads what the client sent next into p, waiting for it. With
// call nil the connection is between statements: the wait ends at
// deadline (the idle timeouts), at shutdown or when the connection ends.
// With call set, a running statement reads COPY data: the wait ends when
// the call is cancelled. A read error that ends the input is kept in
// c.in.err once the bytes before it are returned.
func (c *conn) waitRead(p []byte, call context.Context, deadline time.Time) (int, error) {
	for {
		c.mu.Lock()
		if call == nil {
			if c.ctx.Err() != nil {
				c.mu.Unlock()
				return 0, c.ctxFailure()
			}
			if c.closing() {
				// Shutdown looks at rstate under c.mu after closing:
				// a connection that did not see it here is woken.
				c.mu.Unlock()
				return 0, c.fatal(errAdminShutdown)
			}
			c.rstate = rsWait
		} else if call.Err() != nil {
			c.mu.Unlock()
			return 0, context.Cause(call)
		}
		if !deadline.IsZero() || c.rdl {
			c.raw.SetReadDeadline(deadline)
			c.rdl = !deadline.IsZero()
		}
		c.mu.Unlock()
		c.waiting.Store(true)
		m, err := c.nc.Read(p)
		c.waiting.Store(false)
		if call == nil {
			c.mu.Lock()
			c.rstate = rsNone
			c.mu.Unlock()
		}
		timeout := errors.Is(err, os.ErrDeadlineExceeded)
		if timeout {
			c.rdl = true // whoever set it
		} else if err != nil {
			c.in.err = err
		}
		if m > 0 {
			return m, nil
		}
		switch {
		case err == nil:
			continue
		case !timeout && call != nil:
			return 0, errConnLost
		case !timeout:
			return 0, c.inputFailure(err)
		case call != nil && call.Err() != nil:
			return 0, context.Cause(call)
		case call != nil:
			// A deadline meant for someone else: wait on.
		case c.ctx.Err() != nil:
			return 0, c.ctxFailure()
		case c.closing():
			return 0, c.fatal(errAdminShutdown)
		case !deadline.IsZero() && !time.Now().Before(deadline):
			if c.sess.TxStatus() == 'I' {
				return 0, c.fatal(sqlerr.New(codeIdleSessionTimeout, "terminating connection due to idle-session timeout"))
			}
			return 0, c.fatal(sqlerr.New(codeIdleInTxTimeout, "terminating connection due to idle-in-transaction timeout"))
		}
	}
}

func (c *conn) closing() bool {
	select {
	case <-c.srv.closing:
		return true
	default:
		return false
	}
}

// wakeIfWaiting ends a wait for the client (Shutdown tells idle
// sessions to close); a connection busy with a statement notices at its
// next wait.
func (c *conn) wakeIfWaiting() {
	c.mu.Lock()
	if c.rstate == rsWait {
		c.raw.SetReadDeadline(time.Now())
	}
	c.mu.Unlock()
}

// inputFailure turns a failed read into the connection's end: bad input
// is FATAL 08P01; a client that went away ends it quietly.
func (c *conn) inputFailure(err error) error {
	var tl errTooLarge
	if errors.As(err, &tl) {
		return c.fatal(sqlerr.New(sqlerr.ProtocolViolation, "invalid message length").WithDetail("%s", tl.Error()))
	}
	if e, ok := sqlerr.As(err); ok {
		return c.fatal(e)
	}
	// The socket failed: whatever runs for it is cancelled.
	c.abort(errConnLost)
	return err
}

// watchDelay is watchAfter, or the server's test override of it.
func (c *conn) watchDelay() time.Duration {
	if t := c.srv.watchAfter.Load(); t > 0 {
		return time.Duration(t)
	}
	return watchAfter
}

// armWatchLocked starts the running call's watcher clock (see
// watchAfter); the caller holds c.mu. The clock is not stopped when a
// call ends, nor reset for each call: a timer reset or stopped per
// statement costs every statement (it can wake an idle thread to watch
// the new deadline), so one timer runs while calls come, and when it
// fires startWatch looks how long the call then running has run.
func (c *conn) armWatchLocked() {
	now := time.Now()
	c.callBegan = now
	d := c.watchDelay()
	if c.watchArmed && !c.watchAt.After(now.Add(d)) {
		return // it fires in time for this call (watchAfter changes only in tests)
	}
	c.watchArmed, c.watchAt = true, now.Add(d)
	if c.watchT == nil {
		c.watchT = time.AfterFunc(d, c.startWatch)
		return
	}
	c.watchT.Reset(d)
}

// startWatch hands the input to a watcher, if a call has run for
// watchAfter and nobody reads the socket. A call that began after the
// clock was armed has the clock run on until its own watchAfter; with
// no call running, the next call arms it again.
func (c *conn) startWatch() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watchArmed = false
	if c.call == 0 || c.ctx.Err() != nil {
		return
	}
	if left := c.watchDelay() - time.Since(c.callBegan); left > 0 {
		c.watchArmed, c.watchAt = true, time.Now().Add(left)
		c.watchT.Reset(left)
		return
	}
	if c.rstate != rsNone || c.watch != nil {
		return
	}
	if c.rdl {
		// Left by the last watcher's stop or a COPY's cancellation.
		c.raw.SetReadDeadline(time.Time{})
		c.rdl = false
	}
	w := &watcher{stop: make(chan struct{}), done: make(chan struct{})}
	c.watch, c.rstate = w, rsWatch
	c.srv.watchers.Add(1)
	go c.watchLoop(w)
}

// stopWatchLocked takes the input back from the call's watcher, if it
// has one; the caller holds c.mu and waits for the returned channel
// (nil if there was no watcher) after unlocking.
func (c *conn) stopWatchLocked() chan struct{} {
	w := c.watch
	if w == nil {
		return nil
	}
	c.watch, c.rstate = nil, rsNone
	close(w.stop)
	c.raw.SetReadDeadline(aLongTimeAgo)
	c.rdl = true
	return w.done
}

var aLongTimeAgo = time.Unix(1, 0)

// watchLoop reads ahead for a long statement: a client that hangs up or
// sends Terminate has it cancelled at once (and what it queued before
// Terminate dropped). It reads at most maxReadAhead bytes ahead; held
// back there, it polls the socket for the client's hang-up meanwhile
// (POLLRDHUP, on Linux), so that a client that queued a megabyte of
// statements and hung up does not have them run for nobody.
func (c *conn) watchLoop(w *watcher) {
	defer close(w.done)
	in := &c.in
	scan := in.r // the next message header to look at; -1: garbage seen
	for {
		for scan >= 0 && scan+5 <= in.w {
			typ := in.buf[scan]
			n := int(int32(binary.BigEndian.Uint32(in.buf[scan+1:])))
			if strings.IndexByte(frontendTypes, typ) < 0 || n < 4 {
				scan = -1 // the connection goroutine will refuse it
				break
			}
			if typ == 'X' {
				// Terminate: the client is gone, so whatever runs for
				// it is cancelled rather than finished for nobody.
				c.abort(errTerminated)
				return
			}
			scan += 1 + n
		}
		if in.err != nil {
			return
		}
		if in.w-in.r >= maxReadAhead {
			c.watchHangup(w)
			return
		}
		if in.w == len(in.buf) {
			// Grow into a new array: the message being executed may
			// alias the old one.
			unread := in.w - in.r
			nb := make([]byte, min(max(2*len(in.buf), inputSize), maxReadAhead))
			copy(nb, in.buf[in.r:in.w])
			if scan >= 0 {
				scan -= in.r
			}
			in.buf, in.r, in.w = nb, 0, unread
		}
		m, err := c.nc.Read(in.buf[in.w:min(len(in.buf), in.r+maxReadAhead)])
		in.w += m
		if err != nil {
			select {
			case <-w.stop:
				return
			default:
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				// Not ours (the connection ends): stop reading.
				return
			}
			in.err = err
			// The socket failed or the client closed it: cancel
			// whatever runs for it.
			c.abort(errConnLost)
			return
		}
	}
}

// watchHangup waits, with the read-ahead full, until the watcher is
// stopped or the client hangs up.
func (c *conn) watchHangup(w *watcher) {
	t := time.NewTicker(hangupCheck)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			if peerClosed(c.raw) {
				c.abort(errConnLost)
				return
			}
		}
	}
}

// ownInput takes the input for a call that reads client messages itself
// (COPY FROM STDIN): its watcher stops and none starts; the returned
// function gives it back.
func (c *conn) ownInput() func() {
	c.mu.Lock()
	watched := c.stopWatchLocked()
	c.rstate = rsCopy
	c.mu.Unlock()
	if watched != nil {
		<-watched
	}
	return func() {
		c.mu.Lock()
		c.rstate = rsNone
		c.rdl = true // a cancellation may have woken the read
		c.mu.Unlock()
	}
}

// readCopyMsg returns the next client message during COPY FROM STDIN;
// the wait ends when the call is cancelled. A message too large for the
// input buffer is read into reuse's array when it is large enough; own
// says the body is in an array of its own (not the input buffer), which
// the caller may pass as reuse once done with it.
func (c *conn) readCopyMsg(call context.Context, reuse []byte) (f frame, own bool, err error) {
	in := &c.in
	for {
		f, ok, n, err := in.complete(c.srv.cfg.MaxMessageSize, frontendTypes)
		if err != nil {
			// The COPY fails; the main loop meets the bad header next
			// and ends the connection with it.
			return frame{}, false, errConnLost
		}
		if ok {
			if f.typ == 'X' {
				// Terminate: the client is gone; nothing of the COPY
				// is kept.
				c.abort(errTerminated)
				return frame{}, false, context.Cause(call)
			}
			return f, false, nil
		}
		if in.err != nil {
			return frame{}, false, errConnLost
		}
		if len(c.w.buf) > 0 {
			if err := c.w.flush(); err != nil {
				return frame{}, false, err
			}
		}
		if n+5 > inputSize {
			f, err := c.readLargeCopy(n, call, reuse)
			return f, err == nil, err
		}
		in.room(max(5+n-(in.w-in.r), 1))
		m, err := c.waitRead(in.buf[in.w:], call, time.Time{})
		in.w += m
		if err != nil {
			return frame{}, false, err
		}
	}
}
