package server_test

// This file is named to sort after server_test.go, so that the load test
// runs after the cancellation and timeout tests there (go test runs a
// package's tests in file order) and does not load the machine under them.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/server"
	"github.com/asofsql/asofsql/sqltypes"
)

const (
	soakClients = 64
	// soakHeapBound is the most Go heap the process may hold at any
	// sample during the run (server, 64 sessions, clients, tables).
	soakHeapBound = 256 << 20
	// Each COPY appends soakBatch rows; a client commits appends until it
	// owns soakCap rows of ticks, then keeps copying in transactions it
	// rolls back, so the table (and memory) stop growing whatever the
	// machine's speed.
	soakBatch = 40
	soakCap   = 4000
)

// soakQueries are the ASOF shapes the clients run over the static market
// tables, each over a window of trades ($1, $2).
var soakQueries = []string{
	`SELECT t.ts, t.sym, t.price, q.bid FROM trades t ASOF LEFT JOIN quotes q ON ts BETWEEN -100 AND 0 USING (sym)
	 WHERE t.ts BETWEEN $1 AND $2`,
	`SELECT t.ts, q.bid FROM trades t ASOF JOIN quotes q ON ts BETWEEN -100 AND -1 USING (sym) WHERE t.ts BETWEEN $1 AND $2`,
	`SELECT t.ts, t.sym, q.ts, q.bid FROM trades t ASOF JOIN quotes q ON ts BETWEEN 0 AND 60 USING (sym) WHERE t.ts BETWEEN $1 AND $2`,
	`SELECT t.ts, q.ts, q.bid FROM trades t ASOF LEFT JOIN quotes q ON ts BETWEEN -30 AND 30 USING (sym) PREFER LATER
	 WHERE t.ts BETWEEN $1 AND $2`,
	`SELECT t.ts, q.bid, a.bid FROM trades t ASOF LEFT JOIN quotes q ON ts BETWEEN -100 AND 0 USING (sym)
	 ASOF LEFT JOIN alt a ON ts BETWEEN -200 AND 0 USING (sym) WHERE t.ts BETWEEN $1 AND $2`,
	`SELECT t.sym, count(*), count(q.bid), min(q.bid), max(q.bid) FROM trades t
	 ASOF LEFT JOIN quotes q ON ts BETWEEN -100 AND 0 USING (sym) WHERE t.ts BETWEEN $1 AND $2 GROUP BY t.sym ORDER BY t.sym`,
	`SELECT t.ts, q.bid FROM trades t ASOF LEFT JOIN quotes q ON t.sym = q.sym AND t.ts >= q.ts WHERE t.ts BETWEEN $1 AND $2`,
}

// soakWindows are the trade windows ($1, $2) the queries run over.
var soakWindows = [][2]int64{{0, 6000}, {5000, 12000}, {20000, 26000}, {33000, 40000}, {41000, 47000}, {52000, 60000}}

// soakMarket generates the static tables: quotes and alt arrive slightly
// out of order (the tables sort them), trades have distinct timestamps.
func soakMarket() map[string][][]any {
	r := rand.New(rand.NewPCG(7, 9))
	sym := func() string { return fmt.Sprintf("S%02d", r.IntN(16)) }
	gen := func(n int, step int64) [][]any {
		rows := make([][]any, n)
		for i := range rows {
			rows[i] = []any{int64(i)*step + r.Int64N(2*step), sym(), float64(r.IntN(100000)) / 100}
		}
		return rows
	}
	trades := make([][]any, 4000)
	for i := range trades {
		trades[i] = []any{int64(i)*15 + 7, sym(), float64(r.IntN(100000)) / 100}
	}
	return map[string][][]any{"quotes": gen(20000, 3), "alt": gen(8000, 7), "trades": trades}
}

const soakDDL = `CREATE TABLE trades (ts BIGINT, sym TEXT, price DOUBLE PRECISION) ORDER BY (ts);
CREATE TABLE quotes (ts BIGINT, sym TEXT, bid DOUBLE PRECISION) ORDER BY (ts);
CREATE TABLE alt (ts BIGINT, sym TEXT, bid DOUBLE PRECISION) ORDER BY (ts);
CREATE TABLE probes (ts BIGINT) ORDER BY (ts);
CREATE TABLE ticks (ts BIGINT, client BIGINT, seq BIGINT, v DOUBLE PRECISION) ORDER BY (ts)`

var soakColumns = map[string][]string{"trades": {"ts", "sym", "price"}, "quotes": {"ts", "sym", "bid"}, "alt": {"ts", "sym", "bid"}}

// render prints a row's values the same way for pgx's and the embedded
// API's Go values (int64, float64, string; nil as NULL).
func render(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		if v == nil {
			parts[i] = "NULL"
		} else {
			parts[i] = fmt.Sprint(v)
		}
	}
	return strings.Join(parts, "|")
}

// embeddedAnswers loads the same market into an embedded database and
// returns each query's result per window, as rendered rows.
func embeddedAnswers(t *testing.T, market map[string][][]any) map[string][]string {
	ctx := context.Background()
	db, err := asofsql.Open(":memory:")
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(ctx, soakDDL)
	require.NoError(t, err)
	s := db.Session()
	defer s.Close()
	for name, rows := range market {
		var b strings.Builder
		for _, r := range rows {
			fmt.Fprintf(&b, "%d,%s,%s\n", r[0], r[1], strconv.FormatFloat(r[2].(float64), 'g', -1, 64))
		}
		_, err := s.CopyFrom(ctx, fmt.Sprintf("COPY %s (%s) FROM STDIN WITH (FORMAT csv)", name, strings.Join(soakColumns[name], ", ")),
			strings.NewReader(b.String()))
		require.NoError(t, err, name)
	}
	want := map[string][]string{}
	for qi, q := range soakQueries {
		for _, w := range soakWindows {
			rdr, err := db.Query(ctx, q, w[0], w[1])
			require.NoError(t, err, q)
			cols := rdr.(*asofsql.Cursor).Columns()
			var out []string
			for rdr.Next() {
				b := rdr.RecordBatch()
				for i := 0; i < int(b.NumRows()); i++ {
					vals := make([]any, len(cols))
					for j, c := range cols {
						vals[j] = sqltypes.GoValue(b.Column(j), i, c.Type)
					}
					out = append(out, render(vals))
				}
			}
			require.NoError(t, rdr.Err(), q)
			rdr.Release()
			require.NotEmpty(t, out, "query %d over %v returns rows", qi, w)
			want[soakKey(qi, w)] = out
		}
	}
	return want
}

func soakKey(q int, w [2]int64) string { return fmt.Sprintf("%d@%d-%d", q, w[0], w[1]) }

// startSoak is start (server_test.go) with room for every client and
// hang guards generous enough for a loaded machine: cleanup shuts the
// server down, closes the database, checks that no Arrow memory is left
// and that the goroutine count is back to what it was before.
func startSoak(t *testing.T) (string, *pgwire.Server) {
	t.Helper()
	before := runtime.NumGoroutine()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	db, err := asofsql.Open(":memory:", asofsql.WithAllocator(mem))
	require.NoError(t, err)
	srv, err := server.New(db, pgwire.Config{Allocator: mem, MaxConnections: soakClients + 8})
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, srv.Shutdown(ctx))
		require.ErrorIs(t, <-served, pgwire.ErrServerClosed)
		require.NoError(t, db.Close())
		mem.AssertSize(t, 0)
		deadline := time.Now().Add(time.Minute)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Fatalf("goroutines leaked: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	return l.Addr().String(), srv
}

// soakSeconds is the run's length: 3 s in the ordinary test run, or
// ASOFSQL_SOAK_SECONDS (30 for the full load test, whose figures
// docs/benchmarks.md records). full reports that the variable is set: the
// full run serves from an asofsql serve process, whose RSS is the
// server's own and which must stop on SIGTERM.
func soakSeconds(t *testing.T) (d time.Duration, full bool) {
	if s := os.Getenv("ASOFSQL_SOAK_SECONDS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "ASOFSQL_SOAK_SECONDS")
		return time.Duration(n) * time.Second, true
	}
	return 3 * time.Second, false
}

// soakProcess is an asofsql serve process serving the load test.
type soakProcess struct {
	cmd  *exec.Cmd
	addr string
	log  *syncLog
	exit chan error
}

// syncLog collects a process's standard error.
type syncLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *syncLog) add(s string) { l.mu.Lock(); l.lines = append(l.lines, s); l.mu.Unlock() }
func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// startSoakProcess builds the command and starts "asofsql serve" on an
// in-memory database.
func startSoakProcess(t *testing.T) *soakProcess {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build asofsql")
	}
	bin := filepath.Join(t.TempDir(), "asofsql")
	out, err := exec.Command(gobin, "build", "-o", bin, "../cmd/asofsql").CombinedOutput()
	require.NoError(t, err, string(out))
	cmd := exec.Command(bin, "serve", "--memory", "--listen", "127.0.0.1:0", "--max-connections", strconv.Itoa(soakClients+8))
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &soakProcess{cmd: cmd, log: &syncLog{}, exit: make(chan error, 1)}
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`msg=listening addr=(\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.log.add(sc.Text())
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		p.exit <- cmd.Wait()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	select {
	case p.addr = <-addr:
	case err := <-p.exit:
		t.Fatalf("asofsql serve exited: %v\n%s", err, p.log)
	case <-time.After(time.Minute):
		t.Fatalf("asofsql serve did not start\n%s", p.log)
	}
	return p
}

// rss reads a process's resident set size (VmRSS) and its peak (VmHWM)
// from /proc, in bytes; zeros where /proc is not there.
func rss(pid int) (cur, peak int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			cur = n << 10
		case "VmHWM:":
			peak = n << 10
		}
	}
	return cur, peak
}

// TestSoak64ClientsASOFAndCopy is the load test: 64 pgx clients against
// the real engine, 3 s in the ordinary run and 30 s (ASOFSQL_SOAK_SECONDS)
// in the full one (a duration to run, not a deadline: nothing is timed).
// Each client cycles through: ASOF queries over static tables, checked row
// for row against the embedded API's answers, also as a statement prepared
// by name; COPY FROM STDIN (binary or CSV) and multi-row INSERTs with
// parameters appending to an ordered table that every client writes, then
// reading its own rows back in order and through an ASOF join checked
// against a reference computed from what it wrote; COPY inside a
// transaction it rolls back, whose rows must stay invisible; a count of
// the whole table, which must be a whole number of batches between those
// known committed before and those started after; erroneous statements,
// a CancelRequest and a statement_timeout on a statement that would run
// for hours, after which the session goes on. Any error other than the
// expected SQLSTATEs fails the run. It reports throughput, latency
// percentiles per operation, errors by SQLSTATE and the server's RSS.
//
// The ordinary run serves in-process: the Go heap must stay under
// soakHeapBound, and at the end no goroutine and no Arrow buffer may be
// left (startSoak's cleanup). The full run serves from an asofsql serve
// process and ends with SIGTERM while statements run: the server must
// exit 0 within its grace period, cancelling them (57P01).
func TestSoak64ClientsASOFAndCopy(t *testing.T) {
	dur, full := soakSeconds(t)
	if testing.Short() && !full {
		t.Skip("load test")
	}
	market := soakMarket()
	want := embeddedAnswers(t, market)

	var addr string
	var srv *pgwire.Server
	var proc *soakProcess
	pid := os.Getpid()
	if full {
		proc = startSoakProcess(t)
		addr, pid = proc.addr, proc.cmd.Process.Pid
	} else {
		addr, srv = startSoak(t)
	}
	setup := dial(t, addr, pgx.QueryExecModeSimpleProtocol)
	_, err := setup.Exec(ctx(t), soakDDL)
	require.NoError(t, err)
	for name, rows := range market {
		n, err := setup.CopyFrom(ctx(t), pgx.Identifier{name}, soakColumns[name], pgx.CopyFromRows(rows))
		require.NoError(t, err, name)
		require.Equal(t, int64(len(rows)), n)
	}
	var probes [][]any
	for j := range 100 {
		probes = append(probes, []any{int64(j*1000 + 500)})
	}
	_, err = setup.CopyFrom(ctx(t), pgx.Identifier{"probes"}, []string{"ts"}, pgx.CopyFromRows(probes))
	require.NoError(t, err)

	// Heap (in-process) and RSS sampler.
	var maxHeap atomic.Uint64
	var maxRSS atomic.Int64
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			if !full {
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapAlloc > maxHeap.Load() {
					maxHeap.Store(ms.HeapAlloc)
				}
			}
			if cur, _ := rss(pid); cur > maxRSS.Load() {
				maxRSS.Store(cur)
			}
			select {
			case <-stopSampling:
				return
			case <-tick.C:
			}
		}
	}()

	// The run's context is only a hang guard; the first failure cancels
	// it so the other clients stop.
	runCtx, cancel := context.WithTimeout(context.Background(), dur+5*time.Minute)
	defer cancel()
	st := &soakState{want: want, end: time.Now().Add(dur), cancel: cancel}
	began := time.Now()
	var wg sync.WaitGroup
	for i := range soakClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := st.client(runCtx, addr, i); err != nil {
				st.fail(err)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	close(stopSampling)
	<-sampled
	if len(st.errs) > 0 {
		t.Fatalf("%d client(s) failed; first failures:\n%s", len(st.errs), strings.Join(st.errs[:min(5, len(st.errs))], "\n"))
	}

	// The clients closed their connections; the server ends their
	// sessions (only the setup connection stays). The wait is a hang
	// guard, generous for a loaded machine.
	if srv != nil {
		for deadline := time.Now().Add(2 * time.Minute); srv.ConnCount() > 1; time.Sleep(20 * time.Millisecond) {
			require.True(t, time.Now().Before(deadline), "%d connections open", srv.ConnCount())
		}
	}

	// Every client's committed rows are in the table.
	var n int64
	require.NoError(t, setup.QueryRow(ctx(t), "SELECT count(*) FROM ticks").Scan(&n))
	require.Equal(t, st.committed.Load(), n)
	var ops int64
	for i := range st.ops {
		require.GreaterOrEqual(t, st.ops[i], int64(soakCycle), "client %d ran a whole cycle", i)
		ops += st.ops[i]
	}
	t.Logf("%d clients, %s (%s measured): %d operations, %.0f/s (%d queries checked, %d COPYs and %d INSERTs committed, %d rolled back, %d cancelled), ticks %d rows",
		soakClients, dur, elapsed.Round(time.Millisecond), ops, float64(ops)/elapsed.Seconds(), st.checked.Load(),
		st.copies.Load(), st.inserts.Load(), st.rolledBack.Load(), st.cancels.Load(), n)
	t.Logf("latency by operation (ms):\n%s", st.latencyTable())
	t.Logf("errors by SQLSTATE (all expected): %s", st.codeCounts())
	cur, peak := rss(pid)
	t.Logf("server RSS: max sampled %d MiB, now %d MiB, peak (VmHWM) %d MiB%s", maxRSS.Load()>>20, cur>>20, peak>>20,
		map[bool]string{true: " (asofsql serve process)", false: " (the test process: server and clients)"}[full])

	if full {
		soakSIGTERM(t, proc, addr)
		return
	}
	t.Logf("max heap %d MiB", maxHeap.Load()>>20)
	require.Less(t, maxHeap.Load(), uint64(soakHeapBound), "heap high-water mark")
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	require.Less(t, ms.HeapAlloc, uint64(soakHeapBound), "heap after the run")
}

// soakSIGTERM stops the serve process with SIGTERM while statements that
// would run for hours are running: it must cancel them (each client gets
// FATAL 57P01) and exit 0 within its grace period of 10 s.
func soakSIGTERM(t *testing.T, p *soakProcess, addr string) {
	const victims = 4
	errs := make(chan error, victims)
	for range victims {
		c := dial(t, addr, pgx.QueryExecModeSimpleProtocol)
		go func() {
			_, err := c.Exec(context.Background(), "SELECT count(*) FROM generate_series(1, 100000000000)")
			errs <- err
		}()
	}
	time.Sleep(300 * time.Millisecond)
	began := time.Now()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-p.exit:
		require.NoError(t, err, "exit status\n%s", p.log)
	case <-time.After(10 * time.Second):
		t.Fatalf("asofsql serve did not exit within its grace period\n%s", p.log)
	}
	t.Logf("SIGTERM with %d statements running: exited 0 after %s", victims, time.Since(began).Round(time.Millisecond))
	for range victims {
		var pe *pgconn.PgError
		err := <-errs
		require.True(t, errors.As(err, &pe), "%v", err)
		require.Equal(t, "57P01", pe.Code)
	}
}

// soakCycle is the number of operations in one pass of a client's mix.
const soakCycle = 12

// opKinds name the operations, for the latency table.
var opKinds = []string{"asof query", "asof prepared", "copy", "insert", "read back", "count", "copy rollback", "bad statement", "cancel", "timeout"}

type soakState struct {
	want   map[string][]string
	end    time.Time
	cancel context.CancelFunc

	// committed counts ticks rows whose COPY or INSERT committed; started
	// those whose committing statement began (an upper bound for any
	// reader).
	committed, started  atomic.Int64
	checked, rolledBack atomic.Int64
	copies, inserts     atomic.Int64
	cancels             atomic.Int64
	ops                 [soakClients]int64
	mu                  sync.Mutex
	errs                []string
	cancelled           atomic.Bool
	latency             map[string][]time.Duration
	codes               map[string]int
}

func (st *soakState) fail(err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	// After the first failure the others stop with context errors; those
	// are not news.
	if st.cancelled.Load() && (errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "context canceled")) {
		return
	}
	st.errs = append(st.errs, err.Error())
	st.cancelled.Store(true)
	st.cancel()
}

// record merges a client's latencies and expected SQLSTATEs.
func (st *soakState) record(lat map[string][]time.Duration, codes map[string]int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.latency == nil {
		st.latency, st.codes = map[string][]time.Duration{}, map[string]int{}
	}
	for k, v := range lat {
		st.latency[k] = append(st.latency[k], v...)
	}
	for k, v := range codes {
		st.codes[k] += v
	}
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(p*float64(len(d))))]
}

// latencyTable renders count, p50, p95, p99 and max per operation and in
// all, as a Markdown table.
func (st *soakState) latencyTable() string {
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) }
	var b strings.Builder
	b.WriteString("| operation | count | p50 | p95 | p99 | max |\n| --- | ---: | ---: | ---: | ---: | ---: |\n")
	var all []time.Duration
	row := func(name string, d []time.Duration) {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		if len(d) == 0 {
			return
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s |\n", name, len(d), ms(percentile(d, .5)), ms(percentile(d, .95)), ms(percentile(d, .99)), ms(d[len(d)-1]))
	}
	for _, k := range opKinds {
		row(k, st.latency[k])
		all = append(all, st.latency[k]...)
	}
	row("all", all)
	return b.String()
}

func (st *soakState) codeCounts() string {
	var keys []string
	for k := range st.codes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d", k, st.codes[k]))
	}
	return strings.Join(parts, ", ")
}

// tick is one appended row; a client's ts values are distinct (seq <
// 100003 and 7919 is prime to it), spread out of order over [0, 100003).
func tickTS(seq int64) int64 { return seq * 7919 % 100003 }

// client runs one connection's mix until the run ends (and at least one
// whole cycle). Every failure names the client, the statement and the
// error.
func (st *soakState) client(ctx context.Context, addr string, id int) error {
	modes := []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe,
		pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol}
	cfg, err := pgx.ParseConfig("postgres://soak@" + addr + "/asofsql?sslmode=disable")
	if err != nil {
		return err
	}
	cfg.DefaultQueryExecMode = modes[id%len(modes)]
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("client %d: connect: %w", id, err)
	}
	defer c.Close(context.Background())
	cl := &soakClient{st: st, c: c, id: id, r: rand.New(rand.NewPCG(uint64(id), 1)),
		latency: map[string][]time.Duration{}, codes: map[string]int{}}
	defer func() { st.record(cl.latency, cl.codes) }()
	if _, err := c.Prepare(ctx, "asof_by_name", soakQueries[0]); err != nil {
		return fmt.Errorf("client %d: PREPARE: %w", id, err)
	}
	for n := 0; n < soakCycle || time.Now().Before(st.end); n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		var err error
		var kind string
		began := time.Now()
		switch n % soakCycle {
		case 0, 3, 6:
			kind, err = "asof query", cl.query(ctx)
		case 1:
			kind, err = "copy", cl.copy(ctx, len(cl.seqs) < soakCap)
		case 2:
			kind, err = "read back", cl.readBack(ctx)
		case 4:
			kind, err = "count", cl.countAll(ctx)
		case 5:
			kind, err = "copy rollback", cl.copy(ctx, false)
		case 7:
			kind, err = "bad statement", cl.badStatement(ctx)
		case 8:
			kind, err = "insert", cl.insert(ctx, len(cl.seqs) < soakCap)
		case 9:
			kind, err = "asof prepared", cl.prepared(ctx)
		case 10:
			kind, err = "cancel", cl.cancelLong(ctx)
		case 11:
			kind, err = "timeout", cl.timeoutLong(ctx)
		}
		if err != nil {
			return fmt.Errorf("client %d (%s), operation %d: %w", id, modeName(cfg.DefaultQueryExecMode), n, err)
		}
		cl.latency[kind] = append(cl.latency[kind], time.Since(began))
		st.ops[id]++
	}
	return nil
}

func modeName(m pgx.QueryExecMode) string { return m.String() }

type soakClient struct {
	st      *soakState
	c       *pgx.Conn
	id      int
	r       *rand.Rand
	seqs    []int64 // ts of the client's committed rows, by seq
	latency map[string][]time.Duration
	codes   map[string]int // expected SQLSTATEs seen
}

// collect runs a query and renders its rows.
func (cl *soakClient) collect(ctx context.Context, sql string, args ...any) ([]string, error) {
	rs, err := cl.c.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("%s %v: %w", oneLine(sql), args, err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		vals, err := rs.Values()
		if err != nil {
			return nil, fmt.Errorf("%s %v: %w", oneLine(sql), args, err)
		}
		out = append(out, render(vals))
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("%s %v: %w", oneLine(sql), args, err)
	}
	return out, nil
}

func oneLine(sql string) string { return strings.Join(strings.Fields(sql), " ") }

// query runs a random ASOF query over a random window and compares it
// with the embedded API's answer.
func (cl *soakClient) query(ctx context.Context) error {
	qi, w := cl.r.IntN(len(soakQueries)), soakWindows[cl.r.IntN(len(soakWindows))]
	got, err := cl.collect(ctx, soakQueries[qi], w[0], w[1])
	if err != nil {
		return err
	}
	if want := cl.st.want[soakKey(qi, w)]; !equalRows(got, want) {
		return fmt.Errorf("%s %v: %d rows differ from the embedded API's %d: %s", oneLine(soakQueries[qi]), w, len(got), len(want), firstDiff(got, want))
	}
	cl.st.checked.Add(1)
	return nil
}

func equalRows(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("row %d: got %q, want %q", i+1, got[i], want[i])
		}
	}
	return fmt.Sprintf("row counts %d vs %d", len(got), len(want))
}

// copy appends a batch of the client's next rows with COPY FROM STDIN:
// binary through pgx's CopyFrom or CSV text through pgconn, by client.
// commit false runs it in a transaction that rolls back, and checks
// that the rows stay invisible.
func (cl *soakClient) copy(ctx context.Context, commit bool) error {
	next := int64(len(cl.seqs))
	rows := make([][]any, soakBatch)
	var csv strings.Builder
	for k := range rows {
		seq := next + int64(k)
		rows[k] = []any{tickTS(seq), int64(cl.id), seq, float64(seq) / 2}
		fmt.Fprintf(&csv, "%d,%d,%d,%s\n", tickTS(seq), cl.id, seq, strconv.FormatFloat(float64(seq)/2, 'g', -1, 64))
	}
	const csvSQL = "COPY ticks (ts, client, seq, v) FROM STDIN WITH (FORMAT csv)"
	what := fmt.Sprintf("COPY ticks of %d rows (seq %d.., %s)", soakBatch, next, map[bool]string{true: "binary", false: "csv"}[cl.id%2 == 0])
	return cl.appendBatch(ctx, commit, what, &cl.st.copies, func(q batchTarget, pc *pgconn.PgConn) (int64, error) {
		if cl.id%2 == 0 {
			return q.CopyFrom(ctx, pgx.Identifier{"ticks"}, []string{"ts", "client", "seq", "v"}, pgx.CopyFromRows(rows))
		}
		tag, err := pc.CopyFrom(ctx, strings.NewReader(csv.String()), csvSQL)
		return tag.RowsAffected(), err
	})
}

// batchTarget is where a batch is appended: the connection, or a
// transaction on it.
type batchTarget interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, rows pgx.CopyFromSource) (int64, error)
}

// appendBatch runs one statement (run, on the connection or a
// transaction, given its PgConn too) that appends the client's next
// soakBatch rows. Committed, the rows are the client's (counted in done);
// with commit false the statement runs in a transaction that rolls back,
// and the rows must stay invisible.
func (cl *soakClient) appendBatch(ctx context.Context, commit bool, what string, done *atomic.Int64,
	run func(q batchTarget, pc *pgconn.PgConn) (int64, error)) error {
	next := int64(len(cl.seqs))
	if commit {
		cl.st.started.Add(soakBatch)
		n, err := run(cl.c, cl.c.PgConn())
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if n != soakBatch {
			return fmt.Errorf("%s: reported %d rows", what, n)
		}
		cl.st.committed.Add(soakBatch)
		done.Add(1)
		for k := range soakBatch {
			cl.seqs = append(cl.seqs, tickTS(next+int64(k)))
		}
		return nil
	}
	tx, err := cl.c.Begin(ctx)
	if err != nil {
		return fmt.Errorf("BEGIN: %w", err)
	}
	defer tx.Rollback(context.Background())
	n, err := run(tx, tx.Conn().PgConn())
	if err != nil {
		return fmt.Errorf("%s in a transaction: %w", what, err)
	}
	if n != soakBatch {
		return fmt.Errorf("%s in a transaction: reported %d rows", what, n)
	}
	if err := tx.Rollback(ctx); err != nil {
		return fmt.Errorf("ROLLBACK: %w", err)
	}
	cl.st.rolledBack.Add(1)
	const q = "SELECT count(*) FROM ticks WHERE client = $1"
	var got int64
	if err := cl.c.QueryRow(ctx, q, int64(cl.id)).Scan(&got); err != nil {
		return fmt.Errorf("%s after a rolled-back %s: %w", q, what, err)
	}
	if got != int64(len(cl.seqs)) {
		return fmt.Errorf("%s after a rolled-back %s: %d rows, want the %d committed", q, what, got, len(cl.seqs))
	}
	return nil
}

// readBack reads the client's rows (every one it committed, ascending by
// ts as the table is declared) and joins the probes to them with ASOF,
// checking the result against a reference from what it wrote.
func (cl *soakClient) readBack(ctx context.Context) error {
	const q1 = "SELECT ts, seq FROM ticks WHERE client = $1"
	got, err := cl.collect(ctx, q1, int64(cl.id))
	if err != nil {
		return err
	}
	type row struct{ ts, seq int64 }
	want := make([]row, len(cl.seqs))
	for seq, ts := range cl.seqs {
		want[seq] = row{ts, int64(seq)}
	}
	sort.Slice(want, func(i, j int) bool { return want[i].ts < want[j].ts })
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d rows, want the %d committed", q1, len(got), len(want))
	}
	for i, w := range want {
		if s := fmt.Sprintf("%d|%d", w.ts, w.seq); got[i] != s {
			return fmt.Errorf("%s: row %d is %q, want %q (ascending ts)", q1, i+1, got[i], s)
		}
	}
	const q2 = `SELECT p.ts, k.ts, k.seq FROM probes p
	            ASOF LEFT JOIN (SELECT ts, seq FROM ticks WHERE client = $1) k ON ts BETWEEN -500 AND 0`
	got, err = cl.collect(ctx, q2, int64(cl.id))
	if err != nil {
		return err
	}
	var ref []string
	for j := range 100 {
		p := int64(j*1000 + 500)
		// The latest of the client's rows in [p-500, p].
		i := sort.Search(len(want), func(i int) bool { return want[i].ts > p }) - 1
		if i >= 0 && want[i].ts >= p-500 {
			ref = append(ref, fmt.Sprintf("%d|%d|%d", p, want[i].ts, want[i].seq))
		} else {
			ref = append(ref, fmt.Sprintf("%d|NULL|NULL", p))
		}
	}
	if !equalRows(got, ref) {
		return fmt.Errorf("%s [%d]: %s", oneLine(q2), cl.id, firstDiff(got, ref))
	}
	cl.st.checked.Add(2)
	return nil
}

// countAll counts the whole table: COPYs commit atomically, so the count
// is a whole number of batches, at least those committed before the
// query and at most those begun by the time it returned.
func (cl *soakClient) countAll(ctx context.Context) error {
	const q = "SELECT count(*) FROM ticks"
	lo := cl.st.committed.Load()
	var n int64
	if err := cl.c.QueryRow(ctx, q).Scan(&n); err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	hi := cl.st.started.Load()
	if n%soakBatch != 0 || n < lo || n > hi {
		return fmt.Errorf("%s: %d rows; want a multiple of %d between %d and %d", q, n, soakBatch, lo, hi)
	}
	cl.st.checked.Add(1)
	return nil
}

// badStatement sends statements that fail (planning, and an ASOF over an
// unordered input) and checks the session answers the next query.
func (cl *soakClient) badStatement(ctx context.Context) error {
	for _, bad := range []struct{ sql, code string }{
		{"SELECT * FROM nosuch", "42P01"},
		{"SELECT t.ts FROM trades t ASOF JOIN (SELECT ts, sym FROM quotes ORDER BY bid) q ON ts BETWEEN -1 AND 0 USING (sym)", "0A000"},
	} {
		_, err := cl.c.Exec(ctx, bad.sql)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			return fmt.Errorf("%s: want an error response, got %v", bad.sql, err)
		}
		if pe.Code != bad.code {
			return fmt.Errorf("%s: SQLSTATE %s (%s), want %s", bad.sql, pe.Code, pe.Message, bad.code)
		}
		cl.codes[pe.Code]++
	}
	var one int64
	if err := cl.c.QueryRow(ctx, "SELECT count(*) FROM probes").Scan(&one); err != nil || one != 100 {
		return fmt.Errorf("SELECT count(*) FROM probes after errors: %d, %v", one, err)
	}
	return nil
}

// insert appends a batch of the client's next rows with one multi-row
// INSERT of parameters; commit false runs it in a transaction that rolls
// back, and checks that the rows stay invisible.
func (cl *soakClient) insert(ctx context.Context, commit bool) error {
	next := int64(len(cl.seqs))
	var sql strings.Builder
	sql.WriteString("INSERT INTO ticks (ts, client, seq, v) VALUES ")
	args := make([]any, 0, 4*soakBatch)
	for k := range soakBatch {
		if k > 0 {
			sql.WriteString(", ")
		}
		fmt.Fprintf(&sql, "($%d, $%d, $%d, $%d)", 4*k+1, 4*k+2, 4*k+3, 4*k+4)
		seq := next + int64(k)
		args = append(args, tickTS(seq), int64(cl.id), seq, float64(seq)/2)
	}
	what := fmt.Sprintf("INSERT of %d rows (seq %d..)", soakBatch, next)
	return cl.appendBatch(ctx, commit, what, &cl.st.inserts, func(q batchTarget, _ *pgconn.PgConn) (int64, error) {
		tag, err := q.Exec(ctx, sql.String(), args...)
		return tag.RowsAffected(), err
	})
}

// prepared runs the statement the client prepared by name (the first
// ASOF query) over a random window, checked like query.
func (cl *soakClient) prepared(ctx context.Context) error {
	w := soakWindows[cl.r.IntN(len(soakWindows))]
	got, err := cl.collect(ctx, "asof_by_name", w[0], w[1])
	if err != nil {
		return err
	}
	if want := cl.st.want[soakKey(0, w)]; !equalRows(got, want) {
		return fmt.Errorf("prepared asof_by_name %v: %d rows differ from the embedded API's %d: %s", w, len(got), len(want), firstDiff(got, want))
	}
	cl.st.checked.Add(1)
	return nil
}

// soakForever would run for hours.
const soakForever = "SELECT count(*) FROM generate_series(1, 100000000000)"

// expectCanceled checks for 57014 with a message naming why.
func (cl *soakClient) expectCanceled(err error, why string) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" || !strings.Contains(pe.Message, why) {
		return fmt.Errorf("%s: want 57014 (%s), got %v", soakForever, why, err)
	}
	cl.codes[pe.Code]++
	return nil
}

// cancelLong starts a statement that would run for hours and cancels it
// with a CancelRequest, sent again until it lands (one that arrives before
// the statement starts cancels nothing, as in Postgres); the session goes
// on.
func (cl *soakClient) cancelLong(ctx context.Context) error {
	done := make(chan error, 1)
	go func() {
		_, err := cl.c.Exec(ctx, soakForever)
		done <- err
	}()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err := cl.expectCanceled(err, "user request"); err != nil {
				return err
			}
			cl.st.cancels.Add(1)
			return nil
		case <-tick.C:
			if err := cl.c.PgConn().CancelRequest(ctx); err != nil {
				<-done // the connection is the statement's until it ends
				return fmt.Errorf("CancelRequest: %w", err)
			}
		}
	}
}

// timeoutLong runs a statement that would run for hours under a short
// statement_timeout.
func (cl *soakClient) timeoutLong(ctx context.Context) error {
	if _, err := cl.c.Exec(ctx, "SET statement_timeout = '50ms'"); err != nil {
		return err
	}
	_, err := cl.c.Exec(ctx, soakForever)
	if err := cl.expectCanceled(err, "statement timeout"); err != nil {
		return err
	}
	// The SET that lifts the timeout runs under it, as in Postgres: on a
	// loaded machine it may itself take 50 ms.
	for {
		_, err = cl.c.Exec(ctx, "SET statement_timeout = 0")
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "57014" {
			return err
		}
		cl.codes[pe.Code]++
	}
}
