package catalog

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

// newMem returns a checked allocator that fails the test if anything leaks.
func newMem(t testing.TB) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

// batch builds a record batch from rows of Go values (nil = NULL).
func batch(t testing.TB, mem memory.Allocator, schema *arrow.Schema, rows ...[]any) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for _, row := range rows {
		require.Len(t, row, schema.NumFields())
		for i, v := range row {
			fb := b.Field(i)
			if v == nil {
				fb.AppendNull()
				continue
			}
			switch fb := fb.(type) {
			case *array.BooleanBuilder:
				fb.Append(v.(bool))
			case *array.Int16Builder:
				fb.Append(int16(v.(int)))
			case *array.Int32Builder:
				fb.Append(int32(v.(int)))
			case *array.Int64Builder:
				fb.Append(int64(v.(int)))
			case *array.Float32Builder:
				fb.Append(float32(v.(float64)))
			case *array.Float64Builder:
				fb.Append(v.(float64))
			case *array.Decimal128Builder:
				fb.Append(decimal128.FromI64(int64(v.(int))))
			case *array.StringBuilder:
				fb.Append(v.(string))
			case *array.BinaryBuilder:
				fb.Append(v.([]byte))
			case *array.Date32Builder:
				fb.Append(arrow.Date32(v.(int)))
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(v.(int)))
			case *array.MonthDayNanoIntervalBuilder:
				fb.Append(v.(arrow.MonthDayNanoInterval))
			default:
				t.Fatalf("batch: unsupported builder %T", fb)
			}
		}
	}
	return b.NewRecordBatch()
}

// reader wraps batches in a RecordReader (taking over the references).
func reader(t testing.TB, schema *arrow.Schema, recs ...arrow.RecordBatch) array.RecordReader {
	t.Helper()
	r, err := array.NewRecordReader(schema, recs)
	require.NoError(t, err)
	for _, rec := range recs {
		rec.Release()
	}
	return r
}

// insert runs one INSERT in its own transaction.
func insert(t testing.TB, c *Catalog, name string, rows ...[]any) {
	t.Helper()
	info, err := c.Table(name)
	require.NoError(t, err)
	rec := batch(t, c.mem, info.Schema, rows...)
	r := reader(t, info.Schema, rec)
	defer r.Release()
	tx := c.Begin()
	_, err = tx.Insert(context.Background(), name, r)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(context.Background()))
}

// scanRows reads a whole scan as rows of strings (ValueStr, "NULL").
func scanRows(t testing.TB, c *Catalog, name string, opts ScanOptions) [][]string {
	t.Helper()
	snap, err := c.Snapshot()
	require.NoError(t, err)
	defer snap.Release()
	return snapRows(t, snap, name, opts)
}

func snapRows(t testing.TB, snap *Snapshot, name string, opts ScanOptions) [][]string {
	t.Helper()
	r, err := snap.Scan(context.Background(), name, opts)
	require.NoError(t, err)
	defer r.Release()
	var out [][]string
	for r.Next() {
		rec := r.RecordBatch()
		if opts.BatchSize > 0 {
			require.LessOrEqual(t, int(rec.NumRows()), opts.BatchSize)
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			row := make([]string, rec.NumCols())
			for j := range row {
				if rec.Column(j).IsNull(i) {
					row[j] = "NULL"
				} else {
					row[j] = rec.Column(j).ValueStr(i)
				}
			}
			out = append(out, row)
		}
	}
	require.NoError(t, r.Err())
	return out
}

func strs(vals ...any) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = fmt.Sprint(v)
	}
	return out
}

func createTable(t testing.TB, c *Catalog, def TableDef) {
	t.Helper()
	tx := c.Begin()
	require.NoError(t, tx.CreateTable(context.Background(), def, false))
	require.NoError(t, tx.Commit(context.Background()))
}

// abandon drops a catalog as a kill -9 after its last flush would: no
// checkpoint, nothing more written, the lock released. What was flushed is
// in the files; the reopened catalog must replay the log.
func (c *Catalog) abandon() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.bgCancel()
	<-c.bgDone
	if c.flStop != nil {
		close(c.flStop)
		<-c.flDone
	}
	c.commitMu.Lock()
	if c.wal != nil {
		_ = c.wal.flush(c.wal.last())
		c.wal.close()
	}
	c.mu.Lock()
	for _, p := range c.pending {
		p.release()
	}
	c.pending = nil
	c.cur.release()
	c.cur = nil
	c.mu.Unlock()
	c.head.release()
	c.head = nil
	c.commitMu.Unlock()
	unlockDir(c.lock)
}

// where builds a Predicate from a test over one row's values as scanRows
// renders them.
func where(mem memory.Allocator, pred func(row []string) bool) Predicate {
	return func(_ context.Context, rec arrow.RecordBatch) (arrow.Array, error) {
		b := array.NewBooleanBuilder(mem)
		defer b.Release()
		for i := 0; i < int(rec.NumRows()); i++ {
			row := make([]string, rec.NumCols())
			for j := range row {
				if rec.Column(j).IsNull(i) {
					row[j] = "NULL"
				} else {
					row[j] = rec.Column(j).ValueStr(i)
				}
			}
			b.Append(pred(row))
		}
		return b.NewArray(), nil
	}
}

// commitTx runs fn in a transaction and commits it.
func commitTx(t testing.TB, c *Catalog, fn func(tx *Tx) error) {
	t.Helper()
	tx := c.Begin()
	if err := fn(tx); err != nil {
		tx.Rollback()
		require.NoError(t, err)
	}
	require.NoError(t, tx.Commit(context.Background()))
}

func init() { defaultLogPreallocate = 256 << 10 }
