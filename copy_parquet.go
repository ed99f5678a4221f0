package asofsql

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// parquetRowGroupRows bounds a Parquet row group: the writer holds one
// encoded row group in memory until it is flushed, so the bound is what
// keeps COPY TO of a large table in bounded memory.
const parquetRowGroupRows = 1 << 20

// copyOutParquet writes a table's or a query's rows as a Parquet file
// (Snappy-compressed, one row group per parquetRowGroupRows rows). The
// Arrow schema, with each column's SQL type in its metadata, is stored in
// the file, so COPY ... FROM reads the types back exactly; other readers
// see TIMESTAMP as timestamp(us) (UTC-adjusted for TIMESTAMPTZ) and
// NUMERIC(p,s) as decimal(p,s).
func (s *Session) copyOutParquet(ctx context.Context, snap *snapshot, p *planner.Copy, args []any, w io.Writer) (int64, error) {
	op, types, names, err := s.copySource(ctx, snap, p, args)
	if err != nil {
		return 0, err
	}
	fields := make([]arrow.Field, len(types))
	for i, t := range types {
		if t.Kind == sqltypes.Interval {
			op.Close()
			// Parquet's INTERVAL (months, days, milliseconds) would lose
			// the microseconds, and pqarrow does not write it.
			return 0, sqlerr.New(sqlerr.FeatureNotSupported, "COPY TO in format parquet of column %q of type interval is not supported", names[i])
		}
		fields[i] = t.Field(names[i], true)
	}
	schema := arrow.NewSchema(fields, nil)
	mem := s.db.opts.mem
	fw, err := pqarrow.NewFileWriter(schema, w,
		parquet.NewWriterProperties(parquet.WithAllocator(mem), parquet.WithCompression(compress.Codecs.Snappy)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem), pqarrow.WithStoreSchema()))
	if err != nil {
		op.Close()
		return 0, sqlerr.Wrap(err, sqlerr.IOError, "could not write Parquet file: %v", err)
	}
	var n, inGroup int64
	err = exec.Drain(ctx, op, func(b arrow.RecordBatch) error {
		if b.NumRows() == 0 {
			return nil
		}
		if inGroup >= parquetRowGroupRows {
			fw.NewBufferedRowGroup()
			inGroup = 0
		}
		// The batch's own schema may differ in metadata; the file's is
		// the one the columns' SQL types give.
		rec := array.NewRecordBatch(schema, b.Columns(), b.NumRows())
		defer rec.Release()
		if err := fw.WriteBuffered(rec); err != nil {
			return sqlerr.Wrap(err, sqlerr.IOError, "could not write Parquet file: %v", err)
		}
		n += b.NumRows()
		inGroup += b.NumRows()
		return nil
	})
	if cerr := fw.Close(); err == nil && cerr != nil {
		err = sqlerr.Wrap(cerr, sqlerr.IOError, "could not write Parquet file: %v", cerr)
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}
