package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/sqltypes"
)

// query runs SQL on a database directory through the sql command and
// returns its CSV output.
func query(t *testing.T, dir, sql string) string {
	t.Helper()
	r := runCmd(t, "", "sql", "--data", dir, "--format", "csv", "-c", sql)
	require.Equal(t, 0, r.code, r.stderr)
	return r.stdout
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
}

// progressLine is a plain progress line (standard error not a terminal).
var progressLine = regexp.MustCompile(`^asofsql import: \w+: [0-9,]+ rows, [0-9]+%, [0-9,]+ rows/s(, ETA [0-9hms.]+)?(, committing)?$`)

func TestImportCSVCreatesAndAppends(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "db")
	f := filepath.Join(dir, "trades.csv")
	writeFile(t, f, `ts,sym,price,qty,ok,day,zip,note,at
2024-01-02 09:30:01.5,A,10.25,100,true,2024-01-02,00501,"quoted, with comma",2024-01-02T09:30:00Z
2024-01-02 09:30:00,B,11,-5,f,2024-01-03,10001,,2024-01-02 10:30:00+01:00
2024-01-02 09:30:02,A,1e3,,T,,02134,"",
`)
	r := runCmd(t, "", "import", "--data", data, "--table", "Trades", "--order-by", "ts", "--progress-interval", "0", f)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "created table trades (ts timestamp without time zone, sym text, price double precision, qty bigint, "+
		"ok boolean, day date, zip text, note text, at timestamp with time zone) ORDER BY (ts)\n", strings.SplitAfter(r.stdout, "\n")[0])
	require.Regexp(t, `^imported 3 rows from .*trades.csv into trades in \S+ \([0-9,]+ rows/s\)\n$`, strings.SplitAfter(r.stdout, "\n")[1])
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	require.NotEmpty(t, lines)
	for _, l := range lines {
		require.Regexp(t, progressLine, l)
	}
	require.True(t, strings.HasPrefix(lines[len(lines)-1], "asofsql import: trades: 3 rows, 100%"), lines)
	require.True(t, strings.HasSuffix(lines[len(lines)-1], ", committing"), lines)

	// Ordered by ts; NULL is an unquoted empty field, "" an empty string.
	want := `ts,sym,price,qty,ok,day,zip,note,at
2024-01-02 09:30:00,B,11,-5,f,2024-01-03,10001,,2024-01-02 09:30:00+00
2024-01-02 09:30:01.5,A,10.25,100,t,2024-01-02,00501,"quoted, with comma",2024-01-02 09:30:00+00
2024-01-02 09:30:02,A,1000,,t,,02134,,
`
	require.Equal(t, want, query(t, data, "SELECT * FROM trades"))
	require.Equal(t, "nulls,empty\n1,1\n", query(t, data, "SELECT count(*) - count(note) AS nulls, sum(CASE WHEN note = '' THEN 1 ELSE 0 END) AS empty FROM trades"))

	// Appending: columns match by name, in any order and case.
	g := filepath.Join(dir, "more.csv")
	writeFile(t, g, "QTY,ts,sym,price,ok,day,zip,note,at\n7,2024-01-02 09:29:59,C,5,false,2024-01-01,1,x,\n")
	r = runCmd(t, "", "import", "--data", data, "--table", "trades", g, "--order-by", "ts")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `^imported 1 rows from .*more.csv into trades in `, r.stdout)
	require.Equal(t, "ts,sym,qty\n2024-01-02 09:29:59,C,7\n2024-01-02 09:30:00,B,-5\n2024-01-02 09:30:01.5,A,100\n2024-01-02 09:30:02,A,\n",
		query(t, data, "SELECT ts, sym, qty FROM trades"))

	// A headerless file appends by position.
	h := filepath.Join(dir, "nohdr.csv")
	writeFile(t, h, "2024-01-02 09:31:00,D,1,2,true,2024-01-05,3,y,\n")
	r = runCmd(t, "", "import", "--data", data, "--table", "trades", "--header=false", h)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "n\n5\n", query(t, data, "SELECT count(*) AS n FROM trades"))
}

func TestImportHeaderlessCSVNamesColumns(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "x.csv")
	writeFile(t, f, "1,a\n2,b\n")
	r := runCmd(t, "", "import", "--data", filepath.Join(dir, "db"), "--table", "x", "--header=false", "--order-by", "column1", f)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "created table x (column1 bigint, column2 text) ORDER BY (column1)\n")
	require.Equal(t, "column1,column2\n1,a\n2,b\n", query(t, filepath.Join(dir, "db"), "SELECT * FROM x"))
}

func TestImportColumnMismatch(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "db")
	r := runCmd(t, "", "sql", "--data", data, "-c", "CREATE TABLE q (ts BIGINT, bid DOUBLE PRECISION) ORDER BY (ts); INSERT INTO q VALUES (1, 2)")
	require.Equal(t, 0, r.code, r.stderr)
	tests := []struct {
		name, csv string
		args      []string
		code      int
		want      string
	}{
		{"extra column", "ts,bid,ask\n1,2,3\n", nil, exitFail, `column "ask" of ` + "%s" + ` is not a column of table q (its columns: ts, bid)`},
		{"missing column", "ts\n1\n", nil, exitFail, `table q has column "bid", which %s does not have`},
		{"twice", "ts,TS,bid\n1,1,2\n", nil, exitFail, `columns of %s name table column "ts" twice`},
		{"by position, wrong count", "1,2,3\n", []string{"--header=false"}, exitFail, `%s has 3 columns; table q has 2 (ts, bid)`},
		{"other order", "ts,bid\n1,2\n", []string{"--order-by", "bid"}, exitUsage, `--order-by bid: table q exists and is ordered by (ts)`},
		{"bad value", "ts,bid\n5,6\n1,x\n", nil, exitFail, `invalid input syntax for type double precision: "x"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(dir, "in.csv")
			writeFile(t, f, tc.csv)
			r := runCmd(t, "", append([]string{"import", "--data", data, "--table", "q", f}, tc.args...)...)
			require.Equal(t, tc.code, r.code, r.stderr)
			want := tc.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, f)
			}
			require.Contains(t, r.stderr, want)
			if tc.code == exitFail {
				require.Contains(t, r.stderr, "nothing was imported; table q is unchanged")
			}
			require.Equal(t, "ts,bid\n1,2\n", query(t, data, "SELECT * FROM q"))
		})
	}
}

// writeTicks writes a header and n rows (ts, sym, price) to path; row i is
// on line i+2. bad, if positive, is a data row whose price is "n/a".
func writeTicks(t *testing.T, path string, n, bad int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("ts,sym,price\n")
	for i := 0; i < n; i++ {
		if i == bad {
			fmt.Fprintf(&b, "%d,S%d,n/a\n", i, i%50)
			continue
		}
		fmt.Fprintf(&b, "%d,S%d,%d.5\n", i, i%50, i)
	}
	writeFile(t, path, b.String())
}

func TestImportBadRowNamesTheLine(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "db")
	f := filepath.Join(dir, "ticks.csv")
	writeTicks(t, f, 20_010, 20_003) // beyond the rows inference samples: line 20005
	r := runCmd(t, "", "import", "--data", data, "--table", "ticks", "--order-by", "ts", f)
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, `asofsql import: invalid input syntax for type double precision: "n/a"`)
	require.Contains(t, r.stderr, "line 20005")
	require.Contains(t, r.stderr, "inferred from the first 10000 rows")
	require.Contains(t, r.stderr, "nothing was imported; table ticks was not created")
	require.Empty(t, r.stdout)
	r = runCmd(t, "", "sql", "--data", data, "-c", "SELECT * FROM ticks")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, `relation "ticks" does not exist`)

	// A malformed row: too many fields.
	writeFile(t, f, "a,b\n1,2\n3,4,5\n")
	r = runCmd(t, "", "import", "--data", data, "--table", "ticks", f)
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "extra data after last expected column")
	require.Contains(t, r.stderr, "line 3")
}

func TestImportBadUsage(t *testing.T) {
	dir := t.TempDir()
	csvFile := filepath.Join(dir, "a.csv")
	writeFile(t, csvFile, "ts,v\n1,2\n")
	txt := filepath.Join(dir, "a.txt")
	writeFile(t, txt, "x")
	data := filepath.Join(dir, "db")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--data", data, "--table", "t"}, exitUsage, "missing the FILE to import"},
		{[]string{"--data", data, "--table", "t", csvFile, csvFile}, exitUsage, "import loads one file"},
		{[]string{"--table", "t", csvFile}, exitUsage, "--data DIR is required"},
		{[]string{"--data", data, csvFile}, exitUsage, "--table T is required"},
		{[]string{"--data", data, "--table", "t", "--bogus", csvFile}, exitUsage, "flag provided but not defined: -bogus"},
		{[]string{"--data", data, "--table", "t", "--progress-interval", "-1s", csvFile}, exitUsage, "--progress-interval must not be negative"},
		{[]string{"--data", data, "--table", "t", txt}, exitUsage, `unknown file type ".txt": want .csv or .parquet`},
		{[]string{"--data", data, "--table", "t", "--order-by", "nope", csvFile}, exitUsage, `has no column "nope" (its columns: ts, v)`},
		{[]string{"--data", data, "--table", "t", filepath.Join(dir, "missing.csv")}, exitFail, "no such file or directory"},
		{[]string{"--data", data, "--table", "t", filepath.Join(dir, "missing.parquet")}, exitFail, "no such file or directory"},
		{[]string{"--data", data, "--table", "t", txt + ".csv"}, exitFail, "no such file or directory"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runCmd(t, "", append([]string{"import"}, tc.args...)...)
			require.Equal(t, tc.code, r.code, r.stderr)
			require.Contains(t, r.stderr, tc.want)
		})
	}
	// Not a Parquet file, an empty CSV, a header with a hole.
	notPq := filepath.Join(dir, "bad.parquet")
	writeFile(t, notPq, "ts,v\n1,2\n")
	r := runCmd(t, "", "import", "--data", data, "--table", "t", notPq)
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "is not a readable Parquet file")
	empty := filepath.Join(dir, "empty.csv")
	writeFile(t, empty, "")
	r = runCmd(t, "", "import", "--data", data, "--table", "t", empty)
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "is empty: a CSV file needs at least a header line")
	// A directory another process (here: this one) has open.
	db, err := asofsql.Open(data)
	require.NoError(t, err)
	r = runCmd(t, "", "import", "--data", data, "--table", "t", csvFile)
	require.NoError(t, db.Close())
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "is in use by another catalog")
	require.Contains(t, r.stderr, "HINT:  Stop the server that has it open, or load through the server (COPY ... FROM STDIN, psql's \\copy).")
	hole := filepath.Join(dir, "hole.csv")
	writeFile(t, hole, "a,,c\n1,2,3\n")
	r = runCmd(t, "", "import", "--data", data, "--table", "t", hole)
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "the header names no column 2")
}

// cancelOnProgress is standard error for an import that a test
// interrupts: the first progress line cancels the import's context, as
// Ctrl-C would (progress is reported on the loading goroutine, between
// two batches, so the load is then half done).
type cancelOnProgress struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	cancel context.CancelFunc
}

func (w *cancelOnProgress) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.Contains(p, []byte(" rows/s")) {
		w.cancel()
	}
	return w.buf.Write(p)
}

// listFiles lists a directory tree's files with their sizes.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, fmt.Sprintf("%s %d", rel, fi.Size()))
		}
		return nil
	}))
	sort.Strings(out)
	return out
}

func TestImportInterruptedLeavesTableUnchanged(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "db")
	f := filepath.Join(dir, "ticks.csv")
	writeTicks(t, f, 50_000, -1) // several batches
	r := runCmd(t, "", "sql", "--data", data, "-c",
		"CREATE TABLE ticks (ts BIGINT, sym TEXT, price DOUBLE PRECISION) ORDER BY (ts); INSERT INTO ticks VALUES (-1, 'Z', 0.5), (-2, 'Y', 1)")
	require.Equal(t, 0, r.code, r.stderr)
	before := listFiles(t, data)

	interrupt := func(table string) (int, string, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		stderr := &cancelOnProgress{cancel: cancel}
		var stdout bytes.Buffer
		code := run(ctx, []string{"import", "--data", data, "--table", table, "--order-by", "ts", "--progress-interval", "0", f},
			strings.NewReader(""), &stdout, stderr)
		return code, stdout.String(), stderr.buf.String()
	}
	// Appending to an existing table.
	code, stdout, stderr := interrupt("ticks")
	require.Equal(t, exitInterrupted, code, stderr)
	require.Empty(t, stdout)
	require.Regexp(t, `(?m)^asofsql import: ticks: [0-9,]+ rows, `, stderr) // it was under way
	require.Contains(t, stderr, "asofsql import: interrupted: nothing was imported; table ticks is unchanged\n")
	require.Equal(t, before, listFiles(t, data), "the data directory is as it was")
	require.Equal(t, "ts,sym,price\n-2,Y,1\n-1,Z,0.5\n", query(t, data, "SELECT * FROM ticks"))

	// Creating a table.
	code, _, stderr = interrupt("fresh")
	require.Equal(t, exitInterrupted, code, stderr)
	require.Contains(t, stderr, "asofsql import: interrupted: nothing was imported; table fresh was not created\n")
	r = runCmd(t, "", "sql", "--data", data, "-c", "SELECT * FROM fresh")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, `relation "fresh" does not exist`)

	// The same file loads in full when not interrupted.
	r = runCmd(t, "", "import", "--data", data, "--table", "ticks", f)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "n,s\n50002,1249974997\n", query(t, data, "SELECT count(*) AS n, sum(ts) AS s FROM ticks"))
}

// writeParquet writes a Parquet file with pqarrow, from Arrow arrays
// built in a checked allocator.
func writeParquet(t *testing.T, path string, n int) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
		{Name: "sym", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "bid", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "size", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "live", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	base := time.Date(2024, 1, 2, 9, 30, 0, 0, time.UTC).UnixMicro()
	for i := 0; i < n; i++ {
		b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(base + int64(n-i)*1000))
		if i%10 == 3 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("S%d", i%4))
		}
		b.Field(2).(*array.Float64Builder).Append(float64(i) / 4)
		b.Field(3).(*array.Int32Builder).Append(int32(i * 10))
		b.Field(4).(*array.Date32Builder).Append(arrow.Date32(19724 + i%3))
		b.Field(5).(*array.BooleanBuilder).Append(i%2 == 0)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	out, err := os.Create(path)
	require.NoError(t, err)
	w, err := pqarrow.NewFileWriter(schema, out, parquet.NewWriterProperties(parquet.WithAllocator(mem), parquet.WithMaxRowGroupLength(4096)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem)))
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
}

func TestImportParquet(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "db")
	f := filepath.Join(dir, "quotes.parquet")
	writeParquet(t, f, 10_000)
	r := runCmd(t, "", "import", "--data", data, "--table", "quotes", "--order-by", "ts", "--progress-interval", "0", f)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "created table quotes (ts timestamp without time zone, sym text, bid double precision, "+
		"size integer, day date, live boolean) ORDER BY (ts)\n")
	require.Contains(t, r.stdout, "imported 10,000 rows from "+f+" into quotes in ")
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	for _, l := range lines {
		require.Regexp(t, progressLine, l)
	}
	require.Contains(t, lines[len(lines)-1], "10,000 rows, 100%")
	// Rows come back ordered by ts: the file holds them descending.
	require.Equal(t, "ts,sym,bid,size,day,live\n2024-01-02 09:30:00.001,S3,2499.75,99990,2024-01-02,f\n2024-01-02 09:30:00.002,S2,2499.5,99980,2024-01-04,t\n",
		query(t, data, "SELECT * FROM quotes LIMIT 2"))
	require.Equal(t, "n,nulls,s\n10000,1000,499950000\n", query(t, data, "SELECT count(*) AS n, count(*) - count(sym) AS nulls, sum(size) AS s FROM quotes"))

	// Appending the same file: the table's columns match.
	r = runCmd(t, "", "import", "--data", data, "--table", "quotes", f)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "n\n20000\n", query(t, data, "SELECT count(*) AS n FROM quotes"))

	// Into a table with other columns: the error names the column, nothing loads.
	r = runCmd(t, "", "sql", "--data", data, "-c", "CREATE TABLE other (ts TIMESTAMP, sym TEXT, ask DOUBLE PRECISION, size INTEGER, day DATE, live BOOLEAN)")
	require.Equal(t, 0, r.code, r.stderr)
	r = runCmd(t, "", "import", "--data", data, "--table", "other", f)
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, `column "bid" of `+f+` is not a column of table other (its columns: ts, sym, ask, size, day, live)`)
	// Into a table whose types the values do not fit: the error names the column.
	r = runCmd(t, "", "sql", "--data", data, "-c", "CREATE TABLE small (ts TIMESTAMP, sym TEXT, bid DOUBLE PRECISION, size SMALLINT, day DATE, live BOOLEAN)")
	require.Equal(t, 0, r.code, r.stderr)
	r = runCmd(t, "", "import", "--data", data, "--table", "small", f)
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, `column "size" of relation "small" is of type smallint`)
	require.Contains(t, r.stderr, "nothing was imported; table small is unchanged")
	require.Equal(t, "n\n0\n", query(t, data, "SELECT count(*) AS n FROM small"))
}

func TestInferCSVTypes(t *testing.T) {
	tests := []struct {
		name   string
		values []string // one CSV field each (as written in the file)
		want   sqltypes.Type
	}{
		{"integers", []string{"1", "-20", "+3", "0", "9223372036854775807"}, sqltypes.Int8Type},
		{"leading zeros stay text", []string{"1", "007"}, sqltypes.TextType},
		{"beyond bigint stays text", []string{"1", "9223372036854775808"}, sqltypes.TextType},
		{"integers and decimals", []string{"1", "2.5", "-.5", "1e-3", "3."}, sqltypes.Float8Type},
		{"float words", []string{"1.5", "NaN", "-Infinity"}, sqltypes.Float8Type},
		{"booleans", []string{"true", "FALSE", "t", "f"}, sqltypes.BoolType},
		{"0 and 1 are numbers", []string{"0", "1"}, sqltypes.Int8Type},
		{"yes is text", []string{"yes", "no"}, sqltypes.TextType},
		{"dates", []string{"2024-01-02", "1999-12-31"}, sqltypes.DateType},
		{"impossible date", []string{"2024-01-02", "2024-02-30"}, sqltypes.TextType},
		{"compact date is a number", []string{"20240102"}, sqltypes.Int8Type},
		{"dates and timestamps", []string{"2024-01-02", "2024-01-02 10:00:00.123456", "2024-01-02T10:00"}, sqltypes.TimestampType},
		{"offsets", []string{"2024-01-02 10:00:00Z", "2024-01-02T10:00:00.5+05:30", "2024-01-02 10:00-08"}, sqltypes.TimestampTZType},
		{"offsets mixed with none", []string{"2024-01-02 10:00:00Z", "2024-01-02 10:00:00"}, sqltypes.TextType},
		{"NULLs are skipped", []string{"", "5", ""}, sqltypes.Int8Type},
		{"only NULLs", []string{"", ""}, sqltypes.TextType},
		{"a quoted empty string is text", []string{`""`, "5"}, sqltypes.TextType},
		{"spaces around numbers", []string{" 5", "6 "}, sqltypes.Int8Type},
		{"spaces inside are text", []string{"5 6"}, sqltypes.TextType},
		{"words", []string{"abc", "1"}, sqltypes.TextType},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			f := filepath.Join(t.TempDir(), "x.csv")
			writeFile(t, f, "v,k\n"+strings.Join(tc.values, ",k\n")+",k\n")
			cols, err := csvHeader(f, true)
			require.NoError(t, err)
			n, err := inferCSV(context.Background(), f, cols, true, mem)
			require.NoError(t, err)
			require.Equal(t, len(tc.values), n)
			require.Equal(t, tc.want, cols[0].Type, "%v", tc.values)
			require.Equal(t, sqltypes.TextType, cols[1].Type)
		})
	}
}

func TestProgressBarOnTerminal(t *testing.T) {
	var out bytes.Buffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	done := int64(0)
	p := newProgress(&out, true, 100, 0, "trades", 1000, func(int64) int64 { return done })
	p.now = func() time.Time { return now }
	p.start, p.last = now, now

	now = now.Add(100 * time.Millisecond) // under the redraw interval: nothing
	done = 100
	p.update(1000)
	require.Empty(t, out.String())

	now = now.Add(2 * time.Second) // 25% after 2.1 s... ETA 6.3 s
	done = 250
	p.update(5000)
	line := out.String()
	require.True(t, strings.HasPrefix(line, "\rtrades ["), line)
	require.True(t, strings.HasSuffix(line, "\x1b[K"), line)
	require.Contains(t, line, "]  25% 5,000 rows  2.38k rows/s  ETA 0:06")
	require.LessOrEqual(t, len(strings.TrimSuffix(strings.TrimPrefix(line, "\r"), "\x1b[K")), 99)

	out.Reset()
	now = now.Add(50 * time.Millisecond) // too soon for another redraw
	p.update(6000)
	require.Empty(t, out.String())

	p.committing(10_000)
	require.Contains(t, out.String(), "] 100% 10,000 rows")
	require.Contains(t, out.String(), "committing")
	out.Reset()
	p.clear()
	require.Equal(t, "\r\x1b[K", out.String())
}

func TestCommasAndClock(t *testing.T) {
	require.Equal(t, "0", commas(0))
	require.Equal(t, "999", commas(999))
	require.Equal(t, "1,000", commas(1000))
	require.Equal(t, "-1,234,567", commas(-1234567))
	require.Equal(t, "0:05", clock(5*time.Second))
	require.Equal(t, "1:01:01", clock(time.Hour+61*time.Second))
	require.Equal(t, "812", compact(812))
	require.Equal(t, "81.2k", compact(81_200))
	require.Equal(t, "1.23M", compact(1_234_567))
}

func TestImportCRLFSpacedHeaderAndSymlink(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	real := filepath.Join(other, "real.csv")
	writeFile(t, real, "ts, sym , px\r\n1, a, 1.5\r\n2, b, 2\r\n")
	link := filepath.Join(dir, "link.csv")
	require.NoError(t, os.Symlink(real, link))
	data := filepath.Join(dir, "db")
	r := runCmd(t, "", "import", "--data", data, "--table", "s", "--order-by", "TS", link)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "created table s (ts bigint, sym text, px double precision) ORDER BY (ts)\n")
	require.Equal(t, "ts,sym,px\n1,\" a\",1.5\n2,\" b\",2\n", query(t, data, "SELECT * FROM s")) // text keeps its spaces, as COPY does
}
