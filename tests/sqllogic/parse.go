package sqllogic

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/asofsql/asofsql/sqlerr"
)

// Kind is the sort of a record.
type Kind int

// The record kinds of the dialect.
const (
	Statement Kind = iota // statement ok [TAG] | statement error <regex>
	Query                 // query <types> [sort] ... ---- rows
	Halt                  // halt: stop the file here
	Require               // require <capability>: skip the file without it
	Loop                  // loop <var> <start> <end> ... endloop
	// CopyIn runs COPY ... FROM STDIN with the lines after "----" as the
	// data stream: copy-in ok | copy-in error <regex>.
	CopyIn
	// CopyOut runs COPY ... TO STDOUT and compares the stream's lines
	// with those after "----".
	CopyOut
)

// Sort is how a query's rows are ordered before comparison.
type Sort int

// Sort modes, as in sqllogictest.
const (
	NoSort Sort = iota
	RowSort
	ValueSort
)

// Record is one test record of a file.
type Record struct {
	Kind Kind
	Line int // 1-based line of the record's first line (conditions included)
	// SkipIf and OnlyIf are the modes named by skipif/onlyif lines before
	// the record.
	SkipIf, OnlyIf []string
	SQL            string
	// Tag is the command tag "statement ok TAG" expects ("" for any).
	Tag string
	// WantErr is set for "statement error": the error must match
	// ErrRegex (nil: any error).
	WantErr  bool
	ErrRegex *regexp.Regexp
	Types    string // query column types, one letter each
	Sort     Sort
	// Expected are the result lines after "----"; ResultLine is the line
	// of the first of them (the "----" line + 1), ResultEnd the line
	// after the last, so -update can replace them.
	Expected   []string
	HasResult  bool
	ResultLine int
	ResultEnd  int
	SQLEnd     int       // 1-based line after the SQL text
	Arg        string    // Require's capability
	LoopVar    string    // Loop
	From, To   int       // Loop: From <= var < To
	Body       []*Record // Loop
}

// Parse reads a file in the sqllogictest dialect. Errors name the file
// and line (SQLSTATE 42601).
func Parse(name string, r io.Reader) ([]*Record, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var lines []string
	for sc.Scan() {
		lines = append(lines, strings.TrimRight(sc.Text(), "\r"))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &fileParser{name: name, lines: lines}
	recs, end, err := p.block(0, false)
	if err != nil {
		return nil, err
	}
	if end < len(lines) {
		return nil, p.errf(end, "endloop without loop")
	}
	return recs, nil
}

type fileParser struct {
	name  string
	lines []string
}

func (p *fileParser) errf(i int, format string, args ...any) error {
	return sqlerr.New(sqlerr.SyntaxError, "%s:%d: %s", p.name, i+1, fmt.Sprintf(format, args...))
}

// block parses records from line i until the end of the file or, when
// inLoop, an "endloop" line (whose index it returns).
func (p *fileParser) block(i int, inLoop bool) ([]*Record, int, error) {
	var recs []*Record
	var skipIf, onlyIf []string
	start := -1
	for i < len(p.lines) {
		line := strings.TrimSpace(p.lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			i++
			continue
		}
		f := strings.Fields(line)
		if start < 0 {
			start = i
		}
		switch f[0] {
		case "skipif", "onlyif":
			if len(f) < 2 {
				return nil, 0, p.errf(i, "%s needs a mode", f[0])
			}
			if f[0] == "skipif" {
				skipIf = append(skipIf, f[1])
			} else {
				onlyIf = append(onlyIf, f[1])
			}
			i++
			continue
		case "endloop":
			if !inLoop {
				return nil, 0, p.errf(i, "endloop without loop")
			}
			if len(skipIf)+len(onlyIf) > 0 {
				return nil, 0, p.errf(i, "skipif/onlyif before endloop")
			}
			return recs, i, nil
		}
		rec := &Record{Line: start + 1, SkipIf: skipIf, OnlyIf: onlyIf}
		skipIf, onlyIf, start = nil, nil, -1
		var err error
		switch f[0] {
		case "halt":
			rec.Kind = Halt
			i++
		case "hash-threshold":
			i++ // accepted for compatibility: results always hash when written hashed
			continue
		case "require":
			if len(f) != 2 {
				return nil, 0, p.errf(i, "require needs one capability")
			}
			rec.Kind, rec.Arg = Require, f[1]
			i++
		case "loop":
			if len(f) != 4 {
				return nil, 0, p.errf(i, "loop needs: loop <var> <start> <end>")
			}
			rec.Kind, rec.LoopVar = Loop, f[1]
			if rec.From, err = strconv.Atoi(f[2]); err == nil {
				rec.To, err = strconv.Atoi(f[3])
			}
			if err != nil {
				return nil, 0, p.errf(i, "loop bounds must be integers: %q", line)
			}
			var end int
			rec.Body, end, err = p.block(i+1, true)
			if err != nil {
				return nil, 0, err
			}
			if end >= len(p.lines) {
				return nil, 0, p.errf(i, "loop without endloop")
			}
			i = end + 1
		case "copy-out":
			rec.Kind = CopyOut
			if len(f) != 1 {
				return nil, 0, p.errf(i, "copy-out takes no arguments")
			}
			i, err = p.sql(rec, i+1, true)
		case "statement", "copy-in":
			rec.Kind = Statement
			if f[0] == "copy-in" {
				rec.Kind = CopyIn
			}
			switch {
			case len(f) >= 2 && f[1] == "ok":
				if rec.Kind == Statement {
					rec.Tag = strings.TrimSpace(strings.TrimPrefix(line[len(f[0]):], " ok"))
				} else if len(f) > 2 {
					return nil, 0, p.errf(i, "copy-in ok takes no tag")
				}
			case len(f) >= 2 && f[1] == "error":
				rec.WantErr = true
				if re := strings.TrimSpace(strings.TrimPrefix(line[len(f[0]):], " error")); re != "" {
					if rec.ErrRegex, err = regexp.Compile(re); err != nil {
						return nil, 0, p.errf(i, "bad error regex: %v", err)
					}
				}
			default:
				return nil, 0, p.errf(i, "%s must be followed by ok or error: %q", f[0], line)
			}
			i, err = p.sql(rec, i+1, rec.Kind == CopyIn)
		case "query":
			rec.Kind = Query
			if len(f) < 2 {
				return nil, 0, p.errf(i, "query needs column types")
			}
			rec.Types = f[1]
			for _, c := range rec.Types {
				if !strings.ContainsRune("ITRB", c) {
					return nil, 0, p.errf(i, "unknown column type %q (I, T, R, B)", c)
				}
			}
			if len(f) >= 3 {
				switch f[2] {
				case "nosort":
				case "rowsort":
					rec.Sort = RowSort
				case "valuesort":
					rec.Sort = ValueSort
				default:
					return nil, 0, p.errf(i, "unknown sort mode %q", f[2])
				}
			}
			i, err = p.sql(rec, i+1, true)
		default:
			return nil, 0, p.errf(i, "unknown record %q", f[0])
		}
		if err != nil {
			return nil, 0, err
		}
		recs = append(recs, rec)
	}
	if inLoop {
		return recs, len(p.lines), nil
	}
	if len(skipIf)+len(onlyIf) > 0 {
		return nil, 0, p.errf(len(p.lines)-1, "skipif/onlyif at the end of the file")
	}
	return recs, len(p.lines), nil
}

// sql reads the SQL text from line i to a blank line (or "----" for a
// query, followed by the expected rows up to a blank line).
func (p *fileParser) sql(rec *Record, i int, query bool) (int, error) {
	var sql []string
	// "endloop" also ends a record, so a loop body needs no blank line
	// before it.
	for i < len(p.lines) && strings.TrimSpace(p.lines[i]) != "" && strings.TrimSpace(p.lines[i]) != "endloop" {
		if query && p.lines[i] == "----" {
			break
		}
		sql = append(sql, p.lines[i])
		i++
	}
	if len(sql) == 0 {
		return 0, p.errf(i, "record without SQL")
	}
	rec.SQL = strings.Join(sql, "\n")
	rec.SQLEnd = i + 1
	if i < len(p.lines) && p.lines[i] == "----" {
		rec.HasResult = true
		i++
		rec.ResultLine = i + 1
		for i < len(p.lines) && p.lines[i] != "" && p.lines[i] != "endloop" {
			rec.Expected = append(rec.Expected, p.lines[i])
			i++
		}
		rec.ResultEnd = i + 1
	}
	return i, nil
}
