package catalog

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

var quotesDef = TableDef{
	Name: "quotes",
	Columns: []Column{
		{Name: "ts", Type: sqltypes.TimestampType},
		{Name: "sym", Type: sqltypes.TextType, NotNull: true},
		{Name: "bid", Type: sqltypes.Float8Type},
	},
	OrderBy: []string{"ts"},
}

// modes runs a test against an in-memory catalog and a data directory.
func modes(t *testing.T, opts Options, fn func(t *testing.T, open func() *Catalog)) {
	for _, mode := range []string{"memory", "disk"} {
		t.Run(mode, func(t *testing.T) {
			mem := newMem(t)
			opts := opts
			opts.Allocator = mem
			dir := Memory
			if mode == "disk" {
				dir = t.TempDir()
			}
			var c *Catalog
			open := func() *Catalog {
				if c != nil && dir != Memory {
					require.NoError(t, c.Close())
					c = nil
				}
				if c == nil {
					var err error
					c, err = Open(context.Background(), dir, opts)
					require.NoError(t, err)
				}
				return c
			}
			t.Cleanup(func() {
				if c != nil {
					require.NoError(t, c.Close())
				}
			})
			fn(t, open)
		})
	}
}

func TestOrderedScanIsStableNullsLast(t *testing.T) {
	modes(t, Options{AutoCompact: -1, RunRows: 4, BatchRows: 2}, func(t *testing.T, open func() *Catalog) {
		c := open()
		createTable(t, c, quotesDef)
		// Three statements, out of order, with equal keys across and within
		// statements and NULL keys; RunRows=4 splits the first statement
		// into two sorted runs.
		insert(t, c, "quotes",
			[]any{30, "a1", 1.0}, []any{10, "a2", 2.0}, []any{nil, "a3", 3.0},
			[]any{20, "a4", 4.0}, []any{10, "a5", 5.0}, []any{30, "a6", 6.0})
		insert(t, c, "quotes", []any{10, "b1", 7.0}, []any{nil, "b2", 8.0}, []any{5, "b3", 9.0})
		insert(t, c, "quotes", []any{30, "c1", 10.0})
		want := []string{"b3", "a2", "a5", "b1", "a4", "a1", "a6", "c1", "a3", "b2"}
		for _, bs := range []int{1, 2, 3, 7, 1024} {
			rows := scanRows(t, open(), "quotes", ScanOptions{Columns: []int{1}, BatchSize: bs})
			var got []string
			for _, r := range rows {
				got = append(got, r[0])
			}
			require.Equal(t, want, got, "batch size %d", bs)
		}
		c = open()
		require.NoError(t, c.Compact(context.Background(), "quotes"))
		info, err := c.Table("quotes")
		require.NoError(t, err)
		require.Equal(t, int64(10), info.Rows)
		rows := scanRows(t, c, "quotes", ScanOptions{Columns: []int{1}})
		var got []string
		for _, r := range rows {
			got = append(got, r[0])
		}
		require.Equal(t, want, got, "after compaction")
		c = open()
		rows = scanRows(t, c, "quotes", ScanOptions{Columns: []int{1}})
		require.Len(t, rows, 10)
	})
}

func TestRangeScanPrunesAndTrims(t *testing.T) {
	modes(t, Options{AutoCompact: -1, RunRows: 3, BatchRows: 2}, func(t *testing.T, open func() *Catalog) {
		c := open()
		createTable(t, c, quotesDef)
		for i := 0; i < 5; i++ {
			// Segment i holds keys 10i..10i+2, plus a NULL key.
			insert(t, c, "quotes", []any{10*i + 2, "x", 1.0}, []any{10 * i, "x", 1.0}, []any{nil, "n", 0.0}, []any{10*i + 1, "x", 1.0})
		}
		keys := func(r *Range) []string {
			var out []string
			for _, row := range scanRows(t, c, "quotes", ScanOptions{Columns: []int{0}, Range: r}) {
				out = append(out, row[0])
			}
			return out
		}
		ts := func(us int) string {
			return arrow.Timestamp(us).ToTime(arrow.Microsecond).Format("2006-01-02T15:04:05.999999")
		}
		require.Equal(t, []string{ts(11), ts(12), ts(20), ts(21)}, keys(&Range{Lo: 11, Hi: int64(21)}))
		require.Equal(t, []string{ts(12), ts(20)}, keys(&Range{Lo: 11, Hi: 21, LoExclusive: true, HiExclusive: true}))
		require.Equal(t, []string{ts(40), ts(41), ts(42)}, keys(&Range{Lo: time.UnixMicro(40).UTC()}))
		require.Empty(t, keys(&Range{Lo: 100}))

		snap, err := c.Snapshot()
		require.NoError(t, err)
		defer snap.Release()
		_, err = snap.Scan(context.Background(), "quotes", ScanOptions{Range: &Range{Lo: "x"}})
		require.Equal(t, sqlerr.DatatypeMismatch, sqlerr.Code(err))
	})
}

func TestRangePruningSkipsSegments(t *testing.T) {
	mem := newMem(t)
	c, err := Open(context.Background(), Memory, Options{Allocator: mem, AutoCompact: -1, RunRows: 2})
	require.NoError(t, err)
	defer c.Close()
	createTable(t, c, quotesDef)
	for i := 0; i < 4; i++ {
		insert(t, c, "quotes", []any{10 * i, "x", 1.0}, []any{10*i + 5, "x", 1.0})
	}
	snap, err := c.Snapshot()
	require.NoError(t, err)
	defer snap.Release()
	ts, _ := snap.table("quotes")
	r, err := newScanReader(context.Background(), mem, ts.meta, ts.segs, ScanOptions{BatchSize: 8, Range: &Range{Lo: 12, Hi: 25}})
	require.NoError(t, err)
	defer r.Release()
	require.Len(t, r.segs, 2, "only the segments [10,15] and [20,25] overlap")
}

func TestUnorderedKeepsInsertionOrder(t *testing.T) {
	modes(t, Options{AutoCompact: -1, RunRows: 3}, func(t *testing.T, open func() *Catalog) {
		c := open()
		def := TableDef{Name: "log", Columns: []Column{{Name: "n", Type: sqltypes.Int8Type}}}
		createTable(t, c, def)
		var want [][]string
		for s := 0; s < 4; s++ {
			var rows [][]any
			for i := 0; i < 4; i++ {
				rows = append(rows, []any{100 - 10*s - i})
				want = append(want, strs(100-10*s-i))
			}
			insert(t, c, "log", rows...)
		}
		require.Equal(t, want, scanRows(t, c, "log", ScanOptions{BatchSize: 5}))
		require.NoError(t, c.Compact(context.Background(), "log"))
		c = open()
		require.Equal(t, want, scanRows(t, c, "log", ScanOptions{}))
		_, err := c.Table("log")
		require.NoError(t, err)
		snap, err := c.Snapshot()
		require.NoError(t, err)
		defer snap.Release()
		_, err = snap.Scan(context.Background(), "log", ScanOptions{Range: &Range{Lo: 1}})
		require.Equal(t, sqlerr.InvalidParameterValue, sqlerr.Code(err))
	})
}

func TestAllTypesRoundTrip(t *testing.T) {
	modes(t, Options{AutoCompact: -1}, func(t *testing.T, open func() *Catalog) {
		c := open()
		types := []sqltypes.Type{
			sqltypes.BoolType, sqltypes.Int2Type, sqltypes.Int4Type, sqltypes.Int8Type,
			sqltypes.Float4Type, sqltypes.Float8Type, sqltypes.NumericType(12, 2), sqltypes.NumericType(sqltypes.NoLimit, sqltypes.NoLimit),
			sqltypes.TextType, sqltypes.VarcharOf(5), sqltypes.ByteaType, sqltypes.DateType,
			sqltypes.TimestampType, sqltypes.TimestampTZType, sqltypes.IntervalType,
		}
		var cols []Column
		for i, ty := range types {
			cols = append(cols, Column{Name: string(rune('a' + i)), Type: ty})
		}
		// Every type except INTERVAL can be an ordering column; order by
		// several of them.
		createTable(t, c, TableDef{Name: "t", Columns: cols, OrderBy: []string{"i", "b", "g"}})
		iv := arrow.MonthDayNanoInterval{Months: 1, Days: 2, Nanoseconds: 3000}
		insert(t, c, "t",
			[]any{true, 2, 3, 4, 5.5, 6.5, 7, 8, "zz", "héllo", []byte{1, 2}, 9, 10, 11, iv},
			[]any{false, 1, 3, 4, 5.5, 6.5, 7, 8, "aa", "x", []byte{}, 9, 10, 11, iv},
			[]any{nil, nil, nil, nil, nil, nil, nil, nil, "aa", nil, nil, nil, nil, nil, nil},
		)
		c = open()
		rows := scanRows(t, c, "t", ScanOptions{})
		require.Len(t, rows, 3)
		require.Equal(t, "aa", rows[0][8])
		require.Equal(t, "1", rows[0][1], "equal text key: ordered by b next")
		require.Equal(t, "NULL", rows[1][1], "NULLs last in the second key")
		require.Equal(t, "zz", rows[2][8])
		require.Equal(t, "héllo", rows[2][9])
		info, err := c.Table("t")
		require.NoError(t, err)
		for i, ty := range types {
			got, err := sqltypes.FromField(info.Schema.Field(i))
			require.NoError(t, err)
			require.Equal(t, ty, got)
		}
		require.Equal(t, []int{8, 1, 6}, info.OrderKeys)
	})
}

func TestStatementErrors(t *testing.T) {
	modes(t, Options{AutoCompact: -1}, func(t *testing.T, open func() *Catalog) {
		c := open()
		ctx := context.Background()
		createTable(t, c, quotesDef)
		tx := c.Begin()
		require.Equal(t, sqlerr.DuplicateTable, sqlerr.Code(tx.CreateTable(ctx, quotesDef, false)))
		require.Equal(t, sqlerr.InFailedSQLTransaction, sqlerr.Code(tx.CreateTable(ctx, TableDef{Name: "x", Columns: quotesDef.Columns}, false)))
		require.Equal(t, sqlerr.InFailedSQLTransaction, sqlerr.Code(tx.Commit(ctx)))

		tx = c.Begin()
		require.NoError(t, tx.CreateTable(ctx, quotesDef, true), "IF NOT EXISTS")
		require.NoError(t, tx.DropTable(ctx, "nope", true), "IF EXISTS")
		require.Equal(t, sqlerr.UndefinedTable, sqlerr.Code(tx.DropTable(ctx, "nope", false)))
		tx.Rollback()

		for _, tc := range []struct {
			name string
			def  TableDef
			code string
		}{
			{"unknown order column", TableDef{Name: "a", Columns: quotesDef.Columns, OrderBy: []string{"zz"}}, sqlerr.UndefinedColumn},
			{"duplicate column", TableDef{Name: "a", Columns: []Column{{Name: "x", Type: sqltypes.Int4Type}, {Name: "x", Type: sqltypes.Int4Type}}}, codeDuplicateColumn},
			{"no columns", TableDef{Name: "a"}, codeInvalidTableDefinition},
			{"interval key", TableDef{Name: "a", Columns: []Column{{Name: "i", Type: sqltypes.IntervalType}}, OrderBy: []string{"i"}}, sqlerr.FeatureNotSupported},
			{"unknown type", TableDef{Name: "a", Columns: []Column{{Name: "i", Type: sqltypes.UnknownType}}}, codeInvalidTableDefinition},
		} {
			tx := c.Begin()
			require.Equal(t, tc.code, sqlerr.Code(tx.CreateTable(ctx, tc.def, false)), tc.name)
			tx.Rollback()
		}

		info, err := c.Table("quotes")
		require.NoError(t, err)
		// NULL into NOT NULL, in the second batch of a statement: nothing of
		// the statement (not even its first batch) may become visible.
		tx = c.Begin()
		r := reader(t, info.Schema,
			batch(t, c.mem, info.Schema, []any{1, "ok", 1.0}),
			batch(t, c.mem, info.Schema, []any{2, "ok", 1.0}, []any{3, nil, 2.0}))
		_, err = tx.Insert(ctx, "quotes", r)
		r.Release()
		e, ok := sqlerr.As(err)
		require.True(t, ok)
		require.Equal(t, sqlerr.NotNullViolation, e.Code)
		require.Contains(t, e.Message, `"sym"`)
		require.Contains(t, e.Message, `"quotes"`)
		require.Contains(t, e.Detail, "row 3")
		require.Error(t, tx.Commit(ctx))
		require.Empty(t, scanRows(t, c, "quotes", ScanOptions{}))

		// Wrong shape and wrong type.
		tx = c.Begin()
		short := arrow.NewSchema(info.Schema.Fields()[:2], nil)
		r = reader(t, short, batch(t, c.mem, short, []any{1, "a"}))
		_, err = tx.Insert(ctx, "quotes", r)
		r.Release()
		require.Equal(t, sqlerr.SyntaxError, sqlerr.Code(err))
		tx.Rollback()
		tx = c.Begin()
		wrong := arrow.NewSchema([]arrow.Field{sqltypes.Int8Type.Field("ts", true), info.Schema.Field(1), info.Schema.Field(2)}, nil)
		r = reader(t, wrong, batch(t, c.mem, wrong, []any{1, "a", 1.0}))
		_, err = tx.Insert(ctx, "quotes", r)
		r.Release()
		require.Equal(t, sqlerr.DatatypeMismatch, sqlerr.Code(err))
		require.Contains(t, err.Error(), `"ts"`)
		tx.Rollback()
		_, err = c.Begin().Insert(ctx, "nope", nil)
		require.Equal(t, sqlerr.UndefinedTable, sqlerr.Code(err))

		// VARCHAR(n) is enforced.
		createTable(t, c, TableDef{Name: "v", Columns: []Column{{Name: "s", Type: sqltypes.VarcharOf(3)}}})
		vi, err := c.Table("v")
		require.NoError(t, err)
		tx = c.Begin()
		r = reader(t, vi.Schema, batch(t, c.mem, vi.Schema, []any{"héé"}, []any{"abcd"}))
		_, err = tx.Insert(ctx, "v", r)
		r.Release()
		require.Equal(t, sqlerr.StringDataRightTruncation, sqlerr.Code(err))
		tx.Rollback()

		_, err = c.Table("nope")
		require.Equal(t, sqlerr.UndefinedTable, sqlerr.Code(err))
	})
}

func TestTransactionsAndSnapshots(t *testing.T) {
	modes(t, Options{AutoCompact: -1}, func(t *testing.T, open func() *Catalog) {
		c := open()
		ctx := context.Background()
		createTable(t, c, quotesDef)
		insert(t, c, "quotes", []any{1, "a", 1.0})
		old, err := c.Snapshot()
		require.NoError(t, err)
		defer old.Release()

		// One transaction: insert, create+fill another table, drop nothing.
		info, _ := c.Table("quotes")
		tx := c.Begin()
		r := reader(t, info.Schema, batch(t, c.mem, info.Schema, []any{2, "b", 2.0}))
		n, err := tx.Insert(ctx, "quotes", r)
		r.Release()
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		r = reader(t, info.Schema, batch(t, c.mem, info.Schema, []any{3, "c", 3.0}))
		_, err = tx.CreateTableAs(ctx, TableDef{Name: "copy", Columns: quotesDef.Columns}, r)
		r.Release()
		require.NoError(t, err)
		require.Len(t, scanRows(t, c, "quotes", ScanOptions{}), 1, "uncommitted rows are invisible")
		require.Equal(t, []string{"quotes"}, c.Tables())
		require.NoError(t, tx.Commit(ctx))
		require.Len(t, scanRows(t, c, "quotes", ScanOptions{}), 2)
		require.Equal(t, []string{"copy", "quotes"}, c.Tables())
		require.Len(t, snapRows(t, old, "quotes", ScanOptions{}), 1, "old snapshot unchanged")

		// A drop while the old snapshot reads: its files stay until released.
		tx = c.Begin()
		require.NoError(t, tx.DropTable(ctx, "quotes", false))
		require.NoError(t, tx.Commit(ctx))
		_, err = c.Table("quotes")
		require.Equal(t, sqlerr.UndefinedTable, sqlerr.Code(err))
		require.Len(t, snapRows(t, old, "quotes", ScanOptions{}), 1)

		// Conflict: tx1 writes a table tx2 re-creates.
		createTable(t, c, quotesDef)
		info, _ = c.Table("quotes")
		tx1 := c.Begin()
		r = reader(t, info.Schema, batch(t, c.mem, info.Schema, []any{9, "z", 9.0}))
		_, err = tx1.Insert(ctx, "quotes", r)
		r.Release()
		require.NoError(t, err)
		tx2 := c.Begin()
		require.NoError(t, tx2.DropTable(ctx, "quotes", false))
		require.NoError(t, tx2.CreateTable(ctx, quotesDef, false))
		require.NoError(t, tx2.Commit(ctx))
		require.Equal(t, codeSerializationFailure, sqlerr.Code(tx1.Commit(ctx)))
		require.Empty(t, scanRows(t, c, "quotes", ScanOptions{}))
	})
}

func TestOrphansAreCollectedAtOpen(t *testing.T) {
	mem := newMem(t)
	dir := t.TempDir()
	ctx := context.Background()
	c, err := Open(ctx, dir, Options{Allocator: mem, AutoCompact: -1, RunRows: 1})
	require.NoError(t, err)
	createTable(t, c, quotesDef)
	insert(t, c, "quotes", []any{1, "a", 1.0})
	_, err = Open(ctx, dir, Options{Allocator: mem})
	require.Equal(t, "55006", sqlerr.Code(err), "a second opener is refused")
	// An uncommitted statement's file, as a crash would leave it.
	info, _ := c.Table("quotes")
	tx := c.Begin()
	r := reader(t, info.Schema, batch(t, mem, info.Schema, []any{2, "b", 2.0}))
	_, err = tx.Insert(ctx, "quotes", r)
	r.Release()
	require.NoError(t, err)
	files, _ := filepath.Glob(filepath.Join(dir, "seg-*"))
	require.Len(t, files, 2)
	orphan := files[1]
	data, err := os.ReadFile(orphan)
	require.NoError(t, err)
	tx.Rollback()
	require.NoFileExists(t, orphan, "rollback deletes its files")
	require.NoError(t, os.WriteFile(orphan, data, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, manifestTmp), []byte("{"), 0o644))
	require.NoError(t, c.Close())

	c, err = Open(ctx, dir, Options{Allocator: mem})
	require.NoError(t, err)
	defer c.Close()
	require.NoFileExists(t, orphan)
	require.NoFileExists(t, filepath.Join(dir, manifestTmp))
	require.Len(t, scanRows(t, c, "quotes", ScanOptions{}), 1)
}

func TestManifestCorruptionIsReported(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, manifestName), []byte("{not json"), 0o644))
	_, err := Open(context.Background(), dir, Options{})
	require.Equal(t, sqlerr.DataCorrupted, sqlerr.Code(err))
}

// TestMergeMatchesStableSort compares ordered scans with a reference: all
// rows stably sorted by (k1 NULLS LAST, k2 NULLS LAST) in insertion order,
// over random statements, run sizes, batch sizes and compactions.
func TestMergeMatchesStableSort(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		mem := newMem(t)
		c, err := Open(context.Background(), Memory, Options{Allocator: mem, AutoCompact: -1, RunRows: 1 + rng.IntN(40), BatchRows: 1 + rng.IntN(16), CompactRows: 1 + rng.IntN(60)})
		require.NoError(t, err)
		createTable(t, c, TableDef{Name: "m", Columns: []Column{
			{Name: "k1", Type: sqltypes.Int4Type},
			{Name: "k2", Type: sqltypes.TextType},
			{Name: "id", Type: sqltypes.Int8Type},
		}, OrderBy: []string{"k1", "k2"}})
		type row struct {
			k1, k2 *int
			id     int
		}
		var all []row
		id := 0
		for stmt := 0; stmt < 12; stmt++ {
			var rows [][]any
			for i := rng.IntN(60); i > 0; i-- {
				r := row{id: id}
				vals := []any{nil, nil, id}
				if rng.IntN(8) > 0 {
					v := rng.IntN(10)
					r.k1, vals[0] = &v, v
				}
				if rng.IntN(8) > 0 {
					v := rng.IntN(3)
					r.k2, vals[1] = &v, fmt.Sprint(v)
				}
				all = append(all, r)
				rows = append(rows, vals)
				id++
			}
			if len(rows) > 0 {
				insert(t, c, "m", rows...)
			}
			if rng.IntN(4) == 0 {
				require.NoError(t, c.Compact(context.Background(), "m"))
			}
		}
		cmpNullsLast := func(a, b *int) int {
			switch {
			case a == nil && b == nil:
				return 0
			case a == nil:
				return 1
			case b == nil:
				return -1
			}
			return *a - *b
		}
		slices.SortStableFunc(all, func(a, b row) int {
			if c := cmpNullsLast(a.k1, b.k1); c != 0 {
				return c
			}
			return cmpNullsLast(a.k2, b.k2)
		})
		var want [][]string
		for _, r := range all {
			want = append(want, strs(r.id))
		}
		got := scanRows(t, c, "m", ScanOptions{Columns: []int{2}, BatchSize: 1 + rng.IntN(50)})
		require.Equal(t, want, got, "seed %d", seed)
		require.NoError(t, c.Close())
	}
}

func TestBackgroundCompactionAndClose(t *testing.T) {
	modes(t, Options{AutoCompact: 3, CompactRows: 100}, func(t *testing.T, open func() *Catalog) {
		c := open()
		ctx := context.Background()
		createTable(t, c, quotesDef)
		for i := 0; i < 3; i++ {
			insert(t, c, "quotes", []any{30 - i, fmt.Sprint(i), 1.0})
		}
		// A reader opened before the compaction keeps its own segments.
		snap, err := c.Snapshot()
		require.NoError(t, err)
		r, err := snap.Scan(ctx, "quotes", ScanOptions{Columns: []int{1}})
		require.NoError(t, err)
		snap.Release() // the reader holds the view on its own
		require.Eventually(t, func() bool {
			info, err := c.Table("quotes")
			return err == nil && info.Segments == 1
		}, 10*time.Second, 5*time.Millisecond, "the third small segment triggers a background compaction")
		var got []string
		for r.Next() {
			for i := 0; i < int(r.RecordBatch().NumRows()); i++ {
				got = append(got, r.RecordBatch().Column(0).ValueStr(i))
			}
		}
		require.NoError(t, r.Err())
		r.Release()
		require.Equal(t, []string{"2", "1", "0"}, got)
		require.Equal(t, [][]string{{"2"}, {"1"}, {"0"}}, scanRows(t, c, "quotes", ScanOptions{Columns: []int{1}}))

		tx := c.Begin()
		require.NoError(t, c.Close())
		require.NoError(t, c.Close(), "Close is idempotent")
		require.Error(t, tx.CreateTable(ctx, TableDef{Name: "x", Columns: quotesDef.Columns}, false))
		_, err = c.Snapshot()
		require.Error(t, err)
		require.Nil(t, c.Tables())
	})
}

// TestKeyStatisticsPerType stores segments ordered by each orderable type,
// reopens the directory (statistics come back from the manifest) and
// range-scans with a bound of the column's Go type.
func TestKeyStatisticsPerType(t *testing.T) {
	mem := newMem(t)
	dir := t.TempDir()
	ctx := context.Background()
	for _, tc := range []struct {
		typ    sqltypes.Type
		lo, hi any    // two stored keys, lo < hi, one per segment
		a, b   any    // values in the batch helper's encoding
		bound  any    // a Range.Lo between them
		want   string // the one key at or above bound
	}{
		{sqltypes.BoolType, false, true, false, true, true, "true"},
		{sqltypes.Int2Type, 1, 5, 1, 5, 3, "5"},
		{sqltypes.Int4Type, 1, 5, 1, 5, int32(3), "5"},
		{sqltypes.Int8Type, 1, 5, 1, 5, int64(3), "5"},
		{sqltypes.Float4Type, 1.5, 5.5, 1.5, 5.5, float32(3), "5.5"},
		{sqltypes.Float8Type, 1.5, 5.5, 1.5, 5.5, 3.0, "5.5"},
		{sqltypes.NumericType(10, 0), 1, 5, 1, 5, "3", "5"},
		{sqltypes.TextType, "a", "c", "a", "c", "b", "c"},
		{sqltypes.VarcharOf(4), "a", "c", "a", "c", "b", "c"},
		{sqltypes.ByteaType, []byte{1}, []byte{3}, []byte{1}, []byte{3}, []byte{2}, "Aw=="}, // ValueStr is base64
		{sqltypes.DateType, 1, 5, 1, 5, time.Date(1970, 1, 3, 12, 0, 0, 0, time.UTC), "1970-01-06"},
		{sqltypes.TimestampTZType, 1, 5, 1, 5, int64(3), "1970-01-01T00:00:00.000005Z"},
	} {
		c, err := Open(ctx, dir, Options{Allocator: mem, AutoCompact: -1})
		require.NoError(t, err)
		name := "k_" + strings.ReplaceAll(tc.typ.String(), " ", "_")
		createTable(t, c, TableDef{Name: name, Columns: []Column{{Name: "k", Type: tc.typ}}, OrderBy: []string{"k"}})
		insert(t, c, name, []any{tc.b}, []any{nil})
		insert(t, c, name, []any{tc.a})
		require.NoError(t, c.Close())
		c, err = Open(ctx, dir, Options{Allocator: mem, AutoCompact: -1})
		require.NoError(t, err)
		snap, err := c.Snapshot()
		require.NoError(t, err)
		ts, err := snap.table(name)
		require.NoError(t, err)
		r, err := newScanReader(ctx, mem, ts.meta, ts.segs, ScanOptions{BatchSize: 4, Range: &Range{Lo: tc.bound}})
		require.NoError(t, err, tc.typ.String())
		require.Len(t, r.segs, 1, "%s: the segment below the bound is pruned", tc.typ)
		r.Release()
		rows := snapRows(t, snap, name, ScanOptions{Range: &Range{Lo: tc.bound}})
		require.Equal(t, [][]string{{tc.want}}, rows, tc.typ.String())
		snap.Release()
		require.NoError(t, c.Close())
	}
}

// TestDroppedFilesOutliveReaders: a dropped or compacted segment's file is
// deleted only when the last snapshot using it is released and a
// checkpoint has made its removal durable (the log may name it until then).
func TestDroppedFilesOutliveReaders(t *testing.T) {
	mem := newMem(t)
	dir := t.TempDir()
	ctx := context.Background()
	c, err := Open(ctx, dir, Options{Allocator: mem, AutoCompact: -1, RunRows: 1})
	require.NoError(t, err)
	defer c.Close()
	createTable(t, c, quotesDef)
	insert(t, c, "quotes", []any{2, "a", 1.0})
	insert(t, c, "quotes", []any{1, "b", 1.0})
	segFiles := func() int {
		files, err := filepath.Glob(filepath.Join(dir, "seg-*.arrow"))
		require.NoError(t, err)
		return len(files)
	}
	require.Equal(t, 2, segFiles())
	snap, err := c.Snapshot()
	require.NoError(t, err)
	require.NoError(t, c.Compact(ctx, "quotes"))
	require.Equal(t, 3, segFiles(), "compaction output plus the inputs the snapshot still reads")
	tx := c.Begin()
	require.NoError(t, tx.DropTable(ctx, "quotes", false))
	require.NoError(t, tx.Commit(ctx))
	require.Equal(t, 3, segFiles(), "no checkpoint yet")
	require.NoError(t, c.Checkpoint(ctx))
	require.Equal(t, 2, segFiles(), "the compacted segment was never in a snapshot")
	require.Equal(t, [][]string{{"b"}, {"a"}}, snapRows(t, snap, "quotes", ScanOptions{Columns: []int{1}}))
	snap.Release()
	require.Equal(t, 0, segFiles())
}

// TestTableBytes checks TableInfo.Bytes (pg_table_size): in a data
// directory the summed size of the committed segment files, across a
// reopen and a compaction; in memory the summed buffer lengths of the
// stored batches, growing with each insert.
func TestTableBytes(t *testing.T) {
	ctx := context.Background()
	fileBytes := func(dir string) int64 {
		files, err := filepath.Glob(filepath.Join(dir, "seg-*"))
		require.NoError(t, err)
		var n int64
		for _, f := range files {
			fi, err := os.Stat(f)
			require.NoError(t, err)
			n += fi.Size()
		}
		return n
	}
	tableBytes := func(c *Catalog) int64 {
		info, err := c.Table("quotes")
		require.NoError(t, err)
		return info.Bytes
	}
	t.Run("directory", func(t *testing.T) {
		mem := newMem(t)
		dir := t.TempDir()
		c, err := Open(ctx, dir, Options{Allocator: mem, AutoCompact: -1})
		require.NoError(t, err)
		createTable(t, c, quotesDef)
		require.Zero(t, tableBytes(c))
		insert(t, c, "quotes", []any{1, "a", 1.0}, []any{2, "bb", nil})
		require.Positive(t, tableBytes(c), "in-memory rows count too")
		require.NoError(t, c.Checkpoint(ctx))
		one := tableBytes(c)
		require.Positive(t, one)
		require.Equal(t, fileBytes(dir), one)
		insert(t, c, "quotes", []any{3, "c", 3.0})
		require.NoError(t, c.Checkpoint(ctx))
		require.Greater(t, tableBytes(c), one)
		require.Equal(t, fileBytes(dir), tableBytes(c))
		require.NoError(t, c.Compact(ctx, "quotes"))
		require.NoError(t, c.Checkpoint(ctx)) // deletes the compacted inputs' files
		compacted := fileBytes(dir)
		require.Equal(t, compacted, tableBytes(c))
		require.NoError(t, c.Close())

		c, err = Open(ctx, dir, Options{Allocator: mem, AutoCompact: -1})
		require.NoError(t, err)
		defer c.Close()
		require.Equal(t, compacted, tableBytes(c))
	})
	t.Run("memory", func(t *testing.T) {
		mem := newMem(t)
		c, err := Open(ctx, ":memory:", Options{Allocator: mem, AutoCompact: -1})
		require.NoError(t, err)
		defer c.Close()
		createTable(t, c, quotesDef)
		require.Zero(t, tableBytes(c))
		insert(t, c, "quotes", []any{1, "a", 1.0}, []any{2, "bb", nil})
		snap, err := c.Snapshot()
		require.NoError(t, err)
		r, err := snap.Scan(ctx, "quotes", ScanOptions{})
		require.NoError(t, err)
		var scanned int64
		for r.Next() {
			for _, col := range r.RecordBatch().Columns() {
				for _, b := range col.Data().Buffers() {
					if b != nil {
						scanned += int64(b.Len())
					}
				}
			}
		}
		require.NoError(t, r.Err())
		r.Release()
		snap.Release()
		require.Equal(t, scanned, tableBytes(c), "one stored batch, scanned as is")
		one := tableBytes(c)
		require.Positive(t, one)
		insert(t, c, "quotes", []any{3, "c", 3.0})
		require.Greater(t, tableBytes(c), one)
	})
}
