package flightsql_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	afsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/asofsql/asofsql/flightsql"
	"github.com/asofsql/asofsql/sqltypes"
)

const marketSQL = `
CREATE TABLE trades (ts BIGINT NOT NULL, sym TEXT, price NUMERIC(10,2)) ORDER BY (ts);
CREATE TABLE quotes (ts BIGINT NOT NULL, sym TEXT, bid DOUBLE PRECISION) ORDER BY (ts);
INSERT INTO quotes VALUES (1, 'A', 10.0), (2, 'B', 20.0), (5, 'A', 10.5), (7, 'A', 11.0);
INSERT INTO trades VALUES (3, 'A', 99.50), (6, 'B', 200), (8, 'A', 101), (9, 'C', 7);
`

const asofQuery = `SELECT t.ts, t.sym, t.price, q.bid FROM trades t ASOF LEFT JOIN quotes q ON ts BETWEEN -2 AND 0 USING (sym) ORDER BY t.ts`

func TestQueryASOF(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	c := e.client(t)
	require.EqualValues(t, 4, exec(t, c, marketSQL), "the last statement's count")
	ctx := context.Background()
	info, err := c.Execute(ctx, asofQuery)
	require.NoError(t, err)
	require.Len(t, info.Endpoint, 1)
	require.True(t, info.Ordered)
	announced, err := flight.DeserializeSchema(info.Schema, e.mem)
	require.NoError(t, err)
	schema, bs, err := fetch(ctx, t, c, info)
	defer release(bs)
	require.NoError(t, err)
	// What FlightInfo announced is exactly what the stream carries (ADBC
	// checks this).
	require.True(t, announced.Equal(schema), "announced %s, streamed %s", announced, schema)
	want := []struct {
		name, sqlType string
		arrow         arrow.DataType
	}{
		{"ts", "bigint", arrow.PrimitiveTypes.Int64},
		{"sym", "text", arrow.BinaryTypes.String},
		{"price", "numeric(10,2)", &arrow.Decimal128Type{Precision: 10, Scale: 2}},
		{"bid", "double precision", arrow.PrimitiveTypes.Float64},
	}
	require.Equal(t, len(want), schema.NumFields())
	for i, w := range want {
		f := schema.Field(i)
		require.Equal(t, w.name, f.Name)
		require.True(t, arrow.TypeEqual(w.arrow, f.Type), "%s: %s", f.Name, f.Type)
		typ, err := sqltypes.FromField(f)
		require.NoError(t, err)
		require.Equal(t, w.sqlType, typ.String())
		md := afsql.ColumnMetadata{Data: &f.Metadata}
		name, ok := md.TypeName()
		require.True(t, ok)
		require.Equal(t, w.sqlType, name)
	}
	f2 := schema.Field(2)
	p, ok := (&afsql.ColumnMetadata{Data: &f2.Metadata}).Precision()
	require.True(t, ok)
	require.EqualValues(t, 10, p)

	rows := query(t, c, asofQuery)
	require.Equal(t, [][]string{
		{"3", "A", "99.5", "10"},
		{"6", "B", "200", "NULL"},
		{"8", "A", "101", "11"},
		{"9", "C", "7", "NULL"},
	}, rows)
}

// TestQueryShapes: DDL and DML sent as queries (as Python's DB-API does)
// run and give an empty result; several statements give the last one's
// rows; SHOW and EXPLAIN are queries.
func TestQueryShapes(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	c := e.client(t)
	require.Empty(t, query(t, c, `CREATE TABLE t (a INT, b TEXT)`))
	require.Empty(t, query(t, c, `INSERT INTO t VALUES (1, 'x'), (2, 'y')`))
	require.Equal(t, [][]string{{"2"}}, query(t, c, `INSERT INTO t VALUES (3, 'z'); SELECT count(*) FROM t WHERE a > 1`))
	require.Equal(t, [][]string{{"UTC"}}, query(t, c, `SHOW TimeZone`))
	plan := query(t, c, `EXPLAIN SELECT * FROM t`)
	require.NotEmpty(t, plan)
	require.EqualValues(t, 3, exec(t, c, `SELECT * FROM t`), "ExecuteUpdate of a query counts its rows")

	// The result schema before execution.
	sr, err := c.GetExecuteSchema(context.Background(), `SELECT a, b, a * 2 AS c FROM t`)
	require.NoError(t, err)
	s, err := flight.DeserializeSchema(sr.Schema, e.mem)
	require.NoError(t, err)
	require.True(t, arrow.TypeEqual(arrow.PrimitiveTypes.Int32, s.Field(0).Type))
	typ, err := sqltypes.FromField(s.Field(0))
	require.NoError(t, err)
	require.Equal(t, sqltypes.Int4Type, typ)
	require.Equal(t, []string{"a", "b", "c"}, []string{s.Field(0).Name, s.Field(1).Name, s.Field(2).Name})
	require.Equal(t, 0, countRows(t, c, `SELECT * FROM t`)-3)
}

func countRows(t testing.TB, c *afsql.Client, sql string) int {
	return len(query(t, c, sql))
}

// TestSettingsPerConnection: SET lasts on its connection, as on a
// Postgres connection, and does not leak to another.
func TestSettingsPerConnection(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	c1, c2 := e.client(t), e.client(t)
	exec(t, c1, `SET TimeZone = 'America/New_York'`)
	require.Equal(t, [][]string{{"America/New_York"}}, query(t, c1, `SHOW TimeZone`))
	require.Equal(t, [][]string{{"UTC"}}, query(t, c2, `SHOW TimeZone`))
	// Session options are the same settings.
	ctx := context.Background()
	opts, err := flight.NewSessionOptionValues(map[string]any{"statement_timeout": "5s", "nonsense": "x", "extra_float_digits": int64(9)})
	require.NoError(t, err)
	res, err := c2.SetSessionOptions(ctx, &flight.SetSessionOptionsRequest{SessionOptions: opts})
	require.NoError(t, err)
	require.Equal(t, flight.SetSessionOptionsResultErrorInvalidName, res.Errors["nonsense"].Value)
	require.Equal(t, flight.SetSessionOptionsResultErrorInvalidValue, res.Errors["extra_float_digits"].Value)
	require.NotContains(t, res.Errors, "statement_timeout")
	require.Equal(t, [][]string{{"5s"}}, query(t, c2, `SHOW statement_timeout`))
	got, err := c2.GetSessionOptions(ctx, &flight.GetSessionOptionsRequest{})
	require.NoError(t, err)
	require.Equal(t, "5s", got.SessionOptions["statement_timeout"].GetStringValue())
	closed, err := c2.CloseSession(ctx, &flight.CloseSessionRequest{})
	require.NoError(t, err)
	require.Equal(t, flight.CloseSessionResultClosed, closed.Status)
	require.Equal(t, [][]string{{"0"}}, query(t, c2, `SHOW statement_timeout`))
}

func TestQueryErrors(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	c := e.client(t)
	ctx := context.Background()
	exec(t, c, `CREATE TABLE t (a INT NOT NULL)`)

	_, err := c.Execute(ctx, `SELECT * FROM nope`)
	pe := requireState(t, err, "42P01")
	require.Equal(t, `relation "nope" does not exist`, pe.Message)
	require.Equal(t, codes.NotFound, status.Code(err))
	require.Contains(t, status.Convert(err).Message(), "(SQLSTATE 42P01)")

	_, err = c.Execute(ctx, `SELEC 1`)
	pe = requireState(t, err, "42601")
	require.Equal(t, 1, pe.Position)
	require.Equal(t, codes.InvalidArgument, status.Code(err))

	_, err = c.ExecuteUpdate(ctx, `INSERT INTO t VALUES (NULL)`)
	requireState(t, err, "23502")

	_, err = c.ExecuteUpdate(ctx, `COPY t FROM STDIN`)
	pe = requireState(t, err, "0A000")
	require.Contains(t, pe.Hint, "CommandStatementIngest")
	require.Equal(t, codes.Unimplemented, status.Code(err))

	// A runtime error reaches the client in the DoGet stream.
	exec(t, c, `INSERT INTO t VALUES (1), (0)`)
	info, err := c.Execute(ctx, `SELECT 10 / a FROM t`)
	require.NoError(t, err)
	_, bs, err := fetch(ctx, t, c, info)
	release(bs)
	requireState(t, err, "22012")

	// A ticket is fetched once.
	info, err = c.Execute(ctx, `SELECT a FROM t`)
	require.NoError(t, err)
	_, bs, err = fetch(ctx, t, c, info)
	release(bs)
	require.NoError(t, err)
	_, bs, err = fetch(ctx, t, c, info)
	release(bs)
	requireState(t, err, "34000")

	_, err = c.BeginTransaction(ctx)
	require.NoError(t, err)
	_, err = c.ExecuteSubstrait(ctx, afsql.SubstraitPlan{Plan: []byte{1}})
	requireState(t, err, "0A000")
}
