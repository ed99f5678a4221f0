package copyfmt

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Format is a COPY data format.
type Format uint8

const (
	// Text is PostgreSQL's default COPY format: one line per row, fields
	// separated by a delimiter (tab), \N for NULL, backslash escapes.
	Text Format = iota
	// CSV is COPY's CSV format: quoted fields, doubled quotes, NULL as an
	// unquoted empty field by default.
	CSV
	// Binary is PostgreSQL's binary COPY format (PGCOPY signature, per-tuple
	// field counts, big-endian binary values).
	Binary
)

func (f Format) String() string {
	switch f {
	case Text:
		return "text"
	case CSV:
		return "csv"
	case Binary:
		return "binary"
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// ParseFormat reads a FORMAT option value ("text", "csv", "binary").
func ParseFormat(s string) (Format, error) {
	switch s {
	case "text", "TEXT", "":
		return Text, nil
	case "csv", "CSV":
		return CSV, nil
	case "binary", "BINARY":
		return Binary, nil
	}
	return 0, sqlerr.New(sqlerr.InvalidParameterValue, "COPY format %q not recognized", s)
}

// DefaultMaxLine bounds one line (text) or record (CSV) or tuple (binary):
// longer input is an error instead of unbounded buffering.
const DefaultMaxLine = 64 << 20

// codeProgramLimitExceeded is 54000, which sqlerr has no constant for.
const codeProgramLimitExceeded = "54000"

// Options configure a Reader. Zero values mean PostgreSQL's defaults.
type Options struct {
	Format Format
	// Delimiter separates fields: default tab (text) or comma (CSV).
	Delimiter byte
	// Null is the NULL marker; nil means \N (text) or "" (CSV).
	Null *string
	// Header skips the first line (text and CSV).
	Header bool
	// Quote and Escape are the CSV quote and escape bytes (default '"';
	// Escape defaults to Quote).
	Quote, Escape byte
	// Table names the target in error context ("COPY t, line 3 ...").
	Table string
	// BatchRows is the rows per output batch (default 8192).
	BatchRows int
	// MaxLine bounds a line/record/tuple in bytes (default DefaultMaxLine).
	MaxLine int
	// Values are the session settings for value input (time zone).
	Values *sqltypes.Options
}

// Reader parses a COPY stream into record batches of a schema. It is an
// array.RecordReader: the batch from RecordBatch is valid until the next
// call to Next. Errors are *sqlerr.Error values whose Detail carries
// PostgreSQL's context line, e.g. `COPY t, line 3, column a: "x"`.
type Reader struct {
	refs   atomic.Int64
	mem    memory.Allocator
	schema *arrow.Schema
	types  []sqltypes.Type
	opts   Options
	null   []byte
	in     *bufio.Reader

	line     int64 // lines consumed so far (text/CSV), tuples (binary)
	rowLine  int64 // line the current row starts on
	rows     int64
	builders []array.Builder
	cur      arrow.RecordBatch
	err      error
	done     bool

	buf    []byte   // the current line or record
	fields [][]byte // raw fields of the current row
	quoted []bool   // CSV: field was quoted
	ends   []int    // CSV: end offsets of the fields in scr
	scr    []byte   // unescaped (text) or dequoted (CSV) values
	// started is set once the binary header has been read.
	started bool
}

// NewReader returns a Reader of r into schema, whose fields must carry SQL
// types (sqltypes.Type.Field); a field that is not nullable rejects NULLs
// (23502).
func NewReader(r io.Reader, schema *arrow.Schema, opts Options, mem memory.Allocator) (*Reader, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	if opts.BatchRows <= 0 {
		opts.BatchRows = 8192
	}
	if opts.MaxLine <= 0 {
		opts.MaxLine = DefaultMaxLine
	}
	rd := &Reader{mem: mem, schema: schema, opts: opts}
	rd.refs.Store(1)
	for _, f := range schema.Fields() {
		t, err := sqltypes.FromField(f)
		if err != nil {
			return nil, err
		}
		rd.types = append(rd.types, t)
	}
	switch opts.Format {
	case Text:
		if rd.opts.Delimiter == 0 {
			rd.opts.Delimiter = '\t'
		}
		rd.null = []byte(`\N`)
	case CSV:
		if rd.opts.Delimiter == 0 {
			rd.opts.Delimiter = ','
		}
		if rd.opts.Quote == 0 {
			rd.opts.Quote = '"'
		}
		if rd.opts.Escape == 0 {
			rd.opts.Escape = rd.opts.Quote
		}
		rd.null = []byte{}
		if rd.opts.Delimiter == rd.opts.Quote {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "COPY delimiter and quote must be different")
		}
	case Binary:
		if opts.Header || opts.Null != nil || opts.Delimiter != 0 {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "cannot specify DELIMITER, NULL or HEADER in BINARY mode")
		}
	default:
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "COPY format %d not recognized", opts.Format)
	}
	if opts.Format != Binary {
		if d := rd.opts.Delimiter; d == '\n' || d == '\r' || (opts.Format == Text && d == '\\') {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "COPY delimiter cannot be newline, carriage return or backslash")
		}
		if opts.Null != nil {
			rd.null = []byte(*opts.Null)
			if bytes.ContainsAny(rd.null, "\r\n") {
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "COPY null representation cannot use newline or carriage return")
			}
		}
	}
	rd.in = bufio.NewReaderSize(r, 64<<10)
	rd.builders = make([]array.Builder, schema.NumFields())
	for i, f := range schema.Fields() {
		rd.builders[i] = array.NewBuilder(mem, f.Type)
	}
	return rd, nil
}

func (rd *Reader) Retain()                        { rd.refs.Add(1) }
func (rd *Reader) Schema() *arrow.Schema          { return rd.schema }
func (rd *Reader) RecordBatch() arrow.RecordBatch { return rd.cur }
func (rd *Reader) Err() error                     { return rd.err }

// Record is the deprecated spelling of RecordBatch, kept for the interface.
func (rd *Reader) Record() arrow.RecordBatch { return rd.cur }

// Rows is the number of rows parsed so far.
func (rd *Reader) Rows() int64 { return rd.rows }

func (rd *Reader) Release() {
	if rd.refs.Add(-1) != 0 {
		return
	}
	if rd.cur != nil {
		rd.cur.Release()
		rd.cur = nil
	}
	for _, b := range rd.builders {
		b.Release()
	}
	rd.builders = nil
	rd.done = true
}

// Next parses up to BatchRows rows.
func (rd *Reader) Next() bool {
	if rd.cur != nil {
		rd.cur.Release()
		rd.cur = nil
	}
	if rd.done {
		return false
	}
	n := 0
	for n < rd.opts.BatchRows {
		var ok bool
		var err error
		switch rd.opts.Format {
		case Binary:
			ok, err = rd.binaryRow()
		default:
			ok, err = rd.textRow()
		}
		if err != nil {
			rd.err = err
			rd.done = true
			return false
		}
		if !ok {
			rd.done = true
			break
		}
		n++
		rd.rows++
	}
	if n == 0 {
		return false
	}
	cols := make([]arrow.Array, len(rd.builders))
	for i, b := range rd.builders {
		cols[i] = b.NewArray()
	}
	if !rd.done {
		rd.reserve(n, cols)
	}
	rd.cur = array.NewRecordBatch(rd.schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return true
}

// reserve sizes the builders for another batch like the one just built
// (n rows, cols): growing them value by value from empty costs a copy of
// every buffer at each doubling. Arrow's builders round a reservation up
// to the power of two above it (8192 rows would get room for 16384):
// asking for n-1 gives exactly n when n is a power of two, the usual batch
// size, and never less than n.
func (rd *Reader) reserve(n int, cols []arrow.Array) {
	for i, b := range rd.builders {
		b.Reserve(n - 1)
		if bb, ok := b.(*array.BinaryBuilder); ok {
			if a, ok := cols[i].(array.BinaryLike); ok {
				bb.ReserveData(len(a.ValueBytes()))
			}
		} else if sb, ok := b.(*array.StringBuilder); ok {
			if a, ok := cols[i].(array.BinaryLike); ok {
				sb.ReserveData(len(a.ValueBytes()))
			}
		}
	}
}

// readLine reads one physical line (without its terminator) appended to
// rd.buf; eof is true when the input ended before any byte.
func (rd *Reader) readLine() (eof bool, err error) {
	start := len(rd.buf)
	for {
		chunk, err := rd.in.ReadSlice('\n')
		if len(rd.buf)+len(chunk) > rd.opts.MaxLine {
			return false, sqlerr.New(codeProgramLimitExceeded, "COPY line is longer than the maximum of %d bytes", rd.opts.MaxLine).
				WithDetail("COPY %s, line %d", rd.opts.Table, rd.line+1)
		}
		rd.buf = append(rd.buf, chunk...)
		switch {
		case err == nil:
			rd.line++
			rd.buf = rd.buf[:len(rd.buf)-1]
			if n := len(rd.buf); n > start && rd.buf[n-1] == '\r' {
				rd.buf = rd.buf[:n-1]
			}
			return false, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(rd.buf) == start {
				return true, nil
			}
			rd.line++
			return false, nil
		default:
			return false, sqlerr.Wrap(err, sqlerr.IOError, "could not read COPY data: %v", err)
		}
	}
}

// textRow parses one row of text or CSV into the builders; false at the
// end of data.
func (rd *Reader) textRow() (bool, error) {
	for {
		rd.buf = rd.buf[:0]
		eof, err := rd.readLine()
		if err != nil || eof {
			return false, err
		}
		rd.rowLine = rd.line
		if rd.line == 1 && rd.opts.Header {
			continue
		}
		if string(rd.buf) == `\.` {
			return false, nil // end-of-data marker
		}
		if rd.opts.Format == CSV {
			err = rd.splitCSV()
		} else {
			rd.splitText()
		}
		if err != nil {
			return false, err
		}
		return true, rd.appendRow()
	}
}

func (rd *Reader) splitText() {
	rd.fields = rd.fields[:0]
	d := rd.opts.Delimiter
	start := 0
	for i := 0; i < len(rd.buf); i++ {
		switch rd.buf[i] {
		case '\\':
			i++ // the escaped byte is never a delimiter
		case d:
			rd.fields = append(rd.fields, rd.buf[start:i])
			start = i + 1
		}
	}
	rd.fields = append(rd.fields, rd.buf[start:])
}

// splitCSV splits rd.buf into dequoted fields, reading more lines while a
// quoted field spans a line break.
func (rd *Reader) splitCSV() error {
	rd.fields, rd.quoted, rd.ends = rd.fields[:0], rd.quoted[:0], rd.ends[:0]
	d, q, e := rd.opts.Delimiter, rd.opts.Quote, rd.opts.Escape
	out := rd.scr[:0]
	quoted, inQuote := false, false
	for i := 0; ; i++ {
		if i >= len(rd.buf) {
			if !inQuote {
				break
			}
			// A newline inside quotes: the record continues on the next line.
			rd.buf = append(rd.buf, '\n')
			eof, err := rd.readLine()
			if err != nil {
				return err
			}
			if eof {
				return rd.lineErr(sqlerr.BadCopyFileFormat, "unterminated CSV quoted field")
			}
			i-- // the loop's i++ lands on the newline, kept as data
			continue
		}
		c := rd.buf[i]
		switch {
		case inQuote && c == e && i+1 < len(rd.buf) && rd.buf[i+1] == q:
			out = append(out, q)
			i++
		case inQuote && c == q:
			inQuote = false
		case !inQuote && c == q:
			inQuote, quoted = true, true
		case !inQuote && c == d:
			rd.ends = append(rd.ends, len(out))
			rd.quoted = append(rd.quoted, quoted)
			quoted = false
		default:
			out = append(out, c)
		}
	}
	rd.ends = append(rd.ends, len(out))
	rd.quoted = append(rd.quoted, quoted)
	prev := 0
	for _, end := range rd.ends {
		rd.fields = append(rd.fields, out[prev:end])
		prev = end
	}
	rd.scr = out
	return nil
}

func (rd *Reader) lineErr(code, format string, args ...any) error {
	return sqlerr.New(code, format, args...).WithDetail("COPY %s, line %d: %s", rd.opts.Table, rd.rowLine, quoteLine(rd.buf))
}

// quoteLine renders a line for error context, shortened like Postgres does.
func quoteLine(b []byte) string {
	const max = 100
	if len(b) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(b[cut]) {
			cut--
		}
		return fmt.Sprintf("%q...", b[:cut])
	}
	return fmt.Sprintf("%q", b)
}

// appendRow converts the raw fields of one row into the builders.
func (rd *Reader) appendRow() error {
	if len(rd.fields) > len(rd.builders) {
		return rd.lineErr(sqlerr.BadCopyFileFormat, "extra data after last expected column")
	}
	if len(rd.fields) < len(rd.builders) {
		return rd.lineErr(sqlerr.BadCopyFileFormat, "missing data for column %q", rd.schema.Field(len(rd.fields)).Name)
	}
	for i, raw := range rd.fields {
		isNull := bytes.Equal(raw, rd.null)
		if rd.opts.Format == CSV && rd.quoted[i] {
			isNull = false // a quoted value is never NULL, even if empty
		}
		if isNull {
			if !rd.schema.Field(i).Nullable {
				return rd.lineErr(sqlerr.NotNullViolation, "null value in column %q of relation %q violates not-null constraint", rd.schema.Field(i).Name, rd.opts.Table)
			}
			rd.builders[i].AppendNull()
			continue
		}
		val := raw
		if rd.opts.Format == Text && bytes.IndexByte(raw, '\\') >= 0 {
			rd.scr = unescapeText(rd.scr[:0], raw)
			val = rd.scr
		}
		if err := rd.decode(i, val); err != nil {
			return err
		}
	}
	return nil
}

// decode appends one value through the shared text codec. The string
// aliases the line buffer only for the duration of the call: builders copy
// what they append, and errors format their own copies.
func (rd *Reader) decode(i int, val []byte) error {
	s := unsafe.String(unsafe.SliceData(val), len(val))
	if err := sqltypes.DecodeText(rd.builders[i], rd.types[i], s, rd.opts.Values); err != nil {
		return rd.valueErr(i, err, string(val))
	}
	return nil
}

func (rd *Reader) valueErr(i int, err error, val string) error {
	e := sqlerr.From(err)
	ctx := fmt.Sprintf("COPY %s, line %d, column %s: %s", rd.opts.Table, rd.rowLine, rd.schema.Field(i).Name, quoteLine([]byte(val)))
	if e.Detail != "" {
		ctx = e.Detail + "\n" + ctx
	}
	return e.WithDetail("%s", ctx)
}

// unescapeText applies text-format backslash escapes.
func unescapeText(dst, src []byte) []byte {
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c != '\\' || i+1 == len(src) {
			dst = append(dst, c)
			continue
		}
		i++
		switch c = src[i]; c {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'v':
			dst = append(dst, '\v')
		case 'x':
			v, n := 0, 0
			for n < 2 && i+1 < len(src) && isHex(src[i+1]) {
				v = v*16 + hexVal(src[i+1])
				i++
				n++
			}
			if n == 0 {
				dst = append(dst, 'x')
			} else {
				dst = append(dst, byte(v))
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(c - '0')
			for n := 1; n < 3 && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '7'; n++ {
				v = v*8 + int(src[i+1]-'0')
				i++
			}
			dst = append(dst, byte(v))
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) int {
	switch {
	case c >= 'a':
		return int(c-'a') + 10
	case c >= 'A':
		return int(c-'A') + 10
	}
	return int(c - '0')
}
