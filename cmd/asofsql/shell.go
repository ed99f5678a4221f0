package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/term"
)

const shellHelp = `Type SQL statements ending with ";" (they may span lines).
  \q        quit (also Ctrl-D or Ctrl-C at the prompt)
  \?        this help
Up and down arrows recall earlier lines; history is kept in $ASOFSQL_HISTORY
(default ~/.asofsql_history).
`

// interactive runs the shell on the terminal behind stdin/stdout: raw
// mode while a line is edited, cooked mode while a statement runs (so
// Ctrl-C then interrupts asofsql as any command, ending the shell).
func interactive(ctx context.Context, r *runner, in *os.File, out io.Writer) error {
	fd := int(in.Fd())
	rw := struct {
		io.Reader
		io.Writer
	}{in, out}
	t := term.NewTerminal(rw, "")
	if w, h, err := term.GetSize(fd); err == nil && w > 0 && h > 0 { // a pty may report 0x0
		t.SetSize(w, h)
	}
	raw := func() (func(), error) {
		st, err := term.MakeRaw(fd)
		if err != nil {
			return nil, err
		}
		return func() { term.Restore(fd, st) }, nil
	}
	return runShell(ctx, r, t, raw, out) // statements run in cooked mode: plain output
}

// lineReader is what the shell needs of a terminal (term.Terminal).
type lineReader interface {
	io.Writer
	ReadLine() (string, error)
	SetPrompt(string)
}

// runShell reads statements line by line until \q or end of input and
// runs each complete one; errors are printed and the shell goes on.
// raw, when set, puts the terminal in raw mode for line editing and
// returns how to leave it; results receives statements' output and errors.
func runShell(ctx context.Context, r *runner, t lineReader, raw func() (func(), error), results io.Writer) error {
	if tt, ok := t.(*term.Terminal); ok {
		hist := loadHistory()
		tt.History = hist
	}
	r.stdout, r.stderr = results, results
	fmt.Fprint(t, "asofsql shell. Type \\? for help, \\q to quit.\n")
	var buf strings.Builder
	for ctx.Err() == nil {
		prompt := "asofsql=> "
		if buf.Len() > 0 {
			prompt = "asofsql-> "
		}
		t.SetPrompt(prompt)
		restore := func() {}
		if raw != nil {
			var err error
			if restore, err = raw(); err != nil {
				return err
			}
		}
		line, err := t.ReadLine()
		restore()
		if errors.Is(err, term.ErrPasteIndicator) {
			err = nil
		}
		if errors.Is(err, io.EOF) {
			fmt.Fprintln(t)
			return nil
		}
		if err != nil {
			return err
		}
		if buf.Len() == 0 {
			switch strings.TrimSpace(line) {
			case "":
				continue
			case `\q`:
				return nil
			case `\?`, `\h`, "help":
				fmt.Fprint(t, shellHelp)
				continue
			}
		}
		buf.WriteString(line)
		buf.WriteString("\n")
		if !complete(buf.String()) {
			continue
		}
		text := buf.String()
		buf.Reset()
		if err := r.runAll(ctx, text); err != nil {
			printSQLError(results, text, err)
		}
	}
	return ctx.Err()
}

// complete reports whether text ends with a ";" outside quotes and
// comments: the shell runs what it has only then.
func complete(text string) bool {
	last := byte(0)
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(text) {
				if text[j] == c {
					if j+1 < len(text) && text[j+1] == c { // doubled quote
						j += 2
						continue
					}
					break
				}
				j++
			}
			if j >= len(text) {
				return false // unterminated string or identifier
			}
			i, last = j, c
		case c == '-' && i+1 < len(text) && text[i+1] == '-':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				return false
			}
			i += end + 3
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			last = c
		}
	}
	return last == ';'
}

// fileHistory is the shell's line history, appended to a file so that
// the next session recalls it.
type fileHistory struct {
	lines []string // oldest first
	path  string
}

const historyMax = 1000

func historyPath() string {
	if p := os.Getenv("ASOFSQL_HISTORY"); p != "" {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".asofsql_history")
}

func loadHistory() *fileHistory {
	h := &fileHistory{path: historyPath()}
	if h.path == "" {
		return h
	}
	if f, err := os.Open(h.path); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if sc.Text() != "" {
				h.lines = append(h.lines, sc.Text())
			}
		}
		f.Close()
	}
	if len(h.lines) > historyMax {
		h.lines = h.lines[len(h.lines)-historyMax:]
	}
	return h
}

func (h *fileHistory) Add(entry string) {
	if strings.TrimSpace(entry) == "" || (len(h.lines) > 0 && h.lines[len(h.lines)-1] == entry) {
		return
	}
	h.lines = append(h.lines, entry)
	if len(h.lines) > historyMax {
		h.lines = h.lines[1:]
	}
	if h.path == "" {
		return
	}
	// History is a convenience: a file that cannot be written is ignored.
	if f, err := os.OpenFile(h.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		fmt.Fprintln(f, strings.ReplaceAll(entry, "\n", " "))
		f.Close()
	}
}

func (h *fileHistory) Len() int { return len(h.lines) }

func (h *fileHistory) At(i int) string { return h.lines[len(h.lines)-1-i] }
