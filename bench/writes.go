package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/server"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/jackc/pgx/v5"
)

// The write benchmark (issue 14, -writes): the same client workload, over
// the wire with pgx (prepared statements, as pgx does by default), against
// asofsql serving a data directory and a private PostgreSQL 15 that the
// benchmark starts itself (initdb in a temporary directory, loopback only,
// default settings) when its binaries are installed. Workloads run
// interleaved, asofsql then PostgreSQL, -runs times; the median rows/s is
// reported. Every workload checks its row count on both servers. Two
// ceiling workloads time a prepared SELECT 1 (the round trip without the
// write). asofsql serves from this process, or with -asofsql-server from
// a serve process of its own, as PostgreSQL does; -asofsql-baseline adds
// another build's serve process to the same run (asofsql, baseline,
// PostgreSQL, workload by workload). For servers in processes of their
// own the CPU time (user+system) they spent per row is reported too:
// what a loaded, shared machine distorts far less than the wall time.

// writeWorkload is one row of the result table.
type writeWorkload struct {
	name    string
	clients int
	async   bool // SET synchronous_commit = off
	txRows  int  // rows per explicit transaction; 0: autocommit
	copy    bool // one COPY of copyRows rows
	// copyFormat is the COPY's data format: "binary" (pgx CopyFrom),
	// "text" or "csv" (lines as psql's \copy sends a file).
	copyFormat string
	// noop runs a prepared SELECT 1 instead of the INSERT: the round
	// trip with no work, the ceiling of single-row statements.
	noop bool
}

func writeWorkloads(copyRows int, copyFormats []string) []writeWorkload {
	var copies []writeWorkload
	for _, f := range copyFormats {
		name := fmt.Sprintf("COPY of %d rows (binary, pgx CopyFrom)", copyRows)
		if f != "binary" {
			name = fmt.Sprintf("COPY of %d rows (%s, 8 KiB CopyData as psql \\copy sends)", copyRows, f)
		}
		copies = append(copies, writeWorkload{name: name, clients: 1, copy: true, copyFormat: f})
	}
	return slices.Concat([]writeWorkload{
		{name: "single-row INSERT, autocommit, 1 client", clients: 1},
		{name: "single-row INSERT, autocommit, 16 clients", clients: 16},
		{name: "single-row INSERT, autocommit, 1 client, synchronous_commit=off", clients: 1, async: true},
		{name: "single-row INSERT, autocommit, 16 clients, synchronous_commit=off", clients: 16, async: true},
		{name: "single-row INSERTs in 100-row transactions, 1 client", clients: 1, txRows: 100},
	}, copies, []writeWorkload{
		{name: "ceiling: prepared SELECT 1 round trips, 1 client", clients: 1, noop: true},
		{name: "ceiling: prepared SELECT 1 round trips, 16 clients", clients: 16, noop: true},
	})
}

// writeServer is one server under test.
type writeServer struct {
	name    string
	url     string
	orderBy string // the table's ORDER BY clause (asofsql), "" for PostgreSQL
	stop    func() error
	// logStats are the server's log records (commits) and flushes so
	// far; nil where the benchmark cannot see them (PostgreSQL).
	logStats func() (records, flushes int64)
	// cpu is the CPU time the server's processes used so far; nil when
	// the server shares the benchmark's process. children counts its
	// child processes (PostgreSQL's backends), nil when it has none.
	cpu      func() time.Duration
	children func() int
}

func runWrites(ctx context.Context, runs int, dur time.Duration, copyRows int, copyFormats []string, only, serverBin, baselineBin string, stdout, stderr io.Writer) error {
	start := startAsofsql
	if serverBin != "" {
		start = func() (*writeServer, error) { return startAsofsqlProcess(ctx, serverBin, "asofsql") }
	}
	asof, err := start()
	if err != nil {
		return err
	}
	servers := []*writeServer{asof}
	defer func() {
		for _, s := range servers {
			if err := s.stop(); err != nil {
				fmt.Fprintf(stderr, "stopping %s: %v\n", s.name, err)
			}
		}
	}()
	if baselineBin != "" {
		base, err := startAsofsqlProcess(ctx, baselineBin, "asofsql baseline")
		if err != nil {
			return err
		}
		servers = append(servers, base)
	}
	pgNote := "PostgreSQL: not installed (apt-get install -y postgresql-15), not run"
	if pg, version, err := startPostgres(ctx); err == nil {
		servers = append(servers, pg)
		pgNote = version + ", default settings, fsync on"
	} else if !os.IsNotExist(err) {
		return err
	}
	where := "in the benchmark's process"
	if serverBin != "" {
		where = "in its own process (" + serverBin + " serve)"
	}
	if baselineBin != "" {
		where += ", asofsql baseline in its own process (" + baselineBin + " serve)"
	}
	fmt.Fprintf(stdout, "asofsql write benchmark, %s\ncommand: bench -writes -runs %d -duration %v -copy-rows %d -copy-format %s; asofsql runs %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), runs, dur, copyRows, strings.Join(copyFormats, ","), where)
	fmt.Fprintf(stdout, "%s; load average at start: %s\n\n", pgNote, loadAvg())
	type cell struct{ rates, cpuPerRow []float64 }
	var wls []writeWorkload
	for _, w := range writeWorkloads(copyRows, copyFormats) {
		if strings.Contains(w.name, only) {
			wls = append(wls, w)
		}
	}
	res := make([][]cell, len(wls))
	for i := range res {
		res[i] = make([]cell, len(servers))
	}
	for run := 0; run < runs; run++ {
		for wi, w := range wls {
			for si, s := range servers {
				var rec0, fl0 int64
				if s.logStats != nil {
					rec0, fl0 = s.logStats()
				}
				var cpu0 time.Duration
				procs0 := 0
				if s.cpu != nil {
					cpu0 = s.cpu()
				}
				if s.children != nil {
					procs0 = s.children()
				}
				rows, took, err := runWriteWorkload(ctx, s, w, dur, copyRows)
				if err != nil {
					return fmt.Errorf("%s, %s: %w", s.name, w.name, err)
				}
				rate := float64(rows) / took.Seconds()
				res[wi][si].rates = append(res[wi][si].rates, rate)
				cpuNote := ""
				if s.cpu != nil && rows > 0 {
					// The backends of the workload's connections are
					// ending: their time counts once they are reaped.
					time.Sleep(100 * time.Millisecond)
					for t := time.Now(); s.children != nil && s.children() > procs0 && time.Since(t) < 5*time.Second; {
						time.Sleep(20 * time.Millisecond)
					}
					us := float64(s.cpu()-cpu0) / float64(time.Microsecond) / float64(rows)
					res[wi][si].cpuPerRow = append(res[wi][si].cpuPerRow, us)
					cpuNote = fmt.Sprintf(", server CPU %s µs/row", cpuMicros(us))
				}
				flushes := ""
				if s.logStats != nil && !w.noop {
					rec, fl := s.logStats()
					if rec > rec0 {
						flushes = fmt.Sprintf(" (%d commits, %d log flushes: %.3f per commit)", rec-rec0, fl-fl0, float64(fl-fl0)/float64(rec-rec0))
					}
				}
				fmt.Fprintf(stderr, "run %d: %s: %s: %d rows in %v: %.0f rows/s%s%s\n", run+1, s.name, w.name, rows, took.Round(time.Millisecond), rate, cpuNote, flushes)
			}
		}
	}
	fmt.Fprintf(stdout, "Median rows/s of %d runs; load average at end: %s.\n\n", runs, loadAvg())
	pg := -1 // PostgreSQL's column, when it ran
	if len(servers) > 1 && servers[len(servers)-1].name == "PostgreSQL 15" {
		pg = len(servers) - 1
	}
	fmt.Fprint(stdout, "| workload |")
	for _, s := range servers {
		fmt.Fprintf(stdout, " %s |", s.name)
	}
	for si := 0; si < pg; si++ {
		fmt.Fprintf(stdout, " %s / PostgreSQL |", servers[si].name)
	}
	fmt.Fprint(stdout, "\n| --- |")
	for range servers {
		fmt.Fprint(stdout, " ---: |")
	}
	for si := 0; si < pg; si++ {
		fmt.Fprint(stdout, " ---: |")
	}
	fmt.Fprintln(stdout)
	for wi, w := range wls {
		fmt.Fprintf(stdout, "| %s |", w.name)
		var med []float64
		for si := range servers {
			m := medianOf(res[wi][si].rates)
			med = append(med, m)
			fmt.Fprintf(stdout, " %s |", thousands(m))
		}
		for si := 0; si < pg; si++ {
			fmt.Fprintf(stdout, " %.2f |", med[si]/med[pg])
		}
		fmt.Fprintln(stdout)
	}
	var measured []int
	for si, s := range servers {
		if s.cpu != nil {
			measured = append(measured, si)
		}
	}
	if len(measured) == 0 {
		return nil
	}
	fmt.Fprint(stdout, "\nServer CPU time (user+system) per row, µs, median of the runs:\n\n| workload |")
	for _, si := range measured {
		fmt.Fprintf(stdout, " %s |", servers[si].name)
	}
	fmt.Fprint(stdout, "\n| --- |")
	for range measured {
		fmt.Fprint(stdout, " ---: |")
	}
	fmt.Fprintln(stdout)
	for wi, w := range wls {
		fmt.Fprintf(stdout, "| %s |", w.name)
		for _, si := range measured {
			fmt.Fprintf(stdout, " %s |", cpuMicros(medianOf(res[wi][si].cpuPerRow)))
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// cpuMicros renders CPU µs per row: two decimals below 10 (COPY's
// fractions of a µs), one above.
func cpuMicros(us float64) string {
	if us < 10 {
		return strconv.FormatFloat(us, 'f', 2, 64)
	}
	return strconv.FormatFloat(us, 'f', 1, 64)
}

func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	return s[len(s)/2]
}

func thousands(x float64) string {
	s := strconv.FormatInt(int64(x+0.5), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// runWriteWorkload recreates the table, runs w and checks the count.
func runWriteWorkload(ctx context.Context, s *writeServer, w writeWorkload, dur time.Duration, copyRows int) (int64, time.Duration, error) {
	conn, err := pgx.Connect(ctx, s.url)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP TABLE IF EXISTS ticks"); err != nil {
		return 0, 0, err
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE ticks (ts TIMESTAMP NOT NULL, sym TEXT, px DOUBLE PRECISION)"+s.orderBy); err != nil {
		return 0, 0, err
	}
	base := time.Date(2024, 1, 2, 9, 30, 0, 0, time.UTC)
	row := func(i int64) []any {
		return []any{base.Add(time.Duration(i) * time.Microsecond), "S" + strconv.Itoa(int(i%100)), float64(i%1000) / 8}
	}
	var total int64
	start := time.Now()
	if w.copy && w.copyFormat != "binary" {
		opts := ""
		if w.copyFormat == "csv" {
			opts = " WITH (FORMAT csv)"
		}
		tag, err := conn.PgConn().CopyFrom(ctx, &copyTextSource{n: int64(copyRows), csv: w.copyFormat == "csv"}, "COPY ticks (ts, sym, px) FROM STDIN"+opts)
		if err != nil {
			return 0, 0, err
		}
		total = tag.RowsAffected()
	} else if w.copy {
		n, err := conn.CopyFrom(ctx, pgx.Identifier{"ticks"}, []string{"ts", "sym", "px"},
			pgx.CopyFromFunc(func() ([]any, error) {
				if total == int64(copyRows) {
					return nil, nil
				}
				total++
				return row(total), nil
			}))
		if err != nil {
			return 0, 0, err
		}
		total = n
	} else {
		conns := make([]*pgx.Conn, w.clients)
		for i := range conns {
			if conns[i], err = pgx.Connect(ctx, s.url); err != nil {
				return 0, 0, err
			}
			defer conns[i].Close(ctx)
			if w.async {
				if _, err := conns[i].Exec(ctx, "SET synchronous_commit = off"); err != nil {
					return 0, 0, err
				}
			}
		}
		var mu sync.Mutex
		var firstErr error
		var wg sync.WaitGroup
		start = time.Now()
		deadline := start.Add(dur)
		for c, cn := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, err := insertLoop(ctx, cn, w, int64(c)<<40, deadline, row)
				mu.Lock()
				total += n
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
		if firstErr != nil {
			return 0, 0, firstErr
		}
	}
	took := time.Since(start)
	var count int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM ticks").Scan(&count); err != nil {
		return 0, 0, err
	}
	if w.noop {
		return total, took, nil
	}
	if count != total {
		return 0, 0, fmt.Errorf("%d rows acknowledged, %d in the table", total, count)
	}
	return total, took, nil
}

// copyTextSource renders rows 1..n of the benchmark's row function in
// COPY text or CSV, whole lines of at most 8 KiB per Read: pgconn sends
// each Read as one CopyData, and psql's \copy sends a file in 8 KiB ones
// (COPYBUFSIZ). Lines are formatted by hand, so that the client's cost
// stays small as psql's reading a file is.
type copyTextSource struct {
	next, n int64
	csv     bool
	line    []byte
}

func (s *copyTextSource) Read(p []byte) (int, error) {
	p = p[:min(len(p), 8192)]
	w := 0
	for {
		if len(s.line) == 0 {
			if s.next == s.n {
				if w == 0 {
					return 0, io.EOF
				}
				return w, nil
			}
			s.next++
			s.line = s.appendRow(s.line[:0], s.next)
		}
		if len(s.line) > len(p)-w {
			if w > 0 {
				return w, nil
			}
			n := copy(p, s.line) // a line longer than p: in pieces
			s.line = s.line[n:]
			return n, nil
		}
		w += copy(p[w:], s.line)
		s.line = s.line[:0]
	}
}

// appendRow appends row i as the row function has it: ts is 2024-01-02
// 09:30 plus i microseconds, sym S<i%100>, px (i%1000)/8.
func (s *copyTextSource) appendRow(b []byte, i int64) []byte {
	sep := byte('\t')
	if s.csv {
		sep = ','
	}
	us := (9*3600+30*60)*int64(1e6) + i
	if us >= 24*3600*int64(1e6) {
		b = time.Date(2024, 1, 2, 9, 30, 0, 0, time.UTC).Add(time.Duration(i)*time.Microsecond).AppendFormat(b, "2006-01-02 15:04:05.000000")
	} else {
		b = append(b, "2024-01-02 "...)
		b = append2(b, us/3600e6)
		b = append(b, ':')
		b = append2(b, us/60e6%60)
		b = append(b, ':')
		b = append2(b, us/1e6%60)
		b = append(b, '.')
		f := us % 1e6
		for d := int64(100000); d > 0; d /= 10 {
			b = append(b, byte('0'+f/d%10))
		}
	}
	b = append(b, sep, 'S')
	b = strconv.AppendInt(b, i%100, 10)
	b = append(b, sep)
	b = strconv.AppendFloat(b, float64(i%1000)/8, 'g', -1, 64)
	return append(b, '\n')
}

func append2(b []byte, v int64) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }

func insertLoop(ctx context.Context, c *pgx.Conn, w writeWorkload, first int64, deadline time.Time, row func(int64) []any) (int64, error) {
	const q = "INSERT INTO ticks VALUES ($1, $2, $3)"
	var n int64
	for w.noop && time.Now().Before(deadline) {
		// Query, not Exec: pgx's Exec of a statement without arguments
		// uses the simple protocol, Query prepares it once and then sends
		// Bind, Describe, Execute, Sync as for the INSERT.
		rows, err := c.Query(ctx, "SELECT 1")
		if err != nil {
			return n, err
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return n, err
		}
		n++
	}
	for !w.noop && time.Now().Before(deadline) {
		if w.txRows == 0 {
			if _, err := c.Exec(ctx, q, row(first+n)...); err != nil {
				return n, err
			}
			n++
			continue
		}
		tx, err := c.Begin(ctx)
		if err != nil {
			return n, err
		}
		for i := 0; i < w.txRows; i++ {
			if _, err := tx.Exec(ctx, q, row(first+n+int64(i))...); err != nil {
				tx.Rollback(ctx)
				return n, err
			}
		}
		if err := tx.Commit(ctx); err != nil {
			return n, err
		}
		n += int64(w.txRows)
	}
	return n, nil
}

// startAsofsql serves a fresh data directory on a loopback port.
func startAsofsql() (*writeServer, error) {
	dir, err := os.MkdirTemp("", "bench-asofsql-")
	if err != nil {
		return nil, err
	}
	db, err := asofsql.Open(dir)
	if err != nil {
		return nil, err
	}
	srv, err := server.New(db, pgwire.Config{})
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	return &writeServer{
		name:    "asofsql",
		url:     "postgres://bench@" + l.Addr().String() + "/asofsql?sslmode=disable",
		orderBy: " ORDER BY (ts)",
		logStats: func() (int64, int64) {
			st := db.Stats()
			return st.LogRecords, st.LogFlushes
		},
		stop: func() error {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := srv.Shutdown(ctx)
			<-done
			if cerr := db.Close(); err == nil {
				err = cerr
			}
			os.RemoveAll(dir)
			return err
		},
	}, nil
}

// startAsofsqlProcess runs `bin serve` on a fresh data directory and a
// loopback port in its own process, as PostgreSQL runs, so that the
// server's CPU is not shared with the clients' goroutines.
func startAsofsqlProcess(ctx context.Context, bin, name string) (*writeServer, error) {
	dir, err := os.MkdirTemp("", "bench-asofsql-")
	if err != nil {
		return nil, err
	}
	// A free port: taken and released, then handed to the server.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.CommandContext(ctx, bin, "serve", "--data", dir, "--listen", addr)
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	url := "postgres://bench@" + addr + "/asofsql?sslmode=disable"
	stop := func() error {
		cmd.Process.Signal(syscall.SIGTERM)
		err := cmd.Wait()
		os.RemoveAll(dir)
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 0 {
			err = nil
		}
		return err
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		c, err := pgx.Connect(ctx, url)
		if err == nil {
			c.Close(ctx)
			break
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("asofsql serve did not accept connections: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	pid := cmd.Process.Pid
	return &writeServer{name: name, url: url, orderBy: " ORDER BY (ts)", stop: stop,
		cpu: func() time.Duration { return procCPU(pid, true) }}, nil
}

// startPostgres runs initdb and a private postgres on a loopback port;
// an os.ErrNotExist error when no PostgreSQL 15 binaries are installed.
func startPostgres(ctx context.Context) (*writeServer, string, error) {
	bins, _ := filepath.Glob("/usr/lib/postgresql/15/bin/initdb")
	if len(bins) == 0 {
		return nil, "", os.ErrNotExist
	}
	bin := filepath.Dir(bins[0])
	dir, err := os.MkdirTemp("", "bench-pg-")
	if err != nil {
		return nil, "", err
	}
	// PostgreSQL refuses to run as root: run it as the postgres user.
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, "", sqlerr.Wrap(err, sqlerr.InternalError, "running as root needs a postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, "", err
		}
	}
	command := func(name string, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, filepath.Join(bin, name), args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		return cmd
	}
	data := filepath.Join(dir, "data")
	if out, err := command("initdb", "-D", data, "-U", "bench", "--auth=trust", "-E", "UTF8", "--locale=C").CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("initdb: %v: %s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	pg := command("postgres", "-D", data, "-p", port, "-k", dir, "-c", "listen_addresses=127.0.0.1")
	pg.Stdout, pg.Stderr = io.Discard, io.Discard
	if err := pg.Start(); err != nil {
		return nil, "", err
	}
	stop := func() error {
		_ = pg.Process.Signal(syscall.SIGINT) // fast shutdown
		_ = pg.Wait()
		return os.RemoveAll(dir)
	}
	url := "postgres://bench@127.0.0.1:" + port + "/postgres?sslmode=disable"
	var version string
	for start := time.Now(); ; {
		c, err := pgx.Connect(ctx, url)
		if err == nil {
			err = c.QueryRow(ctx, "SELECT version()").Scan(&version)
			c.Close(ctx)
			if err == nil {
				break
			}
		}
		if time.Since(start) > 30*time.Second {
			stop()
			return nil, "", fmt.Errorf("PostgreSQL did not start: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(version) > 60 {
		version = version[:60] + "..."
	}
	pid := pg.Process.Pid
	return &writeServer{name: "PostgreSQL 15", url: url, stop: stop,
		cpu:      func() time.Duration { total, _ := treeCPU(pid); return total },
		children: func() int { _, n := treeCPU(pid); return n }}, version, nil
}

// procCPU is the CPU time of process pid (all its threads) from
// /proc/pid/stat, with that of its reaped children when children is set;
// 0 where /proc is missing.
func procCPU(pid int, children bool) time.Duration {
	f := procStat(pid)
	if len(f) < 15 {
		return 0
	}
	n := 2
	if children {
		n = 4
	}
	var ticks int64
	for _, v := range f[11 : 11+n] { // utime, stime, cutime, cstime
		t, _ := strconv.ParseInt(v, 10, 64)
		ticks += t
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// clockTicks is USER_HZ, the unit of /proc/pid/stat's times on Linux.
const clockTicks = 100

// procStat is the fields of /proc/pid/stat after the command name (the
// first is the state, the second the parent's pid).
func procStat(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// treeCPU is the CPU time of PostgreSQL's postmaster pid and of its
// children (the backends that are running, and the reaped ones through
// the postmaster's children's times), and how many children it has.
func treeCPU(pid int) (total time.Duration, children int) {
	total = procCPU(pid, true)
	ents, _ := os.ReadDir("/proc")
	want := strconv.Itoa(pid)
	for _, e := range ents {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := procStat(child); len(f) > 1 && f[1] == want {
			total += procCPU(child, true)
			children++
		}
	}
	return total, children
}
