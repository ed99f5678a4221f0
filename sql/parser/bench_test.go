package parser

import "testing"

// typicalAsof is the kind of query the engine exists for: an ASOF LEFT
// JOIN with a key, an interval range, a filter, a parameter and ordering.
const typicalAsof = `SELECT t.sym, t.ts, t.px, q.bid, q.ask
FROM trades t
ASOF LEFT JOIN quotes q ON ts BETWEEN INTERVAL '-5 seconds' AND INTERVAL '0 seconds' USING (sym)
WHERE t.ts >= $1::timestamptz AND t.qty > 100
ORDER BY t.ts`

func BenchmarkParseAsof(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		stmts, err := Parse(typicalAsof)
		if err != nil || len(stmts[0].Asof) != 1 {
			b.Fatal(err)
		}
	}
}

// BenchmarkParsePlain is the same size of query without ASOF or Postgres
// forms, to show what the pre-pass and recovery cost on top of TiDB.
func BenchmarkParsePlain(b *testing.B) {
	const q = `SELECT t.sym, t.ts, t.px, q.bid, q.ask FROM trades t LEFT JOIN quotes q ON t.sym = q.sym WHERE t.ts >= 5 AND t.qty > 100 ORDER BY t.ts`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(q); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseParallel(b *testing.B) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := Parse(typicalAsof); err != nil {
				b.Fatal(err)
			}
		}
	})
}
