package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// TestAsofBoundParams binds ASOF range bounds as extended-protocol
// parameters (spec §3): fixed per execution, typed as the on column's
// bound, lo > hi and NULL rejected at execution with 22023.
func TestAsofBoundParams(t *testing.T) {
	addr := start(t)
	ctx := context.Background()
	c := dial(t, addr, pgx.QueryExecModeCacheStatement)
	for _, q := range []string{
		`CREATE TABLE r (t BIGINT, v TEXT) ORDER BY (t)`,
		`INSERT INTO r VALUES (1, 'r1'), (5, 'r5'), (9, 'r9'), (20, 'r20')`,
		`CREATE TABLE l (t BIGINT) ORDER BY (t)`,
		`INSERT INTO l VALUES (0), (6), (10), (30)`,
		`CREATE TABLE tr (t TIMESTAMPTZ, v TEXT) ORDER BY (t)`,
		`INSERT INTO tr VALUES ('2024-01-01 00:00:00+00', 'a'), ('2024-01-01 00:00:07+00', 'b')`,
		`CREATE TABLE tl (t TIMESTAMPTZ) ORDER BY (t)`,
		`INSERT INTO tl VALUES ('2024-01-01 00:00:10+00'), ('2024-01-01 00:01:00+00')`,
		`CREATE TABLE rn (t NUMERIC(10,2), v TEXT) ORDER BY (t)`,
		`INSERT INTO rn VALUES (0.99, 'a'), (1.50, 'b')`,
	} {
		_, err := c.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	collect := func(q string, args ...any) ([]string, error) {
		rows, err := c.Query(ctx, q, args...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var v *string
			if err := rows.Scan(&v); err != nil {
				return nil, err
			}
			if v == nil {
				out = append(out, "NULL")
			} else {
				out = append(out, *v)
			}
		}
		return out, rows.Err()
	}
	const q = `SELECT r.v FROM l ASOF LEFT JOIN r ON t BETWEEN $1 AND $2`
	got, err := collect(q, -9, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"NULL", "r5", "r9", "NULL"}, got)
	// The same prepared statement with other bounds: forward [0, 5].
	got, err = collect(q, 0, 5)
	require.NoError(t, err)
	require.Equal(t, []string{"r1", "r9", "NULL", "NULL"}, got)

	var pe *pgconn.PgError
	_, err = collect(q, 1, 0)
	require.True(t, errors.As(err, &pe), "%v", err)
	require.Equal(t, "22023", pe.Code)
	require.Contains(t, pe.Message, "lower bound 1 is greater than upper bound 0")
	_, err = collect(q, nil, 0)
	require.True(t, errors.As(err, &pe), "%v", err)
	require.Equal(t, "22023", pe.Code)

	// An interval parameter in the compatibility form.
	got, err = collect(`SELECT tr.v FROM tl ASOF LEFT JOIN tr ON tr.t BETWEEN tl.t - $1 AND tl.t`, 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, []string{"b", "NULL"}, got)

	// NUMERIC bounds as parameters, exact before rounding: [0.001, 0.009]
	// on numeric(10,2) is empty, not an error.
	got, err = collect(`SELECT r2.v FROM rn ASOF LEFT JOIN rn r2 ON t BETWEEN $1 AND $2`, "0.001", "0.009")
	require.NoError(t, err)
	require.Equal(t, []string{"NULL", "NULL"}, got)
	got, err = collect(`SELECT r2.v FROM rn ASOF LEFT JOIN rn r2 ON t BETWEEN $1 AND $2`, "-0.6", "-0.5")
	require.NoError(t, err)
	require.Equal(t, []string{"NULL", "a"}, got)
}
