package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/term"

	"github.com/asofsql/asofsql"
)

func TestComplete(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"SELECT 1;", true},
		{"SELECT 1", false},
		{"SELECT 1;  \n", true},
		{"SELECT ';'", false},
		{"SELECT 'it''s';", true},
		{"SELECT 'open;", false},
		{`SELECT "a;b"`, false},
		{"SELECT 1 -- done;", false},
		{"SELECT 1; -- trailing comment", true},
		{"SELECT /* ; */ 1", false},
		{"SELECT 1 /* open ;", false},
		{"SELECT 1 /* c */;", true},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, complete(tc.text), "%q", tc.text)
	}
}

// TestShell drives the shell through a real term.Terminal (without raw
// mode): multi-line statements, an error that does not end the session,
// help, and the history file.
func TestShell(t *testing.T) {
	hist := filepath.Join(t.TempDir(), "history")
	require.NoError(t, os.WriteFile(hist, []byte("SELECT 'from last time';\n"), 0o600))
	t.Setenv("ASOFSQL_HISTORY", hist)

	db, err := asofsql.Open(":memory:")
	require.NoError(t, err)
	defer db.Close()
	s := db.Session()
	defer s.Close()
	in := strings.Join([]string{
		"CREATE TABLE t (a INT) ORDER BY (a);",
		"INSERT INTO t VALUES (2), (1);",
		"SELECT a",
		"  FROM t;",
		"SELECT nope FROM t;",
		`\?`,
		"\x1b[A", // up arrow: recalls the previous line (\?) and runs it again
		`\q`,
		"SELECT 'not reached';",
	}, "\r") + "\r"
	var out bytes.Buffer
	tm := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{strings.NewReader(in), &out}, "")
	r := &runner{s: s, stdin: strings.NewReader(""), format: formatTable}
	require.NoError(t, runShell(context.Background(), r, tm, nil, tm))
	got := strings.ReplaceAll(out.String(), "\r\n", "\n")
	require.Contains(t, got, "INSERT 0 2\n")
	require.Contains(t, got, "asofsql-> ") // the continuation prompt
	require.Contains(t, got, " a \n---\n 1\n 2\n(2 rows)\n")
	require.Contains(t, got, "ERROR:  ")
	require.Contains(t, got, "nope")
	require.Equal(t, 2, strings.Count(got, `\q        quit`), "help printed twice (typed, then recalled)")
	require.NotContains(t, got, "not reached")

	b, err := os.ReadFile(hist)
	require.NoError(t, err)
	require.Equal(t, "SELECT 'from last time';\nCREATE TABLE t (a INT) ORDER BY (a);\nINSERT INTO t VALUES (2), (1);\n"+
		"SELECT a\n  FROM t;\nSELECT nope FROM t;\n\\?\n\\q\n", string(b))
}

func TestShellEndsAtEOF(t *testing.T) {
	t.Setenv("ASOFSQL_HISTORY", filepath.Join(t.TempDir(), "h"))
	db, err := asofsql.Open(":memory:")
	require.NoError(t, err)
	defer db.Close()
	var out bytes.Buffer
	tm := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{strings.NewReader("SELECT 1 AS x;\r"), &out}, "")
	r := &runner{s: db.Session(), stdin: strings.NewReader(""), format: formatCSV}
	require.NoError(t, runShell(context.Background(), r, tm, nil, tm))
	require.Contains(t, strings.ReplaceAll(out.String(), "\r\n", "\n"), "x\n1\n")
}
