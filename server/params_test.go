package server_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"
)

// TestBindValuesAsSent: a prepared INSERT's parameters decoded as values
// (pgwire's fast path: BIGINT, INTEGER, SMALLINT, DOUBLE PRECISION,
// BOOLEAN, TEXT, TIMESTAMP[TZ], binary and text) store what the same row
// stores through the builders' path (infinities, NULLs) and what it
// stores as literals of a simple query, and a prepared SELECT of them
// finds the same rows.
func TestBindValuesAsSent(t *testing.T) {
	addr := start(t)
	ctx := context.Background()
	c, err := pgx.Connect(ctx, "postgres://t@"+addr+"/asofsql?sslmode=disable")
	require.NoError(t, err)
	defer c.Close(ctx)
	_, err = c.Exec(ctx, `CREATE TABLE p (id BIGINT, i8 BIGINT, i4 INTEGER, i2 SMALLINT, f8 DOUBLE PRECISION,
		b BOOLEAN, t TEXT, ts TIMESTAMP, tz TIMESTAMPTZ)`)
	require.NoError(t, err)
	ts := time.Date(2026, 12, 2, 15, 4, 5, 123456000, time.UTC)
	rows := [][]any{
		{int64(math.MaxInt64), int32(math.MinInt32), int16(math.MaxInt16), 1.5, true, "AAPL", ts, ts},
		{int64(-1), int32(-1), int16(-1), -0.25, false, "日本 ü", ts.Add(-100 * 365 * 24 * time.Hour), ts.AddDate(300, 0, 0)},
		{int64(0), int32(0), int16(0), math.Inf(1), false, "", time.Date(1970, 1, 1, 0, 0, 0, 1000, time.UTC), time.Unix(0, 0).UTC()},
		{nil, nil, nil, nil, nil, nil, nil, nil},
		{int64(math.MinInt64), int32(7), int16(math.MinInt16), math.SmallestNonzeroFloat64, true, "x'y", pgtype.Timestamp{InfinityModifier: pgtype.Infinity, Valid: true},
			pgtype.Timestamptz{InfinityModifier: pgtype.NegativeInfinity, Valid: true}},
	}
	const ins = `INSERT INTO p VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`
	modes := []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol}
	for m, mode := range modes {
		for i, r := range rows {
			args := append([]any{mode, int64(1000*m + i)}, r...)
			_, err := c.Exec(ctx, ins, args...)
			require.NoError(t, err, "mode %v row %d", mode, i)
		}
	}
	read := func(id int64) string {
		var s string
		require.NoError(t, c.QueryRow(ctx, `SELECT concat_ws('|', i8, i4, i2, f8, b, t, ts, tz, t IS NULL) FROM p WHERE id = $1`, id).Scan(&s))
		return s
	}
	for i := range rows {
		want := read(int64(i))
		for m := 1; m < len(modes); m++ {
			require.Equal(t, want, read(int64(1000*m+i)), "row %d, mode %v", i, modes[m])
		}
	}
	var n int64
	require.NoError(t, c.QueryRow(ctx, `SELECT count(*) FROM p WHERE i8 = $1 AND t = $2 AND ts = $3`,
		int64(math.MaxInt64), "AAPL", ts).Scan(&n))
	require.Equal(t, int64(len(modes)), n)
	require.Equal(t, fmt.Sprint(int64(math.MaxInt64), "|", int32(math.MinInt32), "|", math.MaxInt16, "|1.5|t|AAPL|2026-12-02 15:04:05.123456|2026-12-02 15:04:05.123456+00|f"), read(0))
}
