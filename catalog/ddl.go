package catalog

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/asofsql/asofsql/sqlerr"
)

// alter changes a table's definition in the transaction: edit gets copies
// of the columns with their ids and returns the new definition. Existing
// segments are never rewritten: they name their columns by id, scans fill
// columns added later with their default, and ignore dropped ones.
func (tx *Tx) alter(ctx context.Context, name string, edit func(def *TableDef, ids *[]uint32, next *uint32) error) error {
	if err := tx.begin(ctx); err != nil {
		return err
	}
	meta, err := tx.target(name)
	if err != nil {
		return tx.fail(err)
	}
	def := TableDef{Name: meta.def.Name, Columns: slices.Clone(meta.def.Columns), OrderBy: slices.Clone(meta.def.OrderBy)}
	ids := slices.Clone(meta.colIDs)
	next := meta.nextCol
	if err := edit(&def, &ids, &next); err != nil {
		return tx.fail(err)
	}
	nm, err := newTableMetaIDs(meta.id, def, ids, next)
	if err != nil {
		return tx.fail(err)
	}
	nm.temp = meta.temp
	tx.holdDML()
	if nm.def.Name != name {
		tx.view[name] = nil
	}
	tx.view[nm.def.Name] = nm
	tx.ops = append(tx.ops, txOp{kind: opAlter, meta: meta, next: nm})
	return nil
}

func colIndex(def *TableDef, name string) int {
	return slices.IndexFunc(def.Columns, func(c Column) bool { return c.Name == name })
}

// AddColumn adds a column (ALTER TABLE ADD COLUMN) without touching stored
// rows: they read col.Default (NULL without one). NOT NULL needs a default
// unless the table is empty (23502 otherwise, as PostgreSQL). 42701 if the
// name is taken (a no-op with ifNotExists).
func (tx *Tx) AddColumn(ctx context.Context, table string, col Column, ifNotExists bool) error {
	var skip bool
	err := tx.alter(ctx, table, func(def *TableDef, ids *[]uint32, next *uint32) error {
		if colIndex(def, col.Name) >= 0 {
			if ifNotExists {
				skip = true
				return nil
			}
			return sqlerr.New(codeDuplicateColumn, "column %q of relation %q already exists", col.Name, table)
		}
		if col.NotNull && col.Default == nil {
			info, err := tx.c.Table(table)
			if err == nil && info.Rows > 0 {
				return sqlerr.New(sqlerr.NotNullViolation, "column %q of relation %q contains null values", col.Name, table)
			}
		}
		def.Columns = append(def.Columns, col)
		*ids = append(*ids, *next)
		*next++
		return nil
	})
	if skip && err == nil {
		tx.ops = tx.ops[:len(tx.ops)-1] // nothing changed
	}
	return err
}

// DropColumn removes a column (ALTER TABLE DROP COLUMN); its stored values
// stay in old segments until compaction rewrites them, unread. An ordering
// column cannot be dropped (0A000), nor the last column (42P16). 42703 if
// absent (a no-op with ifExists).
func (tx *Tx) DropColumn(ctx context.Context, table, column string, ifExists bool) error {
	var skip bool
	err := tx.alter(ctx, table, func(def *TableDef, ids *[]uint32, _ *uint32) error {
		i := colIndex(def, column)
		if i < 0 {
			if ifExists {
				skip = true
				return nil
			}
			return sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", column, table)
		}
		if slices.Contains(def.OrderBy, column) {
			return sqlerr.New(sqlerr.FeatureNotSupported, "cannot drop column %q of relation %q: it is an ordering column", column, table)
		}
		if len(def.Columns) == 1 {
			return sqlerr.New(codeInvalidTableDefinition, "cannot drop the only column of relation %q", table)
		}
		if deps := tx.dependents(table, column); len(deps) > 0 {
			return errDependents("column "+column+" of table "+table, deps)
		}
		def.Columns = slices.Delete(def.Columns, i, i+1)
		*ids = slices.Delete(*ids, i, i+1)
		return nil
	})
	if skip && err == nil {
		tx.ops = tx.ops[:len(tx.ops)-1]
	}
	return err
}

// RenameColumn renames a column (ALTER TABLE RENAME COLUMN); ORDER BY
// follows. 42703 if absent, 42701 if the new name is taken.
func (tx *Tx) RenameColumn(ctx context.Context, table, from, to string) error {
	return tx.alter(ctx, table, func(def *TableDef, _ *[]uint32, _ *uint32) error {
		i := colIndex(def, from)
		if i < 0 {
			return sqlerr.New(sqlerr.UndefinedColumn, "column %q does not exist", from) // PostgreSQL names no relation here
		}
		if colIndex(def, to) >= 0 {
			return sqlerr.New(codeDuplicateColumn, "column %q of relation %q already exists", to, table)
		}
		def.Columns[i].Name = to
		for k, o := range def.OrderBy {
			if o == from {
				def.OrderBy[k] = to
			}
		}
		return nil
	})
}

// RenameTable renames a table (ALTER TABLE RENAME TO); 42P07 if the new
// name is a table or view.
func (tx *Tx) RenameTable(ctx context.Context, from, to string) error {
	if err := tx.check(); err != nil {
		return err
	}
	if m, err := tx.lookup(to); err != nil || m != nil || tx.viewExists(to) {
		if err == nil {
			err = errDupTable(to)
		}
		return tx.fail(err)
	}
	return tx.alter(ctx, from, func(def *TableDef, _ *[]uint32, _ *uint32) error {
		def.Name = to
		return nil
	})
}

// ViewDef is a stored view: its name, the SQL text of its query (as the
// planner will parse it again) and its output column names. The catalog
// stores it durably and keeps names unique among tables and views; the
// planner binds it.
type ViewDef struct {
	Name    string   `json:"name"`
	SQL     string   `json:"sql"`
	Columns []string `json:"columns"`
	// Uses are the tables of this catalog the view's query reads, through
	// other views too, and the columns it reads of each: DROP TABLE and
	// DROP COLUMN refuse to remove them (2BP01), as PostgreSQL does.
	// Views stored before it was kept have none.
	Uses []ViewUse `json:"uses,omitempty"`
}

// ViewUse is a table a view reads and the columns it reads of it.
type ViewUse struct {
	Table   string   `json:"table"`
	Columns []string `json:"columns,omitempty"`
}

const codeDependentObjects = "2BP01"

// dependents returns PostgreSQL's DETAIL lines for the views that read
// table (column "" for the table itself) or that column of it, sorted by
// view name; none when nothing depends on it.
func (tx *Tx) dependents(table, column string) []string {
	views := map[string]*ViewDef{}
	tx.c.mu.Lock()
	if tx.c.cur != nil {
		maps.Copy(views, tx.c.cur.views)
	}
	tx.c.mu.Unlock()
	for n, v := range tx.vdefs {
		views[n] = v
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(views)) {
		v := views[name]
		if v == nil {
			continue
		}
		for _, u := range v.Uses {
			if u.Table != table {
				continue
			}
			if column == "" {
				out = append(out, fmt.Sprintf("view %s depends on table %s", name, table))
			} else if slices.Contains(u.Columns, column) {
				out = append(out, fmt.Sprintf("view %s depends on column %s of table %s", name, column, table))
			}
			break
		}
	}
	return out
}

// errDependents is 2BP01 for dropping what (PostgreSQL's words: "column b
// of table t", "table t") while the views of detail read it.
func errDependents(what string, detail []string) error {
	return sqlerr.New(codeDependentObjects, "cannot drop %s because other objects depend on it", what).
		WithDetail("%s", strings.Join(detail, "\n")).
		WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
}

// CreateView stores a view (CREATE [OR REPLACE] VIEW); 42P07 if the name
// is a table, or a view and orReplace is false.
func (tx *Tx) CreateView(ctx context.Context, v ViewDef, orReplace bool) error {
	if err := tx.begin(ctx); err != nil {
		return err
	}
	if v.Name == "" {
		return tx.fail(sqlerr.New(sqlerr.SyntaxError, "view name must not be empty"))
	}
	m, err := tx.lookup(v.Name)
	if err != nil {
		return tx.fail(err)
	}
	if m != nil || (tx.viewExists(v.Name) && !orReplace) {
		return tx.fail(errDupTable(v.Name))
	}
	def := &ViewDef{Name: v.Name, SQL: v.SQL, Columns: slices.Clone(v.Columns), Uses: slices.Clone(v.Uses)}
	tx.vdefs[v.Name] = def
	tx.ops = append(tx.ops, txOp{kind: opView, vdef: def})
	return nil
}

// DropView removes a view (DROP VIEW); 42P01 if absent (a no-op with
// ifExists), 42809 if the name is a table.
func (tx *Tx) DropView(ctx context.Context, name string, ifExists bool) error {
	if err := tx.begin(ctx); err != nil {
		return err
	}
	if !tx.viewExists(name) {
		if m, _ := tx.lookup(name); m != nil {
			return tx.fail(sqlerr.New(codeWrongObjectType, "%q is not a view", name).WithHint("Use DROP TABLE to remove a table."))
		}
		if ifExists {
			return nil
		}
		return tx.fail(sqlerr.New(sqlerr.UndefinedTable, "view %q does not exist", name))
	}
	tx.vdefs[name] = nil
	tx.ops = append(tx.ops, txOp{kind: opDropView, name: name})
	return nil
}

// View returns a committed view's definition; 42P01 if absent.
func (s *Snapshot) View(name string) (*ViewDef, error) {
	v := s.st.views[name]
	if v == nil {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
	}
	out := *v
	out.Columns = slices.Clone(v.Columns)
	return &out, nil
}

// Views lists the snapshot's view names, sorted.
func (s *Snapshot) Views() []string { return slices.Sorted(maps.Keys(s.st.views)) }

// View returns a committed view's definition; 42P01 if absent.
func (c *Catalog) View(name string) (*ViewDef, error) {
	s, err := c.Snapshot()
	if err != nil {
		return nil, err
	}
	defer s.Release()
	return s.View(name)
}

// Views lists the committed views' names, sorted.
func (c *Catalog) Views() []string {
	s, err := c.Snapshot()
	if err != nil {
		return nil
	}
	defer s.Release()
	return s.Views()
}

// tempTableIDs start temporary tables' ids far above a database's, so the
// planner's OIDs (FirstUserOID + ID) of the two never meet.
const tempTableIDs = 1 << 24

// NewTemp opens a session's space for temporary tables (CREATE TEMP
// TABLE): an in-memory catalog with this one's allocator and options,
// never logged, gone when closed (at the end of the session). It has its
// own transactions; a statement block writing both kinds commits the
// persistent transaction first, then the temporary one (which cannot fail
// on conflicts: nothing else sees it).
func (c *Catalog) NewTemp() (*Catalog, error) {
	opts := c.opts
	opts.CheckpointRows = -1
	t, err := Open(context.Background(), Memory, opts)
	if err != nil {
		return nil, err
	}
	t.temp = true
	t.nextTable.Store(tempTableIDs)
	return t, nil
}
