package main

import (
	"cmp"
	"context"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

// tableRow is one row of table t, read back from the generated batches.
type tableRow struct {
	k, a, b, g, h int64
	s             textValue
}

func tableRows(t *testing.T, in Input) []tableRow {
	var rows []tableRow
	for _, b := range in.Batches {
		c := func(i int) *array.Int64 { return b.Column(i).(*array.Int64) }
		ss := b.Column(5).(*array.String)
		for i := 0; i < int(b.NumRows()); i++ {
			n, err := textNumber(ss.Value(i))
			require.NoError(t, err)
			rows = append(rows, tableRow{c(0).Value(i), c(1).Value(i), c(2).Value(i), c(3).Value(i), c(4).Value(i), textValue{ss.Value(i), n}})
		}
	}
	return rows
}

// queryReference computes an operator shape's answer naively from the
// table, row by row in the order the query defines, and summarises it
// with the same summarizer the engines' results go through (which also
// checks the order and averages of this reference).
func queryReference(t *testing.T, s Shape, rows []tableRow) Summary {
	var out [][]any
	n := int64(len(rows))
	switch s.Name {
	case "F1", "F2":
		pct := map[string]int64{"F1": 10, "F2": 50}[s.Name]
		x := n - n*pct/100 - 1
		for _, r := range rows {
			if r.a > x {
				out = append(out, []any{r.k, r.a*r.b + 1})
			}
		}
		require.Equal(t, n*pct/100, int64(len(out)), "selectivity")
	case "O1", "T1":
		sorted := slices.Clone(rows)
		slices.SortFunc(sorted, func(x, y tableRow) int { return cmp.Compare(x.a, y.a) })
		if s.Name == "T1" {
			slices.Reverse(sorted)
			sorted = sorted[:min(100, len(sorted))]
		}
		for _, r := range sorted {
			if s.Name == "T1" {
				out = append(out, []any{r.k, r.a})
			} else {
				out = append(out, []any{r.k, r.a, r.b})
			}
		}
	case "O2":
		sorted := slices.Clone(rows)
		slices.SortFunc(sorted, func(x, y tableRow) int {
			return cmp.Or(strings.Compare(x.s.s, y.s.s), cmp.Compare(x.a, y.a))
		})
		for _, r := range sorted {
			out = append(out, []any{r.s, r.a, r.k})
		}
	case "G1", "G2", "G3":
		type agg struct{ n, sum, lo, hi int64 }
		groups := map[any]*agg{}
		var order []any
		for _, r := range rows {
			var key any = map[string]any{"G1": r.g, "G2": r.h, "G3": r.s}[s.Name]
			g := groups[key]
			if g == nil {
				g = &agg{lo: r.a, hi: r.a}
				groups[key] = g
				order = append(order, key)
			}
			g.n++
			g.sum += r.b
			g.lo, g.hi = min(g.lo, r.a), max(g.hi, r.a)
		}
		for _, key := range order {
			g := groups[key]
			out = append(out, []any{key, g.n, g.sum, float64(g.sum) / float64(g.n), g.lo, g.hi})
		}
	case "P1":
		bs, as := map[int64][]int64{}, map[int64][]int64{}
		var order []int64
		for _, r := range rows {
			if _, ok := bs[r.g]; !ok {
				order = append(order, r.g)
			}
			bs[r.g] = append(bs[r.g], r.b)
			as[r.g] = append(as[r.g], r.a)
		}
		disc := func(xs []int64, f float64) int64 {
			slices.Sort(xs)
			return xs[max(int(math.Ceil(f*float64(len(xs)))), 1)-1]
		}
		for _, g := range order {
			out = append(out, []any{g, disc(bs[g], 0.5), disc(as[g], 0.9)})
		}
	case "W1":
		// rows are in k order, k = 0..n-1: the frame is the 301 rows up to
		// each.
		for i, r := range rows {
			var sum int64
			for j := max(0, i-300); j <= i; j++ {
				sum += rows[j].b
			}
			out = append(out, []any{r.k, sum})
		}
	default:
		t.Fatalf("no reference for %s", s.Name)
	}
	z := NewQuerySummarizer(s.Query)
	for _, row := range out {
		require.NoError(t, z.addRow(row))
	}
	return z.Summary()
}

// TestQueryShapesAgreeWithReference runs every operator shape on a small
// table (spanning two batches) through asofsql's SQL API and DuckDB with
// 1 and 2 threads, and compares each answer with the naive reference.
func TestQueryShapesAgreeWithReference(t *testing.T) {
	ctx := context.Background()
	duck, err := OpenDuckDB(ctx)
	require.NoError(t, err)
	defer duck.Close()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	probeMem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer probeMem.AssertSize(t, 0)
	probe := NewProbe(probeMem)
	adb := NewAsofDB(probe.Tracker())
	engines := []Engine{&OperatorEngine{}, &SQLEngine{DB: adb}, &WireEngine{DB: adb, Binary: true},
		&DuckDBEngine{DB: duck, Threads: 1}, &DuckDBEngine{DB: duck, Threads: 2}}
	defer finish(t, engines, adb)

	const rows = batchRows + 3000
	d := Generate(QueryShapes[0].Scaled(float64(rows)/float64(QueryShapes[0].Left)), mem)
	defer d.Release()
	require.Equal(t, int64(rows), d.Left.Rows)
	require.Len(t, d.Left.Batches, 2)
	table := tableRows(t, d.Left)
	for _, s := range QueryShapes {
		t.Run(s.Name, func(t *testing.T) {
			s := s.Scaled(float64(rows) / float64(s.Left))
			want := queryReference(t, s, table)
			require.Positive(t, want.Rows)
			got, err := RunShape(ctx, s, d, engines, 1, probe, io.Discard)
			require.NoError(t, err)
			require.Equal(t, want.String(), got.Summary.String())
			var names []string
			for _, e := range got.Engines {
				names = append(names, e.Engine)
			}
			require.Equal(t, []string{"asofsql SQL", "DuckDB 1T", "DuckDB 2T"}, names)
			require.Positive(t, got.Engines[0].PeakArrow, "asofsql allocates through the probe")
		})
	}
}

// TestWireEnginesAgree runs a small S1 through the bare operator, the SQL
// API, the wire server with binary and text results, and DuckDB, and
// checks them against the naive reference.
func TestWireEnginesAgree(t *testing.T) {
	ctx := context.Background()
	duck, err := OpenDuckDB(ctx)
	require.NoError(t, err)
	defer duck.Close()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	probeMem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer probeMem.AssertSize(t, 0)
	probe := NewProbe(probeMem)
	adb := NewAsofDB(probe.Tracker())
	engines := []Engine{&OperatorEngine{}, &SQLEngine{DB: adb}, &WireEngine{DB: adb, Binary: true},
		&WireEngine{DB: adb}, &DuckDBEngine{DB: duck, Threads: 1}}
	defer finish(t, engines, adb)

	s := Shapes[0]
	require.True(t, s.Wire)
	s.Left, s.Right, s.Card = 3000, 2500, 7
	d := Generate(s, mem)
	defer d.Release()
	want := reference(t, d)
	got, err := RunShape(ctx, s, d, engines, 2, probe, io.Discard)
	require.NoError(t, err)
	require.Equal(t, want.Summary.String(), got.Summary.String())
	var names []string
	for _, e := range got.Engines {
		names = append(names, e.Engine)
	}
	require.Equal(t, []string{"asofsql", "asofsql SQL", "asofsql wire binary", "asofsql wire text", "DuckDB 1T"}, names)
	// Other ASOF shapes run neither through SQL nor the wire.
	require.False(t, (&SQLEngine{}).Supports(Shapes[1]))
	require.False(t, (&WireEngine{}).Supports(Shapes[1]))
}

// TestQuerySummarizerRejects checks that the Go-side check fails on a row
// out of order, a wrong average, a value outside its domain, a NULL and a
// wrong column type.
func TestQuerySummarizerRejects(t *testing.T) {
	o2 := QueryShapes[3].Query
	z := NewQuerySummarizer(o2)
	require.NoError(t, z.addRow([]any{textValue{"SYM0000000000002", 2}, int64(1), int64(0)}))
	require.NoError(t, z.addRow([]any{textValue{"SYM0000000000002", 2}, int64(5), int64(1)}))
	err := z.addRow([]any{textValue{"SYM0000000000002", 2}, int64(4), int64(2)})
	require.Equal(t, sqlerr.DataException, sqlerr.Code(err))
	require.Contains(t, err.Error(), "out of order")

	t1 := NewQuerySummarizer(QueryShapes[4].Query) // a DESC
	require.NoError(t, t1.addRow([]any{int64(0), int64(9)}))
	require.Error(t, t1.addRow([]any{int64(1), int64(10)}))

	g := NewQuerySummarizer(QueryShapes[5].Query)
	require.NoError(t, g.addRow([]any{int64(3), int64(2), int64(5), 2.5, int64(1), int64(7)}))
	err = g.addRow([]any{int64(4), int64(2), int64(5), 2.4, int64(1), int64(7)})
	require.Contains(t, err.Error(), "ab = 2.4, but sb / n = 2.5")
	err = g.addRow([]any{int64(4), int64(-2), int64(5), -2.5, int64(1), int64(7)})
	require.Contains(t, err.Error(), "outside the check's domain")

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "v", Type: arrow.PrimitiveTypes.Float64}}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendNull()
	b.Field(1).(*array.Float64Builder).Append(1)
	rec := b.NewRecordBatch()
	defer rec.Release()
	err = NewQuerySummarizer(QueryShapes[0].Query).Add(rec)
	require.Contains(t, err.Error(), "NULL")
	b.Field(0).(*array.Int64Builder).Append(1)
	b.Field(1).(*array.Float64Builder).Append(1)
	rec2 := b.NewRecordBatch()
	defer rec2.Release()
	err = NewQuerySummarizer(QueryShapes[0].Query).Add(rec2)
	require.Equal(t, sqlerr.DatatypeMismatch, sqlerr.Code(err))
}

// TestDuckDBQueryChecks runs DuckDB's order and average checks on small
// hand-made result tables, right and wrong.
func TestDuckDBQueryChecks(t *testing.T) {
	ctx := context.Background()
	duck, err := OpenDuckDB(ctx)
	require.NoError(t, err)
	defer duck.Close()
	count := func(q string) int64 {
		var n int64
		require.NoError(t, duck.conn.QueryRowContext(ctx, q).Scan(&n))
		return n
	}
	exec := func(q string) {
		_, err := duck.conn.ExecContext(ctx, q)
		require.NoError(t, err)
	}
	o2 := QueryShapes[3].Query
	exec("CREATE TEMP TABLE good AS SELECT * FROM (VALUES ('SYM0000000000001', 5, 0), ('SYM0000000000002', 1, 1), ('SYM0000000000002', 3, 2)) v(s, a, k)")
	exec("CREATE TEMP TABLE bad AS SELECT * FROM (VALUES ('SYM0000000000001', 5, 0), ('SYM0000000000002', 3, 1), ('SYM0000000000002', 1, 2)) v(s, a, k)")
	require.Equal(t, int64(0), count(QueryOrderSQL("temp.good", o2)))
	require.Equal(t, int64(1), count(QueryOrderSQL("temp.bad", o2)))
	require.Empty(t, QueryOrderSQL("x", QueryShapes[0].Query))

	g1 := QueryShapes[5].Query
	exec("CREATE TEMP TABLE aggs AS SELECT * FROM (VALUES (1, 2, 5, 2.5, 0, 9), (2, 4, 6, 1.4, 0, 9)) v(g, n, sb, ab, mi, ma)")
	var rows, bad int64
	var sum string
	require.NoError(t, duck.conn.QueryRowContext(ctx, QuerySummarySQL("temp.aggs", g1)).Scan(&rows, &sum, &bad))
	require.Equal(t, int64(2), rows)
	require.Equal(t, int64(1), bad)
	// The checksum matches the Go summarizer's on the good row.
	z := NewQuerySummarizer(g1)
	require.NoError(t, z.addRow([]any{int64(1), int64(2), int64(5), 2.5, int64(0), int64(9)}))
	require.NoError(t, duck.conn.QueryRowContext(ctx, QuerySummarySQL("(SELECT * FROM temp.aggs WHERE g = 1)", g1)).Scan(&rows, &sum, &bad))
	require.Equal(t, z.Summary().Sums[0].String(), sum)
}

func TestGenerateTable(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	in := GenerateTable(5000, mem)
	defer func() {
		for _, b := range in.Batches {
			b.Release()
		}
	}()
	rows := tableRows(t, in)
	require.Len(t, rows, 5000)
	seen := make([]bool, 5000)
	for i, r := range rows {
		require.Equal(t, int64(i), r.k)
		require.False(t, seen[r.a], "a repeats %d", r.a)
		seen[r.a] = true
		require.True(t, r.b >= 0 && r.b < tableB && r.g >= 0 && r.g < tableG && r.h >= 0 && r.h < tableH)
		require.Len(t, r.s.s, 16)
		require.Less(t, r.s.n, int64(tableS))
	}
	again := GenerateTable(5000, mem)
	defer func() {
		for _, b := range again.Batches {
			b.Release()
		}
	}()
	require.Equal(t, rows, tableRows(t, again), "deterministic")
}
