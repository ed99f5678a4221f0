//go:build unix

package asofsql_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/sqlerr"
)

// execGuarded runs a statement, failing the test instead of hanging if
// it does not return (a FIFO blocks open(2) with no writer).
func execGuarded(t *testing.T, db *asofsql.DB, ctx context.Context, sql string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := db.Exec(ctx, sql)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not return", sql)
		return nil
	}
}

// TestCopyRefusesIrregularFiles: inside the allowed directory, a FIFO (no
// writer, no reader), a device node reached through a path and a
// directory are refused at once with 42501 for COPY FROM and COPY TO,
// where opening the FIFO would block the statement in open(2) beyond any
// cancellation.
func TestCopyRefusesIrregularFiles(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe.csv"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db, err := asofsql.Open(":memory:", asofsql.WithAllocator(mem), asofsql.WithFileDir(dir))
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	_, err = db.Exec(ctx, `CREATE TABLE c (ts BIGINT, name TEXT) ORDER BY (ts)`)
	require.NoError(t, err)
	for _, tc := range []struct{ sql, what string }{
		{`COPY c FROM 'pipe.csv' WITH (FORMAT csv)`, "a named pipe"},
		{`COPY c FROM 'pipe.csv' WITH (FORMAT parquet)`, "a named pipe"},
		{`COPY c TO 'pipe.csv'`, "a named pipe"},
		{`COPY c FROM 'sub'`, "a directory"},
		{`COPY c TO 'sub'`, "a directory"},
	} {
		err := execGuarded(t, db, ctx, tc.sql)
		require.Equal(t, sqlerr.InsufficientPrivilege, sqlerr.Code(err), "%s: %v", tc.sql, err)
		require.ErrorContains(t, err, tc.what+", not a regular file", tc.sql)
	}
}

// TestCopyFileReadsObserveCancellation: a COPY FROM a large file stops
// when its context ends mid-load, and nothing of it is committed.
func TestCopyFileReadsObserveCancellation(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 200_000 {
		b.WriteString(strings.Repeat("7", 1+i%5) + ",x\n")
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.csv"), []byte(b.String()), 0o644))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db, err := asofsql.Open(":memory:", asofsql.WithAllocator(mem), asofsql.WithFileDir(dir))
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(context.Background(), `CREATE TABLE c (ts BIGINT, name TEXT) ORDER BY (ts)`)
	require.NoError(t, err)
	stop := errors.New("stop loading")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	ctx = asofsql.WithCopyProgress(ctx, func(int64) { cancel(stop) })
	err = execGuarded(t, db, ctx, `COPY c FROM 'big.csv' WITH (FORMAT csv)`)
	require.Error(t, err)
	r, err := db.Query(context.Background(), `SELECT count(*) FROM c`)
	require.NoError(t, err)
	require.True(t, r.Next())
	require.Equal(t, "0", r.RecordBatch().Column(0).ValueStr(0))
	r.Release()
}
