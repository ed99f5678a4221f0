package pgwire_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/pgwire/internal/memengine"
)

// memListener hands the server the in-memory connections it is given.
type memListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error   { l.once.Do(func() { close(l.closed) }); return nil }
func (l *memListener) Addr() net.Addr { return &net.UnixAddr{Name: "fuzz", Net: "unix"} }

// fuzzConn is the server's end of a connection whose client has sent
// input and nothing more: a read past it waits (the client is silent)
// until the client hangs up (EOF) or a deadline passes. Everything the
// server writes is counted and dropped.
type fuzzConn struct {
	mu       sync.Mutex
	cond     sync.Cond
	input    []byte
	hungUp   bool // the client closed: reads past the input are EOF
	closed   bool // the server closed
	starved  bool // a read found nothing left to read
	deadline time.Time
	timer    *time.Timer
	written  int
	out      []byte // the first maxTranscript bytes written
}

const maxTranscript = 1 << 20

// internalErrors decodes the server's replies and returns the XX000
// errors among them: no input may provoke an internal error (a panic
// recovered as FATAL XX000 included).
func (c *fuzzConn) internalErrors() []string {
	c.mu.Lock()
	out := c.out
	c.mu.Unlock()
	// Before startup the server answers SSLRequest and GSSENCRequest with
	// a lone 'N' (no TLS here); messages follow ('R', 'E', 'v').
	for len(out) > 0 && out[0] == 'N' && (len(out) == 1 || strings.IndexByte("NREv", out[1]) >= 0) {
		out = out[1:]
	}
	fe := pgproto3.NewFrontend(bytes.NewReader(out), io.Discard)
	var bad []string
	for {
		m, err := fe.Receive()
		if err != nil {
			return bad
		}
		if e, ok := m.(*pgproto3.ErrorResponse); ok && e.Code == "XX000" {
			bad = append(bad, e.Severity+" "+e.Message)
		}
	}
}

func newFuzzConn(input []byte) *fuzzConn {
	c := &fuzzConn{input: input}
	c.cond.L = &c.mu
	return c
}

func (c *fuzzConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		switch {
		case c.closed:
			return 0, net.ErrClosed
		case len(c.input) > 0:
			n := copy(p, c.input)
			c.input = c.input[n:]
			return n, nil
		case c.hungUp:
			return 0, io.EOF
		case !c.deadline.IsZero() && !time.Now().Before(c.deadline):
			return 0, os.ErrDeadlineExceeded
		}
		c.starved = true
		c.cond.Wait()
	}
}

func (c *fuzzConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	c.written += len(p)
	if len(c.out) < maxTranscript {
		c.out = append(c.out, p[:min(len(p), maxTranscript-len(c.out))]...)
	}
	return len(p), nil
}

func (c *fuzzConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.cond.Broadcast()
	return nil
}

// hangUp is the client closing its end.
func (c *fuzzConn) hangUp() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hungUp = true
	c.cond.Broadcast()
}

func (c *fuzzConn) isStarved() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.starved && len(c.input) == 0
}

func (c *fuzzConn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

func (c *fuzzConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
	if c.timer != nil {
		c.timer.Stop()
	}
	if !t.IsZero() {
		c.timer = time.AfterFunc(time.Until(t), func() {
			c.mu.Lock()
			c.cond.Broadcast()
			c.mu.Unlock()
		})
	}
	c.cond.Broadcast()
	return nil
}

func (c *fuzzConn) SetDeadline(t time.Time) error    { return c.SetReadDeadline(t) }
func (c *fuzzConn) SetWriteDeadline(time.Time) error { return nil }
func (c *fuzzConn) LocalAddr() net.Addr              { return &net.UnixAddr{Name: "fuzz", Net: "unix"} }
func (c *fuzzConn) RemoteAddr() net.Addr             { return &net.UnixAddr{Name: "fuzz-client", Net: "unix"} }

var _ net.Conn = (*fuzzConn)(nil)

// startupBytes is a valid startup message, which the "after startup"
// inputs are sent behind.
func startupBytes() []byte {
	b, err := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
		Parameters: map[string]string{"user": "fuzz", "database": "asofsql"}}).Encode(nil)
	if err != nil {
		panic(err)
	}
	return b
}

// fuzzWire feeds one input to a fresh server over the test engine and
// checks that the server deals with it, ends the connection when the
// client hangs up and stops with no goroutine left and no Arrow memory
// held. A server that neither finishes with the input nor waits for more
// within the guard has hung.
func fuzzWire(t *testing.T, input []byte) {
	before := runtime.NumGoroutine()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	eng := memengine.New(mem)
	if err := eng.AddTable("t", tSchema(), tBatch(mem)); err != nil {
		t.Fatal(err)
	}
	srv, err := pgwire.NewServer(pgwire.Config{
		Engine: eng, Allocator: mem,
		// Bounds for what valid input may ask for: long statements
		// (generate_series, pg_sleep), huge messages, a stalled startup.
		StatementTimeout: time.Second, MaxMessageSize: 1 << 20, AuthTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	l := newMemListener()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	stack := func() string {
		buf := make([]byte, 1<<20)
		return string(buf[:runtime.Stack(buf, true)])
	}
	c := newFuzzConn(input)
	l.conns <- c
	guard := time.Now().Add(20 * time.Second)
	for !(c.isClosed() || c.isStarved() && pgwire.Quiet(srv)) {
		if time.Now().After(guard) {
			t.Fatalf("the server neither finished with %d bytes of input nor waited for more\n%s", len(input), stack())
		}
		time.Sleep(100 * time.Microsecond)
	}
	if bad := c.internalErrors(); len(bad) > 0 {
		t.Fatalf("internal errors: %v", bad)
	}
	c.hangUp()
	for srv.ConnCount() > 0 {
		if time.Now().After(guard) {
			t.Fatalf("the connection did not end after the client hung up\n%s", stack())
		}
		time.Sleep(100 * time.Microsecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v\n%s", err, stack())
	}
	<-served
	eng.Release()
	if n := mem.CurrentAlloc(); n != 0 {
		t.Fatalf("%d bytes of Arrow memory held after the server stopped", n)
	}
	for runtime.NumGoroutine() > before {
		if time.Now().After(guard) {
			t.Fatalf("goroutines leaked: %d before, %d after\n%s", before, runtime.NumGoroutine(), stack())
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// msg frames a typed message.
func msg(typ byte, body ...[]byte) []byte {
	n := 4
	for _, b := range body {
		n += len(b)
	}
	out := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(out[1:], uint32(n))
	for _, b := range body {
		out = append(out, b...)
	}
	return out
}

func cstr(s string) []byte { return append([]byte(s), 0) }

func encode(msgs ...pgproto3.FrontendMessage) []byte {
	var out []byte
	for _, m := range msgs {
		var err error
		if out, err = m.Encode(out); err != nil {
			panic(err)
		}
	}
	return out
}

// FuzzWire feeds arbitrary bytes to the server's connection state
// machine: the first byte picks whether they follow a valid startup
// message (even) or are the whole conversation (odd, so the startup
// packet, SSLRequest and CancelRequest are fuzzed too). Nothing may
// panic, hang, leak a goroutine or hold Arrow memory after the client
// hangs up.
func FuzzWire(f *testing.F) {
	seeds := [][]byte{
		encode(&pgproto3.Query{String: "select 1"}),
		encode(&pgproto3.Query{String: "select * from t; select $1"}),
		encode(&pgproto3.Query{String: "begin"}, &pgproto3.Query{String: "select fail('x')"}, &pgproto3.Query{String: "commit"}),
		encode(&pgproto3.Parse{Name: "s", Query: "select $1::int4"}, &pgproto3.Bind{PreparedStatement: "s", Parameters: [][]byte{[]byte("42")}},
			&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{MaxRows: 1}, &pgproto3.Sync{}),
		encode(&pgproto3.Parse{Query: "select * from t"}, &pgproto3.Bind{ResultFormatCodes: []int16{1}}, &pgproto3.Execute{MaxRows: 2},
			&pgproto3.Execute{}, &pgproto3.Close{ObjectType: 'P'}, &pgproto3.Flush{}, &pgproto3.Sync{}),
		encode(&pgproto3.Bind{PreparedStatement: "nope"}, &pgproto3.Execute{}, &pgproto3.Sync{}),
		encode(&pgproto3.Query{String: "copy t from stdin"}, &pgproto3.CopyData{Data: []byte("4\td\t1.00\t2024-01-01 00:00:00+00\n")}, &pgproto3.CopyDone{}),
		encode(&pgproto3.Query{String: "copy t from stdin (format binary)"}, &pgproto3.CopyData{Data: []byte("PGCOPY\n\xff\r\n\x00garbage")}, &pgproto3.CopyFail{Message: "no"}),
		encode(&pgproto3.Query{String: "copy t to stdout"}),
		encode(&pgproto3.Query{String: "select pg_sleep(0.01)"}, &pgproto3.Terminate{}),
		msg('Q', []byte("no terminator")),
		msg('B', []byte{0, 0, 0, 1, 0, 1, 0, 0, 0, 5}),
		msg('D', []byte{'X', 0}),
		msg('F'),
		{'Q', 0x7f, 0xff, 0xff, 0xff},
		{'Q', 0, 0, 0, 2},
		{'@', 0, 0, 0, 4},
		msg('d', []byte("stray copy data")),
	}
	for _, s := range seeds {
		f.Add(append([]byte{0}, s...))
	}
	f.Add(append([]byte{1}, startupBytes()...))
	f.Add(append([]byte{1}, 0, 0, 0, 8, 4, 210, 22, 47))                          // SSLRequest
	f.Add(append([]byte{1}, 0, 0, 0, 16, 4, 210, 22, 46, 0, 0, 0, 1, 1, 2, 3, 4)) // CancelRequest
	f.Add(append([]byte{1}, 0, 0, 0, 8, 4, 210, 22, 48))                          // GSSENCRequest
	f.Add(append([]byte{1}, 0, 0, 0, 9, 0, 3, 0, 2, 0))                           // protocol 3.2, no parameters
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		input := data[1:]
		if data[0]&1 == 0 {
			input = append(startupBytes(), input...)
		}
		fuzzWire(t, input)
	})
}
