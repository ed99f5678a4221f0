package catalog

import (
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// tableWriter collects the rows of one statement. A statement of at most
// Options.LogRows rows commits them through the log into the table's
// append segment. A larger one hands its rows, batch by batch, to a
// background goroutine (runWriter) that writes them as segment files of
// their own while the statement goes on producing rows (COPY decoding the
// next ones): rows already in the table's order stream straight into a
// segment, a run out of order is buffered and stably sorted. Nothing it
// writes is visible until the transaction commits.
//
// Memory is bounded whatever the statement's size: at most LogRows rows
// (or RunRows, if fewer; plus one batch) before the background writer starts, then writerQueue
// batches on their way to it, and in it one run out of order being
// buffered (Options.RunRows rows plus one batch) and less than two batches
// being coalesced into the segment's batch size.
type tableWriter struct {
	c       *Catalog
	meta    *tableMeta
	pending []arrow.RecordBatch // the rows so far, until bg starts
	pendN   int
	bg      *runWriter // nil until the statement exceeds LogRows rows
	rows    int64
}

func (c *Catalog) newTableWriter(meta *tableMeta) *tableWriter {
	return &tableWriter{c: c, meta: meta}
}

// checkShape verifies an incoming batch has the table's column count and
// Arrow types; INSERT's errors (42601, 42804).
func (w *tableWriter) checkShape(rec arrow.RecordBatch) error {
	cols := w.meta.def.Columns
	if n := int(rec.NumCols()); n != len(cols) {
		if n > len(cols) {
			return sqlerr.New(sqlerr.SyntaxError, "INSERT has more expressions than target columns of relation %q (%d > %d)", w.meta.def.Name, n, len(cols))
		}
		return sqlerr.New(sqlerr.SyntaxError, "INSERT has more target columns than expressions for relation %q (%d < %d)", w.meta.def.Name, n, len(cols))
	}
	for i, col := range cols {
		if want := w.meta.schema.Field(i).Type; !arrow.TypeEqual(rec.Column(i).DataType(), want) {
			return sqlerr.New(sqlerr.DatatypeMismatch, "column %q of relation %q is of type %s but expression is of Arrow type %s", col.Name, w.meta.def.Name, col.Type, rec.Column(i).DataType())
		}
	}
	return nil
}

// checkValues enforces NOT NULL (23502) and VARCHAR(n) (22001); rows are
// numbered from 1 across the statement.
func (w *tableWriter) checkValues(rec arrow.RecordBatch) error {
	for i, col := range w.meta.def.Columns {
		a := rec.Column(i)
		if col.NotNull && a.NullN() > 0 {
			for r := 0; r < a.Len(); r++ {
				if a.IsNull(r) {
					return sqlerr.New(sqlerr.NotNullViolation, "null value in column %q of relation %q violates not-null constraint", col.Name, w.meta.def.Name).
						WithDetail("Failing row %d contains %s.", w.rows+int64(r)+1, rowString(rec, r))
				}
			}
		}
		if col.Type.Kind == sqltypes.Varchar && col.Type.Length != sqltypes.NoLimit {
			s := a.(*array.String)
			for r := 0; r < s.Len(); r++ {
				if s.IsValid(r) && len(s.Value(r)) > col.Type.Length && utf8.RuneCountInString(s.Value(r)) > col.Type.Length {
					return sqlerr.New(sqlerr.StringDataRightTruncation, "value too long for type %s in column %q of relation %q", col.Type, col.Name, w.meta.def.Name).
						WithDetail("Failing row %d.", w.rows+int64(r)+1)
				}
			}
		}
	}
	return nil
}

func rowString(rec arrow.RecordBatch, r int) string {
	parts := make([]string, rec.NumCols())
	for i := range parts {
		if rec.Column(i).IsNull(r) {
			parts[i] = "null"
		} else {
			parts[i] = rec.Column(i).ValueStr(r)
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// add takes rows already checked by checkShape; the caller keeps its
// reference to rec.
func (w *tableWriter) add(rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	if err := w.checkValues(rec); err != nil {
		return err
	}
	w.rows += int64(n)
	// Re-label with the table schema so stored batches carry its metadata.
	rec = array.NewRecordBatch(w.meta.schema, rec.Columns(), int64(n))
	if w.bg != nil {
		return w.bg.send(rec)
	}
	w.pending = append(w.pending, rec)
	w.pendN += n
	if w.pendN > w.c.opts.LogRows || w.pendN >= w.c.opts.RunRows {
		return w.startBackground()
	}
	return nil
}

// startBackground hands the rows so far to a new background writer.
func (w *tableWriter) startBackground() error {
	w.bg = newRunWriter(w.c, w.meta)
	pending := w.pending
	w.pending, w.pendN = nil, 0
	for i, rec := range pending {
		if err := w.bg.send(rec); err != nil {
			releaseAll(pending[i+1:])
			return err
		}
	}
	return nil
}

// finish hands over the statement's rows: the buffered batches when it
// has at most LogRows rows (a small statement), else its segments once
// written (each holding one reference the caller now owns).
func (w *tableWriter) finish() ([]arrow.RecordBatch, []*segment, error) {
	if w.bg == nil && w.pendN <= w.c.opts.LogRows {
		rows := w.pending
		w.pending, w.pendN = nil, 0
		return rows, nil, nil
	}
	if w.bg == nil {
		if err := w.startBackground(); err != nil {
			return nil, nil, err
		}
	}
	segs, err := w.bg.wait()
	return nil, segs, err
}

// abort discards everything the statement wrote.
func (w *tableWriter) abort() {
	releaseAll(w.pending)
	w.pending, w.pendN = nil, 0
	if w.bg != nil {
		w.bg.abort()
	}
}

// discard drops segments that will never be committed.
func discard(segs []*segment) {
	for _, s := range segs {
		s.obsolete.Store(true)
		s.release()
	}
}
