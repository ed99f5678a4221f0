package asofsql_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

// arrowRows is a reader over one batch built from JSON rows.
func arrowRows(t *testing.T, mem memory.Allocator, schema *arrow.Schema, rows string) array.RecordReader {
	t.Helper()
	b, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(rows))
	require.NoError(t, err)
	defer b.Release()
	r, err := array.NewRecordReader(schema, []arrow.RecordBatch{b})
	require.NoError(t, err)
	return r
}

// TestSessionIngest: create (with an ordering), append, replace and the
// refusals; inside a block the rows appear at COMMIT.
func TestSessionIngest(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db, err := asofsql.Open(":memory:", asofsql.WithAllocator(mem))
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	s := db.Session()
	defer s.Close()
	schema := arrow.NewSchema([]arrow.Field{{Name: "ts", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	ingest := func(rows string, opts asofsql.IngestOptions) (asofsql.Result, error) {
		r := arrowRows(t, mem, schema, rows)
		defer r.Release()
		return s.Ingest(ctx, "t", r, opts)
	}

	_, err = ingest(`[{"ts": 1, "v": "a"}]`, asofsql.IngestOptions{})
	require.Equal(t, sqlerr.UndefinedTable, sqlerr.Code(err))
	res, err := ingest(`[{"ts": 3, "v": "c"}, {"ts": 1, "v": "a"}]`, asofsql.IngestOptions{Create: true, OrderBy: []string{"ts"}})
	require.NoError(t, err)
	require.Equal(t, asofsql.Result{Tag: "COPY 2", RowsAffected: 2}, res)
	info, err := db.Table("t")
	require.NoError(t, err)
	require.Equal(t, []string{"ts"}, info.OrderBy)
	require.True(t, info.Columns[0].NotNull, "a non-nullable field is NOT NULL")
	_, err = ingest(`[{"ts": 2, "v": "b"}]`, asofsql.IngestOptions{})
	require.NoError(t, err)
	rows, err := sessRows(t, s, `SELECT ts, v FROM t`)
	require.NoError(t, err)
	require.Equal(t, []string{"1 | a", "2 | b", "3 | c"}, rows, "scanned in order")
	_, err = ingest(`[{"ts": 2, "v": "b"}]`, asofsql.IngestOptions{FailIfExists: true})
	require.Equal(t, sqlerr.DuplicateTable, sqlerr.Code(err))
	_, err = ingest(`[{"ts": 9, "v": "z"}]`, asofsql.IngestOptions{Replace: true})
	require.NoError(t, err)
	rows, err = sessRows(t, s, `SELECT ts, v FROM t`)
	require.NoError(t, err)
	require.Equal(t, []string{"9 | z"}, rows)
	_, err = ingest(`[{"ts": null, "v": "x"}]`, asofsql.IngestOptions{})
	require.Equal(t, sqlerr.NotNullViolation, sqlerr.Code(err))

	_, err = s.Exec(ctx, `BEGIN`)
	require.NoError(t, err)
	_, err = ingest(`[{"ts": 10, "v": "y"}]`, asofsql.IngestOptions{})
	require.NoError(t, err)
	rows, err = sessRows(t, db.Session(), `SELECT count(*) FROM t`)
	require.NoError(t, err)
	require.Equal(t, []string{"1"}, rows)
	_, err = s.Exec(ctx, `COMMIT`)
	require.NoError(t, err)
	rows, err = sessRows(t, s, `SELECT count(*) FROM t`)
	require.NoError(t, err)
	require.Equal(t, []string{"2"}, rows)
}

// TestSessionFork: a fork has the session's settings and identity, not
// its transaction block, and later SETs on either do not reach the other.
func TestSessionFork(t *testing.T) {
	db, err := asofsql.Open(":memory:")
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	s := db.Session()
	s.SetIdentity("alice", "market")
	_, err = s.Exec(ctx, `SET TimeZone = 'Europe/Paris'; BEGIN`)
	require.NoError(t, err)
	f := s.Fork()
	require.Equal(t, byte('T'), s.TxStatus())
	require.Equal(t, byte('I'), f.TxStatus())
	rows, err := sessRows(t, f, `SHOW TimeZone`)
	require.NoError(t, err)
	require.Equal(t, []string{"Europe/Paris"}, rows)
	_, err = f.Exec(ctx, `SET TimeZone = 'UTC'`)
	require.NoError(t, err)
	tz, _ := s.Setting("TimeZone")
	require.Equal(t, "Europe/Paris", tz)
	user, err := sessRows(t, f, `SELECT current_user`)
	require.NoError(t, err)
	require.Equal(t, []string{"alice"}, user)
}

// TestSessionForkPrepared: a session and its forks share one namespace of
// prepared statements (one client connection's), each runs an EXECUTE
// with its own settings, and closing a fork keeps the statements.
func TestSessionForkPrepared(t *testing.T) {
	db, err := asofsql.Open(":memory:")
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	s := db.Session()
	defer s.Close()
	_, err = s.Exec(ctx, `PREPARE tz AS SELECT (TIMESTAMPTZ '2020-01-01 00:00:00+00')::text`)
	require.NoError(t, err)
	f := s.Fork()
	_, err = f.Exec(ctx, `SET TimeZone = 'Asia/Tokyo'; PREPARE two (int) AS SELECT $1 * 2`)
	require.NoError(t, err)
	rows, err := sessRows(t, f, `EXECUTE tz`)
	require.NoError(t, err)
	require.Equal(t, []string{"2020-01-01 09:00:00+09"}, rows, "the fork runs it with its own settings")
	rows, err = sessRows(t, s, `EXECUTE tz`)
	require.NoError(t, err)
	require.Equal(t, []string{"2020-01-01 00:00:00+00"}, rows)
	require.NoError(t, f.Close())
	rows, err = sessRows(t, s, `EXECUTE two(21)`)
	require.NoError(t, err, "a statement a fork prepared outlives the fork")
	require.Equal(t, []string{"42"}, rows)
	_, err = s.Exec(ctx, `PREPARE two AS SELECT 1`)
	require.Equal(t, "42P05", sqlerr.Code(err))
	g := s.Fork()
	_, err = g.Exec(ctx, `DEALLOCATE two`)
	require.NoError(t, err)
	_, ok := s.Prepared("two")
	require.False(t, ok)
	_, err = g.Exec(ctx, `BEGIN; PREPARE three AS SELECT 3; ROLLBACK`)
	require.NoError(t, err)
	require.NoError(t, g.Close())
	rows, err = sessRows(t, s, `EXECUTE three`)
	require.NoError(t, err, "the namespace is not transactional")
	require.Equal(t, []string{"3"}, rows)
	require.NoError(t, s.Close())
	_, ok = g.Prepared("three")
	require.False(t, ok, "closing the session drops the connection's statements")
}
