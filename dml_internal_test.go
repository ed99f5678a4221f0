package asofsql

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"
)

// TestRetentionDeleteReadsNoWholeSegment checks through SQL that a DELETE
// on the ordering column drops the segments wholly inside its range by
// their statistics, without opening them, and reads only the one
// straddling the bound (the catalog's counters tell).
func TestRetentionDeleteReadsNoWholeSegment(t *testing.T) {
	ctx := context.Background()
	db, err := Open(t.TempDir())
	require.NoError(t, err)
	defer db.Close()
	s := db.Session()
	defer s.Close()
	exec := func(sql string) string {
		t.Helper()
		res, err := s.Exec(ctx, sql)
		require.NoError(t, err, sql)
		return res.Tag
	}
	exec("CREATE TABLE ticks (ts bigint, v integer) ORDER BY (ts)")
	// four segments of 100 keys each: a checkpoint writes the recent rows out
	for day := range 4 {
		exec(fmt.Sprintf("INSERT INTO ticks SELECT g, g %% 7 FROM generate_series(%d, %d) AS g", day*100, day*100+99))
		require.NoError(t, db.cat.Checkpoint(ctx))
	}
	before := db.cat.Stats()
	require.Equal(t, "DELETE 200", exec("DELETE FROM ticks WHERE ts < 200"))
	after := db.cat.Stats()
	require.Equal(t, int64(2), after.SegmentsDeletedUnread-before.SegmentsDeletedUnread)
	require.Zero(t, after.SegmentReads-before.SegmentReads, "no segment is read")

	// a bound inside a segment reads that one only
	require.Equal(t, "DELETE 50", exec("DELETE FROM ticks WHERE ts < 250"))
	again := db.cat.Stats()
	require.Zero(t, again.SegmentsDeletedUnread-after.SegmentsDeletedUnread)
	require.Equal(t, int64(1), again.SegmentReads-after.SegmentReads)

	// a predicate besides the range reads the segments in range
	require.Equal(t, "DELETE 15", exec("DELETE FROM ticks WHERE ts >= 300 AND v = 0"))
	last := db.cat.Stats()
	require.Zero(t, last.SegmentsDeletedUnread-again.SegmentsDeletedUnread)
	require.Equal(t, int64(1), last.SegmentReads-again.SegmentReads)

	cur, err := s.Query(ctx, "SELECT count(*), min(ts), max(ts) FROM ticks")
	require.NoError(t, err)
	defer cur.Release()
	require.True(t, cur.Next())
	rec := cur.RecordBatch()
	require.Equal(t, int64(150-15), rec.Column(0).(*array.Int64).Value(0))
	require.Equal(t, int64(250), rec.Column(1).(*array.Int64).Value(0))
	require.Equal(t, int64(398), rec.Column(2).(*array.Int64).Value(0))
}
