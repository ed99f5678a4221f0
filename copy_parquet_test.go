package asofsql_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

// TestCopyToParquet writes a table and a query as Parquet, checks the
// file's physical types (timestamps and decimals typed, not text) and
// reads both back through COPY FROM.
func TestCopyToParquet(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db, err := asofsql.Open(":memory:", asofsql.WithAllocator(mem), asofsql.WithFileDir(dir))
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(ctx, `CREATE TABLE q (ts TIMESTAMP, tz TIMESTAMPTZ, sym TEXT, px NUMERIC(12,4), n BIGINT, d DATE, ok BOOLEAN, f DOUBLE PRECISION);
		INSERT INTO q VALUES
		  ('2024-01-02 09:30:00.123456', '2024-01-02 09:30:00+00', 'AAPL', 185.1234, 10, '2024-01-02', true, 1.5),
		  ('2024-01-02 09:31:00', NULL, 'MSFT', -0.0001, NULL, NULL, false, NULL),
		  (NULL, '1999-12-31 23:59:59.5+00', NULL, NULL, -7, '1970-01-01', NULL, -2.25)`)
	require.NoError(t, err)

	res, err := db.Exec(ctx, `COPY q TO 'q.parquet' (FORMAT parquet)`)
	require.NoError(t, err)
	require.Equal(t, "COPY 3", res.Tag)
	res, err = db.Exec(ctx, `COPY (SELECT sym, px * 2 AS px2, ts FROM q WHERE sym IS NOT NULL ORDER BY sym) TO 'sub.parquet' WITH (FORMAT 'parquet')`)
	require.NoError(t, err)
	require.Equal(t, "COPY 2", res.Tag)

	f, err := file.OpenParquetFile(filepath.Join(dir, "q.parquet"), false)
	require.NoError(t, err)
	sc := f.MetaData().Schema
	require.Equal(t, 3, int(f.NumRows()))
	ts := sc.Column(0).LogicalType().(schema.TimestampLogicalType)
	require.Equal(t, schema.TimeUnitMicros, ts.TimeUnit())
	require.False(t, ts.IsAdjustedToUTC())
	require.True(t, sc.Column(1).LogicalType().(schema.TimestampLogicalType).IsAdjustedToUTC())
	dec := sc.Column(3).LogicalType().(schema.DecimalLogicalType)
	require.Equal(t, int32(12), dec.Precision())
	require.Equal(t, int32(4), dec.Scale())
	require.NoError(t, f.Close())

	_, err = db.Exec(ctx, `CREATE TABLE back (ts TIMESTAMP, tz TIMESTAMPTZ, sym TEXT, px NUMERIC(12,4), n BIGINT, d DATE, ok BOOLEAN, f DOUBLE PRECISION);
		COPY back FROM 'q.parquet' (FORMAT parquet);
		CREATE TABLE sub (sym TEXT, px2 NUMERIC(13,4), ts TIMESTAMP); COPY sub FROM 'sub.parquet' (FORMAT parquet)`)
	require.NoError(t, err)
	want, err := queryRows(t, db, mem, `SELECT * FROM q ORDER BY sym`)
	require.NoError(t, err)
	got, err := queryRows(t, db, mem, `SELECT * FROM back ORDER BY sym`)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Len(t, got, 3)
	got, err = queryRows(t, db, mem, `SELECT sym, px2::text, ts::text FROM sub ORDER BY sym`)
	require.NoError(t, err)
	require.Equal(t, []string{"AAPL | 370.2468 | 2024-01-02 09:30:00.123456", "MSFT | -0.0002 | 2024-01-02 09:31:00"}, got)

	for _, c := range []struct {
		sql  string
		code string
	}{
		{`COPY q TO '../out.parquet' (FORMAT parquet)`, sqlerr.InsufficientPrivilege},
		{`COPY q TO STDOUT (FORMAT parquet)`, sqlerr.FeatureNotSupported},
		{`COPY (SELECT interval '1 day' AS i) TO 'i.parquet' (FORMAT parquet)`, sqlerr.FeatureNotSupported},
	} {
		_, err := db.Exec(ctx, c.sql)
		require.Equal(t, c.code, sqlerr.Code(err), "%s: %v", c.sql, err)
	}
	_, err = os.Stat(filepath.Join(filepath.Dir(dir), "out.parquet"))
	require.True(t, os.IsNotExist(err))
}
