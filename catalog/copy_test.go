package catalog

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

func TestCopyFromText(t *testing.T) {
	modes(t, Options{AutoCompact: -1, RunRows: 2, BatchRows: 2}, func(t *testing.T, open func() *Catalog) {
		c := open()
		ctx := context.Background()
		createTable(t, c, quotesDef)
		input := "2024-01-01 00:00:03\tc\t3\n" +
			"2024-01-01 00:00:01\ta\t1\n" +
			"\\N\tn\t\\N\n" +
			"2024-01-01 00:00:01\tb\t1.5\n" +
			"2024-01-01 00:00:02\td\t2\n"
		var progress []int64
		tx := c.Begin()
		n, err := tx.CopyFrom(ctx, "quotes", strings.NewReader(input), CopyOptions{Progress: func(r int64) { progress = append(progress, r) }})
		require.NoError(t, err)
		require.NoError(t, tx.Commit(ctx))
		require.Equal(t, int64(5), n)
		require.Equal(t, []int64{2, 4, 5}, progress)
		rows := scanRows(t, open(), "quotes", ScanOptions{Columns: []int{1}})
		require.Equal(t, [][]string{{"a"}, {"b"}, {"d"}, {"c"}, {"n"}}, rows)
	})
}

func TestCopyColumnsAndErrors(t *testing.T) {
	modes(t, Options{AutoCompact: -1, RunRows: 2, BatchRows: 2}, func(t *testing.T, open func() *Catalog) {
		c := open()
		ctx := context.Background()
		createTable(t, c, quotesDef)
		copyIn := func(input string, opts CopyOptions) (int64, error) {
			tx := c.Begin()
			n, err := tx.CopyFrom(ctx, "quotes", strings.NewReader(input), opts)
			if err != nil {
				require.Error(t, tx.Commit(ctx), "a failed statement aborts the transaction")
				return n, err
			}
			return n, tx.Commit(ctx)
		}
		// A column list: bid is left NULL.
		_, err := copyIn("x,2024-01-01 00:00:00\n", CopyOptions{Format: "csv", Columns: []string{"sym", "ts"}})
		require.NoError(t, err)
		require.Equal(t, [][]string{{"2024-01-01T00:00:00", "x", "NULL"}}, scanRows(t, c, "quotes", ScanOptions{}))

		for _, tc := range []struct {
			name, input string
			opts        CopyOptions
			code        string
			detail      string
		}{
			{"unknown column", "", CopyOptions{Columns: []string{"nope"}}, sqlerr.UndefinedColumn, ""},
			{"duplicate column", "", CopyOptions{Columns: []string{"sym", "sym"}}, codeDuplicateColumn, ""},
			{"omitted NOT NULL column", "2024-01-01 00:00:00\n", CopyOptions{Columns: []string{"ts"}}, sqlerr.NotNullViolation, ""},
			// The bad line comes after several runs were already written as
			// segment files: none of them may become visible.
			{"bad value late", "2024-01-01 00:00:01\ta\t1\n2024-01-01 00:00:02\tb\t1\n2024-01-01 00:00:03\tc\t1\n2024-01-01 00:00:04\td\t1\n2024-01-01 00:00:05\te\tzz\n", CopyOptions{}, sqlerr.InvalidTextRepresentation, `COPY quotes, line 5, column bid: "zz"`},
			{"wrong column count", "2024-01-01 00:00:01\ta\n", CopyOptions{}, sqlerr.BadCopyFileFormat, "COPY quotes, line 1"},
			{"null into not null", "2024-01-01 00:00:01\t\\N\t1\n", CopyOptions{}, sqlerr.NotNullViolation, "COPY quotes, line 1"},
			{"bad format", "", CopyOptions{Format: "xml"}, sqlerr.InvalidParameterValue, ""},
		} {
			_, err := copyIn(tc.input, tc.opts)
			e, ok := sqlerr.As(err)
			require.True(t, ok, "%s: %v", tc.name, err)
			require.Equal(t, tc.code, e.Code, "%s: %s", tc.name, e.Message)
			require.Contains(t, e.Detail, tc.detail, tc.name)
		}
		c = open()
		require.Len(t, scanRows(t, c, "quotes", ScanOptions{}), 1, "no failed COPY left rows behind")
		_, err = c.Begin().CopyFrom(ctx, "nope", strings.NewReader(""), CopyOptions{})
		require.Equal(t, sqlerr.UndefinedTable, sqlerr.Code(err))
		if c.dir != "" {
			files, _ := filepath.Glob(filepath.Join(c.dir, "seg-*"))
			require.Len(t, files, 1, "failed statements deleted their segment files")
		}
	})
}

func TestCopyFromFiles(t *testing.T) {
	mem := newMem(t)
	ctx := context.Background()
	dir := t.TempDir()
	c, err := Open(ctx, filepath.Join(dir, "data"), Options{Allocator: mem, AutoCompact: -1})
	require.NoError(t, err)
	defer c.Close()
	def := TableDef{Name: "q", Columns: []Column{
		{Name: "ts", Type: sqltypes.TimestampTZType},
		{Name: "n", Type: sqltypes.Int8Type, NotNull: true},
		{Name: "px", Type: sqltypes.NumericType(10, 2)},
		{Name: "s", Type: sqltypes.VarcharOf(10)},
	}, OrderBy: []string{"ts"}}
	createTable(t, c, def)

	csvPath := filepath.Join(dir, "q.csv")
	require.NoError(t, os.WriteFile(csvPath, []byte("ts,n,px,s\n2024-01-01 00:00:02+00,2,1.25,\"b\"\n2024-01-01 00:00:01+00,1,,a\n"), 0o644))
	tx := c.Begin()
	n, err := tx.CopyFromFile(ctx, "q", csvPath, CopyOptions{Header: true})
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
	require.NoError(t, tx.Commit(ctx))

	// Parquet: columns in another order, n as int32 (cast), no s column.
	pqPath := filepath.Join(dir, "q.parquet")
	writeParquet(t, pqPath)
	tx = c.Begin()
	n, err = tx.CopyFromFile(ctx, "q", pqPath, CopyOptions{Columns: []string{"n", "ts", "px"}})
	require.NoError(t, err)
	require.Equal(t, int64(3), n)
	require.NoError(t, tx.Commit(ctx))
	rows := scanRows(t, c, "q", ScanOptions{Columns: []int{1, 2, 3}})
	require.Equal(t, [][]string{{"10", "NULL", "NULL"}, {"1", "NULL", "a"}, {"2", "1.25", "b"}, {"11", "3.5", "NULL"}, {"12", "NULL", "NULL"}}, rows)

	// All four table columns: s is not in the file, so columns match by
	// position, and n (int32) cannot become ts.
	tx = c.Begin()
	_, err = tx.CopyFromFile(ctx, "q", pqPath, CopyOptions{})
	require.Equal(t, sqlerr.DatatypeMismatch, sqlerr.Code(err))
	require.Contains(t, err.Error(), `"ts"`)
	tx.Rollback()
	// Not matchable by name, and a different column count.
	tx = c.Begin()
	_, err = tx.CopyFromFile(ctx, "q", pqPath, CopyOptions{Columns: []string{"ts", "s"}})
	require.Equal(t, sqlerr.BadCopyFileFormat, sqlerr.Code(err))
	tx.Rollback()
	tx = c.Begin()
	_, err = tx.CopyFromFile(ctx, "q", filepath.Join(dir, "missing.csv"), CopyOptions{})
	require.Equal(t, sqlerr.IOError, sqlerr.Code(err))
	tx.Rollback()
}

// writeParquet writes (n int32, extra text, ts timestamp[us, UTC], px
// decimal(10,2)) with three rows.
func writeParquet(t *testing.T, path string) {
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "n", Type: arrow.PrimitiveTypes.Int32},
		{Name: "extra", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "px", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
	}, nil)
	rec := batch(t, mem, schema,
		[]any{10, "x", 1704067200000000 - 1, nil},
		[]any{11, nil, 1704067200000000 + 5000000, 350},
		[]any{12, "z", 1704067200000000 + 6000000, nil},
	)
	defer rec.Release()
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
}

func TestCopyFromBinary(t *testing.T) {
	mem := newMem(t)
	ctx := context.Background()
	c, err := Open(ctx, Memory, Options{Allocator: mem})
	require.NoError(t, err)
	defer c.Close()
	createTable(t, c, quotesDef)
	var b bytes.Buffer
	b.WriteString("PGCOPY\n\xff\r\n\x00")
	binary.Write(&b, binary.BigEndian, [2]uint32{0, 0})
	for i, ts := range []int64{2_000_000, 1_000_000} { // microseconds since 2000-01-01
		binary.Write(&b, binary.BigEndian, int16(3))
		binary.Write(&b, binary.BigEndian, int32(8))
		binary.Write(&b, binary.BigEndian, ts)
		binary.Write(&b, binary.BigEndian, int32(1))
		b.WriteString(fmt.Sprint(i))
		binary.Write(&b, binary.BigEndian, int32(8))
		binary.Write(&b, binary.BigEndian, math.Float64bits(float64(i)+0.5))
	}
	binary.Write(&b, binary.BigEndian, int16(-1))
	tx := c.Begin()
	n, err := tx.CopyFrom(ctx, "quotes", &b, CopyOptions{Format: "binary"})
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
	require.NoError(t, tx.Commit(ctx))
	require.Equal(t, [][]string{
		{"2000-01-01T00:00:01", "1", "1.5"},
		{"2000-01-01T00:00:02", "0", "0.5"},
	}, scanRows(t, c, "quotes", ScanOptions{}))
}
