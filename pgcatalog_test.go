package asofsql_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
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
