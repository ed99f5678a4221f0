package server_test

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

func itoa(v int64) string   { return strconv.FormatInt(v, 10) }
func ftoa(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// pipeWriter is the writing end of an io.Pipe with buffered formatting.
type pipeWriter struct {
	pw *io.PipeWriter
	bw *bufio.Writer
}

func newPipe() (*io.PipeReader, *pipeWriter) {
	pr, pw := io.Pipe()
	return pr, &pipeWriter{pw: pw, bw: bufio.NewWriterSize(pw, 64<<10)}
}

func (w *pipeWriter) printf(format string, args ...any) { fmt.Fprintf(w.bw, format, args...) }

func (w *pipeWriter) close() { w.pw.CloseWithError(w.bw.Flush()) }
