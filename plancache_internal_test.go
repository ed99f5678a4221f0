package asofsql

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
)

// planCacheFixture is a session on a fresh in-memory database with helpers
// to run SQL and prepared statements.
type planCacheFixture struct {
	t   *testing.T
	ctx context.Context
	db  *DB
	s   *Session
}

func newPlanCacheFixture(t *testing.T) *planCacheFixture {
	db, err := Open(":memory:")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	s := db.Session()
	t.Cleanup(func() { s.Close() })
	return &planCacheFixture{t: t, ctx: context.Background(), db: db, s: s}
}

func (f *planCacheFixture) exec(sql string) {
	f.t.Helper()
	_, err := f.s.Exec(f.ctx, sql)
	require.NoError(f.t, err, sql)
}

// rows runs st and returns its rows, each as its values' text joined by
// "|".
func (f *planCacheFixture) rows(st *Stmt, args ...any) ([]string, error) {
	cur, err := st.Execute(f.ctx, args...)
	if err != nil {
		return nil, err
	}
	defer cur.Release()
	var out []string
	for cur.Next() {
		b := cur.RecordBatch()
		for r := range int(b.NumRows()) {
			var vals []string
			for _, c := range b.Columns() {
				vals = append(vals, c.ValueStr(r))
			}
			out = append(out, strings.Join(vals, "|"))
		}
	}
	return out, cur.Err()
}

func (f *planCacheFixture) query(sql string) []string {
	f.t.Helper()
	st, err := f.s.Prepare(f.ctx, sql, nil)
	require.NoError(f.t, err)
	out, err := f.rows(st)
	require.NoError(f.t, err, sql)
	return out
}

// plan is the plan st keeps, nil for none.
func plan(st *Stmt) planner.Plan {
	if c := st.cache.Load(); c != nil {
		return c.plan
	}
	return nil
}

// TestPlanCacheReuses checks that executions of a prepared INSERT and
// SELECT after the first run the first one's plan, and still see the rows
// committed in between (plans name tables; rows come from each
// execution's snapshot).
func TestPlanCacheReuses(t *testing.T) {
	f := newPlanCacheFixture(t)
	f.exec(`CREATE TABLE t (ts bigint NOT NULL, v text) ORDER BY (ts)`)
	ins, err := f.s.PrepareNamed(f.ctx, "ins", `INSERT INTO t VALUES ($1, $2)`, nil)
	require.NoError(t, err)
	sel, err := f.s.PrepareNamed(f.ctx, "sel", `SELECT count(*), max(ts) FROM t`, nil)
	require.NoError(t, err)

	_, err = ins.Execute(f.ctx, 1, "a")
	require.NoError(t, err)
	kept := plan(ins)
	require.NotNil(t, kept)
	out, err := f.rows(sel)
	require.NoError(t, err)
	require.Equal(t, []string{"1|1"}, out)
	keptSel := plan(sel)
	require.NotNil(t, keptSel)

	for i := 2; i <= 4; i++ {
		_, err = ins.Execute(f.ctx, i, "b")
		require.NoError(t, err)
	}
	_, err = f.db.Exec(f.ctx, `INSERT INTO t VALUES (10, 'other session')`)
	require.NoError(t, err)
	out, err = f.rows(sel)
	require.NoError(t, err)
	require.Equal(t, []string{"5|10"}, out)
	require.Same(t, kept, plan(ins), "INSERT planned again")
	require.Same(t, keptSel, plan(sel), "SELECT planned again")

	// EXECUTE of a statement SQL PREPARE made reuses its plan too.
	f.exec(`PREPARE p (bigint) AS INSERT INTO t VALUES ($1, 'p')`)
	f.exec(`EXECUTE p(20)`)
	pst, ok := f.s.Prepared("p")
	require.True(t, ok)
	keptP := plan(pst)
	require.NotNil(t, keptP)
	f.exec(`EXECUTE p(21)`)
	require.Same(t, keptP, plan(pst))
	require.Equal(t, []string{"7"}, f.query(`SELECT count(*) FROM t`))

	// DISCARD PLANS drops them; the next execution plans again.
	f.exec(`DISCARD PLANS`)
	require.Nil(t, plan(ins))
	_, err = ins.Execute(f.ctx, 30, "c")
	require.NoError(t, err)
	require.NotNil(t, plan(ins))
	require.NotSame(t, kept, plan(ins))
}

// TestPlanCacheSeesDDL checks that DDL between two executions of a
// prepared statement is seen, as PostgreSQL's plan cache invalidation
// makes it: ADD and DROP COLUMN, RENAME, DROP and CREATE of the table, a
// temporary table that now shadows the name, and a view replaced.
func TestPlanCacheSeesDDL(t *testing.T) {
	f := newPlanCacheFixture(t)
	f.exec(`CREATE TABLE t (a int)`)
	ins, err := f.s.PrepareNamed(f.ctx, "ins", `INSERT INTO t VALUES ($1)`, nil)
	require.NoError(t, err)
	star, err := f.s.PrepareNamed(f.ctx, "star", `SELECT * FROM t ORDER BY a`, nil)
	require.NoError(t, err)
	cnt, err := f.s.PrepareNamed(f.ctx, "cnt", `SELECT count(*) FROM t`, nil)
	require.NoError(t, err)
	_, err = ins.Execute(f.ctx, 1)
	require.NoError(t, err)
	out, err := f.rows(star)
	require.NoError(t, err)
	require.Equal(t, []string{"1"}, out)

	// ADD COLUMN: the INSERT fills the new column with its default; the
	// SELECT * would now return another column, which Postgres refuses.
	f.exec(`ALTER TABLE t ADD COLUMN b text DEFAULT 'dflt'`)
	_, err = ins.Execute(f.ctx, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"1|dflt", "2|dflt"}, f.query(`SELECT a, b FROM t ORDER BY a`))
	_, err = f.rows(star)
	require.Equal(t, sqlerr.FeatureNotSupported, sqlerr.Code(err), "%v", err)

	// DROP COLUMN: the INSERT's rows have one column again.
	f.exec(`ALTER TABLE t DROP COLUMN b`)
	_, err = ins.Execute(f.ctx, 3)
	require.NoError(t, err)
	out, err = f.rows(star)
	require.NoError(t, err)
	require.Equal(t, []string{"1", "2", "3"}, out)

	// RENAME TO: the name is gone; renaming it back finds the table.
	f.exec(`ALTER TABLE t RENAME TO u`)
	_, err = ins.Execute(f.ctx, 4)
	require.Equal(t, sqlerr.UndefinedTable, sqlerr.Code(err), "%v", err)
	f.exec(`ALTER TABLE u RENAME TO t`)
	_, err = ins.Execute(f.ctx, 4)
	require.NoError(t, err)

	// DROP TABLE, then CREATE of another table under the name.
	f.exec(`DROP TABLE t`)
	_, err = ins.Execute(f.ctx, 5)
	require.Equal(t, sqlerr.UndefinedTable, sqlerr.Code(err), "%v", err)
	_, err = f.rows(cnt)
	require.Equal(t, sqlerr.UndefinedTable, sqlerr.Code(err), "%v", err)
	f.exec(`CREATE TABLE t (a int NOT NULL) ORDER BY (a)`)
	_, err = ins.Execute(f.ctx, 6)
	require.NoError(t, err)
	_, err = ins.Execute(f.ctx, nil)
	require.Equal(t, sqlerr.NotNullViolation, sqlerr.Code(err), "%v", err)
	out, err = f.rows(cnt)
	require.NoError(t, err)
	require.Equal(t, []string{"1"}, out)

	// A temporary table shadows the permanent one for the statements
	// already planned.
	f.exec(`CREATE TEMP TABLE t (a int)`)
	out, err = f.rows(cnt)
	require.NoError(t, err)
	require.Equal(t, []string{"0"}, out)
	_, err = ins.Execute(f.ctx, 7)
	require.NoError(t, err)
	out, err = f.rows(cnt)
	require.NoError(t, err)
	require.Equal(t, []string{"1"}, out)
	f.exec(`DROP TABLE pg_temp.t`)
	out, err = f.rows(cnt)
	require.NoError(t, err)
	require.Equal(t, []string{"1"}, out)

	// CREATE OR REPLACE VIEW: the statement reads the new query.
	f.exec(`CREATE VIEW v AS SELECT a FROM t WHERE a > 100`)
	vc, err := f.s.PrepareNamed(f.ctx, "vc", `SELECT count(*) FROM v`, nil)
	require.NoError(t, err)
	out, err = f.rows(vc)
	require.NoError(t, err)
	require.Equal(t, []string{"0"}, out)
	f.exec(`CREATE OR REPLACE VIEW v AS SELECT a FROM t WHERE a > 0`)
	out, err = f.rows(vc)
	require.NoError(t, err)
	require.Equal(t, []string{"1"}, out)
}

// TestPlanCacheSeesSettings checks that a setting planning reads (TimeZone
// for a TIMESTAMPTZ literal) changed between executions is seen, and that
// a plan is not reused inside a block that changed the catalog.
func TestPlanCacheSeesSettings(t *testing.T) {
	f := newPlanCacheFixture(t)
	st, err := f.s.PrepareNamed(f.ctx, "e", `SELECT extract(epoch FROM TIMESTAMPTZ '2024-01-01 00:00')`, nil)
	require.NoError(t, err)
	out, err := f.rows(st)
	require.NoError(t, err)
	require.Equal(t, []string{"1704067200"}, out)
	f.exec(`SET TimeZone = 'America/New_York'`)
	out, err = f.rows(st)
	require.NoError(t, err)
	require.Equal(t, []string{"1704085200"}, out)

	// Inside a block that altered the table, the statement plans against
	// the block's definition.
	f.exec(`CREATE TABLE t (a int)`)
	ins, err := f.s.PrepareNamed(f.ctx, "ins", `INSERT INTO t VALUES ($1)`, nil)
	require.NoError(t, err)
	_, err = ins.Execute(f.ctx, 1)
	require.NoError(t, err)
	f.exec(`BEGIN`)
	f.exec(`ALTER TABLE t ADD COLUMN b int NOT NULL DEFAULT 7`)
	_, err = ins.Execute(f.ctx, 2)
	require.NoError(t, err)
	require.Nil(t, plan(ins), "a plan made against the block's definitions is not kept")
	f.exec(`COMMIT`)
	require.Equal(t, []string{"1|7", "2|7"}, f.query(`SELECT a, b FROM t ORDER BY a`))
}

// TestPlanCacheLoweringMemo: the executions of a kept SELECT plan lower
// it with the plan's memo (its projections' schemas made once), with
// each execution's arguments and rows; a new plan starts a new memo.
func TestPlanCacheLoweringMemo(t *testing.T) {
	f := newPlanCacheFixture(t)
	f.exec(`CREATE TABLE t (ts bigint NOT NULL, v text) ORDER BY (ts)`)
	f.exec(`INSERT INTO t VALUES (1, 'a'), (2, 'b')`)
	sel, err := f.s.Prepare(f.ctx, `SELECT ts + $1 AS x, upper(v) AS u FROM t WHERE ts >= $2`, nil)
	require.NoError(t, err)
	out, err := f.rows(sel, 10, 1)
	require.NoError(t, err)
	require.Equal(t, []string{"11|A", "12|B"}, out)
	c := sel.cache.Load()
	require.NotNil(t, c)
	require.Positive(t, c.memo.Len(), "the first lowering of the kept plan fills its memo")
	f.exec(`INSERT INTO t VALUES (3, 'c')`)
	out, err = f.rows(sel, 100, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"102|B", "103|C"}, out)
	require.Same(t, c, sel.cache.Load())

	f.exec(`ALTER TABLE t ADD COLUMN w text`)
	out, err = f.rows(sel, 0, 3)
	require.NoError(t, err)
	require.Equal(t, []string{"3|C"}, out)
	require.NotSame(t, c, sel.cache.Load(), "DDL made a new plan, with a memo of its own")
}
