package flightsql_test

import (
	"log/slog"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/flightsql"
)

func TestSmoke(t *testing.T) {
	e := newEnv(t, flightsql.Config{Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	c := e.client(t)
	exec(t, c, `CREATE TABLE q (ts BIGINT, sym TEXT, bid DOUBLE PRECISION) ORDER BY (ts)`)
	require.EqualValues(t, 3, exec(t, c, `INSERT INTO q VALUES (1,'a',1.5),(2,'b',2.5),(3,'a',3.5)`))
	rows := query(t, c, `SELECT ts, sym, bid FROM q ORDER BY ts`)
	require.Equal(t, [][]string{{"1", "a", "1.5"}, {"2", "b", "2.5"}, {"3", "a", "3.5"}}, rows)
}
