package catalog

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sqlerr"
)

// Ingest appends the record batches of src to a table as one statement
// (bulk ingestion of Arrow data, e.g. Flight SQL's CommandStatementIngest).
// src's fields name table columns, in any order and each at most once;
// columns it does not name are NULL. Each field is converted to its
// column's type as COPY FROM a Parquet file does (Arrow's safe cast: 42804
// for an impossible conversion, 22003 for a value that does not fit). An
// ordered table stays ordered (rows are sorted into runs as for any write)
// and, as for every statement, on error nothing of it is visible. src is
// consumed but not released.
func (tx *Tx) Ingest(ctx context.Context, name string, src array.RecordReader) (int64, error) {
	if err := tx.check(); err != nil {
		return 0, err
	}
	meta, err := tx.target(name)
	if err != nil {
		return 0, tx.fail(err)
	}
	schema := src.Schema()
	if schema == nil {
		err := src.Err()
		if err == nil {
			err = sqlerr.New(sqlerr.InternalError, "ingest into %q without a schema", name)
		}
		return 0, tx.fail(err)
	}
	target := make([]int, schema.NumFields())
	seen := make(map[int]bool, len(target))
	for i, f := range schema.Fields() {
		col := -1
		for j, c := range meta.def.Columns {
			if c.Name == f.Name {
				col = j
				break
			}
		}
		if col < 0 {
			return 0, tx.fail(sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", f.Name, name).
				WithHint("Ingested fields are matched to the table's columns by name."))
		}
		if seen[col] {
			return 0, tx.fail(sqlerr.New(codeDuplicateColumn, "column %q specified more than once", f.Name))
		}
		seen[col] = true
		target[i] = col
	}
	convert := castConverter(ctx, tx.c, meta, target, func(i int) string {
		return fmt.Sprintf("Arrow field %q", schema.Field(i).Name)
	})
	return tx.load(ctx, meta, src, target, nil, convert)
}
