package sqllogic

import (
	"context"
	"crypto/md5"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Failure is one record whose outcome differed from the file.
type Failure struct {
	File string
	Line int
	SQL  string
	Msg  string // what went wrong, with a diff for results
}

func (f Failure) String() string {
	return fmt.Sprintf("%s:%d: %s\n    %s", f.File, f.Line, f.Msg, strings.ReplaceAll(f.SQL, "\n", "\n    "))
}

// Update is a query's actual result, in the file's notation, for -update.
type Update struct {
	Rec   *Record
	Lines []string
}

// Result is the outcome of running one file.
type Result struct {
	Passed, Failed, Skipped int
	Failures                []Failure
	Updates                 []Update
}

// Runner runs parsed files against one Conn.
type Runner struct {
	// Mode names the front door ("embedded", "wire", "postgres"): skipif
	// and onlyif compare against it and against Aliases.
	Mode string
	// Aliases are further names the run answers to in skipif/onlyif
	// ("asofsql" for both of the engine's front doors).
	Aliases []string
	// Caps are the capabilities "require" accepts. Without CapCopyStdin
	// the copy-in and copy-out records are skipped.
	Caps map[string]bool
	// HashThreshold: results of more values than this are written as
	// "N values hashing to H" by -update (expected hashes are always
	// compared as hashes).
	HashThreshold int
}

// CapCopyStdin is the capability of front doors with COPY ... FROM STDIN
// and TO STDOUT streams (all but Flight SQL).
const CapCopyStdin = "copy-stdin"

// Run executes records on c, in order, stopping at halt.
func (r *Runner) Run(ctx context.Context, file string, recs []*Record, c Conn) Result {
	var res Result
	r.run(ctx, file, recs, c, nil, &res)
	return res
}

func (r *Runner) run(ctx context.Context, file string, recs []*Record, c Conn, vars map[string]string, res *Result) bool {
	for _, rec := range recs {
		if slices.ContainsFunc(rec.SkipIf, r.is) || (len(rec.OnlyIf) > 0 && !slices.ContainsFunc(rec.OnlyIf, r.is)) {
			res.Skipped++
			continue
		}
		switch rec.Kind {
		case Halt:
			return false
		case Require:
			if !r.Caps[rec.Arg] {
				res.Skipped++
				return false
			}
		case Loop:
			for v := rec.From; v < rec.To; v++ {
				inner := map[string]string{}
				for k, x := range vars {
					inner[k] = x
				}
				inner[rec.LoopVar] = strconv.Itoa(v)
				if !r.run(ctx, file, rec.Body, c, inner, res) {
					return false
				}
			}
		case Statement, Query, CopyIn, CopyOut:
			if (rec.Kind == CopyIn || rec.Kind == CopyOut) && !r.Caps[CapCopyStdin] {
				res.Skipped++
				continue
			}
			msg, upd := r.one(ctx, rec, expand(rec.SQL, vars), c)
			if msg == "" {
				res.Passed++
			} else {
				res.Failed++
				res.Failures = append(res.Failures, Failure{File: file, Line: rec.Line, SQL: expand(rec.SQL, vars), Msg: msg})
			}
			// inside a loop the SQL is generated, so there is no one
			// place in the file to write a result back to
			if upd != nil && vars == nil {
				res.Updates = append(res.Updates, Update{Rec: rec, Lines: upd})
			}
		}
	}
	return true
}

// is reports whether the run answers to a skipif/onlyif name.
func (r *Runner) is(name string) bool { return name == r.Mode || slices.Contains(r.Aliases, name) }

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expand replaces ${var} by the loop variable's value.
func expand(sql string, vars map[string]string) string {
	if len(vars) == 0 {
		return sql
	}
	return varRef.ReplaceAllStringFunc(sql, func(m string) string {
		if v, ok := vars[m[2:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// one runs a record and returns "" on success or what went wrong; for a
// query that ran, also its actual result lines (for -update) when they
// differ from the file.
func (r *Runner) one(ctx context.Context, rec *Record, sql string, c Conn) (string, []string) {
	switch rec.Kind {
	case CopyOut:
		out, err := c.CopyOut(ctx, sql)
		if err != nil {
			return "COPY TO STDOUT failed: " + ErrorText(err), nil
		}
		got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if out == "" {
			got = nil
		}
		if !slices.Equal(got, rec.Expected) {
			return "COPY output differs (- want, + got):\n" + Diff(rec.Expected, got), got
		}
		return "", nil
	case Statement, CopyIn:
		var err error
		var tag string
		if rec.Kind == CopyIn {
			data := ""
			if len(rec.Expected) > 0 {
				data = strings.Join(rec.Expected, "\n") + "\n"
			}
			err = c.CopyIn(ctx, sql, strings.NewReader(data))
		} else {
			tag, err = c.Exec(ctx, sql)
		}
		switch {
		case err == nil && rec.WantErr:
			return "statement succeeded, want an error", nil
		case err != nil && !rec.WantErr:
			return "statement failed: " + ErrorText(err), nil
		case err != nil && rec.ErrRegex != nil && !rec.ErrRegex.MatchString(ErrorText(err)):
			return fmt.Sprintf("error %q does not match %q", ErrorText(err), rec.ErrRegex), nil
		case err == nil && rec.Tag != "" && tag != "" && tag != rec.Tag:
			return fmt.Sprintf("command tag %q, want %q", tag, rec.Tag), nil
		}
		return "", nil
	}
	rows, err := c.Query(ctx, sql)
	if err != nil {
		return "query failed: " + ErrorText(err), nil
	}
	for _, row := range rows {
		if len(row) != len(rec.Types) {
			return fmt.Sprintf("query returned %d columns, the record declares %d (%s)", len(row), len(rec.Types), rec.Types), nil
		}
	}
	vals := format(rows, rec.Types)
	got := Lines(vals, rec.Sort)
	want := rec.Expected
	if h, ok := parseHash(want); ok {
		gotHash := hashLine(Values(vals, rec.Sort))
		if gotHash != h {
			return fmt.Sprintf("result differs: want %q, got %q\n%s", h, gotHash, Diff(nil, got)), r.written(vals, rec.Sort)
		}
		return "", nil
	}
	if rec.Sort == RowSort {
		want = slices.Clone(want)
		slices.Sort(want)
	} else if rec.Sort == ValueSort {
		want = splitValues(want)
		slices.Sort(want)
		got = Values(vals, ValueSort)
	}
	if !slices.Equal(got, want) {
		return "result differs (- want, + got):\n" + Diff(want, got), r.written(vals, rec.Sort)
	}
	return "", nil
}

// written is a result as -update writes it: rows (sorted as the record
// says), or a hash line past HashThreshold values.
func (r *Runner) written(vals [][]string, s Sort) []string {
	n := 0
	for _, row := range vals {
		n += len(row)
	}
	if r.HashThreshold > 0 && n > r.HashThreshold {
		return []string{hashLine(Values(vals, s))}
	}
	if s == ValueSort {
		return Values(vals, s)
	}
	return Lines(vals, s)
}

// format renders each value as the file writes it: Postgres text output,
// "NULL" for NULL, "(empty)" for the empty string, and for R columns
// numbers with three decimals (so float digits never decide a test).
func format(rows [][]*string, types string) [][]string {
	out := make([][]string, len(rows))
	for i, row := range rows {
		out[i] = make([]string, len(row))
		for j, v := range row {
			switch {
			case v == nil:
				out[i][j] = "NULL"
			case *v == "":
				out[i][j] = "(empty)"
			case types[j] == 'R':
				if f, err := strconv.ParseFloat(*v, 64); err == nil {
					out[i][j] = strconv.FormatFloat(f, 'f', 3, 64)
				} else {
					out[i][j] = *v // NaN, Infinity: as written
				}
			default:
				out[i][j] = *v
			}
		}
	}
	return out
}

// Lines joins each row's values with tabs; RowSort sorts the lines.
func Lines(vals [][]string, s Sort) []string {
	out := make([]string, len(vals))
	for i, row := range vals {
		out[i] = strings.Join(row, "\t")
	}
	if s == RowSort {
		slices.Sort(out)
	}
	return out
}

// Values lists every value row by row (sorted rows for RowSort, sorted
// values for ValueSort): what the hash covers.
func Values(vals [][]string, s Sort) []string {
	rows := vals
	if s == RowSort {
		rows = slices.Clone(vals)
		slices.SortFunc(rows, func(a, b []string) int { return strings.Compare(strings.Join(a, "\t"), strings.Join(b, "\t")) })
	}
	var out []string
	for _, row := range rows {
		out = append(out, row...)
	}
	if s == ValueSort {
		slices.Sort(out)
	}
	return out
}

func splitValues(lines []string) []string {
	var out []string
	for _, l := range lines {
		out = append(out, strings.Split(l, "\t")...)
	}
	return out
}

var hashRe = regexp.MustCompile(`^(\d+) values hashing to ([0-9a-f]{32})$`)

func parseHash(lines []string) (string, bool) {
	if len(lines) == 1 && hashRe.MatchString(lines[0]) {
		return lines[0], true
	}
	return "", false
}

// hashLine is sqllogictest's hash: md5 of every value followed by a
// newline, in result order.
func hashLine(values []string) string {
	h := md5.New()
	for _, v := range values {
		h.Write([]byte(v))
		h.Write([]byte{'\n'})
	}
	return fmt.Sprintf("%d values hashing to %x", len(values), h.Sum(nil))
}

// Diff is a line diff (longest common subsequence): "-" lines only in
// want, "+" lines only in got, "  " common ones.
func Diff(want, got []string) string {
	n, m := len(want), len(got)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if want[i] == got[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var b strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && want[i] == got[j]:
			b.WriteString("      " + want[i] + "\n")
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			b.WriteString("    - " + want[i] + "\n")
			i++
		default:
			b.WriteString("    + " + got[j] + "\n")
			j++
		}
	}
	return b.String()
}

// Rewrite returns the file's lines with each updated query's expected
// result replaced (or added after its SQL when it had no "----").
func Rewrite(lines []string, ups []Update) []string {
	slices.SortFunc(ups, func(a, b Update) int { return b.Rec.Line - a.Rec.Line }) // from the end, so indexes hold
	out := slices.Clone(lines)
	for _, u := range ups {
		if u.Rec.HasResult {
			out = slices.Concat(out[:u.Rec.ResultLine-1], u.Lines, out[u.Rec.ResultEnd-1:])
		} else {
			at := u.Rec.SQLEnd - 1
			out = slices.Concat(out[:at], []string{"----"}, u.Lines, out[at:])
		}
	}
	return out
}
