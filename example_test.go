package asofsql_test

import (
	"context"
	"fmt"

	"github.com/asofsql/asofsql"
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
