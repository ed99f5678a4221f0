package asofsql

import (
	"context"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// IngestOptions say what Session.Ingest does when the table exists or
// does not. The zero value appends to an existing table and fails (42P01)
// on a missing one.
type IngestOptions struct {
	// Create makes a missing table from the source's schema: each field's
	// SQL type is the one in its metadata (sqltypes.FromField) or the one
	// that stores its Arrow type; a non-nullable field is NOT NULL.
	Create bool
	// Replace drops an existing table and creates it anew from the
	// source's schema; FailIfExists refuses an existing table (42P07).
	Replace, FailIfExists bool
	// OrderBy is the ordering of a table Ingest creates (CREATE TABLE
	// ... ORDER BY).
	OrderBy []string
}

// Ingest loads the record batches of src into table as one statement:
// all of them or, on any error, none (inside a transaction block the
// rows become visible at COMMIT, like INSERT's). Fields are matched to
// columns by name and converted to the column types (catalog.Tx.Ingest);
// an ordered table stays ordered. The table name is taken verbatim, as a
// quoted identifier. src is read to its end but not released. The Result
// is "COPY n".
func (s *Session) Ingest(ctx context.Context, table string, src array.RecordReader, opts IngestOptions) (Result, error) {
	if s.failed {
		return Result{}, sqlerr.New(sqlerr.InFailedSQLTransaction,
			"current transaction is aborted, commands ignored until end of transaction block")
	}
	if opts.Replace && opts.FailIfExists {
		return Result{}, sqlerr.New(sqlerr.InvalidParameterValue, "ingest cannot both replace and refuse an existing table")
	}
	if err := s.flushAppend(); err != nil {
		return Result{}, err
	}
	sctx, cancel := s.statementContext(ctx)
	defer cancel()
	n, err := s.ingest(sctx, table, src, opts)
	if err != nil {
		return Result{}, s.fail(cancelErr(ctx, sctx, err))
	}
	return Result{Tag: "COPY " + strconv.FormatInt(n, 10), RowsAffected: n}, nil
}

func (s *Session) ingest(ctx context.Context, table string, src array.RecordReader, opts IngestOptions) (int64, error) {
	if table == "" {
		return 0, sqlerr.New(sqlerr.SyntaxError, "zero-length delimited identifier")
	}
	snap, err := s.db.cat.Snapshot()
	if err != nil {
		return 0, err
	}
	// Ingest writes permanent tables: a temporary one of the same name
	// does not count.
	_, err = s.planCatalog(&snapshot{main: snap}).Table(table)
	snap.Release()
	exists := err == nil
	if err != nil && sqlerr.Code(err) != sqlerr.UndefinedTable {
		return 0, err
	}
	var def *catalog.TableDef
	switch {
	case exists && opts.FailIfExists:
		return 0, sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", table)
	case !exists && !opts.Create:
		return 0, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", table)
	case !exists || opts.Replace:
		schema := src.Schema()
		if schema == nil {
			return 0, src.Err()
		}
		if def, err = tableDefOf(table, schema, opts.OrderBy); err != nil {
			return 0, err
		}
	}
	drop := exists && opts.Replace
	var n int64
	err = s.write(ctx, "COPY FROM", func(tx *catalog.Tx) error {
		if drop {
			if err := tx.DropTable(ctx, table, false); err != nil {
				return err
			}
			s.noteDropped(table, false, false)
		}
		if def != nil {
			if err := tx.CreateTable(ctx, *def, false); err != nil {
				return err
			}
			s.noteTable(*def, 0, false, true)
		}
		var err error
		n, err = tx.Ingest(ctx, table, src)
		return err
	})
	return n, err
}

// tableDefOf is the table an Arrow schema describes.
func tableDefOf(name string, schema *arrow.Schema, orderBy []string) (*catalog.TableDef, error) {
	def := &catalog.TableDef{Name: name, OrderBy: orderBy}
	for _, f := range schema.Fields() {
		t, err := sqltypes.FromField(f)
		if err != nil {
			e := sqlerr.From(err)
			return nil, e.WithDetail("Field %q cannot become a column.", f.Name)
		}
		def.Columns = append(def.Columns, catalog.Column{Name: f.Name, Type: t, NotNull: !f.Nullable})
	}
	return def, nil
}
