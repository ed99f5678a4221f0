package flightsql_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	_ "github.com/apache/arrow-go/v18/arrow/flight/flightsql/driver" // registers "flightsql"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/flightsql"
)

// TestDatabaseSQL drives the server with arrow-go's database/sql driver:
// DDL and DML (several statements at once too), parameters, an ASOF
// query, transactions and errors with their SQLSTATE.
func TestDatabaseSQL(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	db, err := sql.Open("flightsql", "flightsql://"+e.addr+"?timeout=20s")
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()

	_, err = db.ExecContext(ctx, marketSQL)
	require.NoError(t, err)
	res, err := db.ExecContext(ctx, `INSERT INTO quotes VALUES ($1, $2, $3)`, int64(8), "B", 21.5)
	require.NoError(t, err)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.EqualValues(t, 1, n)

	rows, err := db.QueryContext(ctx, `SELECT t.ts, t.sym, q.bid FROM trades t ASOF LEFT JOIN quotes q
		ON t.sym = q.sym AND t.ts >= q.ts WHERE t.ts > $1 ORDER BY t.ts`, int64(5))
	require.NoError(t, err)
	type row struct {
		ts  int64
		sym string
		bid sql.NullFloat64
	}
	var got []row
	for rows.Next() {
		var r row
		require.NoError(t, rows.Scan(&r.ts, &r.sym, &r.bid))
		got = append(got, r)
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())
	require.Equal(t, []row{
		{6, "B", sql.NullFloat64{Float64: 20, Valid: true}},
		{8, "A", sql.NullFloat64{Float64: 11, Valid: true}},
		{9, "C", sql.NullFloat64{}},
	}, got)

	// Transactions.
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `INSERT INTO trades VALUES (10, 'A', 1)`)
	require.NoError(t, err)
	require.NoError(t, tx.Rollback())
	tx, err = db.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `INSERT INTO trades VALUES (11, 'A', 1)`)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	var count int64
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM trades WHERE ts >= 10`).Scan(&count))
	require.EqualValues(t, 1, count)

	// Errors keep their SQLSTATE through the driver.
	_, err = db.ExecContext(ctx, `INSERT INTO trades VALUES (NULL, 'A', 1)`)
	requireState(t, err, "23502")
	err = db.QueryRowContext(ctx, `SELECT * FROM missing`).Scan(&count)
	requireState(t, err, "42P01")
	err = db.QueryRowContext(ctx, `SELECT 1 / (ts - ts) FROM trades`).Scan(&count)
	requireState(t, err, "22012")

	// A context deadline cancels a running query.
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	rows, err = db.QueryContext(short, `SELECT count(*) FROM generate_series(1, 2000000000) g`)
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	require.Error(t, err)
}
