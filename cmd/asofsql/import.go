package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/internal/safefile"
	"github.com/asofsql/asofsql/sqlerr"
	"golang.org/x/term"
)

// exitInterrupted is the exit code of an import stopped by SIGINT (or
// SIGTERM), as shells report a program killed by SIGINT.
const exitInterrupted = 130

func importCmd(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("import", `--data DIR --table T [--order-by col[,col...]] [--header=false] FILE.csv|FILE.parquet

Loads a CSV or Parquet file into table T in one transaction: on any error,
or on Ctrl-C, the table is left as it was (and a table the import would
have created does not exist).

If T exists, the rows are appended; the file's columns must be the table's
(matched by name, in any order; a headerless CSV by position). Otherwise T
is created with a column per file column: Parquet columns keep their
types; CSV types are inferred from the first 10000 rows: bigint, double
precision, boolean (true/false/t/f), date (YYYY-MM-DD), timestamp or
timestamptz (ISO 8601, with a UTC offset for timestamptz), else text.
Integers with leading zeros stay text. --order-by declares the new table's
ORDER BY (for an existing table it must be the declared one).

Progress (rows, rows/s, ETA) is a status line on a terminal and a line
every --progress-interval otherwise.`, stdout, stderr)
	data := fs.String("data", "", "database `directory` (created if missing)")
	table := fs.String("table", "", "the `table` to load (created if missing); unquoted names fold to lower case as in SQL")
	orderBy := fs.String("order-by", "", "ORDER BY `columns` (comma-separated) of a table the import creates")
	header := fs.Bool("header", true, "the first line of a CSV file names the columns (--header=false: it is data; new columns are column1, column2, ...)")
	every := fs.Duration("progress-interval", 5*time.Second, "time between progress lines when standard error is not a terminal (0: after every batch)")
	pos, code, done := parseArgs(fs, args, stdout)
	if done {
		return code
	}
	switch {
	case len(pos) == 0:
		return fail(stderr, "import", errUsage("missing the FILE to import (see --help)"))
	case len(pos) > 1:
		return fail(stderr, "import", errUsage(fmt.Sprintf("unexpected argument %q: import loads one file", pos[1])))
	case *data == "":
		return fail(stderr, "import", errUsage("--data DIR is required"))
	case *table == "":
		return fail(stderr, "import", errUsage("--table T is required"))
	case *every < 0:
		return fail(stderr, "import", errUsage("--progress-interval must not be negative"))
	}
	path := pos[0]
	var format string
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		format = "csv"
	case ".parquet":
		format = "parquet"
	default:
		return fail(stderr, "import", errUsage(fmt.Sprintf("%s: unknown file type %q: want .csv or .parquet", path, filepath.Ext(path))))
	}
	fi, err := os.Stat(path)
	if err == nil && !fi.Mode().IsRegular() {
		// A pipe (<(zcat f.csv)) cannot work: the import reads the file
		// more than once (header, type inference, load). Refused before
		// opening, where a FIFO would block.
		what := "not a regular file"
		switch {
		case fi.IsDir():
			what = "a directory"
		case fi.Mode()&os.ModeNamedPipe != 0:
			what = "a named pipe"
		case fi.Mode()&os.ModeDevice != 0:
			what = "a device"
		}
		err = fmt.Errorf("%s is %s: import reads regular files only (it reads the file more than once)", path, what)
	}
	var abs string
	if err == nil {
		abs, err = filepath.Abs(path)
	}
	if err == nil { // COPY reads files inside one directory: the file's own
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return fail(stderr, "import", err)
	}
	db, err := asofsql.Open(*data, asofsql.WithFileDir(filepath.Dir(abs)))
	if err != nil {
		code := fail(stderr, "import", err)
		if sqlerr.Code(err) == "55006" {
			fmt.Fprintln(stderr, "HINT:  Stop the server that has it open, or load through the server (COPY ... FROM STDIN, psql's \\copy).")
		}
		return code
	}
	defer db.Close()
	tty, width := false, 0
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		tty = true
		width, _, _ = term.GetSize(int(f.Fd()))
	}
	imp := &importer{
		db: db, path: abs, display: path, format: format, table: tableName(*table),
		orderBy: splitList(*orderBy), header: *header || format == "parquet",
		stdout: stdout, stderr: stderr, tty: tty, width: width, every: *every,
	}
	if code := imp.run(ctx); code != exitOK {
		return code
	}
	if err := db.Close(); err != nil {
		return fail(stderr, "import", err)
	}
	return exitOK
}

// importer is one run of asofsql import.
type importer struct {
	db      *asofsql.DB
	path    string // absolute
	display string // as the user wrote it
	format  string // "csv" or "parquet"
	table   string
	orderBy []string
	header  bool
	stdout  io.Writer
	stderr  io.Writer
	tty     bool
	width   int
	every   time.Duration

	cols    []fileColumn // the file's columns, in file order
	create  bool         // the table does not exist: the import creates it
	sampled int          // CSV rows type inference read
}

func (imp *importer) run(ctx context.Context) int {
	var err error
	var fileRows int64
	if imp.format == "csv" {
		imp.cols, err = csvHeader(imp.path, imp.header)
	} else {
		imp.cols, fileRows, err = parquetColumns(imp.path, memory.DefaultAllocator)
	}
	if err != nil {
		return fail(imp.stderr, "import", err)
	}
	info, err := imp.db.Table(imp.table)
	switch {
	case sqlerr.Code(err) == sqlerr.UndefinedTable:
		imp.create = true
		err = imp.plan(ctx)
	case err == nil:
		err = imp.match(info)
	}
	if err != nil {
		return imp.failed(ctx, err)
	}

	s := imp.db.Session()
	defer s.Close() // rolls back whatever did not commit
	// Progress: CSV by bytes read against the file size, Parquet by rows
	// against the row count in its footer.
	var total int64
	var done func(int64) int64
	var counter *countingReader
	var input io.Reader
	if imp.format == "csv" {
		f, err := safefile.Open(imp.path)
		if err != nil {
			return fail(imp.stderr, "import", err)
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil {
			total = fi.Size()
		}
		counter = &countingReader{r: safefile.Reader(ctx, f)}
		input = counter
		done = func(int64) int64 { return counter.n.Load() }
	} else {
		total = fileRows
		done = func(rows int64) int64 { return rows }
	}
	prog := newProgress(imp.stderr, imp.tty, imp.width, imp.every, imp.table, total, done)
	var rows int64
	start := time.Now()
	err = func() error {
		if _, err := s.Exec(ctx, "BEGIN"); err != nil {
			return err
		}
		if imp.create {
			if _, err := s.Exec(ctx, imp.createSQL()); err != nil {
				return err
			}
		}
		res, err := s.CopyFrom(asofsql.WithCopyProgress(ctx, prog.update), imp.copySQL(), input)
		if err != nil {
			return err
		}
		rows = res.RowsAffected
		prog.committing(rows)
		_, err = s.Exec(ctx, "COMMIT")
		return err
	}()
	prog.clear()
	if err != nil {
		return imp.failed(ctx, err)
	}
	elapsed := time.Since(start)
	if imp.create {
		fmt.Fprintf(imp.stdout, "created table %s\n", imp.describe())
	}
	rate := ""
	if elapsed > 0 {
		rate = fmt.Sprintf(" (%s rows/s)", commas(int64(float64(rows)/elapsed.Seconds())))
	}
	fmt.Fprintf(imp.stdout, "imported %s rows from %s into %s in %s%s\n",
		commas(rows), imp.display, imp.table, elapsed.Round(time.Millisecond), rate)
	return exitOK
}

// plan sets the types of a table the import creates and checks --order-by.
func (imp *importer) plan(ctx context.Context) error {
	if imp.format == "csv" {
		n, err := inferCSV(ctx, imp.path, imp.cols, imp.header, memory.DefaultAllocator)
		if err != nil {
			return err
		}
		imp.sampled = n
	}
	names := make([]string, len(imp.cols))
	for i, c := range imp.cols {
		names[i] = c.Name
	}
	for i, want := range imp.orderBy {
		j, err := findColumn(names, want)
		if err != nil {
			return errUsage(fmt.Sprintf("--order-by %s: %s has no column %q (its columns: %s)", want, imp.display, want, strings.Join(names, ", ")))
		}
		imp.orderBy[i] = names[j]
	}
	return nil
}

// match checks that the file's columns are the existing table's and
// renames them to the table's spelling; --order-by, if given, must be the
// table's declared ordering.
func (imp *importer) match(info *catalog.TableInfo) error {
	names := make([]string, len(info.Columns))
	for i, c := range info.Columns {
		names[i] = c.Name
	}
	list := strings.Join(names, ", ")
	if imp.format == "csv" && !imp.header {
		// No names: by position.
		if len(imp.cols) != len(names) {
			return fmt.Errorf("%s has %d columns; table %s has %d (%s)", imp.display, len(imp.cols), imp.table, len(names), list)
		}
		for i := range imp.cols {
			imp.cols[i].Name = names[i]
		}
	} else {
		used := make([]bool, len(names))
		for i, c := range imp.cols {
			j, err := findColumn(names, c.Name)
			if err != nil {
				return fmt.Errorf("column %q of %s is not a column of table %s (its columns: %s)", c.Name, imp.display, imp.table, list)
			}
			if used[j] {
				return fmt.Errorf("columns of %s name table column %q twice", imp.display, names[j])
			}
			used[j] = true
			imp.cols[i].Name = names[j]
		}
		for j, u := range used {
			if !u {
				return fmt.Errorf("table %s has column %q, which %s does not have", imp.table, names[j], imp.display)
			}
		}
	}
	if len(imp.orderBy) > 0 {
		same := len(imp.orderBy) == len(info.OrderBy)
		for i := 0; same && i < len(imp.orderBy); i++ {
			j, err := findColumn(info.OrderBy, imp.orderBy[i])
			same = err == nil && j == i
		}
		if !same {
			declared := "not ordered"
			if len(info.OrderBy) > 0 {
				declared = "ordered by (" + strings.Join(info.OrderBy, ", ") + ")"
			}
			return errUsage(fmt.Sprintf("--order-by %s: table %s exists and is %s; --order-by only declares the order of a new table",
				strings.Join(imp.orderBy, ","), imp.table, declared))
		}
	}
	return nil
}

// findColumn finds name in names: exactly, else ignoring case if that
// picks one column.
func findColumn(names []string, name string) (int, error) {
	for i, n := range names {
		if n == name {
			return i, nil
		}
	}
	found := -1
	for i, n := range names {
		if strings.EqualFold(n, name) {
			if found >= 0 {
				return -1, fmt.Errorf("ambiguous column %q", name)
			}
			found = i
		}
	}
	if found < 0 {
		return -1, fmt.Errorf("no column %q", name)
	}
	return found, nil
}

func (imp *importer) createSQL() string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (", quoteIdent(imp.table))
	for i, c := range imp.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", quoteIdent(c.Name), c.Type)
	}
	b.WriteString(")")
	if len(imp.orderBy) > 0 {
		q := make([]string, len(imp.orderBy))
		for i, n := range imp.orderBy {
			q[i] = quoteIdent(n)
		}
		fmt.Fprintf(&b, " ORDER BY (%s)", strings.Join(q, ", "))
	}
	return b.String()
}

// describe is the created table as the summary prints it.
func (imp *importer) describe() string {
	cols := make([]string, len(imp.cols))
	for i, c := range imp.cols {
		cols[i] = c.Name + " " + c.Type.String()
	}
	s := imp.table + " (" + strings.Join(cols, ", ") + ")"
	if len(imp.orderBy) > 0 {
		s += " ORDER BY (" + strings.Join(imp.orderBy, ", ") + ")"
	}
	return s
}

func (imp *importer) copySQL() string {
	cols := make([]string, len(imp.cols))
	for i, c := range imp.cols {
		cols[i] = quoteIdent(c.Name)
	}
	target := quoteIdent(imp.table) + " (" + strings.Join(cols, ", ") + ")"
	if imp.format == "parquet" {
		return fmt.Sprintf("COPY %s FROM '%s' WITH (FORMAT parquet)", target, strings.ReplaceAll(imp.path, "'", "''"))
	}
	return fmt.Sprintf("COPY %s FROM STDIN WITH (FORMAT csv, HEADER %t)", target, imp.header)
}

// failed reports a failed import: the error as psql prints it, and that
// nothing was imported. An interrupted import exits 130.
func (imp *importer) failed(ctx context.Context, err error) int {
	state := fmt.Sprintf("table %s is unchanged", imp.table)
	if imp.create {
		state = fmt.Sprintf("table %s was not created", imp.table)
	}
	if ctx.Err() != nil {
		fmt.Fprintf(imp.stderr, "asofsql import: interrupted: nothing was imported; %s\n", state)
		return exitInterrupted
	}
	var u usageError
	if errors.As(err, &u) {
		return fail(imp.stderr, "import", err)
	}
	e, ok := sqlerr.As(err)
	if !ok {
		fmt.Fprintf(imp.stderr, "asofsql import: %v\n", err)
	} else {
		if imp.create && imp.sampled > 0 && e.Hint == "" && strings.HasPrefix(e.Detail, "COPY ") {
			e = e.WithHint("The column types were inferred from the first %d rows of %s. Create the table with the types you need, then import into it.",
				imp.sampled, imp.display)
		}
		fmt.Fprintf(imp.stderr, "asofsql import: %s\n", e.Message)
		if e.Detail != "" {
			fmt.Fprintf(imp.stderr, "DETAIL:  %s\n", e.Detail)
		}
		if e.Hint != "" {
			fmt.Fprintf(imp.stderr, "HINT:  %s\n", e.Hint)
		}
	}
	fmt.Fprintf(imp.stderr, "asofsql import: nothing was imported; %s\n", state)
	return exitFail
}

var plainIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]*$`)

// tableName reads --table as SQL reads a name: "Quoted" keeps its case,
// an unquoted identifier folds to lower case, anything else is taken as
// written.
func tableName(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
	}
	if plainIdent.MatchString(s) {
		return strings.ToLower(s)
	}
	return s
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func splitList(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		out = append(out, strings.TrimSpace(p))
	}
	return out
}

// countingReader counts the bytes read through it (read by the progress
// reporter, possibly on another goroutine).
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
