package asofsql_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/sqlerr"
)

// The virtual pg_catalog shows the session's identity and, inside a
// transaction block, the tables the block created and not those it
// dropped; OIDs stay the same from one statement to the next.
func TestSessionCatalogViews(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	ctx := context.Background()
	s := db.Session()
	defer s.Close()
	run := func(sql string) { _, err := s.Exec(ctx, sql); require.NoError(t, err, sql) }
	q := func(sql string) []string {
		rows, err := sessRows(t, s, sql)
		require.NoError(t, err, sql)
		return rows
	}

	rows := q(`SELECT current_database(), current_user, datname, pg_get_userbyid(datdba) FROM pg_database`)
	require.Equal(t, []string{"asofsql | asofsql | asofsql | asofsql"}, rows)
	s.SetIdentity("alice", "market")
	require.Equal(t, []string{"market | alice | market | alice"},
		q(`SELECT current_database(), current_user, datname, pg_get_userbyid(datdba) FROM pg_database`))

	run(`CREATE TABLE a (x INT)`)
	run(`CREATE TABLE b (y TEXT NOT NULL)`)
	const list = `SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relname IN ('a', 'b', 'c') ORDER BY 1`
	require.Equal(t, []string{"a", "b"}, q(list))
	oid := q(`SELECT oid FROM pg_class WHERE relname = 'b'`)
	require.Equal(t, oid, q(`SELECT attrelid FROM pg_attribute WHERE attname = 'y'`))

	run(`BEGIN`)
	run(`DROP TABLE a`)
	run(`CREATE TABLE c (z DATE)`)
	require.Equal(t, []string{"b", "c"}, q(list))
	require.Equal(t, []string{"z | date"}, q(`SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'c'::regclass`))
	require.Equal(t, oid, q(`SELECT oid FROM pg_class WHERE relname = 'b'`))
	run(`ROLLBACK`)
	require.Equal(t, []string{"a", "b"}, q(list))
	require.Equal(t, oid, q(`SELECT oid FROM pg_class WHERE relname = 'b'`))
}

// Views are in pg_class (relkind 'v') with their query's columns, so
// psql's \dv and \d v list and describe them; a view whose query no
// longer binds is listed without columns; pg_get_viewdef gives the query.
func TestSessionCatalogUserViews(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	ctx := context.Background()
	s := db.Session()
	defer s.Close()
	run := func(sql string) { _, err := s.Exec(ctx, sql); require.NoError(t, err, sql) }
	q := func(sql string) []string {
		rows, err := sessRows(t, s, sql)
		require.NoError(t, err, sql)
		return rows
	}
	run(`CREATE TABLE t (a INT, b TEXT, c DOUBLE PRECISION)`)
	run(`CREATE VIEW v (k, total) AS SELECT b, sum(c) FROM t GROUP BY b`)
	run(`CREATE VIEW w AS SELECT a FROM t`)
	run(`CREATE VIEW cls AS SELECT relname FROM pg_class`)

	// psql 15's \dv
	require.Equal(t, []string{"public | cls | view | asofsql", "public | v | view | asofsql", "public | w | view | asofsql"}, q(`SELECT n.nspname as "Schema",
  c.relname as "Name",
  CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'i' THEN 'index' WHEN 'S' THEN 'sequence' WHEN 't' THEN 'TOAST table' WHEN 'f' THEN 'foreign table' WHEN 'p' THEN 'partitioned table' WHEN 'I' THEN 'partitioned index' END as "Type",
  pg_catalog.pg_get_userbyid(c.relowner) as "Owner"
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('v','')
      AND n.nspname <> 'pg_catalog'
      AND n.nspname !~ '^pg_toast'
      AND n.nspname <> 'information_schema'
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 1,2`))
	// the columns as \d v reads them
	require.Equal(t, []string{"k | text", "total | double precision"}, q(`SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod)
FROM pg_catalog.pg_attribute a WHERE a.attrelid = 'v'::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`))
	require.Equal(t, []string{"VIEW"}, q(`SELECT table_type FROM information_schema.tables WHERE table_name = 'w'`))
	require.Equal(t, []string{" SELECT a FROM t; | NULL"}, q(`SELECT pg_get_viewdef('w'::regclass, true), pg_get_viewdef('t'::regclass)`))

	// w reads column a: dropping it is 2BP01, as in PostgreSQL
	_, err := s.Exec(ctx, `ALTER TABLE t DROP COLUMN a`)
	require.Equal(t, "2BP01", sqlerr.Code(err), "%v", err)
	// w's column is renamed away (the view keeps the old name): still
	// listed, without columns
	run(`ALTER TABLE t RENAME COLUMN a TO a2`)
	require.Equal(t, []string{"v", "w"}, q(`SELECT relname FROM pg_class WHERE relkind = 'v' AND relnamespace = 'public'::regnamespace AND relname <> 'cls' ORDER BY 1`))
	require.Equal(t, []string{"0"}, q(`SELECT relnatts FROM pg_class WHERE relname = 'w'`))
}
