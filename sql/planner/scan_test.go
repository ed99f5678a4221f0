package planner

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/catalog"
	"github.com/stretchr/testify/require"
)

// TestScanRangeAgainstCatalog checks that the Scan a query plans (its
// columns and range values) is accepted by the catalog and returns
// exactly the rows the WHERE clause selects.
func TestScanRangeAgainstCatalog(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	cat, err := catalog.Open(ctx, catalog.Memory, catalog.Options{Allocator: mem, BatchRows: 4, RunRows: 4})
	require.NoError(t, err)
	defer func() { require.NoError(t, cat.Close()) }()

	for _, sql := range []string{
		`CREATE TABLE ev (t bigint, k integer) ORDER BY (t)`,
		`CREATE TABLE tsx (ts timestamp, v double precision) ORDER BY (ts)`,
	} {
		p, err := plan(t, cat, sql)
		require.NoError(t, err)
		tx := cat.Begin()
		require.NoError(t, tx.CreateTable(ctx, p.(*CreateTable).Def, false))
		require.NoError(t, tx.Commit(ctx))
	}
	// Rows in several small segments so pruning has something to skip.
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for seg := 0; seg < 5; seg++ {
		ev, _ := cat.Table("ev")
		tsx, _ := cat.Table("tsx")
		b1 := array.NewRecordBuilder(mem, ev.Schema)
		b2 := array.NewRecordBuilder(mem, tsx.Schema)
		for i := 0; i < 4; i++ {
			n := int64(seg*4 + i)
			b1.Field(0).(*array.Int64Builder).Append(n * 10)
			b1.Field(1).(*array.Int32Builder).Append(int32(n))
			b2.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(base.Add(time.Duration(n) * time.Hour).UnixMicro()))
			b2.Field(1).(*array.Float64Builder).Append(float64(n))
		}
		r1, r2 := b1.NewRecordBatch(), b2.NewRecordBatch()
		b1.Release()
		b2.Release()
		tx := cat.Begin()
		rd1, _ := array.NewRecordReader(r1.Schema(), []arrow.RecordBatch{r1})
		rd2, _ := array.NewRecordReader(r2.Schema(), []arrow.RecordBatch{r2})
		_, err := tx.Insert(ctx, "ev", rd1)
		require.NoError(t, err)
		_, err = tx.Insert(ctx, "tsx", rd2)
		require.NoError(t, err)
		require.NoError(t, tx.Commit(ctx))
		rd1.Release()
		rd2.Release()
		r1.Release()
		r2.Release()
	}

	tests := []struct {
		name, sql string
		rows      int64
	}{
		{"int range", `SELECT k FROM ev WHERE t > 35 AND t <= 120`, 9}, // 40..120
		{"int equality", `SELECT k FROM ev WHERE t = 50`, 1},
		{"timestamp range", `SELECT v FROM tsx WHERE ts >= TIMESTAMP '2024-01-01 05:00' AND ts < '2024-01-01 09:00'`, 4},
		{"empty", `SELECT k FROM ev WHERE t > 1000`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := plan(t, cat, tt.sql)
			require.NoError(t, err)
			var scan *Scan
			var walk func(Node)
			walk = func(n Node) {
				if s, ok := n.(*Scan); ok {
					scan = s
				}
				for _, c := range n.Children() {
					walk(c)
				}
			}
			walk(p.(*Query).Root)
			require.NotNil(t, scan.Range, "the filter became a scan range")
			require.Len(t, scan.Columns, 2, "the scan reads the filtered and the selected column only")
			snap, err := cat.Snapshot()
			require.NoError(t, err)
			defer snap.Release()
			rdr, err := snap.Scan(ctx, scan.Table.Name, catalog.ScanOptions{Columns: scan.Columns, Range: scan.Range})
			require.NoError(t, err)
			defer rdr.Release()
			var n int64
			for rdr.Next() {
				n += rdr.RecordBatch().NumRows()
			}
			require.NoError(t, rdr.Err())
			require.Equal(t, tt.rows, n)
		})
	}
}
