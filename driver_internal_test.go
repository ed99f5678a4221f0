package asofsql

import (
	"testing"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

func TestPlaceholders(t *testing.T) {
	cases := []struct{ in, want, code string }{
		{in: `SELECT 1`, want: `SELECT 1`},
		{in: `SELECT ? + ?`, want: `SELECT $1 + $2`},
		{in: `SELECT '?', "a?b", ? -- what?` + "\n" + `, ?`, want: `SELECT '?', "a?b", $1 -- what?` + "\n" + `, $2`},
		{in: `SELECT 'it''s ?', ?`, want: `SELECT 'it''s ?', $1`},
		{in: `SELECT E'\'?', ?`, want: `SELECT E'\'?', $1`},
		{in: `SELECT /* ? /* ? */ ? */ ?`, want: `SELECT /* ? /* ? */ ? */ $1`},
		{in: `SELECT $q$ ? $q$, $$?$$, ?`, want: `SELECT $q$ ? $q$, $$?$$, $1`},
		{in: `SELECT $1, ?`, code: sqlerr.SyntaxError},
		{in: `SELECT $1, '?'`, want: `SELECT $1, '?'`},
	}
	for _, c := range cases {
		got, err := placeholders(c.in)
		if c.code != "" {
			require.Equal(t, c.code, sqlerr.Code(err), c.in)
			continue
		}
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, got, c.in)
	}
}
