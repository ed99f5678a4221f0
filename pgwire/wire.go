package pgwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/asofsql/asofsql/sqlerr"
)

// Startup-packet codes (the first int32 after the length).
const (
	codeSSLRequest    = 80877103
	codeGSSEncRequest = 80877104
	codeCancelRequest = 80877102
	maxStartupPacket  = 10000 // MAX_STARTUP_PACKET_LENGTH in Postgres
)

// readStartup reads one length-prefixed startup packet and decodes it
// with pgproto3's message types.
func readStartup(r io.Reader) (pgproto3.FrontendMessage, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(int32(binary.BigEndian.Uint32(hdr[:]))) - 4
	if n < 4 || n > maxStartupPacket {
		return nil, sqlerr.New(sqlerr.ProtocolViolation, "invalid length of startup packet")
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, sqlerr.New(sqlerr.ProtocolViolation, "incomplete startup packet")
	}
	var msg pgproto3.FrontendMessage
	switch code := binary.BigEndian.Uint32(body); code {
	case codeSSLRequest:
		msg = &pgproto3.SSLRequest{}
	case codeGSSEncRequest:
		msg = &pgproto3.GSSEncRequest{}
	case codeCancelRequest:
		msg = &pgproto3.CancelRequest{}
	case pgproto3.ProtocolVersion30, pgproto3.ProtocolVersion32:
		msg = &pgproto3.StartupMessage{}
	default:
		if code>>16 == 3 {
			// A future 3.x minor: accept and negotiate down, as Postgres
			// does; pgproto3 only decodes 3.0 and 3.2.
			binary.BigEndian.PutUint32(body, pgproto3.ProtocolVersion32)
			m := &pgproto3.StartupMessage{}
			if err := m.Decode(body); err != nil {
				return nil, sqlerr.New(sqlerr.ProtocolViolation, "invalid startup packet layout: expected terminator as last byte")
			}
			m.ProtocolVersion = code
			return m, nil
		}
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "unsupported frontend protocol %d.%d: server supports 3.0 to 3.0", code>>16, code&0xffff)
	}
	if err := msg.Decode(body); err != nil {
		if _, ok := msg.(*pgproto3.StartupMessage); ok {
			// Postgres' wording: the parameter list must end in a NUL.
			return nil, sqlerr.New(sqlerr.ProtocolViolation, "invalid startup packet layout: expected terminator as last byte")
		}
		return nil, sqlerr.New(sqlerr.ProtocolViolation, "invalid startup packet layout")
	}
	return msg, nil
}

// frame is one regular (typed) client message. Its body aliases the
// connection's input buffer (input.go) until the next message is read.
type frame struct {
	typ  byte
	body []byte
}

// errTooLarge reports a message over MaxMessageSize.
type errTooLarge struct{ size, limit int }

func (e errTooLarge) Error() string {
	return fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes", e.size, e.limit)
}

// Message types a client may send after startup (frontendTypes) and
// during authentication (authTypes).
const (
	frontendTypes = "QPBDECHSXdcfF"
	authTypes     = "p"
)

// readFrame reads one typed message, of one of the types in allowed and
// at most limit body bytes.
func readFrame(r io.Reader, limit int, allowed string) (frame, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:1]); err != nil {
		return frame{}, err
	}
	// Like Postgres, judge the type before trusting the length, so garbage
	// is refused at once instead of waiting for a body that never comes.
	if strings.IndexByte(allowed, hdr[0]) < 0 {
		return frame{}, sqlerr.New(sqlerr.ProtocolViolation, "invalid frontend message type %d", hdr[0])
	}
	if _, err := io.ReadFull(r, hdr[1:]); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return frame{}, err
	}
	n := int(int32(binary.BigEndian.Uint32(hdr[1:]))) - 4
	if n < 0 {
		return frame{}, sqlerr.New(sqlerr.ProtocolViolation, "invalid message length")
	}
	if n > limit {
		return frame{}, errTooLarge{n, limit}
	}
	body, err := readBody(r, n)
	if err != nil {
		return frame{}, err
	}
	return frame{typ: hdr[0], body: body}, nil
}

// readBody reads a message body of n bytes. A large one is read into a
// buffer that grows as the bytes arrive, so that a length the client
// declares but never sends (up to MaxMessageSize, per connection) costs
// the server nothing.
func readBody(r io.Reader, n int) ([]byte, error) {
	const chunk = 64 << 10
	body := make([]byte, 0, min(n, chunk))
	for len(body) < n {
		if len(body) == cap(body) {
			body = slices.Grow(body, min(len(body), n-len(body)))
		}
		m, err := r.Read(body[len(body):min(cap(body), n)])
		body = body[:len(body)+m]
		if err != nil && len(body) < n {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	return body, nil
}

// writer buffers backend messages. Postgres flushes at ReadyForQuery, at
// Flush and when its buffer fills; so do we, which is what makes a slow
// client slow down a streaming query.
type writer struct {
	nc  net.Conn
	buf []byte
	err error
	// out, while a result's rows are sent, is its account for the bytes
	// queued in buf; charged is what it holds of them.
	out     OutputMemory
	charged int64
	exact   bool // charge rows one by one, not by the chunk
}

// outputChunk is the least the writer charges a result's account at a
// time, so that small rows cost one charge per flush, not one per row.
const outputChunk = 64 << 10

// reserve charges the result's account so that it covers n more bytes
// beyond the buffer's (53200 when they do not fit).
func (w *writer) reserve(n int64) error {
	need := int64(len(w.buf)) + n - w.charged
	if w.out == nil || need <= 0 {
		return nil
	}
	if !w.exact {
		if err := w.out.ChargeOutput(max(need, outputChunk)); err == nil {
			w.charged += max(need, outputChunk)
			return nil
		}
		// A chunk does not fit (a limit of a few kB, or a query near
		// its limit): charge exactly what each row needs from now on.
		w.exact = true
	}
	if err := w.out.ChargeOutput(need); err != nil {
		return err
	}
	w.charged += need
	return nil
}

// release returns the account's charge: the buffer was written, or the
// result's rows are done.
func (w *writer) release() {
	if w.out != nil && w.charged > 0 {
		w.out.ChargeOutput(-w.charged)
	}
	w.charged = 0
}

const flushThreshold = 32 << 10

func (w *writer) send(m pgproto3.BackendMessage) {
	if w.err != nil {
		return
	}
	b, err := m.Encode(w.buf)
	if err != nil {
		w.err = err
		return
	}
	w.buf = b
}

// maybeFlush writes the buffer once it is large.
func (w *writer) maybeFlush() error {
	if len(w.buf) >= flushThreshold {
		return w.flush()
	}
	return w.err
}

func (w *writer) flush() error {
	if w.err != nil {
		return w.err
	}
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.nc.Write(w.buf)
	w.release()
	if cap(w.buf) > 4*flushThreshold {
		w.buf = nil
	} else {
		w.buf = w.buf[:0]
	}
	if err != nil {
		w.err = err
	}
	return err
}

// beginMsg starts a message of type t and returns the offset of its length
// field, which endMsg fills in.
func (w *writer) beginMsg(t byte) int {
	w.buf = append(w.buf, t, 0, 0, 0, 0)
	return len(w.buf) - 4
}

func (w *writer) endMsg(at int) {
	binary.BigEndian.PutUint32(w.buf[at:], uint32(len(w.buf)-at))
}
