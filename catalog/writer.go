package catalog

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// tableWriter collects the rows of one statement. A statement of at most
// Options.LogRows rows commits them through the log into the table's
// append segment; a larger one is written in runs of up to Options.RunRows
// rows (ordered tables: stably sorted) as segment files of its own, so a
// load of any size holds one run in memory. Nothing it writes is visible until the transaction
// commits.
type tableWriter struct {
	c       *Catalog
	meta    *tableMeta
	pending []arrow.RecordBatch
	pendN   int
	cur     *segWriter
	segs    []*segment
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
	w.pending = append(w.pending, rec)
	w.pendN += n
	if w.pendN >= w.c.opts.RunRows {
		return w.flushRun()
	}
	return nil
}

func (w *tableWriter) finishSegment() error {
	seg, err := w.cur.finish()
	w.cur = nil
	if err != nil {
		return err
	}
	w.segs = append(w.segs, seg)
	return nil
}

// flushRun writes the buffered rows as one segment, stably sorted by the
// key for an ordered table.
func (w *tableWriter) flushRun() error {
	if w.pendN == 0 {
		return nil
	}
	run, err := w.concatPending()
	if err != nil {
		return err
	}
	defer run.Release()
	n := int(run.NumRows())
	var idx []int32
	sorted := true
	for i := 1; i < n && w.meta.ordered(); i++ {
		if w.meta.cmpRows(run, i-1, run, i) > 0 {
			sorted = false
			break
		}
	}
	if !sorted {
		idx = make([]int32, n)
		for i := range idx {
			idx[i] = int32(i)
		}
		slices.SortStableFunc(idx, func(a, b int32) int { return w.meta.cmpRows(run, int(a), run, int(b)) })
	}
	sw, err := w.c.newSegWriter(w.meta)
	if err != nil {
		return err
	}
	w.cur = sw
	step := w.c.opts.BatchRows
	for off := 0; off < n; off += step {
		end := min(n, off+step)
		var part arrow.RecordBatch
		if sorted {
			part = run.NewSlice(int64(off), int64(end))
		} else {
			if part, err = w.gatherBatch(run, idx[off:end]); err != nil {
				return err
			}
		}
		err := sw.write(part)
		part.Release()
		if err != nil {
			return err
		}
	}
	return w.finishSegment()
}

func (w *tableWriter) gatherBatch(run arrow.RecordBatch, idx []int32) (arrow.RecordBatch, error) {
	refs := make([]operator.Ref, len(idx))
	for i, k := range idx {
		refs[i] = operator.Ref{Row: k}
	}
	cols := make([]arrow.Array, run.NumCols())
	for i := range cols {
		a, err := operator.Gather(context.Background(), w.c.mem, run.Column(i).DataType(), run.Columns()[i:i+1], refs)
		if err != nil {
			for _, done := range cols[:i] {
				done.Release()
			}
			return nil, err
		}
		cols[i] = a
	}
	out := array.NewRecordBatch(w.meta.schema, cols, int64(len(idx)))
	for _, a := range cols {
		a.Release()
	}
	return out, nil
}

// concatPending turns the buffered batches into one and empties the buffer.
func (w *tableWriter) concatPending() (arrow.RecordBatch, error) {
	defer func() {
		for _, b := range w.pending {
			b.Release()
		}
		w.pending, w.pendN = nil, 0
	}()
	if len(w.pending) == 1 {
		w.pending[0].Retain()
		return w.pending[0], nil
	}
	cols := make([]arrow.Array, w.meta.schema.NumFields())
	parts := make([]arrow.Array, len(w.pending))
	for i := range cols {
		for j, b := range w.pending {
			parts[j] = b.Column(i)
		}
		a, err := array.Concatenate(parts, w.c.mem)
		if err != nil {
			for _, c := range cols[:i] {
				c.Release()
			}
			return nil, sqlerr.Wrap(err, sqlerr.OutOfMemory, "could not buffer rows for relation %q: %v", w.meta.def.Name, err)
		}
		cols[i] = a
	}
	out := array.NewRecordBatch(w.meta.schema, cols, int64(w.pendN))
	for _, a := range cols {
		a.Release()
	}
	return out, nil
}

// finish hands over the statement's rows: the buffered batches when it
// wrote no segment (a small statement), else its segments after writing
// the rest (each holding one reference the caller now owns).
func (w *tableWriter) finish() ([]arrow.RecordBatch, []*segment, error) {
	if len(w.segs) == 0 && w.pendN <= w.c.opts.LogRows {
		rows := w.pending
		w.pending, w.pendN = nil, 0
		return rows, nil, nil
	}
	if err := w.flushRun(); err != nil {
		return nil, nil, err
	}
	segs := w.segs
	w.segs = nil
	return nil, segs, nil
}

// abort discards everything the statement wrote.
func (w *tableWriter) abort() {
	for _, b := range w.pending {
		b.Release()
	}
	w.pending, w.pendN = nil, 0
	if w.cur != nil {
		w.cur.abort()
		w.cur = nil
	}
	discard(w.segs)
	w.segs = nil
}

// discard drops segments that will never be committed.
func discard(segs []*segment) {
	for _, s := range segs {
		s.obsolete.Store(true)
		s.release()
	}
}
