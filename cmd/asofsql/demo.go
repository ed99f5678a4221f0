package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/asofsql/asofsql"
)

const demoSymbols = 300

// demoDay is the trading session the generated data covers.
var (
	demoOpen  = time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)
	demoClose = time.Date(2026, 11, 30, 16, 0, 0, 0, time.UTC)
)

func demoCmd(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("demo", `[--rows N] [--data DIR]

Generates a deterministic trading day (trades, quotes from a primary
venue at 3x the trades, quotes from a second venue, for 300 symbols, with
bursts, gaps and rows that arrive out of order), loads it with COPY into
tables declared ORDER BY (ts), and runs a tour of ASOF JOIN queries. With
--data the tables trades, quotes and quotes_alt in DIR are replaced, and
"asofsql serve --data DIR" serves them to psql.`, stdout, stderr)
	rows := fs.Int("rows", 200_000, "number of trades (quotes: 3x, second-venue quotes: 1x)")
	data := fs.String("data", "", "database `directory` to keep the data in (default: in memory)")
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	if *rows <= 0 || *rows > 20_000_000 {
		return fail(stderr, "demo", errUsage(fmt.Sprintf("--rows %d: want 1 to 20000000", *rows)))
	}
	st := storage{data: *data, memory: *data == ""}
	if *data != "" {
		st.memory = false
	}
	db, err := st.open()
	if err != nil {
		return fail(stderr, "demo", err)
	}
	defer db.Close()
	if err := runDemo(ctx, db, *rows, *data, stdout); err != nil {
		printSQLError(stderr, "", err)
		return exitFail
	}
	if err := db.Close(); err != nil {
		return fail(stderr, "demo", err)
	}
	return exitOK
}

func runDemo(ctx context.Context, db *asofsql.DB, rows int, data string, w io.Writer) error {
	s := db.Session()
	defer s.Close()
	fmt.Fprintf(w, "asofsql demo: one trading day, %d symbols, %d trades, %d quotes, %d second-venue quotes\n\n",
		demoSymbols, rows, 3*rows, rows)
	if _, err := s.Exec(ctx, `DROP TABLE IF EXISTS trades, quotes, quotes_alt;
CREATE TABLE trades (ts TIMESTAMP, sym TEXT, price DOUBLE PRECISION, qty INT) ORDER BY (ts);
CREATE TABLE quotes (ts TIMESTAMP, sym TEXT, bid DOUBLE PRECISION, ask DOUBLE PRECISION) ORDER BY (ts);
CREATE TABLE quotes_alt (ts TIMESTAMP, sym TEXT, bid DOUBLE PRECISION, ask DOUBLE PRECISION) ORDER BY (ts)`); err != nil {
		return err
	}
	for _, table := range []string{"trades", "quotes", "quotes_alt"} {
		start := time.Now()
		late, res, err := loadTable(ctx, s, table, rows)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "COPY %-10s %s (%d rows arrived out of order)\n", table, res.Tag, late)
		fmt.Fprintf(w, "-- time: %v\n", time.Since(start).Round(time.Millisecond))
	}
	fmt.Fprintln(w)
	r := &runner{s: s, stdout: w, stderr: w, format: formatTable, echo: true}
	for _, step := range demoTour {
		fmt.Fprintf(w, "== %s\n\n", step.title)
		start := time.Now()
		if err := r.runAll(ctx, step.sql); err != nil {
			return err
		}
		fmt.Fprintf(w, "-- time: %v\n\n", time.Since(start).Round(time.Millisecond))
	}
	if data == "" {
		fmt.Fprint(w, `The data above lived in memory. To keep it and query it with psql:

  asofsql demo --data ./market
  asofsql serve --data ./market
  psql -h 127.0.0.1 -p 5433 -d asofsql
`)
	} else {
		fmt.Fprintf(w, `The tables are in %s. Query them with psql:

  asofsql serve --data %s
  psql -h 127.0.0.1 -p 5433 -d asofsql
`, data, data)
	}
	return nil
}

var demoTour = []struct{ title, sql string }{
	{"The prevailing quote at each trade (the last quote at or before it, same symbol)",
		`SELECT t.ts, t.sym, t.price, q.ts AS quote_ts, q.bid, q.ask
FROM trades t ASOF LEFT JOIN quotes q ON t.sym = q.sym AND t.ts >= q.ts
WHERE t.ts >= TIMESTAMP '2026-11-30 12:00:00'
LIMIT 8`},
	{"The next quote within 1 second (forward)",
		`SELECT count(*) AS trades, count(q.bid) AS with_next_quote
FROM trades t ASOF LEFT JOIN quotes q ON ts BETWEEN INTERVAL '0 seconds' AND INTERVAL '1 second' USING (sym)`},
	{"The nearest quote within 250 ms on either side (ties go to the earlier one)",
		`SELECT t.ts, t.sym, q.ts AS quote_ts, q.bid, q.ask
FROM trades t ASOF LEFT JOIN quotes q
  ON ts BETWEEN INTERVAL '-250 milliseconds' AND INTERVAL '250 milliseconds' USING (sym)
WHERE q.bid IS NOT NULL
LIMIT 5`},
	{"Excluding exact matches: a quote at the very same microsecond is not 'before' the trade",
		`SELECT count(*) AS trades_with_a_quote_at_the_same_time
FROM trades t ASOF JOIN quotes q ON ts BETWEEN INTERVAL '0 seconds' AND INTERVAL '0 seconds' USING (sym);
SELECT t.ts, t.sym, q.ts AS strictly_earlier_quote_ts, q.bid
FROM trades t ASOF LEFT JOIN quotes q ON t.sym = q.sym AND t.ts > q.ts
WHERE t.ts >= TIMESTAMP '2026-11-30 12:00:00'
LIMIT 5`},
	{"Two right tables at once: both venues' prevailing quotes",
		`SELECT t.ts, t.sym, t.price, q.bid AS bid_primary, a.bid AS bid_alt
FROM trades t
ASOF LEFT JOIN quotes q ON t.sym = q.sym AND t.ts >= q.ts
ASOF LEFT JOIN quotes_alt a ON t.sym = a.sym AND t.ts >= a.ts
WHERE t.ts >= TIMESTAMP '2026-11-30 12:00:00'
LIMIT 8`},
	{"Slippage per symbol: trade price against the prevailing mid, the busiest symbols",
		`SELECT t.sym, count(*) AS trades, avg(t.price - (q.bid + q.ask) / 2) AS avg_slippage
FROM trades t ASOF JOIN quotes q ON t.sym = q.sym AND t.ts >= q.ts
GROUP BY t.sym
ORDER BY trades DESC, t.sym
LIMIT 10`},
}

// loadTable generates one table's rows and streams them to COPY FROM
// STDIN in text format, through a pipe, so no more than a buffer of the
// data is ever in memory.
func loadTable(ctx context.Context, s *asofsql.Session, table string, rows int) (late int, res asofsql.Result, err error) {
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		bw := bufio.NewWriterSize(pw, 64<<10)
		n, err := generate(bw, table, rows)
		if err == nil {
			err = bw.Flush()
		}
		done <- n
		pw.CloseWithError(err) // nil: EOF for the reader
	}()
	res, err = s.CopyFrom(ctx, "COPY "+table+" FROM STDIN", pr)
	pr.CloseWithError(io.ErrClosedPipe) // unblocks the writer if COPY stopped early
	late = <-done
	return late, res, err
}

// market is the deterministic event stream all three tables are cut
// from: every table regenerates the same stream and keeps its own events,
// so prices in trades and quotes agree without holding the day in memory.
type market struct {
	rng   *rand.Rand
	names []string
	mid   []float64
	t     int64 // µs since the open
	gap   float64
	burst int
	bsym  int // the symbol a burst is about
	// The current event's random parts, drawn for every event whatever
	// the table, so that all tables see the same stream.
	offset float64 // trade price against the mid
	qty    int64
	half   float64 // half the quoted spread
}

// events per trade: 3 primary quotes, 1 second-venue quote, 1 trade.
const eventsPerTrade = 5

func newMarket(rows int) *market {
	m := &market{rng: rand.New(rand.NewPCG(20261130, 7))}
	for i := range demoSymbols {
		// Distinct three-letter tickers (37 is coprime with 26³).
		k := (i*37 + 11) % (26 * 26 * 26)
		m.names = append(m.names, string([]byte{byte('A' + k/676), byte('A' + k/26%26), byte('A' + k%26)}))
		m.mid = append(m.mid, 20+math.Round(m.rng.Float64()*48000)/100)
	}
	// The mean gap is chosen so that the day's events span the session:
	// bursts (gaps ≈ 0) and rare long pauses are balanced by the ordinary
	// gaps' mean (see next).
	day := float64(demoClose.Sub(demoOpen).Microseconds())
	m.gap = day / float64(rows*eventsPerTrade)
	return m
}

// next advances to the next event: its kind (0..2 primary quote, 3
// second venue, 4 trade) and symbol.
func (m *market) next() (kind, sym int) {
	// Popular symbols are busier: a skewed pick.
	sym = int(float64(demoSymbols) * m.rng.Float64() * m.rng.Float64())
	switch {
	case m.burst > 0: // a burst: one symbol's events microseconds apart, often equal
		m.burst--
		m.t += int64(m.rng.IntN(3))
		sym = m.bsym
	case m.rng.IntN(1000) == 0: // a pause: nothing for a while
		m.t += int64(m.gap * (20 + 180*m.rng.Float64()))
	default:
		if m.rng.IntN(200) == 0 {
			m.burst, m.bsym = 5+m.rng.IntN(60), sym
		}
		// Ordinary gaps make up for the pauses and bursts.
		m.t += int64(m.rng.ExpFloat64() * m.gap * 0.88)
	}
	kind = m.rng.IntN(eventsPerTrade)
	m.offset = float64(m.rng.IntN(5)-2) / 100
	m.qty = int64(100 * (1 + m.rng.IntN(10)))
	m.half = float64(1+m.rng.IntN(3)) / 100
	if kind < 3 { // a primary-venue quote moves the symbol's mid a little
		m.mid[sym] = math.Max(1, m.mid[sym]+float64(m.rng.IntN(5)-2)/100)
	}
	return kind, sym
}

// generate writes table's rows in COPY text format. About 1% of rows
// arrive late (written a few rows after their time); the table's ORDER BY
// puts them back in place. It returns how many were late.
func generate(w *bufio.Writer, table string, rows int) (int, error) {
	m := newMarket(rows)
	want := map[string]func(int) bool{
		"quotes":     func(k int) bool { return k < 3 },
		"quotes_alt": func(k int) bool { return k == 3 },
		"trades":     func(k int) bool { return k == 4 },
	}[table]
	limit := rows
	if table == "quotes" {
		limit = 3 * rows
	}
	// Lateness has its own generator: the market stream must not depend
	// on which table is being cut from it.
	lateRng := rand.New(rand.NewPCG(uint64(len(table)), 99))
	var held []byte // a late row, written after `wait` more rows
	wait, late := 0, 0
	var line []byte
	for n := 0; n < limit; {
		kind, sym := m.next()
		if !want(kind) {
			continue
		}
		n++
		line = m.row(line[:0], kind, sym)
		if held == nil && lateRng.IntN(100) == 0 {
			held, wait = append([]byte(nil), line...), 1+lateRng.IntN(5)
			late++
			continue
		}
		if _, err := w.Write(line); err != nil {
			return late, err
		}
		if held != nil {
			if wait--; wait == 0 {
				if _, err := w.Write(held); err != nil {
					return late, err
				}
				held = nil
			}
		}
	}
	if held != nil {
		if _, err := w.Write(held); err != nil {
			return late, err
		}
	}
	return late, nil
}

// row formats one event as a COPY text line.
func (m *market) row(b []byte, kind, sym int) []byte {
	b = demoOpen.Add(time.Duration(m.t)*time.Microsecond).AppendFormat(b, "2006-01-02 15:04:05.999999")
	b = append(b, '\t')
	b = append(b, m.names[sym]...)
	b = append(b, '\t')
	mid := m.mid[sym]
	cents := func(v float64) []byte { return strconv.AppendFloat(nil, math.Round(v*100)/100, 'f', 2, 64) }
	if kind == 4 { // a trade: at the bid or the ask, or inside the spread
		b = append(b, cents(mid+m.offset)...)
		b = append(b, '\t')
		b = strconv.AppendInt(b, m.qty, 10)
	} else {
		b = append(b, cents(mid-m.half)...)
		b = append(b, '\t')
		b = append(b, cents(mid+m.half)...)
	}
	return append(b, '\n')
}
