package pgwire_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/asofsql/asofsql/pgwire"
)

const benchRows = 1_000_000

// BenchmarkStreamPgx measures rows/s streamed to a pgx client (binary
// int8), to compare with BenchmarkStreamEngine, which reads the same
// result from the engine in process (what the embedded API will do).
func BenchmarkStreamPgx(b *testing.B) {
	h := start(b, nil)
	c, err := pgx.Connect(context.Background(), h.dsn())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(context.Background())
	b.ResetTimer()
	for range b.N {
		rows, err := c.Query(context.Background(), "select generate_series(1, 1000000)")
		if err != nil {
			b.Fatal(err)
		}
		var n int
		for rows.Next() {
			var v int64
			if err := rows.Scan(&v); err != nil {
				b.Fatal(err)
			}
			n++
		}
		if rows.Err() != nil || n != benchRows {
			b.Fatal(rows.Err(), n)
		}
	}
	b.ReportMetric(float64(benchRows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkStreamEngine(b *testing.B) {
	h := start(b, nil)
	ctx := context.Background()
	sess, err := h.eng.Connect(ctx, pgwire.StartupInfo{User: "bench", Database: "asofsql"})
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	b.ResetTimer()
	for range b.N {
		st, err := sess.Prepare(ctx, "select generate_series(1, 1000000)", nil)
		if err != nil {
			b.Fatal(err)
		}
		res, err := st.Execute(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		var n int64
		for {
			rec, err := res.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n += rec.NumRows()
			rec.Release()
		}
		res.Close()
		st.Close()
		if n != benchRows {
			b.Fatal(n)
		}
	}
	b.ReportMetric(float64(benchRows*b.N)/b.Elapsed().Seconds(), "rows/s")
}
