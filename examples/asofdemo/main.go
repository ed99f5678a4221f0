// Command asofdemo shows the ASOF join operator doing its main job on a
// generated market: for every trade, the prevailing quote (backward), the
// next quote within one second (forward), and the nearest quote within
// 250 ms, in one pass with three right inputs. It prints a sample and the
// throughput. `make demo` runs it until the asofsql command ships its own.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/asof"
)

var (
	tsType = &arrow.TimestampType{Unit: arrow.Microsecond}
	day0   = time.Date(2026, 11, 30, 14, 30, 0, 0, time.UTC)
)

// market generates a deterministic trading session: symbols with their
// own activity level, quotes and trades as bursts, both in time order.
type market struct {
	schema  *arrow.Schema
	mem     memory.Allocator
	rng     *rand.Rand
	symbols []string
	rows    int
	sent    int
	t       int64 // µs since the session start
	trades  bool
	pace    int64 // divides the gaps: quotes arrive 3x as often as trades
}

func newMarket(mem memory.Allocator, rows, symbols int, trades bool, seed uint64) *market {
	m := &market{mem: mem, rng: rand.New(rand.NewPCG(seed, 1)), rows: rows, trades: trades, pace: 3}
	if trades {
		m.pace = 1
	}
	for i := 0; i < symbols; i++ {
		m.symbols = append(m.symbols, fmt.Sprintf("S%03d", i))
	}
	price := "bid"
	if trades {
		price = "price"
	}
	m.schema = arrow.NewSchema([]arrow.Field{
		{Name: "ts", Type: tsType}, {Name: "sym", Type: arrow.BinaryTypes.String}, {Name: price, Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	return m
}

func (m *market) Schema() *arrow.Schema      { return m.schema }
func (m *market) Open(context.Context) error { return nil }
func (m *market) Close() error               { return nil }

func (m *market) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if m.sent >= m.rows {
		return nil, io.EOF
	}
	n := min(32*1024, m.rows-m.sent)
	m.sent += n
	b := array.NewRecordBuilder(m.mem, m.schema)
	defer b.Release()
	ts := b.Field(0).(*array.TimestampBuilder)
	sym := b.Field(1).(*array.StringBuilder)
	px := b.Field(2).(*array.Float64Builder)
	for i := 0; i < n; i++ {
		// Bursts: mostly a few µs apart, sometimes a gap of up to 50 ms.
		if m.rng.IntN(20) == 0 {
			m.t += int64(m.rng.IntN(50_000)) / m.pace
		} else {
			m.t += int64(m.rng.IntN(400)) / m.pace
		}
		// Popular symbols trade more: a skewed pick.
		s := int(float64(len(m.symbols)) * m.rng.Float64() * m.rng.Float64())
		ts.Append(arrow.Timestamp(m.t))
		sym.Append(m.symbols[s])
		px.Append(100 + float64(s) + float64(m.rng.IntN(100))/100)
	}
	return b.NewRecordBatch(), nil
}

func main() {
	rows := flag.Int("rows", 2_000_000, "trades (quotes are generated at 3x)")
	flag.Parse()
	if *rows <= 0 {
		fmt.Fprintln(os.Stderr, "asofdemo: --rows must be positive")
		os.Exit(2)
	}
	mem := memory.NewGoAllocator()
	const second = int64(1_000_000)
	right := func(name string, lo, hi asof.Bound, seed uint64) asof.Right {
		return asof.Right{Name: name, Input: newMarket(mem, 3**rows, 300, false, seed),
			LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1}, Lo: lo, Hi: hi, Kind: asof.Left, Payload: []int{0, 2}}
	}
	nearest := right("quotes_nearest", asof.IntBound(-second/4), asof.IntBound(second/4), 2)
	nearest.Tie = asof.PreferEarlier
	j, err := asof.New(newMarket(mem, *rows, 300, true, 1), []asof.Right{
		right("quotes_prevailing", asof.Unbounded, asof.IntBound(0), 2),
		right("quotes_next_1s", asof.IntBound(1), asof.IntBound(second), 2),
		nearest,
	}, asof.Options{Allocator: mem, LeftName: "trades"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "asofdemo:", err)
		os.Exit(1)
	}
	fmt.Printf("asofsql demo: %d trades against %d quotes over 300 symbols\n\n", *rows, 3**rows)
	fmt.Println("For each trade, three ASOF joins in one operator:")
	fmt.Println("  prevailing quote  ON ts BETWEEN -infinity AND 0        (the last quote at or before the trade)")
	fmt.Println("  next quote        ON ts BETWEEN 1 µs AND 1 s            (strictly after, within a second)")
	fmt.Println("  nearest quote     ON ts BETWEEN -250 ms AND 250 ms      (closest either side, ties to the earlier)")
	fmt.Println()
	start := time.Now()
	var total, matched [3]int64
	shown := 0
	header := fmt.Sprintf("%-15s %-4s %8s | %-15s %7s | %-15s %7s | %-15s %7s", "trade ts", "sym", "price", "prevailing ts", "bid", "next ts", "bid", "nearest ts", "bid")
	err = exec.Drain(context.Background(), j, func(b arrow.RecordBatch) error {
		for r := 0; r < 3; r++ {
			col := b.Column(3 + 2*r)
			total[r] += b.NumRows()
			matched[r] += b.NumRows() - int64(col.NullN())
		}
		if shown == 0 {
			fmt.Println(header)
			fmt.Println(strings.Repeat("-", len(header)))
		}
		for i := 0; shown < 12 && i < int(b.NumRows()); i += 997 {
			fmt.Printf("%-15s %-4s %8.2f", clock(b.Column(0), i), b.Column(1).ValueStr(i), b.Column(2).(*array.Float64).Value(i))
			for r := 0; r < 3; r++ {
				fmt.Printf(" | %-15s %7s", clock(b.Column(3+2*r), i), price(b.Column(4+2*r), i))
			}
			fmt.Println()
			shown++
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "asofdemo:", err)
		os.Exit(1)
	}
	el := time.Since(start)
	fmt.Println()
	for r, name := range []string{"prevailing", "next within 1 s", "nearest within 250 ms"} {
		fmt.Printf("%-22s matched %5.1f%% of trades\n", name, 100*float64(matched[r])/float64(total[r]))
	}
	fmt.Printf("\n%d trades x 3 joins over %d quotes in %v, generating the data included: %.0f ns per trade\n",
		*rows, 3**rows, el.Round(time.Millisecond), float64(el.Nanoseconds())/float64(*rows))
	fmt.Println("Next: `make bench` times the join alone; docs/benchmarks.md has the figures.")
}

func clock(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return "-"
	}
	us := int64(a.(*array.Timestamp).Value(i))
	return day0.Add(time.Duration(us) * time.Microsecond).Format("15:04:05.000000")
}

func price(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return "-"
	}
	return fmt.Sprintf("%.2f", a.(*array.Float64).Value(i))
}
