package catalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exec"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/asofsql/asofsql/copyfmt"
	"github.com/asofsql/asofsql/internal/safefile"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// CopyOptions are the options of COPY ... FROM. Zero values are
// PostgreSQL's defaults.
type CopyOptions struct {
	// Format is "text" (default for a stream), "csv", "binary" or, for
	// files only, "parquet". CopyFromFile picks by extension when empty:
	// .parquet is Parquet, .csv is CSV, anything else text.
	Format string
	// Header skips a first line (text, CSV).
	Header bool
	// Delimiter, Null, Quote and Escape are COPY's options of those names;
	// Null nil means the format's default (\N for text, unquoted empty for
	// CSV), Delimiter/Quote/Escape 0 their defaults.
	Delimiter     byte
	Null          *string
	Quote, Escape byte
	// Columns are the target columns in input order; nil means all.
	// Columns left out are NULL.
	Columns []string
	// Progress, if set, is called with the rows loaded so far after each
	// batch (on the calling goroutine).
	Progress func(rows int64)
	// Values are the session settings for value input (time zone).
	Values *sqltypes.Options
	// MaxLine bounds one line, record or tuple (default copyfmt.DefaultMaxLine).
	MaxLine int
}

// CopyFrom loads a COPY stream (text, CSV or Postgres binary) into a table
// and returns the rows loaded. The stream is parsed batch by batch and
// written to segments as it goes, so memory stays bounded by one sort run
// (Options.RunRows) whatever the input size. Errors name the table, column
// and line in their Detail; on error nothing of the statement is visible.
func (tx *Tx) CopyFrom(ctx context.Context, name string, r io.Reader, opts CopyOptions) (int64, error) {
	if err := tx.check(); err != nil {
		return 0, err
	}
	meta, err := tx.target(name)
	if err != nil {
		return 0, tx.fail(err)
	}
	target, err := copyTargets(meta, opts.Columns)
	if err != nil {
		return 0, tx.fail(err)
	}
	format, err := copyfmt.ParseFormat(opts.Format)
	if err != nil {
		return 0, tx.fail(err)
	}
	fields := make([]arrow.Field, len(target))
	for i, c := range target {
		fields[i] = meta.schema.Field(c)
	}
	// The decoder's buffers come back from the segment writer through a
	// pool of the statement's own (copyPool); closed after src is
	// released, once the writer is done with them.
	pool := newCopyPool(tx.c.mem)
	defer pool.close()
	src, err := copyfmt.NewReader(r, arrow.NewSchema(fields, nil), copyfmt.Options{
		Format:    format,
		Delimiter: opts.Delimiter,
		Null:      opts.Null,
		Header:    opts.Header,
		Quote:     opts.Quote,
		Escape:    opts.Escape,
		Table:     name,
		BatchRows: tx.c.opts.BatchRows,
		MaxLine:   opts.MaxLine,
		Values:    opts.Values,
	}, pool)
	if err != nil {
		return 0, tx.fail(err)
	}
	defer src.Release()
	return tx.load(ctx, meta, src, target, opts.Progress, nil)
}

// copyTargets resolves COPY's column list to table column indices.
func copyTargets(meta *tableMeta, cols []string) ([]int, error) {
	if cols == nil {
		out := make([]int, len(meta.def.Columns))
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	seen := map[int]bool{}
	var out []int
	for _, name := range cols {
		idx := -1
		for i, c := range meta.def.Columns {
			if c.Name == name {
				idx = i
			}
		}
		if idx < 0 {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", name, meta.def.Name)
		}
		if seen[idx] {
			return nil, sqlerr.New(codeDuplicateColumn, "column %q specified more than once", name)
		}
		seen[idx] = true
		out = append(out, idx)
	}
	return out, nil
}

// converter adapts column i of a source batch to the type of the table
// column it fills, returning a new reference.
type converter func(i int, a arrow.Array) (arrow.Array, error)

// load writes the batches of src, whose columns are the table columns
// target (in that order), as one statement. convert, if set, adapts each
// source column to the table type and owns the error context.
func (tx *Tx) load(ctx context.Context, meta *tableMeta, src array.RecordReader, target []int, progress func(int64), convert converter) (int64, error) {
	w := tx.c.newTableWriter(meta)
	err := func() error {
		for src.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			rec, err := widen(tx.c, meta, src.RecordBatch(), target, convert)
			if err != nil {
				return err
			}
			err = w.add(rec)
			rec.Release()
			if err != nil {
				return err
			}
			if progress != nil {
				progress(w.rows)
			}
		}
		if err := src.Err(); err != nil {
			if _, ok := sqlerr.As(err); !ok && ctx.Err() == nil {
				return sqlerr.Wrap(err, sqlerr.DataCorrupted, "could not read input of relation %q: %v", meta.def.Name, err)
			}
			return err
		}
		return nil
	}()
	return tx.endWrite(meta, w, err)
}

// widen places the columns of rec at their table positions, converting them
// if asked, and fills columns the load does not name with NULLs.
func widen(c *Catalog, meta *tableMeta, rec arrow.RecordBatch, target []int, convert converter) (arrow.RecordBatch, error) {
	n := int(rec.NumRows())
	cols := make([]arrow.Array, len(meta.def.Columns))
	defer func() {
		for _, a := range cols {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i, col := range target {
		a := rec.Column(i)
		if convert != nil {
			var err error
			if a, err = convert(i, a); err != nil {
				return nil, err
			}
		} else {
			a.Retain()
		}
		cols[col] = a
	}
	for i, a := range cols {
		if a == nil {
			cols[i] = array.MakeArrayOfNull(c.mem, meta.schema.Field(i).Type, n)
		}
	}
	return array.NewRecordBatch(meta.schema, cols, int64(n)), nil
}

// CopyFromFile loads a server-side file: CSV or text through CopyFrom's
// parser, or Parquet (Format "parquet" or a .parquet extension) read row
// group by row group. Parquet columns match table columns by name when every
// target column is present in the file, else by position; values are cast to
// the column types (42804 naming the column for an impossible conversion,
// 22003 for a value that does not fit).
func (tx *Tx) CopyFromFile(ctx context.Context, name, path string, opts CopyOptions) (int64, error) {
	if err := tx.check(); err != nil {
		return 0, err
	}
	format := strings.ToLower(opts.Format)
	if format == "" {
		switch strings.ToLower(filepath.Ext(path)) {
		case ".parquet":
			format = "parquet"
		case ".csv":
			format = "csv"
		}
	}
	// Only a regular file: a FIFO would block open(2) for good, beyond
	// the reach of cancellation. Reads observe ctx.
	f, err := safefile.Open(path)
	if err != nil {
		if _, ok := sqlerr.As(err); !ok {
			err = sqlerr.Wrap(err, sqlerr.IOError, "could not open file %q for reading: %v", path, err)
		}
		return 0, tx.fail(err)
	}
	defer f.Close()
	if format != "parquet" {
		opts.Format = format
		return tx.CopyFrom(ctx, name, safefile.Reader(ctx, f), opts)
	}
	return tx.copyParquet(ctx, name, path, safefile.ReaderAt(ctx, f), opts)
}

func (tx *Tx) copyParquet(ctx context.Context, name, path string, src safefile.ReadAtSeeker, opts CopyOptions) (int64, error) {
	meta, err := tx.target(name)
	if err != nil {
		return 0, tx.fail(err)
	}
	target, err := copyTargets(meta, opts.Columns)
	if err != nil {
		return 0, tx.fail(err)
	}
	pf, err := file.NewParquetReader(src, file.WithReadProps(parquet.NewReaderProperties(tx.c.mem)))
	if err != nil {
		return 0, tx.fail(sqlerr.Wrap(err, sqlerr.IOError, "could not open Parquet file %q: %v", path, err))
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(tx.c.opts.BatchRows)}, tx.c.mem)
	if err != nil {
		return 0, tx.fail(sqlerr.Wrap(err, sqlerr.DataCorrupted, "could not read Parquet file %q: %v", path, err))
	}
	fileSchema, err := fr.Schema()
	if err != nil {
		return 0, tx.fail(sqlerr.Wrap(err, sqlerr.DataCorrupted, "could not read Parquet schema of %q: %v", path, err))
	}
	// Map target columns to top-level file fields: by name if all are
	// there, else by position.
	cols := make([]int, len(target))
	byName := true
	for i, t := range target {
		idx := fileSchema.FieldIndices(meta.def.Columns[t].Name)
		if len(idx) != 1 {
			byName = false
			break
		}
		cols[i] = idx[0]
	}
	if !byName {
		if fileSchema.NumFields() != len(target) {
			return 0, tx.fail(sqlerr.New(sqlerr.BadCopyFileFormat, "Parquet file %q has %d columns and not all of the %d target columns of relation %q by name", path, fileSchema.NumFields(), len(target), name))
		}
		for i := range cols {
			cols[i] = i
		}
	}
	// Leaf column indices of the chosen fields, for GetRecordReader.
	var leaves []int
	for _, fi := range cols {
		f := fileSchema.Field(fi)
		if f.Type.ID() == arrow.STRUCT || f.Type.ID() == arrow.LIST || f.Type.ID() == arrow.MAP {
			return 0, tx.fail(sqlerr.New(sqlerr.DatatypeMismatch, "Parquet column %q of %q is nested (%s); only flat columns load", f.Name, path, f.Type))
		}
		leaf := fr.Manifest.Fields[fi].ColIndex
		leaves = append(leaves, leaf)
	}
	rr, err := fr.GetRecordReader(ctx, leaves, nil)
	if err != nil {
		return 0, tx.fail(sqlerr.Wrap(err, sqlerr.DataCorrupted, "could not read Parquet file %q: %v", path, err))
	}
	defer rr.Release()
	// The reader yields the requested fields in the order asked for, which
	// is target order.
	convert := castConverter(ctx, tx.c, meta, target, func(i int) string {
		return fmt.Sprintf("Parquet column %q", fileSchema.Field(cols[i]).Name)
	})
	return tx.load(ctx, meta, rr, target, opts.Progress, convert)
}

// castConverter converts source column i to the type of table column
// target[i] with Arrow's safe cast (the Parquet and Arrow loads): 42804
// naming the column for an impossible conversion, 22003 for a value that
// does not fit. source names source column i in messages.
func castConverter(ctx context.Context, c *Catalog, meta *tableMeta, target []int, source func(i int) string) converter {
	castCtx := exec.WithAllocator(ctx, c.mem)
	return func(i int, a arrow.Array) (arrow.Array, error) {
		col := target[i]
		want := meta.schema.Field(col).Type
		if arrow.TypeEqual(a.DataType(), want) {
			a.Retain()
			return a, nil
		}
		out, err := compute.CastArray(castCtx, a, compute.SafeCastOptions(want))
		if err == nil {
			return out, nil
		}
		// Arrow reports a value that does not fit (overflow, lost
		// precision) as ErrInvalid, an impossible conversion otherwise.
		code := sqlerr.DatatypeMismatch
		if errors.Is(err, arrow.ErrInvalid) {
			code = sqlerr.NumericValueOutOfRange
		}
		return nil, sqlerr.Wrap(err, code, "column %q of relation %q is of type %s; %s (%s) does not convert: %v",
			meta.def.Columns[col].Name, meta.def.Name, meta.def.Columns[col].Type, source(i), a.DataType(), err)
	}
}
