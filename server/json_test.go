package server_test

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestJSONOverPgx sends and reads json and jsonb through pgx, which uses
// the binary format for jsonb (a version byte 1, then the text) in the
// extended protocol and checks the OIDs (114, 3802) it is told.
func TestJSONOverPgx(t *testing.T) {
	addr := start(t)
	for name, mode := range map[string]pgx.QueryExecMode{
		"cache statement": pgx.QueryExecModeCacheStatement,
		"simple":          pgx.QueryExecModeSimpleProtocol,
	} {
		t.Run(name, func(t *testing.T) {
			c := dial(t, addr, mode)
			var j, jb map[string]any
			var raw string
			require.NoError(t, c.QueryRow(ctx(t), `SELECT '{"b": [1, 2], "a": "x"}'::json, $1::jsonb, ($1::jsonb ->> 'b')`,
				`{"b": "y", "a": 1}`).Scan(&j, &jb, &raw))
			require.Equal(t, map[string]any{"a": "x", "b": []any{1.0, 2.0}}, j)
			require.Equal(t, map[string]any{"a": 1.0, "b": "y"}, jb)
			require.Equal(t, "y", raw)
			rows, err := c.Query(ctx(t), `SELECT '{"z": 1, "y": 2}'::jsonb, '[1]'::json`)
			require.NoError(t, err)
			fds := rows.FieldDescriptions()
			require.Equal(t, uint32(3802), fds[0].DataTypeOID)
			require.Equal(t, uint32(114), fds[1].DataTypeOID)
			rows.Close()
			var text string
			require.NoError(t, c.QueryRow(ctx(t), `SELECT jsonb_build_object('z', 1, 'y', 2)::text`).Scan(&text))
			require.Equal(t, `{"y": 2, "z": 1}`, text)
		})
	}
}
