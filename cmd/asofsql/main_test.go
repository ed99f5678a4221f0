package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/asofsql/asofsql/pgwire"
)

type result struct {
	code           int
	stdout, stderr string
}

// runCmd runs the program in-process.
func runCmd(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code := run(ctx, args, strings.NewReader(stdin), &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

func TestHelp(t *testing.T) {
	for _, cmd := range []string{"serve", "sql", "demo", "import"} {
		t.Run(cmd, func(t *testing.T) {
			r := runCmd(t, "", cmd, "--help")
			require.Equal(t, 0, r.code, r.stderr)
			require.Contains(t, r.stdout, "Usage: asofsql "+cmd)
			require.Contains(t, r.stdout, "-data")
			require.Empty(t, r.stderr)
		})
	}
	r := runCmd(t, "", "--help")
	require.Equal(t, 0, r.code)
	require.Contains(t, r.stdout, "asofsql demo [flags]")
}

func TestBadUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "Usage:"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"serve", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"serve", "--auth", "md5"}, "--auth md5 needs --users FILE"},
		{[]string{"serve", "--auth", "kerberos"}, "unknown authentication method"},
		{[]string{"serve", "--tls-cert", "x.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"serve", "--memory", "--data", "d"}, "--data and --memory are exclusive"},
		{[]string{"serve", "--max-connections", "0"}, "--max-connections must be positive"},
		{[]string{"serve", "--require-tls"}, "--require-tls needs --tls-cert and --tls-key"},
		{[]string{"serve", "--memory-limit", "lots"}, `--memory-limit: invalid value for parameter "memory_limit": "lots"`},
		{[]string{"sql", "--format", "xml", "-c", "SELECT 1"}, `--format "xml"`},
		{[]string{"sql", "-c", "SELECT 1", "-f", "x.sql"}, "-c and -f are exclusive"},
		{[]string{"sql", "-c", "SELECT 1", "extra"}, `unexpected argument "extra"`},
		{[]string{"demo", "--rows", "0"}, "--rows 0"},
		{[]string{"demo", "--rows", "many"}, `invalid value "many" for flag -rows`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runCmd(t, "", tc.args...)
			require.Equal(t, exitUsage, r.code)
			require.Contains(t, r.stderr, tc.want)
		})
	}
}

const marketSQL = `CREATE TABLE trades (ts BIGINT, sym TEXT, price DOUBLE PRECISION) ORDER BY (ts);
CREATE TABLE quotes (ts BIGINT, sym TEXT, bid DOUBLE PRECISION) ORDER BY (ts);
INSERT INTO quotes VALUES (1, 'A', 10.5), (5, 'A', 11), (7, 'B', 20.25);
INSERT INTO trades VALUES (3, 'A', 99), (6, 'B', 200), (8, 'A', 101);
`

const asofQuery = `SELECT ts, sym, price, bid FROM trades ASOF LEFT JOIN quotes ON ts BETWEEN -100 AND 0 USING (sym);`

func TestSQLFormats(t *testing.T) {
	tests := []struct {
		format string
		want   string
	}{
		{"table", `CREATE TABLE
CREATE TABLE
INSERT 0 3
INSERT 0 3
 ts | sym | price | bid  
----+-----+-------+------
  3 | A   |    99 | 10.5
  6 | B   |   200 |     
  8 | A   |   101 |   11
(3 rows)

`},
		{"csv", "ts,sym,price,bid\n3,A,99,10.5\n6,B,200,\n8,A,101,11\n"},
		{"json", `[
  {"ts": 3, "sym": "A", "price": 99, "bid": 10.5},
  {"ts": 6, "sym": "B", "price": 200, "bid": null},
  {"ts": 8, "sym": "A", "price": 101, "bid": 11}
]
`},
	}
	for _, tc := range tests {
		t.Run(tc.format, func(t *testing.T) {
			r := runCmd(t, "", "sql", "--memory", "--format", tc.format, "-c", marketSQL+asofQuery)
			require.Equal(t, 0, r.code, r.stderr)
			require.Equal(t, tc.want, r.stdout)
			if tc.format != "table" { // tags go to stderr, out of the data
				require.Equal(t, "CREATE TABLE\nCREATE TABLE\nINSERT 0 3\nINSERT 0 3\n", r.stderr)
			}
		})
	}
}

func TestSQLFromFileStdinAndCopy(t *testing.T) {
	f := filepath.Join(t.TempDir(), "q.sql")
	require.NoError(t, os.WriteFile(f, []byte(marketSQL+"SELECT count(*) AS n, true AS ok FROM trades;"), 0o600))
	r := runCmd(t, "", "sql", "-f", f, "--format", "json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "[\n  {\"n\": 3, \"ok\": true}\n]\n", r.stdout)

	r = runCmd(t, marketSQL+"SELECT sym FROM trades WHERE ts = 6;", "sql")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, " sym \n-----\n B\n(1 row)\n")

	// COPY FROM STDIN reads the rest of standard input when the SQL comes from -c.
	r = runCmd(t, "1\tA\t2.5\n2\tB\t3\n", "sql", "-c",
		"CREATE TABLE q (ts BIGINT, sym TEXT, bid DOUBLE PRECISION) ORDER BY (ts); COPY q FROM STDIN; COPY q TO STDOUT WITH (FORMAT csv)")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "CREATE TABLE\nCOPY 2\n1,A,2.5\n2,B,3\nCOPY 2\n", r.stdout)
}

func TestSQLErrorShowsPositionAndHint(t *testing.T) {
	q := marketSQL + "CREATE TABLE loose (ts BIGINT, sym TEXT, bid DOUBLE PRECISION);\n" +
		"SELECT * FROM trades ASOF JOIN loose ON ts BETWEEN -1 AND 0 USING (sym);\nSELECT 'not reached';"
	r := runCmd(t, "", "sql", "-c", q)
	require.Equal(t, exitFail, r.code)
	require.NotContains(t, r.stdout, "not reached")
	require.Regexp(t, `(?s)^ERROR:  .*loose.*\nLINE 6: SELECT \* FROM trades ASOF JOIN loose .*\n +\^\n.*HINT:  .*ORDER BY`, r.stderr)
	// The caret sits under the character the position names.
	lines := strings.Split(r.stderr, "\n")
	caret := strings.Index(lines[2], "^")
	require.Positive(t, caret)
	require.NotEqual(t, byte(' '), lines[1][caret])
}

func TestSQLPersistsWithData(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	r := runCmd(t, "", "sql", "--data", dir, "-c", marketSQL)
	require.Equal(t, 0, r.code, r.stderr)
	r = runCmd(t, "", "sql", "--data", dir, "--format", "csv", "-c", asofQuery)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "ts,sym,price,bid\n3,A,99,10.5\n6,B,200,\n8,A,101,11\n", r.stdout)
}

// syncBuffer is a bytes.Buffer safe for the server's logger and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serve starts "asofsql serve" in-process; stop cancels it (as SIGINT
// does) and returns its exit code and log.
func serve(t *testing.T, args ...string) (addr string, stop func() (int, string)) {
	t.Helper()
	addrs, stop := serveAll(t, 1, append([]string{"--listen", "127.0.0.1:0"}, args...)...)
	return addrs["postgres"], stop
}

// serveAll starts "asofsql serve" with args and waits for n front doors
// to listen; it returns their addresses by protocol.
func serveAll(t *testing.T, n int, args ...string) (addrs map[string]string, stop func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve"}, args...), strings.NewReader(""), &bytes.Buffer{}, logs)
	}()
	re := regexp.MustCompile(`msg=listening addr=(\S+) protocol=(\S+)`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m := re.FindAllStringSubmatch(logs.String(), -1); len(m) == n {
			addrs = map[string]string{}
			for _, l := range m {
				addrs[l[2]] = l[1]
			}
			break
		}
		select {
		case code := <-done:
			cancel()
			t.Fatalf("serve exited with %d: %s", code, logs.String())
		default:
		}
		require.True(t, time.Now().Before(deadline), "serve did not start: %s", logs.String())
		time.Sleep(10 * time.Millisecond)
	}
	stopped := false
	stop = func() (int, string) {
		if stopped {
			return 0, ""
		}
		stopped = true
		cancel()
		select {
		case code := <-done:
			return code, logs.String()
		case <-time.After(15 * time.Second):
			t.Fatal("serve did not stop")
		}
		return 0, ""
	}
	t.Cleanup(func() { stop() })
	return addrs, stop
}

func TestServe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	r := runCmd(t, "", "sql", "--data", dir, "-c", marketSQL)
	require.Equal(t, 0, r.code, r.stderr)

	addr, stop := serve(t, "--data", dir, "--database", "market")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, "postgres://alice@"+addr+"/market?sslmode=disable")
	require.NoError(t, err)
	var bid float64
	require.NoError(t, c.QueryRow(ctx, `SELECT bid FROM trades ASOF JOIN quotes ON ts BETWEEN -100 AND 0 USING (sym) WHERE ts = $1`, 8).Scan(&bid))
	require.Equal(t, 11.0, bid)
	require.NoError(t, c.Close(ctx))

	_, err = pgx.Connect(ctx, "postgres://alice@"+addr+"/other?sslmode=disable")
	var pe *pgconn.PgError
	require.True(t, errors.As(err, &pe), "%v", err)
	require.Equal(t, "3D000", pe.Code)

	code, logs := stop()
	require.Equal(t, 0, code, logs)
	require.Contains(t, logs, "msg=\"shutting down\"")
	require.Contains(t, logs, "msg=stopped")
}

// TestServeFlight: --flight serves Flight SQL beside the wire protocol
// over the same database: what one front door commits the other reads.
// Given alone, --flight serves only Flight SQL.
func TestServeFlight(t *testing.T) {
	addrs, stop := serveAll(t, 2, "--memory", "--listen", "127.0.0.1:0", "--flight", "127.0.0.1:0")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pc, err := pgx.Connect(ctx, "postgres://alice@"+addrs["postgres"]+"/asofsql?sslmode=disable")
	require.NoError(t, err)
	defer pc.Close(ctx)
	_, err = pc.Exec(ctx, marketSQL)
	require.NoError(t, err)
	fc, err := flightsql.NewClient(addrs["flightsql"], nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer fc.Close()
	info, err := fc.Execute(ctx, asofQuery)
	require.NoError(t, err)
	rdr, err := fc.DoGet(ctx, info.Endpoint[0].Ticket)
	require.NoError(t, err)
	rows := 0
	for rdr.Next() {
		rows += int(rdr.RecordBatch().NumRows())
	}
	require.NoError(t, rdr.Err())
	rdr.Release()
	require.Equal(t, 3, rows)
	_, err = fc.ExecuteUpdate(ctx, `INSERT INTO trades VALUES (10, 'A', 1)`)
	require.NoError(t, err)
	var n int
	require.NoError(t, pc.QueryRow(ctx, `SELECT count(*) FROM trades`).Scan(&n))
	require.Equal(t, 4, n)
	code, logs := stop()
	require.Equal(t, 0, code, logs)
	require.Contains(t, logs, "protocol=flightsql")

	addrs, _ = serveAll(t, 1, "--memory", "--flight", "127.0.0.1:0")
	require.Contains(t, addrs, "flightsql")
	require.NotContains(t, addrs, "postgres")

	r := runCmd(t, "", "serve", "--memory", "--flight", "0.0.0.0:0")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "trust authentication is only allowed on a loopback address")
}

func TestServeSCRAM(t *testing.T) {
	v, err := pgwire.NewVerifier("alice", "s3cret")
	require.NoError(t, err)
	users := filepath.Join(t.TempDir(), "users")
	require.NoError(t, os.WriteFile(users, []byte("# test users\nalice:"+v.SCRAM+"\n"), 0o600))
	addr, _ := serve(t, "--memory", "--auth", "scram-sha-256", "--users", users)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, "postgres://alice:s3cret@"+addr+"/asofsql?sslmode=disable")
	require.NoError(t, err)
	require.NoError(t, c.Close(ctx))
	_, err = pgx.Connect(ctx, "postgres://alice:wrong@"+addr+"/asofsql?sslmode=disable")
	var pe *pgconn.PgError
	require.True(t, errors.As(err, &pe), "%v", err)
	require.Equal(t, "28P01", pe.Code)
}

func TestServeFailsOnMissingUsersFile(t *testing.T) {
	r := runCmd(t, "", "serve", "--memory", "--auth", "md5", "--users", filepath.Join(t.TempDir(), "none"))
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "no such file")
}

func TestServeRefusesTrustOnPublicAddress(t *testing.T) {
	r := runCmd(t, "", "serve", "--memory", "--listen", "0.0.0.0:0")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "trust authentication is only allowed on a loopback address")
}

func TestDemo(t *testing.T) {
	untimed := func(s string) string {
		return regexp.MustCompile(`(?m)^-- time: .*\n`).ReplaceAllString(s, "")
	}
	dir := filepath.Join(t.TempDir(), "market")
	a := runCmd(t, "", "demo", "--rows", "3000", "--data", dir)
	require.Equal(t, 0, a.code, a.stderr)
	b := runCmd(t, "", "demo", "--rows", "3000")
	require.Equal(t, 0, b.code, b.stderr)
	// Deterministic: the same data and answers in a directory and in memory
	// (only the closing hint differs).
	cut := func(s string) string { return s[:strings.Index(s, "The ")] }
	require.Equal(t, cut(untimed(b.stdout)), cut(untimed(a.stdout)))
	for _, want := range []string{
		"COPY trades     COPY 3000", "COPY quotes     COPY 9000", "COPY quotes_alt COPY 3000",
		"== The prevailing quote", "== The next quote within 1 second", "== The nearest quote",
		"== Excluding exact matches", "== Two right tables at once", "== Slippage per symbol",
		"(8 rows)", "(10 rows)", "asofsql serve --data " + dir, "psql -h 127.0.0.1 -p 5433 -d asofsql",
	} {
		require.Contains(t, a.stdout, want)
	}
	require.Contains(t, b.stdout, "asofsql demo --data ./market")
	// The exact-match count is not zero (bursts put quotes and trades at
	// the same microsecond), so the exclusion has something to exclude.
	require.NotRegexp(t, `trades_with_a_quote_at_the_same_time \n-+\n +0 \n`, a.stdout)

	// The data stays in the directory, sorted despite late arrivals.
	r := runCmd(t, "", "sql", "--data", dir, "--format", "csv", "-c",
		`SELECT count(*) AS n, min(ts) >= TIMESTAMP '2026-11-30 09:30:00' AS after_open FROM trades`)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "n,after_open\n3000,t\n", r.stdout)
	// A second run replaces the tables instead of failing.
	a2 := runCmd(t, "", "demo", "--rows", "3000", "--data", dir)
	require.Equal(t, 0, a2.code, a2.stderr)
	require.Equal(t, untimed(a.stdout), untimed(a2.stdout))
}

// selfSigned writes a certificate and key for 127.0.0.1.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
	return certFile, keyFile
}

func TestServeTLSWithPasswordAuth(t *testing.T) {
	cert, key := selfSigned(t)
	v, err := pgwire.NewVerifier("bob", "pw")
	require.NoError(t, err)
	users := filepath.Join(t.TempDir(), "users")
	require.NoError(t, os.WriteFile(users, []byte("bob:"+v.MD5+"\n"), 0o600))
	addr, _ := serve(t, "--memory", "--tls-cert", cert, "--tls-key", key, "--require-tls", "--auth", "password", "--users", users)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, "postgres://bob:pw@"+addr+"/asofsql?sslmode=require")
	require.NoError(t, err)
	var s string
	require.NoError(t, c.QueryRow(ctx, "SELECT 'over tls'").Scan(&s))
	require.Equal(t, "over tls", s)
	require.NoError(t, c.Close(ctx))
	// Plain text is refused.
	_, err = pgx.Connect(ctx, "postgres://bob:pw@"+addr+"/asofsql?sslmode=disable")
	var pe *pgconn.PgError
	require.True(t, errors.As(err, &pe), "%v", err)
	require.Equal(t, "28000", pe.Code)
}

// TestServeMemoryLimit: --memory-limit is the sessions' default
// memory_limit and its ceiling (a sort past it fails with 53200, SET may
// lower it but not raise it nor set 0: 42501, RESET returns to it), lpad to
// a billion characters fails with 53200 before it is built, and auto is
// half the machine's RAM.
func TestServeMemoryLimit(t *testing.T) {
	addr, stop := serve(t, "--memory", "--memory-limit", "64kB")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, "postgres://alice@"+addr+"/asofsql?sslmode=disable")
	require.NoError(t, err)
	defer c.Close(ctx)
	var v string
	require.NoError(t, c.QueryRow(ctx, `SHOW memory_limit`).Scan(&v))
	require.Equal(t, "64kB", v)
	var n int64
	err = c.QueryRow(ctx, `SELECT count(*) FROM (SELECT g FROM generate_series(1, 100000) g ORDER BY g DESC) s`).Scan(&n)
	var pe *pgconn.PgError
	require.True(t, errors.As(err, &pe), "%v", err)
	require.Equal(t, "53200", pe.Code)
	err = c.QueryRow(ctx, `SELECT length(lpad('x', 1000000000, 'y'))`).Scan(&n)
	require.True(t, errors.As(err, &pe), "%v", err)
	require.Equal(t, "53200", pe.Code)
	require.Contains(t, pe.Detail, "memory_limit of 64kB")
	for _, v := range []string{"0", "'1MB'"} {
		_, err = c.Exec(ctx, `SET memory_limit = `+v)
		require.True(t, errors.As(err, &pe), "%v", err)
		require.Equal(t, "42501", pe.Code, v)
	}
	_, err = c.Exec(ctx, `SET memory_limit = '32kB'`)
	require.NoError(t, err)
	require.NoError(t, c.QueryRow(ctx, `SELECT count(*) FROM generate_series(1, 100000) g`).Scan(&n))
	require.Equal(t, int64(100000), n)
	_, err = c.Exec(ctx, `RESET memory_limit`)
	require.NoError(t, err)
	require.NoError(t, c.QueryRow(ctx, `SHOW memory_limit`).Scan(&v))
	require.Equal(t, "64kB", v)
	code, logs := stop()
	require.Equal(t, 0, code, logs)
	require.Contains(t, logs, "memory_limit=64kB")

	auto, err := memoryLimitFlag("auto")
	require.NoError(t, err)
	if runtime.GOOS == "linux" {
		require.Greater(t, auto, int64(0))
		require.Zero(t, auto%(1<<20))
		require.LessOrEqual(t, auto, physicalMemory()/2)
	}
	zero, err := memoryLimitFlag("0")
	require.NoError(t, err)
	require.Zero(t, zero)
}

// TestServeIdleInTransactionTimeout: --idle-in-transaction-timeout is the
// default of the session setting; a session idle that long in a block is
// closed with FATAL 25P03 and its writes rolled back, while one outside a
// block, or that SETs it to 0, stays.
func TestServeIdleInTransactionTimeout(t *testing.T) {
	addr, _ := serve(t, "--memory", "--idle-in-transaction-timeout", "300ms")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn := func() *pgx.Conn {
		c, err := pgx.Connect(ctx, "postgres://alice@"+addr+"/asofsql?sslmode=disable")
		require.NoError(t, err)
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	c := conn()
	var v string
	require.NoError(t, c.QueryRow(ctx, `SHOW idle_in_transaction_session_timeout`).Scan(&v))
	require.Equal(t, "300ms", v)
	_, err := c.Exec(ctx, `CREATE TABLE t (v BIGINT)`)
	require.NoError(t, err)
	tx, err := c.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `INSERT INTO t VALUES (1)`)
	require.NoError(t, err)
	time.Sleep(time.Second)
	_, err = tx.Exec(ctx, `INSERT INTO t VALUES (2)`)
	var pe *pgconn.PgError
	require.True(t, errors.As(err, &pe), "%v", err)
	require.Equal(t, "25P03", pe.Code)
	require.Equal(t, "terminating connection due to idle-in-transaction timeout", pe.Message)

	other := conn()
	_, err = other.Exec(ctx, `SET idle_in_transaction_session_timeout = 0`)
	require.NoError(t, err)
	tx, err = other.Begin(ctx)
	require.NoError(t, err)
	time.Sleep(time.Second)
	var n int64
	require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n))
	require.Equal(t, int64(0), n, "the closed session's block was rolled back")
	require.NoError(t, tx.Commit(ctx))
}
