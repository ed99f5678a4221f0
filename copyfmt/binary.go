package copyfmt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// binarySignature starts every binary COPY stream.
var binarySignature = []byte("PGCOPY\n\xff\r\n\x00")

// binaryOIDsFlag is header flag bit 16: each tuple carries an OID.
const binaryOIDsFlag = 1 << 16

// readFull reads exactly len(p) bytes; running out is 22P04 like
// PostgreSQL's "unexpected EOF in COPY data".
func (rd *Reader) readFull(p []byte) error {
	if _, err := io.ReadFull(rd.in, p); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return rd.binErr(sqlerr.BadCopyFileFormat, "unexpected EOF in COPY data")
		}
		return sqlerr.Wrap(err, sqlerr.IOError, "could not read COPY data: %v", err)
	}
	return nil
}

func (rd *Reader) binErr(code, format string, args ...any) error {
	return sqlerr.New(code, format, args...).WithDetail("COPY %s, line %d", rd.opts.Table, max(rd.rowLine, 1))
}

// binaryHeader checks the signature, flags and header extension.
func (rd *Reader) binaryHeader() error {
	var hdr [19]byte
	if _, err := io.ReadFull(rd.in, hdr[:len(binarySignature)]); err != nil || !bytes.Equal(hdr[:len(binarySignature)], binarySignature) {
		return sqlerr.New(sqlerr.BadCopyFileFormat, "COPY file signature not recognized")
	}
	if _, err := io.ReadFull(rd.in, hdr[11:15]); err != nil {
		return sqlerr.New(sqlerr.BadCopyFileFormat, "invalid COPY file header (missing flags)")
	}
	flags := binary.BigEndian.Uint32(hdr[11:15])
	if flags&binaryOIDsFlag != 0 {
		return sqlerr.New(sqlerr.BadCopyFileFormat, "COPY file with OIDs is not supported")
	}
	if flags>>17 != 0 {
		return sqlerr.New(sqlerr.BadCopyFileFormat, "unrecognized critical flags in COPY file header")
	}
	if _, err := io.ReadFull(rd.in, hdr[15:19]); err != nil {
		return sqlerr.New(sqlerr.BadCopyFileFormat, "invalid COPY file header (missing length)")
	}
	ext := int64(int32(binary.BigEndian.Uint32(hdr[15:19])))
	if ext < 0 {
		return sqlerr.New(sqlerr.BadCopyFileFormat, "invalid COPY file header (wrong length)")
	}
	if n, err := io.CopyN(io.Discard, rd.in, ext); err != nil || n != ext {
		return sqlerr.New(sqlerr.BadCopyFileFormat, "invalid COPY file header (wrong length)")
	}
	return nil
}

// binaryRow reads one tuple into the builders; false at the trailer.
func (rd *Reader) binaryRow() (bool, error) {
	if !rd.started {
		rd.started = true
		if err := rd.binaryHeader(); err != nil {
			return false, err
		}
	}
	if ok, err := rd.bufferedRow(); ok || err != nil {
		return ok, err
	}
	var b4 [4]byte
	if _, err := io.ReadFull(rd.in, b4[:2]); err != nil {
		if errors.Is(err, io.EOF) {
			// PostgreSQL tolerates a missing trailer at the end of the data.
			return false, nil
		}
		return false, rd.readFull(b4[:2])
	}
	rd.line++
	rd.rowLine = rd.line
	count := int16(binary.BigEndian.Uint16(b4[:2]))
	if count == -1 {
		// The trailer must end the data.
		if _, err := rd.in.ReadByte(); err == nil {
			return false, rd.binErr(sqlerr.BadCopyFileFormat, "received copy data after EOF marker")
		}
		return false, nil
	}
	if int(count) != len(rd.builders) {
		return false, rd.binErr(sqlerr.BadCopyFileFormat, "row field count is %d, expected %d", count, len(rd.builders))
	}
	for i := range rd.builders {
		if err := rd.readFull(b4[:]); err != nil {
			return false, err
		}
		n := int32(binary.BigEndian.Uint32(b4[:]))
		if n == -1 {
			if !rd.schema.Field(i).Nullable {
				return false, rd.binErr(sqlerr.NotNullViolation, "null value in column %q of relation %q violates not-null constraint", rd.schema.Field(i).Name, rd.opts.Table)
			}
			rd.builders[i].AppendNull()
			continue
		}
		if n < -1 {
			return false, rd.binErr(sqlerr.BadCopyFileFormat, "invalid field size")
		}
		if int(n) > rd.opts.MaxLine {
			return false, rd.binErr(codeProgramLimitExceeded, "COPY field of %d bytes is longer than the maximum of %d bytes", n, rd.opts.MaxLine)
		}
		if cap(rd.buf) < int(n) {
			rd.buf = make([]byte, n)
		}
		rd.buf = rd.buf[:n]
		if err := rd.readFull(rd.buf); err != nil {
			return false, err
		}
		if err := rd.decodeBinary(i, rd.buf); err != nil {
			return false, err
		}
	}
	return true, nil
}

// bufferedRow decodes the next tuple where it lies in the read buffer,
// when all of it is there (no copy, no read call per field). It returns
// false, having consumed nothing, for anything else: a tuple that spans
// the buffer's end or is larger than it, the trailer, the end of the
// data, malformed input; binaryRow then reads field by field and reports
// what is wrong.
func (rd *Reader) bufferedRow() (bool, error) {
	if rd.in.Buffered() < 2 {
		rd.in.Peek(2) // fill the buffer; a failure is binaryRow's to report
	}
	buf, _ := rd.in.Peek(rd.in.Buffered())
	if len(buf) < 2 || int(int16(binary.BigEndian.Uint16(buf))) != len(rd.builders) {
		return false, nil
	}
	// The lengths first: nothing is appended unless the tuple is whole.
	off := 2
	for range rd.builders {
		if off+4 > len(buf) {
			return false, nil
		}
		n := int(int32(binary.BigEndian.Uint32(buf[off:])))
		off += 4
		if n < -1 || n > rd.opts.MaxLine {
			return false, nil
		}
		if n > 0 {
			if off += n; off > len(buf) {
				return false, nil
			}
		}
	}
	rd.line++
	rd.rowLine = rd.line
	off = 2
	for i, b := range rd.builders {
		n := int(int32(binary.BigEndian.Uint32(buf[off:])))
		off += 4
		if n == -1 {
			if !rd.schema.Field(i).Nullable {
				return false, rd.binErr(sqlerr.NotNullViolation, "null value in column %q of relation %q violates not-null constraint", rd.schema.Field(i).Name, rd.opts.Table)
			}
			b.AppendNull()
			continue
		}
		if err := rd.decodeBinary(i, buf[off:off+n]); err != nil {
			return false, err
		}
		off += n
	}
	rd.in.Discard(off)
	return true, nil
}

// decodeBinary appends one binary value to column i. data may alias the
// read buffer: builders copy what they append.
func (rd *Reader) decodeBinary(i int, data []byte) error {
	if err := sqltypes.DecodeBinary(rd.builders[i], rd.types[i], data); err != nil {
		e := sqlerr.From(err)
		ctx := fmt.Sprintf("COPY %s, line %d, column %s", rd.opts.Table, rd.rowLine, rd.schema.Field(i).Name)
		if e.Detail != "" {
			ctx = e.Detail + "\n" + ctx
		}
		return e.WithDetail("%s", ctx)
	}
	return nil
}
