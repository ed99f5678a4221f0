package catalog

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

var kvDef = TableDef{
	Name:    "kv",
	Columns: []Column{{Name: "k", Type: sqltypes.Int8Type}, {Name: "v", Type: sqltypes.TextType}},
	OrderBy: []string{"k"},
}

func kvRows(ks ...int) [][]any {
	out := make([][]any, len(ks))
	for i, k := range ks {
		out[i] = []any{k, "v" + strconv.Itoa(k)}
	}
	return out
}

func keysOf(rows [][]string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r[0]
		if len(r) > 1 {
			out[i] += ":" + r[1]
		}
	}
	return out
}

// setV is an UPDATE's SET v = v || suffix, k = k + dk.
func setV(c *Catalog, suffix string, dk int64) func(context.Context, arrow.RecordBatch) (arrow.RecordBatch, error) {
	return func(_ context.Context, old arrow.RecordBatch) (arrow.RecordBatch, error) {
		kb := array.NewInt64Builder(c.mem)
		vb := array.NewStringBuilder(c.mem)
		defer kb.Release()
		defer vb.Release()
		ks, vs := old.Column(0).(*array.Int64), old.Column(1).(*array.String)
		for i := 0; i < int(old.NumRows()); i++ {
			if ks.IsNull(i) {
				kb.AppendNull()
			} else {
				kb.Append(ks.Value(i) + dk)
			}
			vb.Append(vs.Value(i) + suffix)
		}
		k, v := kb.NewArray(), vb.NewArray()
		defer k.Release()
		defer v.Release()
		return array.NewRecordBatch(old.Schema(), []arrow.Array{k, v}, old.NumRows()), nil
	}
}

func TestDeleteAndUpdate(t *testing.T) {
	ctx := context.Background()
	modes(t, Options{AutoCompact: -1, RunRows: 4, BatchRows: 3}, func(t *testing.T, open func() *Catalog) {
		c := open()
		createTable(t, c, kvDef)
		insert(t, c, "kv", kvRows(5, 1, 3, 7)...)     // a segment of its own (RunRows)
		insert(t, c, "kv", kvRows(2, 6)...)           // in memory
		insert(t, c, "kv", kvRows(4, 8, 9, 10, 0)...) // segments again
		var n int64
		commitTx(t, c, func(tx *Tx) (err error) {
			n, err = tx.Delete(ctx, "kv", DeleteOptions{Where: where(c.mem, func(r []string) bool {
				k, _ := strconv.Atoi(r[0])
				return k%3 == 0
			})})
			return err
		})
		require.EqualValues(t, 4, n) // 0 3 6 9
		want := []string{"1:v1", "2:v2", "4:v4", "5:v5", "7:v7", "8:v8", "10:v10"}
		require.Equal(t, want, keysOf(scanRows(t, c, "kv", ScanOptions{})))
		info, err := c.Table("kv")
		require.NoError(t, err)
		require.EqualValues(t, 7, info.Rows)

		// UPDATE moving keys: 1, 2 and 4 become 8, 9 and 11; the new 8
		// follows the old 8 (insertion order), the moved rows keep their
		// relative order.
		commitTx(t, c, func(tx *Tx) (err error) {
			n, err = tx.Update(ctx, "kv", UpdateOptions{Range: &Range{Hi: 4}, Set: setV(c, "u", 7)})
			return err
		})
		require.EqualValues(t, 3, n)
		want = []string{"5:v5", "7:v7", "8:v8", "8:v1u", "9:v2u", "10:v10", "11:v4u"}
		require.Equal(t, want, keysOf(scanRows(t, c, "kv", ScanOptions{})))

		// Equal new keys keep the old scan order (stable).
		commitTx(t, c, func(tx *Tx) (err error) {
			_, err = tx.Update(ctx, "kv", UpdateOptions{Range: &Range{Lo: 8, Hi: 9}, Set: func(ctx context.Context, old arrow.RecordBatch) (arrow.RecordBatch, error) {
				rec, err := setV(c, "s", 0)(ctx, old)
				if err != nil {
					return nil, err
				}
				defer rec.Release()
				kb := array.NewInt64Builder(c.mem)
				defer kb.Release()
				for range int(rec.NumRows()) {
					kb.Append(6)
				}
				k := kb.NewArray()
				defer k.Release()
				return array.NewRecordBatch(rec.Schema(), []arrow.Array{k, rec.Column(1)}, rec.NumRows()), nil
			}})
			return err
		})
		want = []string{"5:v5", "6:v8s", "6:v1us", "6:v2us", "7:v7", "10:v10", "11:v4u"}
		require.Equal(t, want, keysOf(scanRows(t, c, "kv", ScanOptions{})))
		require.Equal(t, []string{"6:v8s", "6:v1us", "6:v2us", "7:v7"}, keysOf(scanRows(t, c, "kv", ScanOptions{Range: &Range{Lo: 6, Hi: 7}})))

		require.NoError(t, c.Compact(ctx, "kv"))
		require.Equal(t, want, keysOf(scanRows(t, c, "kv", ScanOptions{})))
		c = open() // reopen (disk): durable
		require.Equal(t, want, keysOf(scanRows(t, c, "kv", ScanOptions{})))

		commitTx(t, c, func(tx *Tx) error { return tx.Truncate(ctx, "kv") })
		require.Empty(t, scanRows(t, c, "kv", ScanOptions{}))
		insert(t, c, "kv", kvRows(3)...)
		c = open()
		require.Equal(t, []string{"3:v3"}, keysOf(scanRows(t, c, "kv", ScanOptions{})))
	})
}

// TestRetentionDropsWholeSegmentsUnread: segments inside the deleted range
// go without being opened (their files are removed first to prove it); a
// straddling one is masked.
func TestRetentionDropsWholeSegmentsUnread(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t)
	dir := t.TempDir()
	c, err := Open(ctx, dir, Options{Allocator: mem, AutoCompact: -1, RunRows: 3})
	require.NoError(t, err)
	defer c.Close()
	createTable(t, c, kvDef)
	insert(t, c, "kv", kvRows(1, 2, 3)...)
	insert(t, c, "kv", kvRows(4, 5, 6)...)
	insert(t, c, "kv", kvRows(7, 8, 9)...)
	insert(t, c, "kv", kvRows(10)...) // in memory
	snap, err := c.Snapshot()
	require.NoError(t, err)
	ts, _ := snap.table("kv")
	require.Len(t, ts.segs, 4)
	files := []string{ts.segs[0].s.path, ts.segs[1].s.path}
	snap.Release()
	// Read the first two segments' bytes away: a DELETE that opened them
	// would fail.
	saved := map[string][]byte{}
	for _, f := range files {
		saved[f], err = os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.Remove(f))
	}
	var n int64
	commitTx(t, c, func(tx *Tx) (err error) {
		n, err = tx.Delete(ctx, "kv", DeleteOptions{Range: &Range{Hi: 8, HiExclusive: true}})
		return err
	})
	require.EqualValues(t, 7, n)
	for f, data := range saved {
		require.NoError(t, os.WriteFile(f, data, 0o644)) // the checkpoint's cleanup deletes them again
	}
	require.Equal(t, []string{"8:v8", "9:v9", "10:v10"}, keysOf(scanRows(t, c, "kv", ScanOptions{})))
	require.NoError(t, c.Checkpoint(ctx))
	for f := range saved {
		require.NoFileExists(t, f)
	}
	snap, err = c.Snapshot()
	require.NoError(t, err)
	ts, _ = snap.table("kv")
	require.Len(t, ts.segs, 2, "the straddling segment stays, masked")
	require.NotNil(t, ts.segs[0].del)
	snap.Release()
	c.abandon()
	c, err = Open(ctx, dir, Options{Allocator: mem, AutoCompact: -1, RunRows: 3})
	require.NoError(t, err)
	require.Equal(t, []string{"8:v8", "9:v9", "10:v10"}, keysOf(scanRows(t, c, "kv", ScanOptions{})))
}

func TestWriteConflicts(t *testing.T) {
	ctx := context.Background()
	modes(t, Options{AutoCompact: -1}, func(t *testing.T, open func() *Catalog) {
		c := open()
		createTable(t, c, kvDef)
		insert(t, c, "kv", kvRows(1, 2, 3, 4)...)
		one := func(k int) DeleteOptions { return DeleteOptions{Range: &Range{Lo: k, Hi: k}} }
		t1, t2 := c.Begin(), c.Begin()
		_, err := t1.Delete(ctx, "kv", one(2))
		require.NoError(t, err)
		_, err = t2.Delete(ctx, "kv", one(2))
		require.NoError(t, err)
		_, err = t2.Delete(ctx, "kv", one(2))
		require.NoError(t, err, "a row deleted earlier in the transaction is not deleted again")
		require.NoError(t, t1.Commit(ctx))
		require.Equal(t, codeSerializationFailure, sqlerr.Code(t2.Commit(ctx)), "first committer wins")

		t1, t2 = c.Begin(), c.Begin()
		_, err = t1.Delete(ctx, "kv", one(1))
		require.NoError(t, err)
		_, err = t2.Update(ctx, "kv", UpdateOptions{Range: &Range{Lo: 3, Hi: 3}, Set: setV(c, "x", 0)})
		require.NoError(t, err)
		require.NoError(t, t1.Commit(ctx))
		require.NoError(t, t2.Commit(ctx), "different rows do not conflict")
		require.Equal(t, []string{"3:v3x", "4:v4"}, keysOf(scanRows(t, c, "kv", ScanOptions{})))

		// Concurrent inserts into the in-memory rows a DELETE is masking.
		t1 = c.Begin()
		_, err = t1.Delete(ctx, "kv", DeleteOptions{})
		require.NoError(t, err)
		insert(t, c, "kv", kvRows(9)...)
		require.NoError(t, t1.Commit(ctx))
		require.Equal(t, []string{"9:v9"}, keysOf(scanRows(t, c, "kv", ScanOptions{})), "rows committed after the DELETE's snapshot stay")
	})
}

func TestAlterTable(t *testing.T) {
	ctx := context.Background()
	modes(t, Options{AutoCompact: -1, RunRows: 2}, func(t *testing.T, open func() *Catalog) {
		c := open()
		createTable(t, c, kvDef)
		insert(t, c, "kv", kvRows(2, 1)...) // a file segment
		insert(t, c, "kv", kvRows(3)...)    // in memory
		def := "7"
		commitTx(t, c, func(tx *Tx) error {
			return tx.AddColumn(ctx, "kv", Column{Name: "n", Type: sqltypes.Int4Type, NotNull: true, Default: &def}, false)
		})
		info, err := c.Table("kv")
		require.NoError(t, err)
		require.Len(t, info.Columns, 3)
		insert(t, c, "kv", []any{4, "v4", 40})
		require.Equal(t, [][]string{{"1", "v1", "7"}, {"2", "v2", "7"}, {"3", "v3", "7"}, {"4", "v4", "40"}}, scanRows(t, c, "kv", ScanOptions{}))
		tx := c.Begin()
		err = tx.AddColumn(ctx, "kv", Column{Name: "m", Type: sqltypes.Int4Type, NotNull: true}, false)
		require.Equal(t, sqlerr.NotNullViolation, sqlerr.Code(err), "NOT NULL without default on a non-empty table")
		tx.Rollback()
		commitTx(t, c, func(tx *Tx) error {
			if err := tx.RenameColumn(ctx, "kv", "k", "key"); err != nil {
				return err
			}
			if err := tx.DropColumn(ctx, "kv", "v", false); err != nil {
				return err
			}
			return tx.RenameTable(ctx, "kv", "kv2")
		})
		_, err = c.Table("kv")
		require.Equal(t, sqlerr.UndefinedTable, sqlerr.Code(err))
		info, err = c.Table("kv2")
		require.NoError(t, err)
		require.Equal(t, []string{"key"}, info.OrderBy)
		insert(t, c, "kv2", []any{0, 5})
		want := [][]string{{"0", "5"}, {"1", "7"}, {"2", "7"}, {"3", "7"}, {"4", "40"}}
		require.Equal(t, want, scanRows(t, c, "kv2", ScanOptions{}))
		tx = c.Begin()
		require.Equal(t, sqlerr.FeatureNotSupported, sqlerr.Code(tx.DropColumn(ctx, "kv2", "key", false)))
		tx.Rollback()
		require.NoError(t, c.Compact(ctx, "kv2"))
		require.Equal(t, want, scanRows(t, c, "kv2", ScanOptions{}))
		c = open()
		require.Equal(t, want, scanRows(t, c, "kv2", ScanOptions{}))
		require.Equal(t, [][]string{{"1", "7"}, {"2", "7"}}, scanRows(t, c, "kv2", ScanOptions{Range: &Range{Lo: 1, Hi: 2}}))
	})
}

func TestViewsAndTempTables(t *testing.T) {
	ctx := context.Background()
	modes(t, Options{}, func(t *testing.T, open func() *Catalog) {
		c := open()
		createTable(t, c, kvDef)
		v := ViewDef{Name: "recent", SQL: "SELECT k FROM kv WHERE k > 5", Columns: []string{"k"}}
		commitTx(t, c, func(tx *Tx) error { return tx.CreateView(ctx, v, false) })
		tx := c.Begin()
		require.Equal(t, sqlerr.DuplicateTable, sqlerr.Code(tx.CreateView(ctx, v, false)))
		tx.Rollback()
		tx = c.Begin()
		require.Equal(t, sqlerr.DuplicateTable, sqlerr.Code(tx.CreateTable(ctx, TableDef{Name: "recent", Columns: kvDef.Columns}, false)))
		tx.Rollback()
		tx = c.Begin()
		_, err := tx.Insert(ctx, "recent", nil)
		require.Equal(t, codeWrongObjectType, sqlerr.Code(err))
		tx.Rollback()
		v.SQL = "SELECT k FROM kv WHERE k > 6"
		commitTx(t, c, func(tx *Tx) error { return tx.CreateView(ctx, v, true) })
		c = open()
		got, err := c.View("recent")
		require.NoError(t, err)
		require.Equal(t, v, *got)
		require.Equal(t, []string{"recent"}, c.Views())
		commitTx(t, c, func(tx *Tx) error { return tx.DropView(ctx, "recent", false) })
		c = open()
		require.Empty(t, c.Views())

		tmp, err := c.NewTemp()
		require.NoError(t, err)
		createTable(t, tmp, kvDef)
		insert(t, tmp, "kv", kvRows(2, 1)...)
		require.Equal(t, []string{"1:v1", "2:v2"}, keysOf(scanRows(t, tmp, "kv", ScanOptions{})))
		info, err := tmp.Table("kv")
		require.NoError(t, err)
		require.GreaterOrEqual(t, info.ID, uint64(tempTableIDs))
		require.NoError(t, tmp.Close())
		require.Empty(t, scanRows(t, c, "kv", ScanOptions{}), "the temporary table is another table")
	})
}

// TestLogReplay: what was committed (and flushed) is there after a crash,
// with and without a checkpoint in between, and a torn tail is cut off.
func TestLogReplay(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t)
	dir := t.TempDir()
	opts := Options{Allocator: mem, AutoCompact: -1, RunRows: 3, CheckpointRows: -1}
	c, err := Open(ctx, dir, opts)
	require.NoError(t, err)
	createTable(t, c, kvDef)
	createTable(t, c, TableDef{Name: "log", Columns: []Column{{Name: "n", Type: sqltypes.Int8Type}}})
	insert(t, c, "kv", kvRows(5, 4, 3, 2)...) // segments
	insert(t, c, "kv", kvRows(1)...)
	require.NoError(t, c.Checkpoint(ctx))
	insert(t, c, "kv", kvRows(0)...)
	insert(t, c, "log", []any{1}, []any{2})
	commitTx(t, c, func(tx *Tx) error {
		if _, err := tx.Delete(ctx, "kv", DeleteOptions{Range: &Range{Lo: 2, Hi: 3}}); err != nil {
			return err
		}
		_, err := tx.Update(ctx, "kv", UpdateOptions{Range: &Range{Lo: 0, Hi: 0}, Set: setV(c, "u", 10)})
		return err
	})
	commitTx(t, c, func(tx *Tx) error {
		return tx.CreateView(ctx, ViewDef{Name: "v", SQL: "SELECT 1", Columns: []string{"x"}}, false)
	})
	tx := c.Begin()
	tx.SetSynchronousCommit(false)
	rdr := reader(t, mustSchema(t, c, "log"), batch(t, mem, mustSchema(t, c, "log"), []any{3}))
	_, err = tx.Insert(ctx, "log", rdr)
	rdr.Release()
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	wantKV := []string{"1:v1", "4:v4", "5:v5", "10:v0u"}
	wantLog := [][]string{{"1"}, {"2"}, {"3"}}
	require.Equal(t, wantKV, keysOf(scanRows(t, c, "kv", ScanOptions{})))
	require.Equal(t, wantLog, scanRows(t, c, "log", ScanOptions{}))
	c.abandon()

	// A torn tail: half a record after the last one.
	logs, err := listWAL(dir)
	require.NoError(t, err)
	last := logs[len(logs)-1].path
	data, err := os.ReadFile(last)
	require.NoError(t, err)
	end := len(walMagic)
	for {
		n := int(uint32(data[end]) | uint32(data[end+1])<<8 | uint32(data[end+2])<<16 | uint32(data[end+3])<<24)
		if n == 0 {
			break
		}
		end += walFrame + n
	}
	copy(data[end:], []byte{200, 0, 0, 0, 1, 2, 3, 4, 9, 9, 9})
	require.NoError(t, os.WriteFile(last, data, 0o644))

	for round := 0; round < 2; round++ {
		c, err = Open(ctx, dir, opts)
		require.NoError(t, err)
		require.Equal(t, wantKV, keysOf(scanRows(t, c, "kv", ScanOptions{})))
		require.Equal(t, wantLog, scanRows(t, c, "log", ScanOptions{}))
		v, err := c.View("v")
		require.NoError(t, err)
		require.Equal(t, "SELECT 1", v.SQL)
		insert(t, c, "log", []any{4 + round})
		wantLog = append(wantLog, []string{strconv.Itoa(4 + round)})
		require.Equal(t, wantLog, scanRows(t, c, "log", ScanOptions{}))
		c.abandon()
	}
	c, err = Open(ctx, dir, opts)
	require.NoError(t, err)
	require.Equal(t, wantLog, scanRows(t, c, "log", ScanOptions{}))
	require.NoError(t, c.Close())
	logs, err = listWAL(dir)
	require.NoError(t, err)
	require.Len(t, logs, 1, "a clean close checkpoints: one (empty) log file")
	files, _ := filepath.Glob(filepath.Join(dir, "seg-*"))
	require.NotEmpty(t, files)
}

func mustSchema(t testing.TB, c *Catalog, name string) *arrow.Schema {
	info, err := c.Table(name)
	require.NoError(t, err)
	return info.Schema
}

// TestGroupCommit: concurrent synchronous commits share flushes, and every
// one is visible when its Commit returns.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t)
	c, err := Open(ctx, t.TempDir(), Options{Allocator: mem, AutoCompact: -1})
	require.NoError(t, err)
	defer c.Close()
	createTable(t, c, kvDef)
	before := c.wal.flushes
	const workers, each = 8, 25
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				k := w*each + i
				insert(t, c, "kv", kvRows(k)...)
				rows := scanRows(t, c, "kv", ScanOptions{Range: &Range{Lo: k, Hi: k}})
				require.Len(t, rows, 1, "a commit is visible when Commit returns")
			}
		}(w)
	}
	wg.Wait()
	c.wal.mu.Lock()
	flushes := c.wal.flushes - before
	c.wal.mu.Unlock()
	require.Len(t, scanRows(t, c, "kv", ScanOptions{}), workers*each)
	t.Logf("%d commits, %d flushes", workers*each, flushes)
	require.LessOrEqual(t, flushes, uint64(workers*each))
}

// TestGroupCommitGroups: 16 commits started together while a flush is
// under way are made durable by few flushes, not 16. The log's sync is
// slowed to 50 ms, which is what lets them queue (a disk whose sync
// takes that long; on a fast one they queue less and need it less).
func TestGroupCommitGroups(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t)
	c, err := Open(ctx, t.TempDir(), Options{Allocator: mem, AutoCompact: -1})
	require.NoError(t, err)
	defer c.Close()
	createTable(t, c, kvDef)
	c.wal.mu.Lock()
	c.wal.write = func(f *os.File, b []byte, off int64) error {
		time.Sleep(50 * time.Millisecond)
		return walWrite(f, b, off)
	}
	c.wal.mu.Unlock()
	before := c.Stats()
	const clients = 16
	var wg sync.WaitGroup
	start := make(chan struct{})
	for k := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			insert(t, c, "kv", kvRows(k)...)
		}()
	}
	close(start)
	wg.Wait()
	after := c.Stats()
	commits, flushes := after.LogRecords-before.LogRecords, after.LogFlushes-before.LogFlushes
	require.Equal(t, int64(clients), commits)
	require.Len(t, scanRows(t, c, "kv", ScanOptions{}), clients)
	t.Logf("%d commits, %d flushes", commits, flushes)
	// The first commit's flush runs alone; the other 15 queue behind it
	// and share the next one or two (at most half as many flushes as
	// commits leaves room for a loaded machine).
	require.LessOrEqual(t, flushes, int64(8), "16 concurrent commits need few fsyncs")
}

// TestLogRowCodec round-trips every column type, NULLs and a sliced batch
// through the log's row encoding.
func TestLogRowCodec(t *testing.T) {
	mem := newMem(t)
	types := []sqltypes.Type{
		sqltypes.BoolType, sqltypes.Int2Type, sqltypes.Int4Type, sqltypes.Int8Type,
		sqltypes.Float4Type, sqltypes.Float8Type, sqltypes.NumericType(12, 2),
		sqltypes.TextType, sqltypes.ByteaType, sqltypes.DateType,
		sqltypes.TimestampType, sqltypes.TimestampTZType, sqltypes.IntervalType,
	}
	var fields []arrow.Field
	for i, ty := range types {
		fields = append(fields, ty.Field(string(rune('a'+i)), true))
	}
	schema := arrow.NewSchema(fields, nil)
	iv := arrow.MonthDayNanoInterval{Months: 1, Days: -2, Nanoseconds: 3000}
	rec := batch(t, mem, schema,
		[]any{false, 0, 0, 0, 0.0, 0.0, 0, "", []byte{}, 0, 0, 0, iv},
		[]any{true, -2, 3, -4, 5.5, -6.5, 7, "héllo", []byte{0, 1}, 9, -10, 11, iv},
		[]any{nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
		[]any{true, 32767, 1 << 30, 1 << 62, 1e30, 1e300, 99, "x", []byte{255}, -1, 1 << 50, -1, iv},
	)
	defer rec.Release()
	for _, part := range []arrow.RecordBatch{rec, rec.NewSlice(1, 4)} {
		enc := appendBatch(nil, part)
		got, err := readBatch(&byteReader{b: enc}, mem, schema)
		require.NoError(t, err)
		require.Equal(t, part.NumRows(), got.NumRows())
		for c := 0; c < int(part.NumCols()); c++ {
			for r := 0; r < int(part.NumRows()); r++ {
				require.Equal(t, part.Column(c).IsNull(r), got.Column(c).IsNull(r))
				if !part.Column(c).IsNull(r) {
					require.Equal(t, part.Column(c).ValueStr(r), got.Column(c).ValueStr(r), "column %d row %d", c, r)
				}
			}
		}
		got.Release()
		_, err = readBatch(&byteReader{b: enc[:len(enc)-1]}, mem, schema)
		require.Error(t, err, "a truncated record is an error, not a panic")
		if part != rec {
			part.Release()
		}
	}
}
