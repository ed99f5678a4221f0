package asofsql

import (
	"slices"

	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/lower"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqltypes"
)

// A prepared statement keeps the plan of its last execution and runs it
// again while nothing it was made from has changed, as PostgreSQL's plan
// cache does: an execution then only binds its arguments and lowers the
// plan, with the memo the plan's earlier lowerings left (lower.Memo). What a plan is made from is the statement, the definitions of the
// relations its planning looked up (and the absence of those it looked
// for and did not find, so a temporary table that now shadows a name is
// seen), and the session's settings and identity. Rows are not part of
// it: plans name tables, and every execution reads the snapshot it takes.
// So any DDL on a relation the statement uses (ALTER TABLE, DROP and
// CREATE, RENAME, CREATE OR REPLACE VIEW) or a SET of TimeZone or
// extra_float_digits makes the next execution plan afresh.
//
// Only INSERT and query plans are kept: their planning reads nothing but
// relations and settings. A plan is neither kept nor reused inside a
// transaction block that changed the catalog (its statements plan
// against the block's own definitions), nor in a failed block, nor when
// planning listed all relations (the virtual pg_catalog, whose rows are
// made at planning).

// cachedPlan is a plan with what it was made from.
type cachedPlan struct {
	s      *Session // plans are the session's: its settings, temp tables
	plan   planner.Plan
	deps   []relDep
	vopts  sqltypes.Options
	user   string
	dbname string
	// workers and minParallel are the parallel settings it was planned
	// at (parallel_settings.go: a query's degrees depend on them and on
	// its tables' sizes).
	workers     int
	minParallel int64
	// memo is what lowering the plan keeps for its next lowering
	// (lower.Memo).
	memo lower.Memo
}

// memo is the lowering memo of p when p is st's kept plan, nil otherwise.
func (st *Stmt) memo(p planner.Plan) *lower.Memo {
	if st == nil {
		return nil
	}
	if c := st.cache.Load(); c != nil && c.plan == p {
		return &c.memo
	}
	return nil
}

// planDeps records the relation lookups of one planning.
type planDeps struct {
	rels   []relDep
	listed bool
}

// relDep is one lookup and what it found: a table's definition, a view,
// or nothing.
type relDep struct {
	key   relKey
	table *catalog.TableInfo
	view  *catalog.ViewDef
}

func (d *planDeps) note(k relKey, rel planner.Relation) {
	for _, r := range d.rels {
		if r.key == k {
			return
		}
	}
	d.rels = append(d.rels, relDep{key: k, table: rel.Table, view: rel.View})
}

// cacheable reports the plan kinds whose planning depends on nothing but
// what cachedPlan records.
func cacheable(p planner.Plan) bool {
	switch p.(type) {
	case *planner.Insert, *planner.Query:
		return true
	}
	return false
}

// planCacheOpen reports whether s may keep and reuse plans now.
func (s *Session) planCacheOpen() bool { return s.block == nil && !s.failed }

// cached returns the kept plan if it is still good for session s on snap.
func (st *Stmt) cached(s *Session, snap *snapshot) (planner.Plan, bool) {
	c := st.cache.Load()
	if c == nil || c.s != s || !s.planCacheOpen() || c.vopts != *s.vopts || c.user != s.user || c.dbname != s.database {
		return nil, false
	}
	r := relations{snap: snap}
	for _, d := range c.deps {
		rel, _ := r.find(d.key.temp, d.key.name)
		if !sameTable(d.table, rel.Table) || !sameView(d.view, rel.View) {
			return nil, false
		}
	}
	if !parallelHolds(c.plan, s, c.workers, c.minParallel, r) {
		return nil, false
	}
	return c.plan, true
}

// keepPlan keeps p, planned by s with deps, for the next executions.
func (st *Stmt) keepPlan(s *Session, p planner.Plan, deps *planDeps) {
	if deps.listed || !cacheable(p) || !s.planCacheOpen() {
		st.cache.Store(nil)
		return
	}
	st.cache.Store(&cachedPlan{s: s, plan: p, deps: deps.rels, vopts: *s.vopts, user: s.user, dbname: s.database,
		workers: s.workers, minParallel: s.minParallel})
}

// sameTable compares table definitions: the identity of the CREATE and
// everything DDL can change.
func sameTable(a, b *catalog.TableInfo) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.ID == b.ID && a.Name == b.Name && a.Temp == b.Temp &&
		slices.Equal(a.OrderBy, b.OrderBy) && slices.EqualFunc(a.Columns, b.Columns, sameColumn)
}

func sameColumn(a, b catalog.Column) bool {
	if a.Name != b.Name || a.Type != b.Type || a.NotNull != b.NotNull || (a.Default == nil) != (b.Default == nil) {
		return false
	}
	return a.Default == nil || *a.Default == *b.Default
}

func sameView(a, b *catalog.ViewDef) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Name == b.Name && a.SQL == b.SQL && slices.Equal(a.Columns, b.Columns)
}
