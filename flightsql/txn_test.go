package flightsql_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	afsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/asofsql/asofsql/flightsql"
)

// TestTransactions: a Flight transaction's writes are invisible to others
// until commit (it reads them itself, as in the engine); rollback discards
// them; a failed statement makes commit a rollback (40000).
func TestTransactions(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	c, other := e.client(t), e.client(t)
	ctx := context.Background()
	exec(t, c, `CREATE TABLE t (a INT NOT NULL)`)

	tx, err := c.BeginTransaction(ctx)
	require.NoError(t, err)
	// A query in the transaction runs in its session.
	info, err := tx.Execute(ctx, `SELECT count(*) FROM t`)
	require.NoError(t, err)
	_, bs, err := fetch(ctx, t, c, info)
	require.NoError(t, err)
	require.Equal(t, "0", flat(bs))
	release(bs)
	n, err := tx.ExecuteUpdate(ctx, `INSERT INTO t VALUES (1), (2)`)
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	require.Equal(t, [][]string{{"0"}}, query(t, other, `SELECT count(*) FROM t`))
	info, err = tx.Execute(ctx, `SELECT count(*) FROM t`)
	require.NoError(t, err)
	_, bs, err = fetch(ctx, t, c, info)
	require.NoError(t, err)
	require.Equal(t, "2", flat(bs), "the transaction reads its own writes")
	release(bs)
	// A prepared statement of the transaction runs in it.
	stmt, err := tx.Prepare(ctx, `INSERT INTO t VALUES (3)`)
	require.NoError(t, err)
	_, err = stmt.ExecuteUpdate(ctx)
	require.NoError(t, err)
	require.NoError(t, stmt.Close(ctx))
	id := tx.ID()
	require.NoError(t, tx.Commit(ctx))
	require.Equal(t, [][]string{{"3"}}, query(t, other, `SELECT count(*) FROM t`))
	_, err = queryIn(ctx, c, `SELECT 1`, id)
	requireState(t, err, "25P01")
	_, err = queryIn(ctx, c, `SELECT 1`, []byte("made up"))
	requireState(t, err, "25P01")

	tx, err = c.BeginTransaction(ctx)
	require.NoError(t, err)
	_, err = tx.ExecuteUpdate(ctx, `INSERT INTO t VALUES (5)`)
	require.NoError(t, err)
	require.NoError(t, tx.Rollback(ctx))
	require.Equal(t, [][]string{{"3"}}, query(t, other, `SELECT count(*) FROM t`))

	tx, err = c.BeginTransaction(ctx)
	require.NoError(t, err)
	_, err = tx.ExecuteUpdate(ctx, `INSERT INTO t VALUES (6)`)
	require.NoError(t, err)
	_, err = tx.ExecuteUpdate(ctx, `INSERT INTO t VALUES (NULL)`)
	requireState(t, err, "23502")
	_, err = tx.ExecuteUpdate(ctx, `INSERT INTO t VALUES (7)`)
	requireState(t, err, "25P02")
	requireState(t, tx.Commit(ctx), "40000")
	require.Equal(t, [][]string{{"3"}}, query(t, other, `SELECT count(*) FROM t`))
}

// queryIn asks for the FlightInfo of a query in transaction id, which
// arrow-go's Txn refuses to send once it has ended.
func queryIn(ctx context.Context, c *afsql.Client, sql string, id []byte) (*flight.FlightInfo, error) {
	cmd, err := anypb.New(&pb.CommandStatementQuery{Query: sql, TransactionId: id})
	if err != nil {
		return nil, err
	}
	b, err := proto.Marshal(cmd)
	if err != nil {
		return nil, err
	}
	return c.Client.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: b})
}

// TestTransactionEndsWithConnection: a connection that closes rolls back
// its transaction, as a Postgres connection does.
func TestTransactionEndsWithConnection(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	c, other := e.client(t), e.client(t)
	ctx := context.Background()
	exec(t, other, `CREATE TABLE t (a INT)`)
	tx, err := c.BeginTransaction(ctx)
	require.NoError(t, err)
	_, err = tx.ExecuteUpdate(ctx, `INSERT INTO t VALUES (1)`)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.Equal(t, [][]string{{"0"}}, query(t, other, `SELECT count(*) FROM t`))
	// Its transaction is gone for every connection once the server has
	// seen the connection end.
	require.Eventually(t, func() bool {
		_, err := queryIn(ctx, other, `SELECT 1`, tx.ID())
		e, ok := flightsql.ErrorOf(err)
		return ok && e.Code == "25P01"
	}, 10*time.Second, 5*time.Millisecond)
}

// TestSQLTransactionBlock: BEGIN ... COMMIT sent as statements work on a
// connection as on the wire, queries included.
func TestSQLTransactionBlock(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	c, other := e.client(t), e.client(t)
	exec(t, c, `CREATE TABLE t (a INT)`)
	exec(t, c, `BEGIN`)
	exec(t, c, `INSERT INTO t VALUES (1)`)
	exec(t, c, `CREATE TABLE u (b INT)`)
	exec(t, c, `INSERT INTO u SELECT a FROM t`) // the block reads its own writes
	require.Equal(t, [][]string{{"1"}}, query(t, c, `SELECT b FROM u`))
	_, err := c.ExecuteUpdate(context.Background(), `SELECT 1/0`)
	requireState(t, err, "22012")
	_, err = c.ExecuteUpdate(context.Background(), `SELECT 1`)
	requireState(t, err, "25P02")
	exec(t, c, `ROLLBACK`)
	require.Equal(t, [][]string{{"0"}}, query(t, other, `SELECT count(*) FROM t`))
	exec(t, c, `BEGIN; INSERT INTO t VALUES (2); COMMIT`)
	require.Equal(t, [][]string{{"1"}}, query(t, other, `SELECT count(*) FROM t`))

	// An error in the rows of a query fails the block too.
	ctx := context.Background()
	exec(t, c, `BEGIN`)
	info, err := c.Execute(ctx, `SELECT 1 / (a - 2) FROM t`)
	require.NoError(t, err)
	_, bs, err := fetch(ctx, t, c, info)
	release(bs)
	requireState(t, err, "22012")
	_, err = c.ExecuteUpdate(ctx, `INSERT INTO t VALUES (3)`)
	requireState(t, err, "25P02")
	exec(t, c, `COMMIT`)
	require.Equal(t, [][]string{{"1"}}, query(t, other, `SELECT count(*) FROM t`))
}

// TestSessionWaitsForUnfetchedResult: inside a block a result keeps its
// session until fetched; the next statement waits for it (and gives up
// with its context).
func TestSessionWaitsForUnfetchedResult(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	c := e.client(t)
	ctx := context.Background()
	tx, err := c.BeginTransaction(ctx)
	require.NoError(t, err)
	info, err := tx.Execute(ctx, `SELECT 1`)
	require.NoError(t, err)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = tx.ExecuteUpdate(short, `SELECT 2`)
	require.Error(t, err)
	_, bs, err := fetch(ctx, t, c, info)
	require.NoError(t, err)
	require.Equal(t, "1", flat(bs))
	release(bs)
	_, err = tx.ExecuteUpdate(ctx, `SELECT 2`)
	require.NoError(t, err)
	// Ending the transaction drops a result it never fetched, and the
	// transaction commits (as closing an unread portal does not fail one).
	exec(t, c, `CREATE TABLE t (a INT)`)
	_, err = tx.ExecuteUpdate(ctx, `INSERT INTO t VALUES (1)`)
	require.NoError(t, err)
	info, err = tx.Execute(ctx, `SELECT 3`)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	_, bs, err = fetch(ctx, t, c, info)
	release(bs)
	requireState(t, err, "34000")
	require.Equal(t, [][]string{{"1"}}, query(t, c, `SELECT count(*) FROM t`))
}
