package asofsql_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

func TestCopyStdio(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	ctx := context.Background()
	s := db.Session()
	defer s.Close()
	_, err := s.Exec(ctx, `CREATE TABLE c (ts BIGINT, name TEXT, v DOUBLE PRECISION) ORDER BY (ts)`)
	require.NoError(t, err)
	res, err := s.CopyFrom(ctx, `COPY c FROM STDIN`, strings.NewReader("3\tc\\tx\t1.5\n1\ta\t\\N\n2\t\t2\n"))
	require.NoError(t, err)
	require.Equal(t, "COPY 3", res.Tag)
	require.Equal(t, int64(3), res.RowsAffected)
	res, err = s.CopyFrom(ctx, `COPY c (ts, name) FROM STDIN WITH (FORMAT csv, HEADER true)`, strings.NewReader("ts,name\n4,\"d,\"\"q\"\"\"\n"))
	require.NoError(t, err)
	require.Equal(t, "COPY 1", res.Tag)

	cases := []struct{ sql, want string }{
		{`COPY c TO STDOUT`, "1\ta\t\\N\n2\t\t2\n3\tc\\tx\t1.5\n4\td,\"q\"\t\\N\n"},
		{`COPY c (name, ts) TO STDOUT WITH (FORMAT csv, HEADER true)`, "name,ts\na,1\n\"\",2\nc\tx,3\n\"d,\"\"q\"\"\",4\n"},
		{`COPY (SELECT ts * 10 AS x FROM c WHERE ts > 2) TO STDOUT WITH (FORMAT csv, HEADER)`, "x\n30\n40\n"},
		{`COPY c (ts) TO STDOUT WITH (FORMAT text, DELIMITER '|', NULL 'nil')`, "1\n2\n3\n4\n"},
		{`COPY c (v, ts) TO STDOUT WITH (DELIMITER '|', NULL 'nil')`, "nil|1\n2|2\n1.5|3\nnil|4\n"},
	}
	for _, c := range cases {
		var out bytes.Buffer
		_, err := s.CopyTo(ctx, c.sql, &out)
		require.NoError(t, err, c.sql)
		require.Equal(t, c.want, out.String(), c.sql)
	}
	// Binary output round-trips through binary input.
	var bin bytes.Buffer
	res, err = s.CopyTo(ctx, `COPY c TO STDOUT WITH (FORMAT binary)`, &bin)
	require.NoError(t, err)
	require.Equal(t, "COPY 4", res.Tag)
	require.True(t, bytes.HasPrefix(bin.Bytes(), []byte("PGCOPY\n\xff\r\n\x00")))
	_, err = s.Exec(ctx, `CREATE TABLE c2 (ts BIGINT, name TEXT, v DOUBLE PRECISION)`)
	require.NoError(t, err)
	_, err = s.CopyFrom(ctx, `COPY c2 FROM STDIN WITH (FORMAT binary)`, &bin)
	require.NoError(t, err)
	var a, b bytes.Buffer
	_, err = s.CopyTo(ctx, `COPY c TO STDOUT`, &a)
	require.NoError(t, err)
	_, err = s.CopyTo(ctx, `COPY c2 TO STDOUT`, &b)
	require.NoError(t, err)
	require.Equal(t, a.String(), b.String())
	// Control characters are written as Postgres' C-like escapes, and the
	// delimiter and backslash are escaped, so text output reads back.
	const ctl = "7\tb\\bf\\fv\\v|x\\\\\t\\N\n"
	_, err = s.CopyFrom(ctx, `COPY c2 FROM STDIN`, strings.NewReader(ctl))
	require.NoError(t, err)
	var esc bytes.Buffer
	_, err = s.CopyTo(ctx, `COPY (SELECT ts, name FROM c2 WHERE ts = 7) TO STDOUT WITH (DELIMITER '|')`, &esc)
	require.NoError(t, err)
	require.Equal(t, "7|b\\bf\\fv\\v\\|x\\\\\n", esc.String())

	// Bad data names the line; nothing of the statement stays.
	_, err = s.CopyFrom(ctx, `COPY c FROM STDIN`, strings.NewReader("5\te\t1\nsix\tf\t2\n"))
	require.Equal(t, sqlerr.InvalidTextRepresentation, sqlerr.Code(err))
	rows, err := sessRows(t, s, `SELECT count(*) FROM c`)
	require.NoError(t, err)
	require.Equal(t, []string{"4"}, rows)
	// STDIN/STDOUT without a stream.
	_, err = s.Exec(ctx, `COPY c FROM STDIN`)
	require.Equal(t, sqlerr.FeatureNotSupported, sqlerr.Code(err))
	_, err = s.Exec(ctx, `COPY c TO STDOUT`)
	require.Equal(t, sqlerr.FeatureNotSupported, sqlerr.Code(err))
	// COPY in a block commits with it.
	_, err = s.Exec(ctx, `BEGIN`)
	require.NoError(t, err)
	_, err = s.CopyFrom(ctx, `COPY c FROM STDIN WITH (FORMAT csv)`, strings.NewReader("9,z,9\n"))
	require.NoError(t, err)
	rows, err = sessRows(t, db.Session(), `SELECT count(*) FROM c`)
	require.NoError(t, err)
	require.Equal(t, []string{"4"}, rows)
	_, err = s.Exec(ctx, `COMMIT`)
	require.NoError(t, err)
	rows, err = sessRows(t, s, `SELECT count(*) FROM c`)
	require.NoError(t, err)
	require.Equal(t, []string{"5"}, rows)
}

func TestCopyFiles(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "files")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "secret.csv"), []byte("1,x,1\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "in.csv"), []byte("2,b,2.5\n1,a,1.5\n"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(root, "secret.csv"), filepath.Join(dir, "link.csv")))
	require.NoError(t, os.Symlink(root, filepath.Join(dir, "up")))
	ctx := context.Background()

	// Without WithFileDir every file is refused.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db, err := asofsql.Open(":memory:", asofsql.WithAllocator(mem))
	require.NoError(t, err)
	_, err = db.Exec(ctx, `CREATE TABLE c (ts BIGINT, name TEXT, v DOUBLE PRECISION) ORDER BY (ts)`)
	require.NoError(t, err)
	_, err = db.Exec(ctx, `COPY c FROM '`+filepath.Join(dir, "in.csv")+`'`)
	require.Equal(t, sqlerr.InsufficientPrivilege, sqlerr.Code(err))
	require.Contains(t, err.Error(), "not allowed")
	_, err = db.Exec(ctx, `COPY c TO 'out.csv'`)
	require.Equal(t, sqlerr.InsufficientPrivilege, sqlerr.Code(err))
	require.NoError(t, db.Close())

	db, err = asofsql.Open(":memory:", asofsql.WithAllocator(mem), asofsql.WithFileDir(dir))
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(ctx, `CREATE TABLE c (ts BIGINT, name TEXT, v DOUBLE PRECISION) ORDER BY (ts)`)
	require.NoError(t, err)
	for _, bad := range []string{
		`COPY c FROM '../secret.csv'`,
		`COPY c FROM '` + filepath.Join(root, "secret.csv") + `'`,
		`COPY c FROM 'link.csv'`,
		`COPY c FROM 'up/secret.csv'`,
		`COPY c TO '../out.csv'`,
		`COPY c TO 'up/out.csv'`,
		`COPY c TO 'link.csv'`,
	} {
		_, err := db.Exec(ctx, bad)
		require.Equal(t, sqlerr.InsufficientPrivilege, sqlerr.Code(err), "%s: %v", bad, err)
		require.Contains(t, err.Error(), "outside the allowed directory", bad)
	}
	_, err = os.Stat(filepath.Join(root, "out.csv"))
	require.True(t, os.IsNotExist(err))
	secret, err := os.ReadFile(filepath.Join(root, "secret.csv"))
	require.NoError(t, err)
	require.Equal(t, "1,x,1\n", string(secret), "a symlink target outside is never written")

	// The format is text unless FORMAT says otherwise, as in Postgres.
	_, err = db.Exec(ctx, `COPY c FROM 'in.csv'`)
	require.Equal(t, sqlerr.BadCopyFileFormat, sqlerr.Code(err), "%v", err)
	res, err := db.Exec(ctx, `COPY c FROM 'in.csv' WITH (FORMAT csv)`)
	require.NoError(t, err)
	require.Equal(t, "COPY 2", res.Tag)
	res, err = db.Exec(ctx, `COPY c FROM '`+filepath.Join(dir, "in.csv")+`' WITH (FORMAT csv)`)
	require.NoError(t, err)
	require.Equal(t, "COPY 2", res.Tag)
	res, err = db.Exec(ctx, `COPY (SELECT ts, name FROM c WHERE ts > 1) TO 'out.txt'`)
	require.NoError(t, err)
	require.Equal(t, "COPY 2", res.Tag)
	out, err := os.ReadFile(filepath.Join(dir, "out.txt"))
	require.NoError(t, err)
	require.Equal(t, "2\tb\n2\tb\n", string(out))
	// A second COPY TO overwrites, and the file reads back.
	_, err = db.Exec(ctx, `COPY c TO 'out.txt'`)
	require.NoError(t, err)
	_, err = db.Exec(ctx, `CREATE TABLE back (ts BIGINT, name TEXT, v DOUBLE PRECISION); COPY back FROM 'out.txt'`)
	require.NoError(t, err)
	r, err := db.Query(ctx, `SELECT count(*) FROM back`)
	require.NoError(t, err)
	require.True(t, r.Next())
	require.Equal(t, "4", r.RecordBatch().Column(0).ValueStr(0))
	r.Release()
	_, err = db.Exec(ctx, `COPY c FROM 'missing.csv'`)
	require.Equal(t, sqlerr.IOError, sqlerr.Code(err))
}

func TestCopyPrepared(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	ctx := context.Background()
	s := db.Session()
	defer s.Close()
	cases := []struct {
		sql  string
		info asofsql.CopyInfo
		ok   bool
	}{
		{`COPY trades FROM STDIN`, asofsql.CopyInfo{From: true, Columns: 3}, true},
		{`COPY trades (ts, sym) FROM STDIN WITH (FORMAT binary)`, asofsql.CopyInfo{From: true, Binary: true, Columns: 2}, true},
		{`COPY (SELECT ts FROM trades) TO STDOUT WITH (FORMAT csv)`, asofsql.CopyInfo{Columns: 1}, true},
		{`COPY trades TO STDOUT`, asofsql.CopyInfo{Columns: 3}, true},
		{`SELECT 1`, asofsql.CopyInfo{}, false},
	}
	for _, c := range cases {
		st, err := s.Prepare(ctx, c.sql, nil)
		require.NoError(t, err, c.sql)
		info, ok := st.Copy()
		require.Equal(t, c.ok, ok, c.sql)
		require.Equal(t, c.info, info, c.sql)
	}
	in, err := s.Prepare(ctx, `COPY trades (ts, sym) FROM STDIN WITH (FORMAT csv)`, nil)
	require.NoError(t, err)
	cur, err := in.ExecuteCopy(ctx, strings.NewReader("100,z\n101,z\n"), nil)
	require.NoError(t, err)
	require.Equal(t, "COPY 2", cur.Tag())
	require.NoError(t, cur.Close())
	out, err := s.Prepare(ctx, `COPY (SELECT ts, qty FROM trades WHERE sym = $1) TO STDOUT`, nil)
	require.NoError(t, err)
	var buf bytes.Buffer
	cur, err = out.ExecuteCopy(ctx, nil, &buf, "z")
	require.NoError(t, err)
	require.Equal(t, "COPY 2", cur.Tag())
	require.NoError(t, cur.Close())
	require.Equal(t, "100\t\\N\n101\t\\N\n", buf.String())
}

func TestCopyProgressAndTable(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	ctx := context.Background()
	_, err := db.Exec(ctx, `CREATE TABLE p (ts BIGINT, v TEXT) ORDER BY (ts)`)
	require.NoError(t, err)
	info, err := db.Table("p")
	require.NoError(t, err)
	require.Equal(t, []string{"ts"}, info.OrderBy)
	require.Equal(t, "v", info.Columns[1].Name)
	_, err = db.Table("nosuch")
	require.Equal(t, sqlerr.UndefinedTable, sqlerr.Code(err))

	var b strings.Builder
	for i := range 20_000 { // several batches
		b.WriteString(strings.Repeat("9", 1+i%3) + "\tx\n")
	}
	var seen []int64
	s := db.Session()
	defer s.Close()
	res, err := s.CopyFrom(asofsql.WithCopyProgress(ctx, func(rows int64) { seen = append(seen, rows) }),
		`COPY p FROM STDIN`, strings.NewReader(b.String()))
	require.NoError(t, err)
	require.Equal(t, int64(20_000), res.RowsAffected)
	require.Greater(t, len(seen), 1)
	for i := 1; i < len(seen); i++ {
		require.Greater(t, seen[i], seen[i-1])
	}
	require.Equal(t, int64(20_000), seen[len(seen)-1])
	// Without the hook nothing is called.
	n := len(seen)
	_, err = s.CopyFrom(ctx, `COPY p FROM STDIN`, strings.NewReader("1\ty\n"))
	require.NoError(t, err)
	require.Len(t, seen, n)
}
