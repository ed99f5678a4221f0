package asofsql

import (
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
)

// snapshot is what one statement reads: the database as last committed
// and the session's temporary tables (nil when it has none).
type snapshot struct {
	main *catalog.Snapshot
	temp *catalog.Snapshot
	// base is the committed state main shows with the open block's own
	// changes on top (nil: main is that state), which a REPEATABLE READ
	// block keeps.
	base *catalog.Snapshot
}

// Clone is another reference to the same snapshots.
func (s *snapshot) Clone() (*snapshot, error) {
	out := &snapshot{}
	for _, p := range []struct{ from, to **catalog.Snapshot }{{&s.main, &out.main}, {&s.temp, &out.temp}, {&s.base, &out.base}} {
		if *p.from == nil {
			continue
		}
		c, err := (*p.from).Clone()
		if err != nil {
			out.Release()
			return nil, err
		}
		*p.to = c
	}
	return out, nil
}

// Release releases the snapshots.
func (s *snapshot) Release() {
	for _, x := range []*catalog.Snapshot{s.main, s.temp, s.base} {
		if x != nil {
			x.Release()
		}
	}
}

// committed is the committed state the statement reads (without the
// block's own changes).
func (s *snapshot) committed() *catalog.Snapshot {
	if s.base != nil {
		return s.base
	}
	return s.main
}

// snapshot takes the snapshots a statement plans and reads against: of
// the database, the block's own snapshot under REPEATABLE READ and
// SERIALIZABLE once it has one, else the last committed state; of the
// temporary tables, which only this session writes, the current state.
func (s *Session) snapshot() (*snapshot, error) {
	out, err := s.committedSnapshot()
	if err != nil {
		return nil, err
	}
	if err := s.addView(out); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// committedSnapshot is snapshot without the open block's own changes:
// the committed state alone (base stays nil until addView).
func (s *Session) committedSnapshot() (*snapshot, error) {
	var main *catalog.Snapshot
	var err error
	if s.txSnap != nil {
		main, err = s.txSnap.Clone()
	} else {
		main, err = s.db.cat.Snapshot()
	}
	if err != nil {
		return nil, err
	}
	out := &snapshot{main: main}
	if s.temp != nil {
		temp, err := s.temp.Snapshot()
		if err != nil {
			out.Release()
			return nil, err
		}
		out.temp = temp
	}
	return out, nil
}

// addView puts the open block's own changes on top of a committed
// snapshot: the block's statements read its own changes, as PostgreSQL
// shows a transaction its own writes. On error snap is unchanged.
func (s *Session) addView(snap *snapshot) error {
	if s.tx == nil && s.ttx == nil {
		return nil
	}
	if err := s.flushAppend(); err != nil { // the block's rows so far, in order
		return err
	}
	var main, temp *catalog.Snapshot
	if s.tx != nil {
		view, err := s.tx.View(snap.main)
		if err != nil {
			return err
		}
		main = view
	}
	if s.ttx != nil && snap.temp != nil {
		view, err := s.ttx.View(snap.temp)
		if err != nil {
			if main != nil {
				main.Release()
			}
			return err
		}
		temp = view
	}
	if main != nil {
		snap.main, snap.base = main, snap.main
	}
	if temp != nil {
		snap.temp.Release()
		snap.temp = temp
	}
	return nil
}

// relKey names a relation of one schema: temporary or permanent.
type relKey struct {
	temp bool
	name string
}

// block is what an open transaction block changed in the catalogs, which
// its later statements are planned against: tables it created or
// altered, tables it dropped, views it created or dropped. So BEGIN;
// CREATE TABLE t ...; INSERT INTO t ...; SELECT * FROM t works, and a
// dropped table is gone for the rest of the block, as in Postgres. The
// rows those statements read come from the snapshot's view of the block
// (catalog.Tx.View).
type block struct {
	tables  map[relKey]*catalog.TableInfo
	created map[relKey]bool // tables[k] was created (not altered) in the block
	dropped map[relKey]bool
	views   map[relKey]*catalog.ViewDef // nil: dropped in the block
}

func newBlock() *block {
	return &block{tables: map[relKey]*catalog.TableInfo{}, created: map[relKey]bool{}, dropped: map[relKey]bool{},
		views: map[relKey]*catalog.ViewDef{}}
}

// relations is the planner.Catalog a statement binds against: names
// resolve as PostgreSQL's search path does (the session's temporary
// relations, schema pg_temp, before the permanent ones, schema public),
// with the open block's changes on top.
type relations struct {
	snap *snapshot
	b    *block // nil outside a block
	// deps, when set, records what planning looked up (plancache.go).
	deps *planDeps
}

var (
	_ planner.Catalog     = relations{}
	_ planner.Resolver    = relations{}
	_ planner.TableLister = relations{}
)

// Table resolves a table name (views are not tables here).
func (r relations) Table(name string) (*catalog.TableInfo, error) {
	rel, err := r.Relation("", name)
	if err == nil && rel.Table == nil {
		err = sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
	}
	return rel.Table, err
}

// Relation resolves schema.name: pg_temp first for an unqualified name.
func (r relations) Relation(schema, name string) (planner.Relation, error) {
	switch schema {
	case "", "public", planner.TempSchema:
	default:
		return planner.Relation{}, sqlerr.New(sqlerr.UndefinedTable, "relation \"%s.%s\" does not exist", schema, name)
	}
	if schema != "public" {
		if rel, ok := r.lookup(true, name); ok {
			return rel, nil
		}
	}
	if schema != planner.TempSchema {
		if rel, ok := r.lookup(false, name); ok {
			return rel, nil
		}
	}
	if schema != "" {
		return planner.Relation{}, sqlerr.New(sqlerr.UndefinedTable, "relation \"%s.%s\" does not exist", schema, name)
	}
	return planner.Relation{}, sqlerr.New(sqlerr.UndefinedTable, "relation \"%s\" does not exist", name)
}

func (r relations) lookup(temp bool, name string) (planner.Relation, bool) {
	rel, ok := r.find(temp, name)
	if r.deps != nil {
		r.deps.note(relKey{temp, name}, rel)
	}
	return rel, ok
}

func (r relations) find(temp bool, name string) (planner.Relation, bool) {
	k := relKey{temp, name}
	if r.b != nil {
		if t, ok := r.b.tables[k]; ok {
			return planner.Relation{Table: t, Temp: temp}, true
		}
		if v, ok := r.b.views[k]; ok {
			if v == nil {
				return planner.Relation{}, false
			}
			return planner.Relation{View: v, Temp: temp}, true
		}
		if r.b.dropped[k] {
			return planner.Relation{}, false
		}
	}
	snap := r.snap.main
	if temp {
		snap = r.snap.temp
	}
	if snap == nil {
		return planner.Relation{}, false
	}
	if t, err := snap.Table(name); err == nil {
		return planner.Relation{Table: t, Temp: temp}, true
	}
	if v, err := snap.View(name); err == nil {
		return planner.Relation{View: v, Temp: temp}, true
	}
	return planner.Relation{}, false
}

// Tables lists the permanent tables the statement sees, sorted (what
// the virtual pg_catalog shows in schema public).
func (r relations) Tables() []string { return r.names(false, (*catalog.Snapshot).Tables, true) }

// TempTables lists the session's temporary tables, sorted.
func (r relations) TempTables() []string { return r.names(true, (*catalog.Snapshot).Tables, true) }

// Views lists the permanent views, sorted.
func (r relations) Views() []string { return r.names(false, (*catalog.Snapshot).Views, false) }

// TempViews lists the session's temporary views, sorted.
func (r relations) TempViews() []string { return r.names(true, (*catalog.Snapshot).Views, false) }

func (r relations) names(temp bool, list func(*catalog.Snapshot) []string, tables bool) []string {
	if r.deps != nil {
		r.deps.listed = true // the plan depends on every relation there is
	}
	snap := r.snap.main
	if temp {
		snap = r.snap.temp
	}
	seen := map[string]bool{}
	var out []string
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	if snap != nil {
		for _, name := range list(snap) {
			if rel, ok := r.lookup(temp, name); ok && (rel.Table != nil) == tables {
				add(name)
			}
		}
	}
	if r.b != nil {
		for k, t := range r.b.tables {
			if k.temp == temp && tables && t != nil {
				add(k.name)
			}
		}
		for k, v := range r.b.views {
			if k.temp == temp && !tables && v != nil {
				add(k.name)
			}
		}
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
func (s *Session) planCatalog(snap *snapshot) relations {
	return relations{snap: snap, b: s.block}
}

// tableInfo describes a table the block created, as the catalog will once
// it commits (the definition was validated by Tx.CreateTable).
func tableInfo(def catalog.TableDef, temp bool) *catalog.TableInfo {
	info := &catalog.TableInfo{Name: def.Name, Columns: append([]catalog.Column(nil), def.Columns...),
		OrderBy: append([]string(nil), def.OrderBy...), Temp: temp}
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

// noteTable records, inside a block, a table the block created (created)
// or whose definition it changed, as it now is (id is the altered table's
// catalog id, 0 for a new one).
func (s *Session) noteTable(def catalog.TableDef, id uint64, temp, created bool) {
	if s.tx == nil {
		return
	}
	if s.block == nil {
		s.block = newBlock()
	}
	k := relKey{temp, def.Name}
	info := tableInfo(def, temp)
	info.ID = id
	s.block.tables[k] = info
	if created {
		s.block.created[k] = true
	}
	delete(s.block.dropped, k)
}

// noteDropped records, inside a block, a table or view the block dropped
// or renamed away.
func (s *Session) noteDropped(name string, temp, view bool) {
	if s.tx == nil {
		return
	}
	if s.block == nil {
		s.block = newBlock()
	}
	k := relKey{temp, name}
	if view {
		s.block.views[k] = nil
		return
	}
	delete(s.block.tables, k)
	delete(s.block.created, k)
	s.block.dropped[k] = true
}

// noteView records, inside a block, a view it created or replaced.
func (s *Session) noteView(v catalog.ViewDef, temp bool) {
	if s.tx == nil {
		return
	}
	if s.block == nil {
		s.block = newBlock()
	}
	s.block.views[relKey{temp, v.Name}] = &v
}
