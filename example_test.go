package asofsql_test

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/sqltypes"
)

// The prevailing quote at each trade, within 10 time units before it.
func Example() {
	ctx := context.Background()
	db, err := asofsql.Open(":memory:")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	if _, err := db.Exec(ctx, `
		CREATE TABLE trades (ts BIGINT, sym TEXT, qty INTEGER) ORDER BY (ts);
		CREATE TABLE quotes (ts BIGINT, sym TEXT, bid DOUBLE PRECISION) ORDER BY (ts);
		INSERT INTO trades VALUES (10, 'a', 100), (13, 'b', 200), (25, 'a', 300);
		INSERT INTO quotes VALUES (5, 'a', 1.0), (9, 'a', 1.5), (12, 'b', 2.5), (20, 'a', 2.0)`); err != nil {
		panic(err)
	}
	rdr, err := db.Query(ctx, `
		SELECT sym, ts, qty, bid
		FROM trades ASOF LEFT JOIN quotes ON ts BETWEEN -10 AND 0 USING (sym)`)
	if err != nil {
		panic(err)
	}
	defer rdr.Release()
	for rdr.Next() {
		b := rdr.RecordBatch()
		for i := 0; i < int(b.NumRows()); i++ {
			fmt.Println(b.Column(0).ValueStr(i), b.Column(1).ValueStr(i), b.Column(2).ValueStr(i), b.Column(3).ValueStr(i))
		}
	}
	if err := rdr.Err(); err != nil {
		panic(err)
	}
	// Output:
	// a 10 100 1.5
	// b 13 200 2.5
	// a 25 300 2
}

// The same ASOF query through database/sql: each trade with the last quote
// at or before it, on a shared in-memory database.
func Example_databaseSQL() {
	ctx := context.Background()
	db, err := sql.Open("asofsql", ":memory:")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `
		CREATE TABLE trades (ts TIMESTAMP, sym TEXT, qty INTEGER) ORDER BY (ts);
		CREATE TABLE quotes (ts TIMESTAMP, sym TEXT, bid DOUBLE PRECISION) ORDER BY (ts)`); err != nil {
		panic(err)
	}
	t0 := time.Date(2024, 1, 2, 9, 30, 0, 0, time.UTC)
	for _, q := range []struct {
		at  time.Duration
		sym string
		bid float64
	}{{0, "a", 1.0}, {4 * time.Second, "a", 1.5}, {7 * time.Second, "b", 2.5}} {
		if _, err := db.ExecContext(ctx, `INSERT INTO quotes VALUES (?, ?, ?)`, t0.Add(q.at), q.sym, q.bid); err != nil {
			panic(err)
		}
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO trades VALUES ($1, 'a', 100), ($2, 'b', 200), ($3, 'b', 300)`,
		t0.Add(5*time.Second), t0.Add(8*time.Second), t0.Add(20*time.Second)); err != nil {
		panic(err)
	}
	rows, err := db.QueryContext(ctx, `
		SELECT t.ts, t.sym, t.qty, q.bid
		FROM trades t ASOF LEFT JOIN quotes q
		  ON ts BETWEEN INTERVAL '-10 seconds' AND INTERVAL '0 seconds' USING (sym)`)
	if err != nil {
		panic(err)
	}
	defer rows.Close()
	for rows.Next() {
		var ts time.Time
		var sym string
		var qty int
		var bid sql.NullFloat64
		if err := rows.Scan(&ts, &sym, &qty, &bid); err != nil {
			panic(err)
		}
		fmt.Println(ts.Format(time.TimeOnly), sym, qty, bid.Float64, bid.Valid)
	}
	if err := rows.Err(); err != nil {
		panic(err)
	}
	// Output:
	// 09:30:05 a 100 1.5 true
	// 09:30:08 b 200 2.5 true
	// 09:30:20 b 300 0 false
}

// A session keeps settings and a transaction block; EXPLAIN is a query.
func ExampleDB_Session() {
	ctx := context.Background()
	db, err := asofsql.Open(":memory:")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	s := db.Session()
	defer s.Close()
	if _, err := s.Exec(ctx, `
		SET TimeZone = 'America/New_York';
		SET statement_timeout = '30s';
		BEGIN;
		CREATE TABLE quotes (ts TIMESTAMPTZ, sym TEXT, bid DOUBLE PRECISION) ORDER BY (ts);
		INSERT INTO quotes VALUES ('2024-01-02 09:30:00', 'a', 1.5);
		COMMIT`); err != nil {
		panic(err)
	}
	for _, q := range []string{`SHOW TimeZone`, `SELECT ts FROM quotes`, `EXPLAIN SELECT bid FROM quotes WHERE sym = 'a'`} {
		c, err := s.Query(ctx, q)
		if err != nil {
			panic(err)
		}
		for c.Next() {
			b := c.RecordBatch()
			for i := 0; i < int(b.NumRows()); i++ {
				fmt.Println(string(sqltypes.EncodeText(nil, b.Column(0), i, c.Columns()[0].Type, s.ValueOptions())))
			}
		}
		if err := c.Close(); err != nil {
			panic(err)
		}
	}
	// Output:
	// America/New_York
	// 2024-01-02 09:30:00-05
	// Project quotes.bid  (cost=0.00..1.01 rows=1 width=8)
	//   Filter (quotes.sym = 'a')
	//     Scan quotes (sym, bid)
}
