package asofsql_test

import (
	"context"
	"strings"
	"testing"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

// cursorSteps runs SQL steps on one session: a step with want checks a
// FETCH's rows ("a | b" each), one with tag the command tag, one with
// code the error.
type cursorStep struct {
	sql  string
	want []string
	tag  string
	code string
}

func runCursorSteps(t *testing.T, s *asofsql.Session, steps []cursorStep) {
	t.Helper()
	ctx := context.Background()
	for _, st := range steps {
		if st.want != nil {
			rows, err := sessRows(t, s, st.sql)
			require.NoError(t, err, st.sql)
			if len(st.want) == 1 && st.want[0] == "" {
				st.want = nil
			}
			require.Equal(t, st.want, rows, st.sql)
			continue
		}
		res, err := s.Exec(ctx, st.sql)
		if st.code != "" {
			require.Equal(t, st.code, sqlerr.Code(err), "%s: %v", st.sql, err)
			continue
		}
		require.NoError(t, err, st.sql)
		if st.tag != "" {
			require.Equal(t, st.tag, res.Tag, st.sql)
		}
	}
}

func TestCursors(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	s := db.Session()
	defer s.Close()
	runCursorSteps(t, s, []cursorStep{
		{sql: `CREATE TABLE cur (a integer, b text)`},
		{sql: `INSERT INTO cur VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')`},
		{sql: `DECLARE c CURSOR FOR SELECT a FROM cur`, code: sqlerr.NoActiveSQLTransaction},
		{sql: `BEGIN`, tag: "BEGIN"},
		{sql: `DECLARE c CURSOR FOR SELECT a, b FROM cur`, tag: "DECLARE CURSOR"},
		{sql: `FETCH 2 FROM c`, want: []string{"1 | a", "2 | b"}},
		{sql: `FETCH 2 FROM c`, tag: "FETCH 2"},
		{sql: `MOVE FORWARD 5 IN c`, tag: "MOVE 1"},
		{sql: `FETCH c`, tag: "FETCH 0"},
		{sql: `FETCH nosuch`, code: sqlerr.InvalidCursorName},
		{sql: `ROLLBACK`},
		{sql: `BEGIN`},
		{sql: `DECLARE c CURSOR FOR SELECT 1`},
		{sql: `DECLARE c CURSOR FOR SELECT 2`, code: "42P03"},
		{sql: `ROLLBACK`},
		{sql: `BEGIN`},
		// Backward moves need SCROLL: the default is NO SCROLL here.
		{sql: `DECLARE c CURSOR FOR SELECT a, b FROM cur`},
		{sql: `FETCH NEXT FROM c`, want: []string{"1 | a"}},
		{sql: `FETCH PRIOR FROM c`, code: "55000"},
		{sql: `ROLLBACK`},
		{sql: `BEGIN`},
		{sql: `DECLARE s SCROLL CURSOR FOR SELECT a, b FROM cur`},
		{sql: `FETCH 2 FROM s`, want: []string{"1 | a", "2 | b"}},
		{sql: `FETCH BACKWARD 1 FROM s`, want: []string{"1 | a"}},
		{sql: `FETCH LAST FROM s`, want: []string{"5 | e"}},
		{sql: `FETCH ABSOLUTE 2 FROM s`, want: []string{"2 | b"}},
		{sql: `FETCH RELATIVE 2 FROM s`, want: []string{"4 | d"}},
		{sql: `FETCH FORWARD 0 FROM s`, want: []string{"4 | d"}},
		{sql: `FETCH BACKWARD ALL FROM s`, want: []string{"3 | c", "2 | b", "1 | a"}},
		{sql: `FETCH ABSOLUTE -2 FROM s`, want: []string{"4 | d"}},
		{sql: `MOVE BACKWARD ALL IN s`, tag: "MOVE 3"},
		{sql: `FETCH ALL FROM s`, tag: "FETCH 5"},
		{sql: `DECLARE h CURSOR WITH HOLD FOR SELECT a FROM cur WHERE a > 2`},
		{sql: `FETCH h`, want: []string{"3"}},
		{sql: `COMMIT`, tag: "COMMIT"},
		// After COMMIT only the WITH HOLD cursor is left, materialized.
		{sql: `FETCH s`, code: sqlerr.InvalidCursorName},
		{sql: `FETCH ALL FROM h`, want: []string{"4", "5"}},
		{sql: `CLOSE h`, tag: "CLOSE CURSOR"},
		{sql: `CLOSE h`, code: sqlerr.InvalidCursorName},
		// WITH HOLD outside a block reads its rows at once.
		{sql: `DECLARE h2 NO SCROLL CURSOR WITH HOLD FOR SELECT a FROM cur`},
		{sql: `INSERT INTO cur VALUES (6, 'f')`},
		{sql: `FETCH ALL h2`, tag: "FETCH 5"},
		{sql: `CLOSE ALL`, tag: "CLOSE CURSOR ALL"},
		// A ROLLBACK drops the WITH HOLD cursors the block declared.
		{sql: `BEGIN`},
		{sql: `DECLARE h3 CURSOR WITH HOLD FOR SELECT a FROM cur`},
		{sql: `ROLLBACK`},
		{sql: `FETCH h3`, code: sqlerr.InvalidCursorName},
		// DISCARD ALL closes the rest.
		{sql: `DECLARE h4 CURSOR WITH HOLD FOR SELECT a FROM cur`},
		{sql: `DISCARD ALL`},
		{sql: `FETCH h4`, code: sqlerr.InvalidCursorName},
	})
}

// TestCursorStreams fetches the first rows of a result far too large to
// materialize: FETCH pulls from the running plan.
func TestCursorStreams(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	s := db.Session()
	defer s.Close()
	runCursorSteps(t, s, []cursorStep{
		{sql: `BEGIN`},
		{sql: `DECLARE big CURSOR FOR SELECT i FROM generate_series(1, 4000000000000) i`},
		{sql: `FETCH 3 FROM big`, want: []string{"1", "2", "3"}},
		{sql: `MOVE 1000 IN big`, tag: "MOVE 1000"},
		{sql: `FETCH big`, want: []string{"1004"}},
		{sql: `COMMIT`},
	})
}

func TestCursorMemoryLimit(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	s := db.Session()
	defer s.Close()
	runCursorSteps(t, s, []cursorStep{
		{sql: `SET memory_limit = '64kB'`},
		{sql: `BEGIN`},
		{sql: `DECLARE big SCROLL CURSOR FOR SELECT i FROM generate_series(1, 1000000) i`},
		{sql: `MOVE ALL IN big`, code: sqlerr.OutOfMemory},
		{sql: `ROLLBACK`},
		{sql: `DECLARE held CURSOR WITH HOLD FOR SELECT i FROM generate_series(1, 1000000) i`, code: sqlerr.OutOfMemory},
		{sql: `FETCH held`, code: sqlerr.InvalidCursorName},
	})
}

func TestCursorParameters(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	s := db.Session()
	defer s.Close()
	ctx := context.Background()
	_, err := s.Exec(ctx, `BEGIN`)
	require.NoError(t, err)
	// postgres_fdw's form: the parameters of DECLARE are its query's.
	st, err := s.Prepare(ctx, `DECLARE c1 CURSOR FOR SELECT ts, sym FROM public.trades WHERE ((ts > $1::bigint)) ORDER BY ts ASC NULLS LAST`, nil)
	require.NoError(t, err)
	require.Len(t, st.ParamTypes(), 1)
	require.Nil(t, st.Columns())
	c, err := st.Execute(ctx, "1")
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.Equal(t, "DECLARE CURSOR", c.Tag())
	fetch, err := s.Prepare(ctx, `FETCH 100 FROM c1`, nil)
	require.NoError(t, err)
	require.Len(t, fetch.Columns(), 2)
	rows, err := sessRows(t, s, `FETCH 100 FROM c1`)
	require.NoError(t, err)
	require.Equal(t, []string{"10 | a", "13 | b", "25 | a"}, rows)
	cols, binary, ok := s.CursorColumns("c1")
	require.True(t, ok)
	require.False(t, binary)
	require.Equal(t, "ts", cols[0].Name)
	_, err = s.Exec(ctx, `CLOSE c1; COMMIT`)
	require.NoError(t, err)
}

func TestTransactionIsolation(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	ctx := context.Background()
	s, other := db.Session(), db.Session()
	defer s.Close()
	defer other.Close()
	count := func() string {
		rows, err := sessRows(t, s, `SELECT count(*) FROM trades`)
		require.NoError(t, err)
		return rows[0]
	}
	insert := func() {
		_, err := other.Exec(ctx, `INSERT INTO trades VALUES (100, 'z', 1)`)
		require.NoError(t, err)
	}
	show := func(name string) string {
		rows, err := sessRows(t, s, `SHOW `+name)
		require.NoError(t, err)
		return rows[0]
	}
	exec := func(sql string) error {
		_, err := s.Exec(ctx, sql)
		return err
	}
	require.Equal(t, "4", count())

	// READ COMMITTED: each statement sees what committed before it.
	require.NoError(t, exec(`BEGIN`))
	require.Equal(t, "read committed", show("transaction_isolation"))
	require.Equal(t, "4", count())
	insert()
	require.Equal(t, "5", count())
	require.NoError(t, exec(`COMMIT`))

	// REPEATABLE READ: one snapshot, taken by the first query, not BEGIN.
	res, err := s.Exec(ctx, `START TRANSACTION ISOLATION LEVEL REPEATABLE READ`)
	require.NoError(t, err)
	require.Equal(t, "START TRANSACTION", res.Tag)
	require.Equal(t, "repeatable read", show("transaction_isolation"))
	insert()
	require.Equal(t, "6", count())
	insert()
	require.Equal(t, "6", count())
	require.Equal(t, sqlerr.ActiveSQLTransaction, sqlerr.Code(exec(`SET TRANSACTION ISOLATION LEVEL READ COMMITTED`)))
	require.NoError(t, exec(`ROLLBACK`))
	require.Equal(t, "7", count())

	// SET TRANSACTION before the first query; SERIALIZABLE reads one
	// snapshot and does not write.
	require.NoError(t, exec(`BEGIN`))
	require.NoError(t, exec(`SET TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY, DEFERRABLE`))
	require.Equal(t, "serializable", show("transaction_isolation"))
	require.Equal(t, "on", show("transaction_read_only"))
	require.Equal(t, "on", show("transaction_deferrable"))
	require.Equal(t, "7", count())
	insert()
	require.Equal(t, "7", count())
	require.Equal(t, "25006", sqlerr.Code(exec(`INSERT INTO trades VALUES (1, 'a', 1)`)))
	require.NoError(t, exec(`ROLLBACK`))
	require.Equal(t, "read committed", show("transaction_isolation"))
	require.Equal(t, "off", show("transaction_read_only"))

	// Session defaults.
	require.NoError(t, exec(`SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`))
	require.Equal(t, "repeatable read", show("default_transaction_isolation"))
	require.Equal(t, "on", show("default_transaction_read_only"))
	require.Equal(t, "25006", sqlerr.Code(exec(`INSERT INTO trades VALUES (1, 'a', 1)`)))
	require.NoError(t, exec(`BEGIN READ WRITE`))
	require.Equal(t, "repeatable read", show("transaction_isolation"))
	require.NoError(t, exec(`INSERT INTO trades VALUES (1, 'a', 1)`))
	require.NoError(t, exec(`COMMIT`))
	require.NoError(t, exec(`SET default_transaction_read_only = off`))
	require.NoError(t, exec(`SET default_transaction_isolation = 'serializable'`))
	err = exec(`INSERT INTO trades VALUES (1, 'a', 1)`)
	require.Equal(t, sqlerr.FeatureNotSupported, sqlerr.Code(err))
	require.True(t, strings.Contains(err.Error(), "SERIALIZABLE"), err.Error())
	require.Equal(t, sqlerr.InvalidParameterValue, sqlerr.Code(exec(`SET default_transaction_isolation = 'sometimes'`)))
	require.NoError(t, exec(`RESET ALL`))
	require.Equal(t, "read committed", show("default_transaction_isolation"))

	// A cursor in a REPEATABLE READ block reads the block's snapshot.
	require.NoError(t, exec(`BEGIN ISOLATION LEVEL REPEATABLE READ`))
	require.Equal(t, "9", count())
	insert()
	require.NoError(t, exec(`DECLARE c CURSOR FOR SELECT count(*) FROM trades`))
	rows, err := sessRows(t, s, `FETCH c`)
	require.NoError(t, err)
	require.Equal(t, []string{"9"}, rows)
	require.NoError(t, exec(`COMMIT`))
	require.Equal(t, "10", count())
}
