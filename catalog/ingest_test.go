package catalog

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/sqlerr"
)

// TestIngest: Arrow fields are matched to columns by name (any order,
// missing columns NULL) and cast to the column types; an ordered table
// stays ordered; a failing batch leaves nothing of the statement.
func TestIngest(t *testing.T) {
	modes(t, Options{AutoCompact: -1, RunRows: 2, BatchRows: 2}, func(t *testing.T, open func() *Catalog) {
		c := open()
		ctx := context.Background()
		createTable(t, c, quotesDef)
		// bid before sym, ts as int64 microseconds, no column is missing
		// but bid is float32: every field needs matching or a cast.
		src := arrow.NewSchema([]arrow.Field{
			{Name: "bid", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
			{Name: "sym", Type: arrow.BinaryTypes.String},
			{Name: "ts", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		}, nil)
		r := reader(t, src,
			batch(t, c.mem, src, []any{3.5, "c", 3_000_000}, []any{1.5, "a", 1_000_000}),
			batch(t, c.mem, src, []any{nil, "n", nil}, []any{2.5, "b", 2_000_000}))
		tx := c.Begin()
		n, err := tx.Ingest(ctx, "quotes", r)
		r.Release()
		require.NoError(t, err)
		require.NoError(t, tx.Commit(ctx))
		require.EqualValues(t, 4, n)
		c = open() // reopened from disk in disk mode
		require.Equal(t, [][]string{{"a", "1.5"}, {"b", "2.5"}, {"c", "3.5"}, {"n", "NULL"}},
			scanRows(t, c, "quotes", ScanOptions{Columns: []int{1, 2}}))

		fail := func(schema *arrow.Schema, rows ...[]any) error {
			r := reader(t, schema, batch(t, c.mem, schema, rows...))
			defer r.Release()
			tx := c.Begin()
			defer tx.Rollback()
			_, err := tx.Ingest(ctx, "quotes", r)
			return err
		}
		err = fail(arrow.NewSchema([]arrow.Field{{Name: "nope", Type: arrow.PrimitiveTypes.Int64}}, nil), []any{1})
		require.Equal(t, sqlerr.UndefinedColumn, sqlerr.Code(err), "%v", err)
		err = fail(arrow.NewSchema([]arrow.Field{{Name: "sym", Type: arrow.BinaryTypes.String}, {Name: "sym", Type: arrow.BinaryTypes.String}}, nil), []any{"a", "b"})
		require.Equal(t, "42701", sqlerr.Code(err), "%v", err)
		err = fail(arrow.NewSchema([]arrow.Field{{Name: "ts", Type: arrow.BinaryTypes.Binary}}, nil), []any{[]byte{1, 2}})
		require.Equal(t, sqlerr.DatatypeMismatch, sqlerr.Code(err), "%v", err)
		require.Contains(t, err.Error(), `Arrow field "ts"`)
		// sym is NOT NULL and left out: NULLs for a missing column fail.
		err = fail(arrow.NewSchema([]arrow.Field{{Name: "bid", Type: arrow.PrimitiveTypes.Float64}}, nil), []any{1.0})
		require.Equal(t, sqlerr.NotNullViolation, sqlerr.Code(err), "%v", err)
		require.Len(t, scanRows(t, c, "quotes", ScanOptions{}), 4)
	})
}
