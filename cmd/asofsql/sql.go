package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/sqlerr"
	"golang.org/x/term"
)

func sqlCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("sql", `[--data DIR | --memory] [-c "SQL" | -f FILE] [--format table|csv|json]

Runs SQL statements in one session, in order, stopping at the first error,
and prints each result. Without -c or -f the statements are read from
standard input; on a terminal that is an interactive shell with line
editing and history (\q quits). COPY ... FROM STDIN reads standard input; COPY ... TO
STDOUT writes standard output.`, stdout, stderr)
	var st storage
	st.register(fs)
	command := fs.String("c", "", "run this SQL (one or more statements)")
	file := fs.String("f", "", "run the SQL in this `file` (- for standard input)")
	format := fs.String("format", formatTable, "output `format`: table, csv or json")
	fileDir := fs.String("file-dir", "", "allow COPY to and from files inside this `directory`")
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	if err := checkFormat(*format); err != nil {
		return fail(stderr, "sql", err)
	}
	if *command != "" && *file != "" {
		return fail(stderr, "sql", errUsage("-c and -f are exclusive"))
	}
	text := *command
	tty, shell := stdin.(*os.File)
	shell = shell && *command == "" && *file == "" && term.IsTerminal(int(tty.Fd()))
	switch {
	case shell:
	case *file == "-" || (*command == "" && *file == ""):
		b, err := io.ReadAll(stdin)
		if err != nil {
			return fail(stderr, "sql", err)
		}
		text = string(b)
		stdin = strings.NewReader("") // the script consumed it: COPY FROM STDIN sees no data
	case *file != "":
		b, err := os.ReadFile(*file)
		if err != nil {
			return fail(stderr, "sql", err)
		}
		text = string(b)
	}
	var opts []asofsql.Option
	if *fileDir != "" {
		opts = append(opts, asofsql.WithFileDir(*fileDir))
	}
	db, err := st.open(opts...)
	if err != nil {
		return fail(stderr, "sql", err)
	}
	defer db.Close()
	s := db.Session()
	defer s.Close()
	r := &runner{s: s, stdin: stdin, stdout: stdout, stderr: stderr, format: *format}
	if shell {
		r.stdin = strings.NewReader("") // the terminal is the shell's, not COPY's
		if err := interactive(ctx, r, tty, stdout); err != nil {
			return fail(stderr, "sql", err)
		}
		return exitOK
	}
	if err := r.runAll(ctx, text); err != nil {
		printSQLError(stderr, text, err)
		return exitFail
	}
	s.Close()
	if err := db.Close(); err != nil { // a directory database flushes here
		return fail(stderr, "sql", err)
	}
	return exitOK
}

// runner runs statements in a session and prints their results.
type runner struct {
	s      *asofsql.Session
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	format string
	// echo prints each statement before its result (the demo's tour).
	echo bool
}

func (r *runner) runAll(ctx context.Context, text string) error {
	b, err := r.s.Batch(ctx, text)
	if err != nil {
		return err
	}
	for {
		st, err := b.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := r.runOne(ctx, st); err != nil {
			return err
		}
	}
}

func (r *runner) runOne(ctx context.Context, st *asofsql.Stmt) error {
	if r.echo {
		fmt.Fprintf(r.stdout, "%s;\n\n", strings.TrimSpace(st.Text()))
	}
	var c *asofsql.Cursor
	var err error
	if info, ok := st.Copy(); ok && info.From {
		c, err = st.ExecuteCopy(ctx, r.stdin, nil)
	} else if ok {
		c, err = st.ExecuteCopy(ctx, nil, r.stdout)
	} else {
		c, err = st.Execute(ctx)
	}
	if err != nil {
		return err
	}
	defer c.Release()
	if st.Columns() == nil {
		for c.Next() {
		}
		if err := c.Err(); err != nil {
			return err
		}
		// Command tags are data in table output (psql prints them); in
		// CSV and JSON they would break the stream, so they go to stderr.
		w := r.stdout
		if r.format != formatTable {
			w = r.stderr
		}
		_, err := fmt.Fprintln(w, c.Tag())
		return err
	}
	return writeResult(r.stdout, c, r.s.ValueOptions(), r.format)
}

// printSQLError prints err as psql does: ERROR, DETAIL, HINT, and a
// LINE marker under the character the position points at.
func printSQLError(w io.Writer, text string, err error) {
	e, ok := sqlerr.As(err)
	if !ok {
		fmt.Fprintf(w, "ERROR:  %v\n", err)
		return
	}
	fmt.Fprintf(w, "ERROR:  %s\n", e.Message)
	if e.Position > 0 {
		if line, col, n, ok := locate(text, int(e.Position)); ok {
			prefix := fmt.Sprintf("LINE %d: ", n)
			fmt.Fprintf(w, "%s%s\n%s^\n", prefix, line, strings.Repeat(" ", len(prefix)+col))
		}
	}
	if e.Detail != "" {
		fmt.Fprintf(w, "DETAIL:  %s\n", e.Detail)
	}
	if e.Hint != "" {
		fmt.Fprintf(w, "HINT:  %s\n", e.Hint)
	}
}

// locate finds the 1-based character position pos in text: its line,
// the column (in characters) within it and the line number.
func locate(text string, pos int) (line string, col, n int, ok bool) {
	runes := []rune(text)
	if pos < 1 || pos > len(runes)+1 {
		return "", 0, 0, false
	}
	start, n := 0, 1
	for i := 0; i < pos-1; i++ {
		if runes[i] == '\n' {
			start, n = i+1, n+1
		}
	}
	end := start
	for end < len(runes) && runes[end] != '\n' {
		end++
	}
	return string(runes[start:end]), pos - 1 - start, n, true
}
