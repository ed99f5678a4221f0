package pgwire

import (
	"context"
	"io"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/asofsql/asofsql/sqlerr"
)

func copyFormats(f CopyFormat) (byte, []uint16) {
	var code uint16
	if f.Binary {
		code = 1
	}
	cols := make([]uint16, f.Columns)
	for i := range cols {
		cols[i] = code
	}
	return byte(code), cols
}

// copyIn runs COPY FROM STDIN: CopyInResponse, then the engine reads the
// CopyData payloads as one stream.
func (c *conn) copyIn(ctx context.Context, r CopyInResult, p *portal) error {
	overall, cols := copyFormats(r.CopyInFormat())
	c.w.send(&pgproto3.CopyInResponse{OverallFormat: overall, ColumnFormatCodes: cols})
	if err := c.w.flush(); err != nil {
		return err
	}
	defer c.ownInput()()
	cr := &copyReader{c: c, ctx: ctx}
	if err := r.CopyIn(ctx, cr); err != nil {
		if cr.err != nil {
			return cr.err
		}
		// Whatever the client still sends (CopyData, CopyDone) is dropped
		// by the main loop, as Postgres does.
		return err
	}
	// The engine may stop before the end marker (text "\."); the rest of
	// the stream up to CopyDone belongs to this COPY.
	var buf [4096]byte
	for !cr.finished {
		if _, err := cr.Read(buf[:]); err != nil && err != io.EOF {
			return err
		}
	}
	p.done = true
	c.w.send(&pgproto3.CommandComplete{CommandTag: []byte(r.Tag(0))})
	return nil
}

// copyReader turns CopyData messages into a byte stream ending at CopyDone.
type copyReader struct {
	c        *conn
	ctx      context.Context
	cur      []byte
	finished bool
	err      error
	// big is the array of the last CopyData too large for the input
	// buffer (clients send 64 KiB ones), read into again by the next.
	big []byte
}

// maxCopyReuse bounds the CopyData buffer a COPY keeps between messages.
const maxCopyReuse = 1 << 20

// readLargeCopy is readLargeFor for COPY data: the body goes into buf's
// array (the last message's, consumed by now) when it has room for it,
// else into a new one grown as the bytes arrive.
func (c *conn) readLargeCopy(n int, call context.Context, buf []byte) (frame, error) {
	in := &c.in
	typ := in.buf[in.r]
	const chunk = 64 << 10
	body := buf[:0]
	if cap(body) < n {
		body = make([]byte, 0, min(n, chunk))
	}
	body = append(body, in.buf[in.r+5:in.w]...)
	in.r, in.w = 0, 0
	for len(body) < n {
		if len(body) == cap(body) {
			body = slices.Grow(body, min(len(body), n-len(body)))
		}
		m, err := c.waitRead(body[len(body):min(cap(body), n)], call, time.Time{})
		body = body[:len(body)+m]
		if err != nil {
			return frame{}, err
		}
	}
	c.ready = false
	return frame{typ: typ, body: body}, nil
}

func (cr *copyReader) Read(p []byte) (int, error) {
	for len(cr.cur) == 0 {
		if cr.err != nil {
			return 0, cr.err
		}
		if cr.finished {
			return 0, io.EOF
		}
		f, own, err := cr.c.readCopyMsg(cr.ctx, cr.big)
		if err != nil {
			if cr.ctx.Err() != nil {
				// Cancelled: the error is the call's, not the stream's.
				return 0, err
			}
			cr.err = err
			return 0, err
		}
		switch f.typ {
		case 'd':
			cr.cur = f.body
			if own && cap(f.body) <= maxCopyReuse {
				cr.big = f.body[:0]
			}
		case 'c':
			cr.finished = true
		case 'f':
			var m pgproto3.CopyFail
			_ = m.Decode(f.body)
			cr.finished = true
			cr.err = sqlerr.New(sqlerr.QueryCanceled, "COPY from stdin failed: %s", m.Message)
		case 'H', 'S':
			// Ignored during COPY IN, per the protocol.
		default:
			cr.err = sqlerr.New(sqlerr.ProtocolViolation, "unexpected message type 0x%02X during COPY from stdin", f.typ)
		}
	}
	n := copy(p, cr.cur)
	cr.cur = cr.cur[n:]
	return n, nil
}

// copyOut runs COPY TO STDOUT: every Write of the engine becomes CopyData.
func (c *conn) copyOut(ctx context.Context, r CopyOutResult, p *portal) error {
	overall, cols := copyFormats(r.CopyOutFormat())
	c.w.send(&pgproto3.CopyOutResponse{OverallFormat: overall, ColumnFormatCodes: cols})
	if err := r.CopyOut(ctx, copyWriter{c}); err != nil {
		return err
	}
	c.w.send(&pgproto3.CopyDone{})
	p.done = true
	c.w.send(&pgproto3.CommandComplete{CommandTag: []byte(r.Tag(0))})
	return nil
}

type copyWriter struct{ c *conn }

func (w copyWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		chunk := p[:min(len(p), 1<<20)]
		w.c.w.send(&pgproto3.CopyData{Data: chunk})
		if err := w.c.w.maybeFlush(); err != nil {
			return n, err
		}
		n += len(chunk)
		p = p[len(chunk):]
	}
	return n, nil
}
