package pgwire_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/pgwire"
)

func (h *harness) dsn() string {
	return fmt.Sprintf("postgres://alice@%s/asofsql?sslmode=disable", h.addr)
}

func pgxConnect(t *testing.T, h *harness, mutate func(*pgx.ConnConfig)) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(h.dsn())
	require.NoError(t, err)
	if mutate != nil {
		mutate(cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.ConnectConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func TestPgxExecModes(t *testing.T) {
	h := start(t, nil)
	ts := time.Date(2024, 1, 2, 3, 4, 5, 123456000, time.UTC)
	day := time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC)
	modes := []pgx.QueryExecMode{
		pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe, pgx.QueryExecModeDescribeExec,
		pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol,
	}
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			c := pgxConnect(t, h, func(cfg *pgx.ConnConfig) { cfg.DefaultQueryExecMode = mode })
			ctx := context.Background()
			for range 3 { // the caching modes change behaviour on reuse
				var (
					i  int64
					s  string
					f  float64
					tz time.Time
					b  bool
					by []byte
					d  time.Time
					iv pgtype.Interval
					n  pgtype.Numeric
					nl *int32
				)
				err := c.QueryRow(ctx, "select $1::int8 as i, $2::text as s, $3::float8 as f, $4::timestamptz as tz, $5::bool as b, $6::bytea as bt, $7::date as d, $8::interval as iv, $9::numeric(10,2) as n, $10::int4 as nl",
					int64(-42), "héllo 'quoted'", 2.5, ts, true, []byte{0xde, 0xad}, day,
					pgtype.Interval{Months: 14, Days: 3, Microseconds: 4_000_000, Valid: true}, "12.34", nil,
				).Scan(&i, &s, &f, &tz, &b, &by, &d, &iv, &n, &nl)
				require.NoError(t, err)
				require.Equal(t, int64(-42), i)
				require.Equal(t, "héllo 'quoted'", s)
				require.Equal(t, 2.5, f)
				require.True(t, ts.Equal(tz), "%v", tz)
				require.True(t, b)
				require.Equal(t, []byte{0xde, 0xad}, by)
				require.True(t, day.Equal(d), "%v", d)
				require.Equal(t, pgtype.Interval{Months: 14, Days: 3, Microseconds: 4_000_000, Valid: true}, iv)
				nv, err := n.Value()
				require.NoError(t, err)
				require.Equal(t, "12.34", nv)
				require.Nil(t, nl)
			}
			// A table read, several rows.
			rows, err := c.Query(ctx, "select * from t")
			require.NoError(t, err)
			ids, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (int32, error) {
				var id int32
				var name string
				var price pgtype.Numeric
				var created time.Time
				err := r.Scan(&id, &name, &price, &created)
				return id, err
			})
			require.NoError(t, err)
			require.Equal(t, []int32{1, 2, 3}, ids)
			// Errors keep their SQLSTATE and position.
			_, err = c.Exec(ctx, "select * from nosuch")
			var pgErr *pgconn.PgError
			require.True(t, errors.As(err, &pgErr), "%v", err)
			require.Equal(t, "42P01", pgErr.Code)
			require.Equal(t, int32(15), pgErr.Position)
			require.NoError(t, c.Ping(ctx))
		})
	}
}

func TestPgxTransactionsAndBatch(t *testing.T) {
	h := start(t, nil)
	c := pgxConnect(t, h, nil)
	ctx := context.Background()
	tx, err := c.Begin(ctx)
	require.NoError(t, err)
	var v string
	require.NoError(t, tx.QueryRow(ctx, "select 'in tx'").Scan(&v))
	require.Equal(t, "in tx", v)
	_, err = tx.Exec(ctx, "select fail('x')")
	require.Error(t, err)
	require.Error(t, tx.QueryRow(ctx, "select 1").Scan(&v))
	require.NoError(t, tx.Rollback(ctx))

	b := &pgx.Batch{}
	b.Queue("select $1::int4", 1)
	b.Queue("select $1::text", "two")
	b.Queue("select * from t")
	br := c.SendBatch(ctx, b)
	var one int32
	require.NoError(t, br.QueryRow().Scan(&one))
	require.Equal(t, int32(1), one)
	require.NoError(t, br.QueryRow().Scan(&v))
	require.Equal(t, "two", v)
	rows, err := br.Query()
	require.NoError(t, err)
	n := 0
	for rows.Next() {
		n++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, 3, n)
	require.NoError(t, br.Close())
}

func TestPgxCopyFrom(t *testing.T) {
	h := start(t, nil)
	c := pgxConnect(t, h, nil)
	ctx := context.Background()
	_, err := c.Exec(ctx, "create table q (sym text not null, ts timestamptz not null, px float8, qty int8)")
	require.NoError(t, err)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 20000
	src := pgx.CopyFromSlice(n, func(i int) ([]any, error) {
		var qty any = int64(i)
		if i%7 == 0 {
			qty = nil
		}
		return []any{fmt.Sprintf("S%d", i%10), base.Add(time.Duration(i) * time.Millisecond), float64(i) / 4, qty}, nil
	})
	got, err := c.CopyFrom(ctx, pgx.Identifier{"q"}, []string{"sym", "ts", "px", "qty"}, src)
	require.NoError(t, err)
	require.Equal(t, int64(n), got)
	require.Equal(t, int64(n), h.eng.Rows("q"))
	var sym string
	var ts time.Time
	var px float64
	var qty *int64
	rows, err := c.Query(ctx, "select * from q limit 8")
	require.NoError(t, err)
	i := 0
	for rows.Next() {
		require.NoError(t, rows.Scan(&sym, &ts, &px, &qty))
		require.Equal(t, fmt.Sprintf("S%d", i%10), sym)
		require.True(t, base.Add(time.Duration(i)*time.Millisecond).Equal(ts))
		require.Equal(t, float64(i)/4, px)
		if i%7 == 0 {
			require.Nil(t, qty)
		} else {
			require.Equal(t, int64(i), *qty)
		}
		i++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, 8, i)
}

func TestPgxCancel(t *testing.T) {
	h := start(t, nil)
	t.Run("default handler abandons the socket", func(t *testing.T) {
		c := pgxConnect(t, h, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		begin := time.Now()
		_, err := c.Exec(ctx, "select pg_sleep(30)")
		require.Error(t, err)
		require.Less(t, time.Since(begin), 5*time.Second)
		// The server notices the dead socket and ends the session.
		require.Eventually(t, func() bool { return h.srv.ConnCount() == 0 }, 5*time.Second, 10*time.Millisecond)
	})
	t.Run("CancelRequest handler", func(t *testing.T) {
		c := pgxConnect(t, h, func(cfg *pgx.ConnConfig) {
			cfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
				return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, CancelRequestDelay: 0, DeadlineDelay: 5 * time.Second}
			}
		})
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := c.Exec(ctx, "select pg_sleep(30)")
		var pgErr *pgconn.PgError
		require.True(t, errors.As(err, &pgErr), "%v", err)
		require.Equal(t, "57014", pgErr.Code)
		var one int32
		require.NoError(t, c.QueryRow(context.Background(), "select 1").Scan(&one))
	})
}

func TestPgxStreamsLargeResults(t *testing.T) {
	h := start(t, nil)
	c := pgxConnect(t, h, nil)
	rows, err := c.Query(context.Background(), "select generate_series(1, 300000)")
	require.NoError(t, err)
	var sum, n int64
	for rows.Next() {
		var v int64
		require.NoError(t, rows.Scan(&v))
		sum += v
		n++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, int64(300000), n)
	require.Equal(t, int64(300000)*300001/2, sum)
	require.Equal(t, "SELECT 300000", rows.CommandTag().String())
}

func TestPgxConnectionVariants(t *testing.T) {
	h := start(t, nil)
	htls := start(t, func(c *pgwire.Config) { c.TLS = selfSigned(t) })
	cases := []struct {
		name string
		dsn  string
		tls  bool
	}{
		// pgx probes with SSLRequest, gets 'N' and reconnects in plain text.
		{"sslmode=prefer without TLS", fmt.Sprintf("postgres://u@%s/asofsql?sslmode=prefer", h.addr), false},
		// Protocol 3.2 is negotiated down to 3.0.
		{"protocol 3.2", fmt.Sprintf("postgres://u@%s/asofsql?sslmode=disable&max_protocol_version=latest", h.addr), false},
		{"sslmode=require with TLS", fmt.Sprintf("postgres://u@%s/asofsql?sslmode=require", htls.addr), true},
		{"sslmode=prefer with TLS", fmt.Sprintf("postgres://u@%s/asofsql?sslmode=prefer", htls.addr), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := pgx.Connect(ctx, tc.dsn)
			require.NoError(t, err)
			defer c.Close(ctx)
			var s string
			require.NoError(t, c.QueryRow(ctx, "select $1::text", "hi").Scan(&s))
			require.Equal(t, "hi", s)
			_, isTLS := c.PgConn().Conn().(*tls.Conn)
			require.Equal(t, tc.tls, isTLS)
		})
	}
}
