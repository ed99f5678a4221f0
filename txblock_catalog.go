package asofsql

import (
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
)

// blockCatalog is what statements inside a transaction block are planned
// against: the committed catalog, plus the tables the block created, minus
// those it dropped. So BEGIN; CREATE TABLE t ...; INSERT INTO t ...;
// COMMIT works, and a dropped table is gone for the rest of the block, as
// in Postgres. Rows are another matter: the catalog cannot scan a block's
// uncommitted writes, so reading a table created in the block is refused
// (readsBlockTable) rather than answered from the committed state.
type blockCatalog struct {
	snap *catalog.Snapshot
	s    *Session
}

func (c blockCatalog) Table(name string) (*catalog.TableInfo, error) {
	if info, ok := c.s.created[name]; ok {
		return info, nil
	}
	if c.s.dropped[name] {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
	}
	return c.snap.Table(name)
}

// Tables lists the tables the block sees, sorted.
func (c blockCatalog) Tables() []string {
	var out []string
	for _, name := range c.snap.Tables() {
		if _, ok := c.s.created[name]; !ok && !c.s.dropped[name] {
			out = append(out, name)
		}
	}
	for name := range c.s.created {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// SetIdentity records the user and database name a client connected
// with. The virtual pg_catalog tables, current_user and current_database()
// show them (planner.DefaultUser and DefaultDatabase when empty).
func (s *Session) SetIdentity(user, database string) {
	s.user, s.database = user, database
}

// planCatalog is the catalog a statement binds against.
func (s *Session) planCatalog(snap *catalog.Snapshot) planner.Catalog {
	if s.tx == nil || (len(s.created) == 0 && len(s.dropped) == 0) {
		return snap
	}
	return blockCatalog{snap: snap, s: s}
}

// tableInfo describes a table the block created, as the catalog will once
// it commits (the definition was validated by Tx.CreateTable).
func tableInfo(def catalog.TableDef) *catalog.TableInfo {
	info := &catalog.TableInfo{Name: def.Name, Columns: append([]catalog.Column(nil), def.Columns...),
		OrderBy: append([]string(nil), def.OrderBy...)}
	fields := make([]arrow.Field, len(def.Columns))
	for i, c := range def.Columns {
		fields[i] = c.Type.Field(c.Name, !c.NotNull)
	}
	info.Schema = arrow.NewSchema(fields, nil)
	for _, name := range def.OrderBy {
		for i, c := range def.Columns {
			if c.Name == name {
				info.OrderKeys = append(info.OrderKeys, i)
			}
		}
	}
	return info
}

func (s *Session) noteCreated(def catalog.TableDef) {
	if s.tx == nil {
		return
	}
	if s.created == nil {
		s.created, s.dropped = map[string]*catalog.TableInfo{}, map[string]bool{}
	}
	s.created[def.Name] = tableInfo(def)
}

func (s *Session) noteDropped(name string) {
	if s.tx == nil {
		return
	}
	if s.created == nil {
		s.created, s.dropped = map[string]*catalog.TableInfo{}, map[string]bool{}
	}
	delete(s.created, name)
	s.dropped[name] = true
}

// readsBlockTable refuses a plan that scans a table created in the open
// block: its rows are not readable before COMMIT.
func (s *Session) readsBlockTable(root planner.Node) error {
	if root == nil || len(s.created) == 0 {
		return nil
	}
	if sc, ok := root.(*planner.Scan); ok && s.created[sc.Table.Name] == sc.Table {
		return errBlockTable(sc.Table.Name)
	}
	for _, c := range root.Children() {
		if err := s.readsBlockTable(c); err != nil {
			return err
		}
	}
	return nil
}

func errBlockTable(name string) error {
	return sqlerr.New(sqlerr.FeatureNotSupported,
		"relation %q was created in this transaction and cannot be read before COMMIT", name).
		WithHint("Statements in a transaction block read the committed state; commit the CREATE TABLE first.")
}
