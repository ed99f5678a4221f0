package flightsql_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	afsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/flightsql"
)

// params builds a parameter batch from JSON rows.
func params(t testing.TB, e *env, schema *arrow.Schema, rows string) arrow.RecordBatch {
	t.Helper()
	b, _, err := array.RecordFromJSON(e.mem, schema, strings.NewReader(rows))
	require.NoError(t, err)
	return b
}

func TestPrepared(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	c := e.client(t)
	ctx := context.Background()
	exec(t, c, marketSQL)

	stmt, err := c.Prepare(ctx, `SELECT t.ts, t.sym, q.bid FROM trades t ASOF LEFT JOIN quotes q ON ts BETWEEN $1 AND 0 USING (sym) WHERE t.ts >= $2 ORDER BY t.ts`)
	require.NoError(t, err)
	defer stmt.Close(ctx)
	// Both schemas before execution; integer parameters are int64.
	ps := stmt.ParameterSchema()
	require.Equal(t, 2, ps.NumFields())
	require.Equal(t, "$1", ps.Field(0).Name)
	require.True(t, arrow.TypeEqual(arrow.PrimitiveTypes.Int64, ps.Field(0).Type))
	tn, _ := (&afsql.ColumnMetadata{Data: &ps.Fields()[0].Metadata}).TypeName()
	require.Equal(t, "bigint", tn)
	ds := stmt.DatasetSchema()
	require.Equal(t, []string{"ts", "sym", "bid"}, []string{ds.Field(0).Name, ds.Field(1).Name, ds.Field(2).Name})
	isUpdate, ok := stmt.IsUpdate()
	require.True(t, ok)
	require.False(t, isUpdate)

	// One row of parameters; the client may send any Arrow type that
	// converts (int32 here).
	p := params(t, e, arrow.NewSchema([]arrow.Field{{Name: "lo", Type: arrow.PrimitiveTypes.Int32}, {Name: "from", Type: arrow.PrimitiveTypes.Int64}}, nil), `[{"lo": -1, "from": 4}]`)
	stmt.SetParameters(p)
	p.Release()
	info, err := stmt.Execute(ctx)
	require.NoError(t, err)
	_, bs, err := fetch(ctx, t, c, info)
	require.NoError(t, err)
	require.Equal(t, "6 B NULL|8 A 11|9 C NULL", flat(bs))
	release(bs)

	// Several rows: the results follow one another.
	p = params(t, e, ps, `[{"$1": -5, "$2": 9}, {"$1": -2, "$2": 8}]`)
	stmt.SetParameters(p)
	p.Release()
	info, err = stmt.Execute(ctx)
	require.NoError(t, err)
	_, bs, err = fetch(ctx, t, c, info)
	require.NoError(t, err)
	require.Equal(t, "9 C NULL|8 A 11|9 C NULL", flat(bs))
	release(bs)

	// A value that does not fit its parameter's type.
	p = params(t, e, ps, `[{"$1": 99999999999, "$2": 1}]`)
	stmt.SetParameters(p)
	p.Release()
	_, err = stmt.Execute(ctx)
	require.Error(t, err)

	// Closed: the handle is gone.
	require.NoError(t, stmt.Close(ctx))
	_, err = afsql.NewPreparedStatement(c, stmt.Handle()).Execute(ctx)
	requireState(t, err, "26000")
}

// flat renders batches as "v v v|v v v" rows.
func flat(bs []arrow.RecordBatch) string {
	var rows []string
	for _, b := range bs {
		for i := 0; i < int(b.NumRows()); i++ {
			var vals []string
			for _, col := range b.Columns() {
				if col.IsNull(i) {
					vals = append(vals, "NULL")
				} else {
					vals = append(vals, col.ValueStr(i))
				}
			}
			rows = append(rows, strings.Join(vals, " "))
		}
	}
	return strings.Join(rows, "|")
}

// TestPreparedUpdate: an update with several parameter rows runs them in
// one transaction: all or nothing.
func TestPreparedUpdate(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	c := e.client(t)
	ctx := context.Background()
	exec(t, c, `CREATE TABLE t (a INT NOT NULL, b TEXT)`)
	stmt, err := c.Prepare(ctx, `INSERT INTO t VALUES ($1, $2)`)
	require.NoError(t, err)
	defer stmt.Close(ctx)
	isUpdate, _ := stmt.IsUpdate()
	require.True(t, isUpdate)
	require.Nil(t, stmt.DatasetSchema())
	ps := stmt.ParameterSchema()
	require.True(t, arrow.TypeEqual(arrow.BinaryTypes.String, ps.Field(1).Type))

	p := params(t, e, ps, `[{"$1": 1, "$2": "x"}, {"$1": 2, "$2": null}, {"$1": 3, "$2": "z"}]`)
	stmt.SetParameters(p)
	p.Release()
	n, err := stmt.ExecuteUpdate(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 3, n)

	p = params(t, e, ps, `[{"$1": 4, "$2": "x"}, {"$1": null, "$2": "bad"}]`)
	stmt.SetParameters(p)
	p.Release()
	_, err = stmt.ExecuteUpdate(ctx)
	requireState(t, err, "23502")
	require.Equal(t, [][]string{{"3"}}, query(t, c, `SELECT count(*) FROM t`), "the failing batch left nothing")

	// Without parameters a statement needing them fails cleanly.
	stmt.SetParameters(nil)
	_, err = stmt.ExecuteUpdate(ctx)
	require.Error(t, err)
	_, ok := flightsql.ErrorOf(err)
	require.True(t, ok, "%v", err)
}

// TestPreparedConcurrentBindings: bindings live in the handle, so clients
// sharing one prepared statement do not see each other's parameters.
func TestPreparedConcurrentBindings(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	c := e.client(t)
	ctx := context.Background()
	stmt, err := c.Prepare(ctx, `SELECT $1::bigint * 10`)
	require.NoError(t, err)
	defer stmt.Close(ctx)
	ps := stmt.ParameterSchema()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := afsql.NewPreparedStatement(c, stmt.Handle())
			b := array.NewRecordBuilder(e.mem, ps)
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			p := b.NewRecordBatch()
			b.Release()
			s.SetParameters(p)
			p.Release()
			defer s.SetParameters(nil) // releases the client's reference
			for range 5 {
				info, err := s.Execute(ctx)
				if !assertNoError(t, err) {
					return
				}
				_, bs, err := fetch(ctx, t, c, info)
				assertNoError(t, err)
				if got, want := flat(bs), strconv.Itoa(i*10); got != want {
					t.Errorf("binding %d: got %s", i, got)
				}
				release(bs)
			}
		}()
	}
	wg.Wait()
}

func assertNoError(t testing.TB, err error) bool {
	if err != nil {
		t.Error(err)
		return false
	}
	return true
}

// TestPreparedNamespace: SQL PREPARE'd statements live in the
// connection's one namespace, which its queries (run in forks of its
// session) and its Flight transactions share. Flight SQL prepared
// statements are protocol objects named by their handles, outside it:
// DEALLOCATE ALL leaves them. One whose result type changed since it was
// prepared is refused (0A000), as EXECUTE refuses it.
func TestPreparedNamespace(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	c, other := e.client(t), e.client(t)
	ctx := context.Background()
	exec(t, c, `CREATE TABLE t (a INT NOT NULL); INSERT INTO t VALUES (1), (2)`)
	exec(t, c, `PREPARE twice (int) AS SELECT $1 * 2 AS v`)
	require.Equal(t, [][]string{{"42"}}, query(t, c, `EXECUTE twice(21)`))
	_, err := queryIn(ctx, other, `EXECUTE twice(1)`, nil)
	requireState(t, err, "26000") // another connection's

	tx, err := c.BeginTransaction(ctx)
	require.NoError(t, err)
	info, err := tx.Execute(ctx, `EXECUTE twice(5)`)
	require.NoError(t, err)
	_, bs, err := fetch(ctx, t, c, info)
	require.NoError(t, err)
	require.Equal(t, "10", flat(bs))
	release(bs)
	_, err = tx.ExecuteUpdate(ctx, `PREPARE total AS SELECT sum(a) FROM t`)
	require.NoError(t, err)
	require.NoError(t, tx.Rollback(ctx))
	require.Equal(t, [][]string{{"3"}}, query(t, c, `EXECUTE total`), "PREPARE is not undone by ROLLBACK")

	// A Flight prepared statement may EXECUTE a SQL one; its shape is
	// known before it runs.
	stmt, err := c.Prepare(ctx, `EXECUTE twice(4)`)
	require.NoError(t, err)
	defer stmt.Close(ctx)
	require.Equal(t, "v", stmt.DatasetSchema().Field(0).Name)
	byHandle, err := c.Prepare(ctx, `SELECT a FROM t ORDER BY a`)
	require.NoError(t, err)
	defer byHandle.Close(ctx)

	exec(t, c, `DEALLOCATE ALL`)
	_, err = queryIn(ctx, c, `EXECUTE twice(1)`, nil)
	requireState(t, err, "26000")
	_, err = stmt.Execute(ctx)
	requireState(t, err, "26000") // the SQL statement it runs is gone
	info, err = byHandle.Execute(ctx)
	require.NoError(t, err, "DEALLOCATE ALL leaves Flight SQL prepared statements")
	_, bs, err = fetch(ctx, t, c, info)
	require.NoError(t, err)
	require.Equal(t, "1|2", flat(bs))
	release(bs)

	exec(t, c, `DROP TABLE t; CREATE TABLE t (a TEXT)`)
	_, err = byHandle.Execute(ctx)
	requireState(t, err, "0A000")
	upd, err := c.Prepare(ctx, `INSERT INTO t VALUES ($1)`)
	require.NoError(t, err)
	defer upd.Close(ctx)
	exec(t, c, `DROP TABLE t; CREATE TABLE t (a BIGINT)`)
	_, err = upd.ExecuteUpdate(ctx)
	requireState(t, err, "0A000")
}
