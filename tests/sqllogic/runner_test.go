package sqllogic

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

// scripted is a Conn answering from a table of SQL → rows or error, and
// recording what it ran.
type scripted struct {
	rows map[string][][]*string
	errs map[string]error
	out  map[string]string
	tags map[string]string
	ran  []string
}

func (s *scripted) Exec(_ context.Context, sql string) (string, error) {
	s.ran = append(s.ran, sql)
	return s.tags[sql], s.errs[sql]
}

func (s *scripted) Query(_ context.Context, sql string) ([][]*string, error) {
	s.ran = append(s.ran, sql)
	return s.rows[sql], s.errs[sql]
}

func (s *scripted) CopyIn(_ context.Context, sql string, data io.Reader) error {
	b, _ := io.ReadAll(data)
	s.ran = append(s.ran, sql+" <- "+string(b))
	return s.errs[sql]
}

func (s *scripted) CopyOut(_ context.Context, sql string) (string, error) {
	s.ran = append(s.ran, sql)
	return s.out[sql], s.errs[sql]
}

func (s *scripted) Close() error { return nil }

func str(v string) *string { return &v }

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"unknown record", "frobnicate\n", `f.slt:1: unknown record "frobnicate"`},
		{"statement without ok", "statement maybe\nSELECT 1\n", "statement must be followed by ok or error"},
		{"bad type", "query X\nSELECT 1\n", `unknown column type 'X'`},
		{"bad sort", "query I sortof\nSELECT 1\n", `unknown sort mode "sortof"`},
		{"no sql", "statement ok\n\n", "f.slt:2: record without SQL"},
		{"loop open", "loop i 0 3\nstatement ok\nSELECT 1\n", "loop without endloop"},
		{"stray endloop", "endloop\n", "endloop without loop"},
		{"bad regex", "statement error (\nSELECT 1\n", "bad error regex"},
		{"dangling skipif", "statement ok\nSELECT 1\n\nskipif wire\n", "skipif/onlyif at the end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("f.slt", strings.NewReader(tc.src))
			require.Error(t, err)
			require.Equal(t, sqlerr.SyntaxError, sqlerr.Code(err))
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestRunRecords(t *testing.T) {
	src := `# comment
statement ok
CREATE TABLE t (a INT)

skipif embedded
statement ok
NOT RUN IN EMBEDDED

onlyif wire
statement ok
NOT RUN EITHER

skipif asofsql
statement ok
NOT RUN: AN ALIAS

loop i 0 3
statement ok
INSERT INTO t VALUES (${i})
endloop

statement error 22012: division
SELECT 1/0

query IT rowsort
SELECT a, b FROM t
----
2	x
1	(empty)

query R
SELECT r
----
0.333
NULL

query II valuesort
SELECT v
----
3	1
2	0

query I
SELECT many
----
3 values hashing to 2f2d6d8f50a0f7d78c9c1e7dd4bd0fb6

halt

statement ok
AFTER HALT
`
	recs, err := Parse("f.slt", strings.NewReader(src))
	require.NoError(t, err)
	c := &scripted{
		rows: map[string][][]*string{
			"SELECT a, b FROM t": {{str("1"), str("")}, {str("2"), str("x")}},
			"SELECT r":           {{str("0.33333333")}, {nil}},
			"SELECT v":           {{str("0"), str("1")}, {str("2"), str("3")}},
			"SELECT many":        {{str("a")}, {str("b")}, {str("c")}},
		},
		errs: map[string]error{"SELECT 1/0": sqlerr.New("22012", "division by zero")},
	}
	r := &Runner{Mode: "embedded", Aliases: []string{"asofsql"}}
	res := r.Run(context.Background(), "f.slt", recs, c)
	// the expected hash of a, b, c is wrong on purpose: one failure
	require.Equal(t, 8, res.Passed, "%v", res.Failures)
	require.Equal(t, 1, res.Failed)
	require.Equal(t, 3, res.Skipped)
	require.Contains(t, res.Failures[0].String(), "f.slt:43:")
	require.Contains(t, res.Failures[0].Msg, "3 values hashing to ")
	require.Equal(t, []string{"CREATE TABLE t (a INT)", "INSERT INTO t VALUES (0)", "INSERT INTO t VALUES (1)",
		"INSERT INTO t VALUES (2)", "SELECT 1/0", "SELECT a, b FROM t", "SELECT r", "SELECT v", "SELECT many"}, c.ran)
}

func TestStatementOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name, rec string
		err       error
		want      string
	}{
		{"ok fails", "statement ok\nX\n", sqlerr.New("42601", "syntax error").WithHint("%s", "fix it"), "statement failed: 42601: syntax error HINT: fix it"},
		{"error succeeds", "statement error\nX\n", nil, "statement succeeded, want an error"},
		{"error mismatch", "statement error 0A000\nX\n", sqlerr.New("42601", "bad"), `error "42601: bad" does not match "0A000"`},
		{"plain error", "statement error boom\nX\n", errors.New("boom"), ""},
		{"tag matches", "statement ok DELETE 3\nX\n", nil, ""},
		{"tag differs", "statement ok DELETE 2\nX\n", nil, `command tag "DELETE 3", want "DELETE 2"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := Parse("f.slt", strings.NewReader(tc.rec))
			require.NoError(t, err)
			res := (&Runner{Mode: "embedded"}).Run(context.Background(), "f.slt", recs, &scripted{errs: map[string]error{"X": tc.err}, tags: map[string]string{"X": "DELETE 3"}})
			if tc.want == "" {
				require.Empty(t, res.Failures)
				return
			}
			require.Len(t, res.Failures, 1)
			require.Equal(t, tc.want, res.Failures[0].Msg)
		})
	}
}

func TestQueryMismatchDiffAndRewrite(t *testing.T) {
	src := "query IT\nSELECT x\n----\n1\ta\n2\tb\n\nquery I\nSELECT y\n\nquery I\nSELECT z\n----\n1\n"
	recs, err := Parse("f.slt", strings.NewReader(src))
	require.NoError(t, err)
	c := &scripted{rows: map[string][][]*string{
		"SELECT x": {{str("1"), str("a")}, {str("3"), str("c")}},
		"SELECT y": {{str("7")}},
		"SELECT z": {{str("1")}, {str("2")}, {str("3")}, {str("4")}, {str("5")}},
	}}
	res := (&Runner{Mode: "embedded", HashThreshold: 4}).Run(context.Background(), "f.slt", recs, c)
	require.Equal(t, 3, res.Failed)
	require.Contains(t, res.Failures[0].Msg, "      1\ta\n    - 2\tb\n    + 3\tc\n")
	out := Rewrite(strings.Split(strings.TrimSuffix(src, "\n"), "\n"), res.Updates)
	require.Equal(t, "query IT\nSELECT x\n----\n1\ta\n3\tc\n\nquery I\nSELECT y\n----\n7\n\nquery I\nSELECT z\n----\n"+
		hashLine([]string{"1", "2", "3", "4", "5"}), strings.Join(out, "\n"))
	// the rewritten file passes
	recs, err = Parse("f.slt", strings.NewReader(strings.Join(out, "\n")))
	require.NoError(t, err)
	res = (&Runner{Mode: "embedded"}).Run(context.Background(), "f.slt", recs, c)
	require.Zero(t, res.Failed, "%v", res.Failures)
}

func TestHashMatchesSqllogictest(t *testing.T) {
	// md5("1\n2\n3\n") as computed by sqllogictest's md5 of newline-terminated values
	require.Equal(t, "3 values hashing to c0710d6b4f15dfa88f600b0e6b624077", hashLine([]string{"1", "2", "3"}))
}

func TestCopyRecords(t *testing.T) {
	src := "copy-in ok\nCOPY t FROM STDIN\n----\n1\ta\n2\tb\n\ncopy-in error ^22P04\nCOPY bad FROM STDIN\n----\nx\n\n" +
		"copy-out\nCOPY t TO STDOUT\n----\n1\ta\n2\tb\n\ncopy-out\nCOPY e TO STDOUT\n----\n\ncopy-out\nCOPY t2 TO STDOUT\n----\n1\n"
	recs, err := Parse("f.slt", strings.NewReader(src))
	require.NoError(t, err)
	c := &scripted{
		errs: map[string]error{"COPY bad FROM STDIN": sqlerr.New("22P04", "missing data")},
		out:  map[string]string{"COPY t TO STDOUT": "1\ta\n2\tb\n", "COPY t2 TO STDOUT": "2\n"},
	}
	res := (&Runner{Mode: "embedded", Caps: map[string]bool{CapCopyStdin: true}}).Run(context.Background(), "f.slt", recs, c)
	require.Equal(t, 4, res.Passed, "%v", res.Failures)
	require.Equal(t, 1, res.Failed)
	require.Contains(t, res.Failures[0].Msg, "    - 1\n    + 2\n")
	require.Equal(t, []string{"COPY t FROM STDIN <- 1\ta\n2\tb\n", "COPY bad FROM STDIN <- x\n", "COPY t TO STDOUT", "COPY e TO STDOUT", "COPY t2 TO STDOUT"}, c.ran)

	// A front door without COPY streams skips the records.
	c = &scripted{}
	res = (&Runner{Mode: "flight"}).Run(context.Background(), "f.slt", recs, c)
	require.Equal(t, 5, res.Skipped)
	require.Empty(t, c.ran)
}
