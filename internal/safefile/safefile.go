package safefile

import (
	"context"
	"io"
	"io/fs"
	"os"

	"github.com/asofsql/asofsql/sqlerr"
)

// Open opens a regular file for reading.
func Open(path string) (*os.File, error) {
	before, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(path, before); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	if err := same(f, path, before); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Create opens a regular file for writing, creating it (mode perm) or
// truncating it as os.Create does.
func Create(path string, perm fs.FileMode) (*os.File, error) {
	before, err := os.Stat(path)
	switch {
	case err == nil:
		if err := regular(path, before); err != nil {
			return nil, err
		}
	case os.IsNotExist(err):
		before = nil
	default:
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|openFlags, perm)
	if err != nil {
		return nil, err
	}
	if err := same(f, path, before); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// same checks that f is a regular file and, when before is known, the
// one stat saw.
func same(f *os.File, path string, before fs.FileInfo) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if err := regular(path, fi); err != nil {
		return err
	}
	if before != nil && !os.SameFile(before, fi) {
		return sqlerr.New(sqlerr.InsufficientPrivilege, "file \"%s\" changed while it was being opened", path)
	}
	return nil
}

func regular(path string, fi fs.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() {
		return nil
	}
	what := "not a regular file"
	switch {
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	case m&fs.ModeSymlink != 0:
		what = "a symbolic link"
	}
	return sqlerr.New(sqlerr.InsufficientPrivilege, "\"%s\" is %s, not a regular file", path, what).
		WithHint("Server-side files must be regular files.")
}

// Reader wraps r so that each Read first checks ctx.
func Reader(ctx context.Context, r io.Reader) io.Reader { return &reader{ctx, r} }

type reader struct {
	ctx context.Context
	r   io.Reader
}

func (r *reader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, context.Cause(r.ctx)
	}
	return r.r.Read(p)
}

// ReadAtSeeker is what random-access readers (Parquet) need.
type ReadAtSeeker interface {
	io.ReaderAt
	io.Seeker
}

// ReaderAt wraps r so that each ReadAt and Seek first checks ctx.
func ReaderAt(ctx context.Context, r ReadAtSeeker) ReadAtSeeker { return &readerAt{ctx, r} }

type readerAt struct {
	ctx context.Context
	r   ReadAtSeeker
}

func (r *readerAt) ReadAt(p []byte, off int64) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, context.Cause(r.ctx)
	}
	return r.r.ReadAt(p, off)
}

func (r *readerAt) Seek(off int64, whence int) (int64, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, context.Cause(r.ctx)
	}
	return r.r.Seek(off, whence)
}

// Writer wraps w so that each Write first checks ctx.
func Writer(ctx context.Context, w io.Writer) io.Writer { return &writer{ctx, w} }

type writer struct {
	ctx context.Context
	w   io.Writer
}

func (w *writer) Write(p []byte) (int, error) {
	if err := w.ctx.Err(); err != nil {
		return 0, context.Cause(w.ctx)
	}
	return w.w.Write(p)
}
