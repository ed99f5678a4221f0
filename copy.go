package asofsql

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/copyfmt"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/internal/safefile"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// WithFileDir allows COPY ... FROM 'file' and COPY ... TO 'file' for
// files inside dir (relative paths are taken from dir). Without it, COPY
// with a file name is refused (42501); paths that leave dir, also through
// symbolic links, are refused too.
func WithFileDir(dir string) Option { return func(o *options) { o.fileDir = dir } }

type copyProgressKey struct{}

// WithCopyProgress returns a context under which COPY ... FROM (a stream or
// a file) calls progress with the rows loaded so far after each batch, on
// the goroutine running the statement (as net/http/httptrace carries its
// hooks in a context).
func WithCopyProgress(ctx context.Context, progress func(rows int64)) context.Context {
	return context.WithValue(ctx, copyProgressKey{}, progress)
}

// copyStream is the client side of COPY ... STDIN / STDOUT.
type copyStream struct {
	r io.Reader
	w io.Writer
}

// CopyFrom runs COPY ... FROM STDIN with r as the data stream (text, CSV
// or binary as the statement's options say) and reports "COPY n".
func (s *Session) CopyFrom(ctx context.Context, sql string, r io.Reader) (Result, error) {
	return s.copyStdio(ctx, sql, &copyStream{r: r})
}

// CopyTo runs COPY ... TO STDOUT, writing the data stream to w.
func (s *Session) CopyTo(ctx context.Context, sql string, w io.Writer) (Result, error) {
	return s.copyStdio(ctx, sql, &copyStream{w: w})
}

func (s *Session) copyStdio(ctx context.Context, sql string, cs *copyStream) (Result, error) {
	st, err := s.parseOnce(ctx, sql)
	if err != nil {
		return Result{}, err
	}
	c, err := s.run(ctx, st, nil, false, cs)
	if err != nil {
		return Result{}, err
	}
	if err := c.drain(); err != nil {
		return Result{}, s.fail(err)
	}
	return Result{Tag: c.Tag(), RowsAffected: c.affected}, nil
}

// copy runs a COPY plan and returns the rows copied.
func (s *Session) copy(ctx context.Context, snap *snapshot, p *planner.Copy, args []any, cs *copyStream) (int64, error) {
	if p.From {
		return s.copyFrom(ctx, p, cs)
	}
	w := io.Writer(nil)
	if p.Path == "" {
		if cs == nil || cs.w == nil {
			return 0, sqlerr.New(sqlerr.FeatureNotSupported, "COPY TO STDOUT needs a data stream").
				WithHint("Use Session.CopyTo.")
		}
		w = cs.w
	} else {
		path, err := s.resolveCopyPath(p.Path, false)
		if err != nil {
			return 0, err
		}
		// O_EXCL would refuse to overwrite, which Postgres does not; the
		// path was checked above (no symlink components leave the dir).
		// Only a regular file: opening a FIFO would block for good.
		f, err := safefile.Create(path, 0o644)
		if err != nil {
			if _, ok := sqlerr.As(err); !ok {
				err = sqlerr.Wrap(err, sqlerr.IOError, "could not open file \"%s\" for writing: %v", p.Path, err)
			}
			return 0, err
		}
		defer f.Close()
		bw := bufio.NewWriterSize(safefile.Writer(ctx, f), 64<<10)
		var n int64
		if p.Format == planner.CopyParquet {
			n, err = s.copyOutParquet(ctx, snap, p, args, bw)
		} else {
			n, err = s.copyOut(ctx, snap, p, args, bw)
		}
		if err == nil {
			err = bw.Flush()
		}
		if err == nil {
			err = f.Close()
		}
		if err != nil {
			return 0, sqlerr.From(err)
		}
		return n, nil
	}
	return s.copyOut(ctx, snap, p, args, w)
}

func (s *Session) copyOptions(p *planner.Copy) (catalog.CopyOptions, error) {
	o := catalog.CopyOptions{Format: string(p.Format), Header: p.Header, Null: p.Null, Columns: p.ColumnNames, Values: s.vopts}
	if p.Delimiter != nil {
		if len(*p.Delimiter) != 1 {
			return o, sqlerr.New(sqlerr.FeatureNotSupported, "COPY delimiter must be a single one-byte character")
		}
		o.Delimiter = (*p.Delimiter)[0]
	}
	return o, nil
}

func (s *Session) copyFrom(ctx context.Context, p *planner.Copy, cs *copyStream) (int64, error) {
	opts, err := s.copyOptions(p)
	if err != nil {
		return 0, err
	}
	opts.Progress, _ = ctx.Value(copyProgressKey{}).(func(int64))
	var n int64
	if p.Path == "" {
		if cs == nil || cs.r == nil {
			return 0, sqlerr.New(sqlerr.FeatureNotSupported, "COPY FROM STDIN needs a data stream").
				WithHint("Use Session.CopyFrom.")
		}
		err = s.writeTo(ctx, "COPY FROM", p.Table.Temp, func(tx *catalog.Tx) error {
			n, err = tx.CopyFrom(ctx, p.Table.Name, cs.r, opts)
			return err
		})
		return n, err
	}
	path, err := s.resolveCopyPath(p.Path, true)
	if err != nil {
		return 0, err
	}
	err = s.writeTo(ctx, "COPY FROM", p.Table.Temp, func(tx *catalog.Tx) error {
		n, err = tx.CopyFromFile(ctx, p.Table.Name, path, opts)
		return err
	})
	return n, err
}

// resolveCopyPath confines a COPY file to the configured directory: the
// path, with every symbolic link resolved (for a file to write: its
// directory, and the file itself if it exists), must lie inside it.
func (s *Session) resolveCopyPath(path string, read bool) (string, error) {
	dir := s.db.opts.fileDir
	if dir == "" {
		return "", sqlerr.New(sqlerr.InsufficientPrivilege, "COPY to or from a file is not allowed: no file directory is configured").
			WithHint("Open the database with asofsql.WithFileDir(dir) to allow files inside dir, or use COPY ... FROM STDIN / TO STDOUT.")
	}
	base, err := filepath.Abs(dir)
	if err == nil {
		base, err = filepath.EvalSymlinks(base)
	}
	if err != nil {
		return "", sqlerr.Wrap(err, sqlerr.IOError, "COPY file directory %q is not usable: %v", dir, err)
	}
	full := path
	if !filepath.IsAbs(full) {
		full = filepath.Join(base, full)
	}
	full = filepath.Clean(full)
	outside := sqlerr.New(sqlerr.InsufficientPrivilege, "COPY file \"%s\" is outside the allowed directory", path).
		WithHint("Files must be inside %s.", dir)
	var real string
	if read {
		real, err = filepath.EvalSymlinks(full)
		if err != nil {
			if !within(base, full) {
				return "", outside
			}
			return "", sqlerr.Wrap(err, sqlerr.IOError, "could not open file \"%s\" for reading: %v", path, err)
		}
	} else {
		parent, err := filepath.EvalSymlinks(filepath.Dir(full))
		if err != nil {
			if !within(base, full) {
				return "", outside
			}
			return "", sqlerr.Wrap(err, sqlerr.IOError, "could not open file \"%s\" for writing: %v", path, err)
		}
		real = filepath.Join(parent, filepath.Base(full))
		if fi, err := os.Lstat(real); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			if real, err = filepath.EvalSymlinks(real); err != nil {
				return "", outside
			}
		}
	}
	if !within(base, real) {
		return "", outside
	}
	return real, nil
}

func within(base, p string) bool {
	rel, err := filepath.Rel(base, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// copySource opens the rows COPY ... TO writes: the query's, or the
// table's chosen columns.
func (s *Session) copySource(ctx context.Context, snap *snapshot, p *planner.Copy, args []any) (exec.Operator, []sqltypes.Type, []string, error) {
	var op exec.Operator
	var types []sqltypes.Type
	var names []string
	if p.Query != nil {
		var err error
		if op, err = s.lowerQuery(ctx, snap, p.Query.Params, p.Query.Root, args, nil); err != nil {
			return nil, nil, nil, err
		}
		for _, c := range p.Query.Root.Schema() {
			types, names = append(types, c.Type), append(names, c.Name)
		}
	} else {
		from := snap.main
		if p.Table.Temp {
			from = snap.temp
		}
		if from == nil {
			return nil, nil, nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", p.Table.Name)
		}
		rdr, err := from.Scan(ctx, p.Table.Name, catalog.ScanOptions{Columns: p.Columns})
		if err != nil {
			return nil, nil, nil, err
		}
		op = exec.FromReader(rdr)
		for _, i := range p.Columns {
			types, names = append(types, p.Table.Columns[i].Type), append(names, p.Table.Columns[i].Name)
		}
	}
	return op, types, names, nil
}

// copyOut writes a table's or a query's rows in COPY text, CSV or binary
// format.
func (s *Session) copyOut(ctx context.Context, snap *snapshot, p *planner.Copy, args []any, w io.Writer) (int64, error) {
	op, types, names, err := s.copySource(ctx, snap, p, args)
	if err != nil {
		return 0, err
	}
	enc, err := s.newCopyEncoder(p, types, names)
	if err != nil {
		op.Close()
		return 0, err
	}
	var n int64
	var buf []byte
	if buf, err = enc.header(buf); err != nil {
		op.Close()
		return 0, err
	}
	err = exec.Drain(ctx, op, func(b arrow.RecordBatch) error {
		for i := 0; i < int(b.NumRows()); i++ {
			var err error
			if buf, err = enc.row(buf, b, i); err != nil {
				return err
			}
			if len(buf) >= 32<<10 {
				if _, err := w.Write(buf); err != nil {
					return sqlerr.Wrap(err, sqlerr.IOError, "could not write COPY data: %v", err)
				}
				buf = buf[:0]
			}
		}
		n += b.NumRows()
		return nil
	})
	if err != nil {
		return 0, err
	}
	buf = enc.trailer(buf)
	if _, err := w.Write(buf); err != nil {
		return 0, sqlerr.Wrap(err, sqlerr.IOError, "could not write COPY data: %v", err)
	}
	return n, nil
}

type copyEncoder struct {
	format planner.CopyFormat
	hasHdr bool
	delim  byte
	null   string
	types  []sqltypes.Type
	names  []string
	opts   *sqltypes.Options
	field  []byte
}

func (s *Session) newCopyEncoder(st *planner.Copy, types []sqltypes.Type, names []string) (*copyEncoder, error) {
	e := &copyEncoder{format: st.Format, hasHdr: st.Header, types: types, names: names, opts: s.vopts}
	switch e.format {
	case "", planner.CopyText:
		e.format, e.delim, e.null = planner.CopyText, '\t', `\N`
	case planner.CopyCSV:
		e.delim = ','
	case planner.CopyBinary:
		return e, nil
	case planner.CopyParquet:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY TO STDOUT in format parquet is not supported").
			WithHint("Write Parquet to a file: COPY ... TO 'file' (FORMAT parquet).")
	default:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY TO in format %s is not supported", e.format)
	}
	if st.Delimiter != nil {
		if len(*st.Delimiter) != 1 {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY delimiter must be a single one-byte character")
		}
		e.delim = (*st.Delimiter)[0]
	}
	if st.Null != nil {
		e.null = *st.Null
	}
	return e, nil
}

var binarySignature = []byte("PGCOPY\n\xff\r\n\x00")

func (e *copyEncoder) headerLine(buf []byte) []byte {
	for i, n := range e.names {
		if i > 0 {
			buf = append(buf, e.delim)
		}
		if e.format == planner.CopyCSV {
			buf = e.csvField(buf, []byte(n))
		} else {
			buf = copyfmt.AppendText(buf, []byte(n), e.delim)
		}
	}
	return append(buf, '\n')
}

func (e *copyEncoder) header(buf []byte) ([]byte, error) {
	switch {
	case e.format == planner.CopyBinary:
		buf = append(buf, binarySignature...)
		return append(buf, 0, 0, 0, 0, 0, 0, 0, 0), nil // flags, extension length
	case e.hasHdr:
		return e.headerLine(buf), nil
	}
	return buf, nil
}

func (e *copyEncoder) trailer(buf []byte) []byte {
	if e.format == planner.CopyBinary {
		return append(buf, 0xff, 0xff)
	}
	return buf
}

func (e *copyEncoder) row(buf []byte, b arrow.RecordBatch, i int) ([]byte, error) {
	if e.format == planner.CopyBinary {
		buf = binary.BigEndian.AppendUint16(buf, uint16(len(e.types)))
		for j, t := range e.types {
			col := b.Column(j)
			if col.IsNull(i) {
				buf = binary.BigEndian.AppendUint32(buf, 0xffffffff)
				continue
			}
			at := len(buf)
			buf = append(buf, 0, 0, 0, 0)
			var err error
			if buf, err = sqltypes.EncodeBinary(buf, col, i, t); err != nil {
				return nil, err
			}
			binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
		}
		return buf, nil
	}
	for j, t := range e.types {
		if j > 0 {
			buf = append(buf, e.delim)
		}
		col := b.Column(j)
		if col.IsNull(i) {
			buf = append(buf, e.null...)
			continue
		}
		e.field = sqltypes.EncodeText(e.field[:0], col, i, t, e.opts)
		if e.format == planner.CopyCSV {
			buf = e.csvField(buf, e.field)
		} else {
			buf = copyfmt.AppendText(buf, e.field, e.delim)
		}
	}
	return append(buf, '\n'), nil
}

// csvField quotes a value when it holds the delimiter, a quote, a line
// break, or equals the NULL string (so an empty string is "" when NULL is
// the empty field), doubling quotes inside.
func (e *copyEncoder) csvField(buf, v []byte) []byte {
	s := string(v)
	if s != e.null && !strings.ContainsAny(s, string([]byte{e.delim, '"', '\n', '\r'})) && !strings.HasPrefix(s, `\.`) {
		return append(buf, v...)
	}
	buf = append(buf, '"')
	buf = append(buf, strings.ReplaceAll(s, `"`, `""`)...)
	return append(buf, '"')
}
