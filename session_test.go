package asofsql_test

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// sessRows runs one statement on a session and returns its rows as text.
func sessRows(t *testing.T, s *asofsql.Session, sql string, args ...any) ([]string, error) {
	t.Helper()
	c, err := s.Query(context.Background(), sql, args...)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	var out []string
	cols := c.Columns()
	for c.Next() {
		b := c.RecordBatch()
		for i := 0; i < int(b.NumRows()); i++ {
			var parts []string
			for j, col := range b.Columns() {
				if col.IsNull(i) {
					parts = append(parts, "NULL")
					continue
				}
				parts = append(parts, string(sqltypes.EncodeText(nil, col, i, cols[j].Type, s.ValueOptions())))
			}
			out = append(out, strings.Join(parts, " | "))
		}
	}
	return out, c.Err()
}

func TestSessionSettings(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	s := db.Session()
	defer s.Close()
	ctx := context.Background()
	steps := []struct {
		sql  string
		want []string // rows of a SHOW/SELECT; nil for SET
		code string
	}{
		{sql: `SHOW TimeZone`, want: []string{"UTC"}},
		{sql: `SELECT TIMESTAMPTZ '2024-01-01 12:00:00+00'`, want: []string{"2024-01-01 12:00:00+00"}},
		{sql: `SET TIME ZONE 'Europe/Paris'`},
		{sql: `SHOW timezone`, want: []string{"Europe/Paris"}},
		{sql: `SELECT TIMESTAMPTZ '2024-01-01 12:00:00+00'`, want: []string{"2024-01-01 13:00:00+01"}},
		{sql: `SELECT TIMESTAMPTZ '2024-01-01 12:00:00'`, want: []string{"2024-01-01 12:00:00+01"}},
		{sql: `SET TimeZone = 'Mars/Olympus'`, code: sqlerr.InvalidParameterValue},
		{sql: `SET application_name = 'tests'`},
		{sql: `SHOW application_name`, want: []string{"tests"}},
		{sql: `SET search_path TO public, other`},
		{sql: `SHOW search_path`, want: []string{"public, other"}},
		{sql: `SET extra_float_digits = 0`},
		{sql: `SELECT 0.1::float8 + 0.2::float8`, want: []string{"0.3"}},
		{sql: `SET extra_float_digits = 3`},
		{sql: `SELECT 0.1::float8 + 0.2::float8`, want: []string{"0.30000000000000004"}},
		{sql: `SET extra_float_digits = 9`, code: sqlerr.InvalidParameterValue},
		{sql: `SET DateStyle = 'ISO, MDY'`},
		{sql: `SET DateStyle = 'German'`, code: sqlerr.InvalidParameterValue},
		{sql: `SHOW DateStyle`, want: []string{"ISO, MDY"}},
		{sql: `SET statement_timeout = '1.5s'`},
		{sql: `SHOW statement_timeout`, want: []string{"1500ms"}},
		{sql: `SET statement_timeout = '2min'`},
		{sql: `SHOW statement_timeout`, want: []string{"2min"}},
		{sql: `SET statement_timeout = 'soon'`, code: sqlerr.InvalidParameterValue},
		{sql: `SET statement_timeout TO DEFAULT`},
		{sql: `SHOW statement_timeout`, want: []string{"0"}},
		{sql: `SHOW idle_in_transaction_session_timeout`, want: []string{"0"}},
		{sql: `SET idle_in_transaction_session_timeout = 5000`},
		{sql: `SHOW idle_in_transaction_session_timeout`, want: []string{"5s"}},
		{sql: `SET idle_in_transaction_session_timeout = '-1'`, code: sqlerr.InvalidParameterValue},
		{sql: `SET idle_in_transaction_session_timeout = 'soon'`, code: sqlerr.InvalidParameterValue},
		{sql: `RESET idle_in_transaction_session_timeout`},
		{sql: `SHOW idle_in_transaction_session_timeout`, want: []string{"0"}},
		{sql: `SET idle_session_timeout = '1min'`},
		{sql: `SHOW idle_session_timeout`, want: []string{"1min"}},
		{sql: `SET server_version = '16'`, code: "55P02"},
		{sql: `SET no_such_thing = 1`, code: sqlerr.UndefinedObject},
		{sql: `SHOW no_such_thing`, code: sqlerr.UndefinedObject},
	}
	for _, st := range steps {
		if st.want == nil {
			_, err := s.Exec(ctx, st.sql)
			if st.code != "" {
				require.Equal(t, st.code, sqlerr.Code(err), "%s: %v", st.sql, err)
				continue
			}
			require.NoError(t, err, st.sql)
			continue
		}
		got, err := sessRows(t, s, st.sql)
		if st.code != "" {
			require.Equal(t, st.code, sqlerr.Code(err), "%s: %v", st.sql, err)
			continue
		}
		require.NoError(t, err, st.sql)
		require.Equal(t, st.want, got, st.sql)
	}
	all, err := sessRows(t, s, `SHOW ALL`)
	require.NoError(t, err)
	require.Contains(t, all, "TimeZone | Europe/Paris | Sets the time zone for displaying and interpreting time stamps.")
	c, err := s.Query(ctx, `SHOW TIMEZONE`)
	require.NoError(t, err)
	require.Equal(t, "TimeZone", c.Columns()[0].Name)
	require.NoError(t, c.Close())
	// A new session starts from the defaults.
	v, _ := db.Session().Setting("timezone")
	require.Equal(t, "UTC", v)
}

func TestSessionTransactions(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	ctx := context.Background()
	s, other := db.Session(), db.Session()
	defer s.Close()
	defer other.Close()
	count := func(sess *asofsql.Session) string {
		rows, err := sessRows(t, sess, `SELECT count(*) FROM trades`)
		require.NoError(t, err)
		return rows[0]
	}
	exec := func(sql string) (string, error) {
		res, err := s.Exec(ctx, sql)
		return res.Tag, err
	}
	must := func(sql, tag string) {
		t.Helper()
		got, err := exec(sql)
		require.NoError(t, err, sql)
		require.Equal(t, tag, got, sql)
	}

	// Committed block: invisible to everyone until COMMIT.
	require.Equal(t, byte('I'), s.TxStatus())
	must(`BEGIN`, "BEGIN")
	require.Equal(t, byte('T'), s.TxStatus())
	must(`INSERT INTO trades VALUES (40, 'a', 1)`, "INSERT 0 1")
	must(`INSERT INTO trades VALUES (41, 'a', 1), (42, 'b', 2)`, "INSERT 0 2")
	require.Equal(t, "4", count(other))
	// The block reads its own writes; others do not see them.
	require.Equal(t, "7", count(s))
	must(`COMMIT`, "COMMIT")
	require.Equal(t, byte('I'), s.TxStatus())
	require.Equal(t, "7", count(other))

	// Rolled back block: nothing stays, SETs are undone.
	must(`BEGIN`, "BEGIN")
	must(`INSERT INTO trades VALUES (50, 'a', 1)`, "INSERT 0 1")
	must(`SET TimeZone = 'Asia/Tokyo'`, "SET")
	must(`ROLLBACK`, "ROLLBACK")
	require.Equal(t, "7", count(other))
	v, _ := s.Setting("TimeZone")
	require.Equal(t, "UTC", v)

	// A failed statement fails the block: 25P02 until it ends, and COMMIT
	// rolls back.
	must(`BEGIN`, "BEGIN")
	must(`INSERT INTO trades VALUES (60, 'a', 1)`, "INSERT 0 1")
	_, err := exec(`INSERT INTO trades VALUES (61, 'a', 'not a number')`)
	require.Equal(t, sqlerr.InvalidTextRepresentation, sqlerr.Code(err), "%v", err)
	require.Equal(t, byte('E'), s.TxStatus())
	_, err = exec(`SELECT 1`)
	require.Equal(t, sqlerr.InFailedSQLTransaction, sqlerr.Code(err))
	_, err = exec(`SELECT * FROM nosuch`)
	require.Equal(t, sqlerr.InFailedSQLTransaction, sqlerr.Code(err))
	must(`COMMIT`, "ROLLBACK")
	require.Equal(t, byte('I'), s.TxStatus())
	require.Equal(t, "7", count(other))

	// A planning error fails the block too.
	must(`BEGIN`, "BEGIN")
	_, err = exec(`SELECT * FROM nosuch`)
	require.Equal(t, sqlerr.UndefinedTable, sqlerr.Code(err))
	require.Equal(t, byte('E'), s.TxStatus())
	must(`ROLLBACK`, "ROLLBACK")

	// Outside a block, a failed statement leaves nothing and no state.
	_, err = exec(`INSERT INTO trades VALUES (70, 'a', 1), (71, 'a', 'x')`)
	require.Error(t, err)
	require.Equal(t, byte('I'), s.TxStatus())
	require.Equal(t, "7", count(other))
	must(`COMMIT`, "COMMIT") // no block: Postgres only warns

	// Read-only blocks refuse writes; so do SERIALIZABLE ones (0A000).
	must(`BEGIN READ ONLY`, "BEGIN")
	_, err = exec(`INSERT INTO trades VALUES (80, 'a', 1)`)
	require.Equal(t, "25006", sqlerr.Code(err))
	must(`ROLLBACK`, "ROLLBACK")
	must(`BEGIN ISOLATION LEVEL SERIALIZABLE`, "BEGIN")
	_, err = exec(`INSERT INTO trades VALUES (80, 'a', 1)`)
	require.Equal(t, sqlerr.FeatureNotSupported, sqlerr.Code(err))
	must(`ROLLBACK`, "ROLLBACK")

	// Close rolls back an open block.
	s2 := db.Session()
	_, err = s2.Exec(ctx, `BEGIN; INSERT INTO trades VALUES (90, 'a', 1)`)
	require.NoError(t, err)
	require.NoError(t, s2.Close())
	require.Equal(t, "7", count(other))
}

func TestSessionStatementTimeout(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	ctx := context.Background()
	s := db.Session()
	defer s.Close()
	_, err := s.Exec(ctx, `CREATE TABLE big (x BIGINT); INSERT INTO big SELECT a.ts * 1000 + b.ts FROM trades a, trades b`)
	require.NoError(t, err)
	// 16 rows, then 16+16² = 272, then 272+272² = 74256: a three-way
	// cross join of that runs for hours.
	for i := 0; i < 2; i++ {
		_, err = s.Exec(ctx, `INSERT INTO big SELECT a.x + b.x FROM big a, big b`)
		require.NoError(t, err)
	}
	rows, err := sessRows(t, s, `SELECT count(*) FROM big`)
	require.NoError(t, err)
	require.Equal(t, []string{"74256"}, rows)
	_, err = s.Exec(ctx, `SET statement_timeout = 20`)
	require.NoError(t, err)
	start := time.Now()
	_, err = sessRows(t, s, `SELECT count(*) FROM big a, big b, big c WHERE a.x + b.x + c.x = -1`)
	require.Error(t, err)
	require.Equal(t, sqlerr.QueryCanceled, sqlerr.Code(err))
	require.Equal(t, "canceling statement due to statement timeout", err.Error())
	require.Less(t, time.Since(start), 30*time.Second) // cancelled, not run to the end
	// The caller's own cancellation is reported as a user request.
	_, err = s.Exec(ctx, `SET statement_timeout = 0`)
	require.NoError(t, err)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	c, err := s.Query(cctx, `SELECT count(*) FROM big a, big b, big c WHERE a.x + b.x + c.x = -1`)
	if err == nil {
		for c.Next() {
		}
		err = c.Close()
	}
	require.Equal(t, sqlerr.QueryCanceled, sqlerr.Code(err))
	require.Equal(t, "canceling statement due to user request", sqlerr.From(err).Message)
}

func TestSessionPrepareAndBatch(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	ctx := context.Background()
	s := db.Session()
	defer s.Close()

	st, err := s.Prepare(ctx, `SELECT t.ts, q.bid FROM trades t ASOF JOIN quotes q ON ts BETWEEN -10 AND 0 USING (sym) WHERE t.qty > $1 AND t.sym = $2`, nil)
	require.NoError(t, err)
	require.Equal(t, []sqltypes.Type{sqltypes.Int4Type, sqltypes.TextType}, st.ParamTypes())
	require.Equal(t, []asofsql.Column{{Name: "ts", Type: sqltypes.Int8Type}, {Name: "bid", Type: sqltypes.Float8Type}}, st.Columns())
	for _, c := range []struct {
		args []any
		want int64
	}{{[]any{60, "a"}, 2}, {[]any{"150", "b"}, 1}, {[]any{0, "zz"}, 0}} {
		cur, err := st.Execute(ctx, c.args...)
		require.NoError(t, err)
		require.NoError(t, drain(cur))
		require.Equal(t, c.want, cur.Rows())
		require.Equal(t, "SELECT "+strconv.FormatInt(c.want, 10), cur.Tag())
		require.NoError(t, cur.Close())
	}
	_, err = st.Execute(ctx, 1)
	require.Equal(t, sqlerr.ProtocolViolation, sqlerr.Code(err))
	// Arguments as a one-row Arrow batch typed as ParamTypes (the wire
	// server's form).
	rb := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{
		sqltypes.Int4Type.Field("p1", true), sqltypes.TextType.Field("p2", true)}, nil))
	rb.Field(0).(*array.Int32Builder).Append(60)
	rb.Field(1).(*array.StringBuilder).Append("a")
	params := rb.NewRecordBatch()
	rb.Release()
	for range 2 { // the second reuses the schema's parsed types
		cur, err := st.ExecuteBatch(ctx, params)
		require.NoError(t, err)
		require.NoError(t, drain(cur))
		require.Equal(t, int64(2), cur.Rows())
		require.NoError(t, cur.Close())
	}
	params.Release()
	// Another schema for the same statement: its own types (here $1 as
	// text, converted as any text argument is).
	rb = array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{
		sqltypes.TextType.Field("p1", true), sqltypes.TextType.Field("p2", true)}, nil))
	rb.Field(0).(*array.StringBuilder).Append("150")
	rb.Field(1).(*array.StringBuilder).Append("b")
	params = rb.NewRecordBatch()
	rb.Release()
	cur, err := st.ExecuteBatch(ctx, params)
	params.Release()
	require.NoError(t, err)
	require.NoError(t, drain(cur))
	require.Equal(t, int64(1), cur.Rows())
	require.NoError(t, cur.Close())

	// Declared parameter types win over inference; statements without
	// rows describe no columns.
	ins, err := s.Prepare(ctx, `INSERT INTO loose VALUES ($1, $2, $3)`, []sqltypes.Type{sqltypes.Int8Type})
	require.NoError(t, err)
	require.Equal(t, []sqltypes.Type{sqltypes.Int8Type, sqltypes.TextType, sqltypes.Float8Type}, ins.ParamTypes())
	require.Nil(t, ins.Columns())
	empty, err := s.Prepare(ctx, ` -- nothing`, nil)
	require.NoError(t, err)
	require.Nil(t, empty)

	// A plan whose shape changed since Prepare is refused, as Postgres.
	sel, err := s.Prepare(ctx, `SELECT * FROM loose`, nil)
	require.NoError(t, err)
	_, err = s.Exec(ctx, `DROP TABLE loose; CREATE TABLE loose (x TEXT)`)
	require.NoError(t, err)
	_, err = sel.Execute(ctx)
	require.Equal(t, sqlerr.FeatureNotSupported, sqlerr.Code(err))
	require.Equal(t, "cached plan must not change result type", err.Error())

	// A batch analyses each statement when reached, so later ones see
	// earlier ones' effects.
	b, err := s.Batch(ctx, `CREATE TABLE nb (x INT); INSERT INTO nb VALUES ($1); SELECT x FROM nb`)
	require.NoError(t, err)
	var tags []string
	for {
		st, err := b.Next(ctx)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		var cur *asofsql.Cursor
		if len(st.ParamTypes()) > 0 {
			cur, err = st.Execute(ctx, 7)
		} else {
			cur, err = st.Execute(ctx)
		}
		require.NoError(t, err)
		require.NoError(t, drain(cur))
		tags = append(tags, cur.Tag())
		require.NoError(t, cur.Close())
	}
	require.Equal(t, []string{"CREATE TABLE", "INSERT 0 1", "SELECT 1"}, tags)
	_, err = s.Batch(ctx, `SELECT 1; SELEC 2`)
	require.Equal(t, sqlerr.SyntaxError, sqlerr.Code(err))

	// Sync after a client-side error fails an open block.
	_, err = s.Exec(ctx, `BEGIN`)
	require.NoError(t, err)
	require.NoError(t, s.Sync(ctx, true))
	require.Equal(t, byte('E'), s.TxStatus())
	_, err = s.Exec(ctx, `ROLLBACK`)
	require.NoError(t, err)
}

// drain reads a cursor to its end.
func drain(c *asofsql.Cursor) error {
	for c.Next() {
	}
	return c.Err()
}

func TestSessionBlockDDL(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	ctx := context.Background()
	s := db.Session()
	defer s.Close()
	run := func(sql string) error { _, err := s.Exec(ctx, sql); return err }

	// Create, fill and commit in one block.
	require.NoError(t, run(`BEGIN`))
	require.NoError(t, run(`CREATE TABLE nt (ts BIGINT NOT NULL, sym TEXT) ORDER BY (ts)`))
	require.NoError(t, run(`INSERT INTO nt VALUES (2, 'a'), (1, 'b')`))
	var out bytes.Buffer
	_, err := s.CopyFrom(ctx, `COPY nt FROM STDIN WITH (FORMAT csv)`, strings.NewReader("3,c\n"))
	require.NoError(t, err)
	// The block reads its rows, in order, before COMMIT.
	rows, err := sessRows(t, s, `SELECT * FROM nt`)
	require.NoError(t, err)
	require.Equal(t, []string{"1 | b", "2 | a", "3 | c"}, rows)
	// A cursor keeps the rows of when it was opened (insensitive).
	require.NoError(t, run(`DECLARE cur CURSOR FOR SELECT ts FROM nt`))
	require.NoError(t, run(`INSERT INTO nt SELECT ts + 10, sym FROM nt`))
	require.NoError(t, run(`DELETE FROM nt WHERE ts = 1`))
	rows, err = sessRows(t, s, `FETCH ALL FROM cur`)
	require.NoError(t, err)
	require.Equal(t, []string{"1", "2", "3"}, rows)
	_, err = s.CopyTo(ctx, `COPY nt TO STDOUT`, &out)
	require.NoError(t, err)
	require.Equal(t, "2\ta\n3\tc\n11\tb\n12\ta\n13\tc\n", out.String())
	require.NoError(t, run(`COMMIT`))
	rows, err = sessRows(t, s, `SELECT ts FROM nt`)
	require.NoError(t, err)
	require.Equal(t, []string{"2", "3", "11", "12", "13"}, rows)
	require.NoError(t, run(`DROP TABLE nt`))
	require.NoError(t, run(`BEGIN`))
	require.NoError(t, run(`CREATE TABLE nt (ts BIGINT NOT NULL, sym TEXT) ORDER BY (ts)`))
	require.NoError(t, run(`INSERT INTO nt VALUES (2, 'a'), (1, 'b')`))
	// NOT NULL is enforced on the block's table too.
	err = run(`INSERT INTO nt VALUES (NULL, 'x')`)
	require.Equal(t, sqlerr.NotNullViolation, sqlerr.Code(err))
	require.NoError(t, run(`ROLLBACK`))
	_, err = sessRows(t, s, `SELECT * FROM nt`)
	require.Equal(t, sqlerr.UndefinedTable, sqlerr.Code(err), "rolled back")

	require.NoError(t, run(`BEGIN; CREATE TABLE nt (ts BIGINT, sym TEXT) ORDER BY (ts); INSERT INTO nt VALUES (2, 'a'), (1, 'b'); COMMIT`))
	rows, err = sessRows(t, s, `SELECT * FROM nt`)
	require.NoError(t, err)
	require.Equal(t, []string{"1 | b", "2 | a"}, rows)

	// A table dropped in the block is gone for the rest of it; re-created
	// with another shape, it is planned with the new one.
	require.NoError(t, run(`BEGIN; DROP TABLE nt`))
	_, err = sessRows(t, s, `SELECT * FROM nt`)
	require.Equal(t, sqlerr.UndefinedTable, sqlerr.Code(err))
	require.NoError(t, run(`ROLLBACK; BEGIN; DROP TABLE nt; CREATE TABLE nt (x TEXT); INSERT INTO nt VALUES ('new')`))
	rows, err = sessRows(t, s, `SELECT * FROM nt`)
	require.NoError(t, err)
	require.Equal(t, []string{"new"}, rows, "the new nt, not the committed one")
	require.NoError(t, run(`COMMIT`))
	rows, err = sessRows(t, s, `SELECT * FROM nt`)
	require.NoError(t, err)
	require.Equal(t, []string{"new"}, rows)
	// CREATE TABLE IF NOT EXISTS on a committed table keeps it readable.
	require.NoError(t, run(`BEGIN; CREATE TABLE IF NOT EXISTS nt (y INT)`))
	rows, err = sessRows(t, s, `SELECT * FROM nt`)
	require.NoError(t, err)
	require.Equal(t, []string{"new"}, rows)
	require.NoError(t, run(`COMMIT`))
}

// RESET and SET ... TO DEFAULT return to the session default: the value
// Session.Set gave (a startup parameter), else the built-in default.
func TestSessionReset(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	s := db.Session()
	defer s.Close()
	ctx := context.Background()
	require.NoError(t, s.Set("application_name", "psql"))
	require.NoError(t, s.Set("TimeZone", "Asia/Tokyo"))
	show := func(name string) string {
		v, ok := s.Setting(name)
		require.True(t, ok, name)
		return v
	}
	for _, sql := range []string{`SET application_name = 'x'`, `SET TimeZone = 'UTC'`, `SET extra_float_digits = 0`} {
		_, err := s.Exec(ctx, sql)
		require.NoError(t, err, sql)
	}
	tag, err := s.Exec(ctx, `RESET application_name`)
	require.NoError(t, err)
	require.Equal(t, "RESET", tag.Tag)
	require.Equal(t, "psql", show("application_name"))
	require.Equal(t, "UTC", show("TimeZone"))
	_, err = s.Exec(ctx, `SET TIME ZONE DEFAULT`)
	require.NoError(t, err)
	require.Equal(t, "Asia/Tokyo", show("TimeZone"))
	_, err = s.Exec(ctx, `SET TimeZone = 'UTC'`)
	require.NoError(t, err)
	_, err = s.Exec(ctx, `RESET ALL`)
	require.NoError(t, err)
	require.Equal(t, "Asia/Tokyo", show("TimeZone"))
	require.Equal(t, "1", show("extra_float_digits"))
	require.Equal(t, "psql", show("application_name"))
	_, err = s.Exec(ctx, `RESET nosuch`)
	require.Equal(t, sqlerr.UndefinedObject, sqlerr.Code(err))
}

// TestSessionMemoryLimit: memory_limit bounds a query (53200 naming the
// limit), defaults to WithMemoryLimit, and follows SET, RESET and
// ROLLBACK like any setting, below the WithMemoryLimit ceiling.
func TestSessionMemoryLimit(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db, err := asofsql.Open(":memory:", asofsql.WithAllocator(mem), asofsql.WithMemoryLimit(64<<20))
	require.NoError(t, err)
	defer db.Close()
	s := db.Session()
	defer s.Close()
	ctx := context.Background()
	show := func() string {
		v, ok := s.Setting("memory_limit")
		require.True(t, ok)
		return v
	}
	require.Equal(t, "64MB", show())
	const sortQ = `SELECT generate_series AS g FROM generate_series(1, 200000) ORDER BY 1 DESC`
	rows, err := sessRows(t, s, sortQ)
	require.NoError(t, err)
	require.Len(t, rows, 200000)

	_, err = s.Exec(ctx, `SET memory_limit = '64kB'`)
	require.NoError(t, err)
	require.Equal(t, "64kB", show())
	_, err = sessRows(t, s, sortQ)
	require.Error(t, err)
	require.Equal(t, sqlerr.OutOfMemory, sqlerr.Code(err), err.Error())
	e, _ := sqlerr.As(err)
	require.Contains(t, e.Detail, "65536 bytes")

	_, err = s.Exec(ctx, `BEGIN; SET memory_limit = '64MB'; ROLLBACK`)
	require.NoError(t, err)
	require.Equal(t, "64kB", show())
	_, err = s.Exec(ctx, `SET memory_limit = 0`)
	require.Equal(t, sqlerr.InsufficientPrivilege, sqlerr.Code(err), "the server's limit is a ceiling")
	require.Equal(t, "64kB", show())
	_, err = s.Exec(ctx, `SET memory_limit = '64MB'`)
	require.NoError(t, err)
	_, err = sessRows(t, s, sortQ)
	require.NoError(t, err)
	_, err = s.Exec(ctx, `RESET memory_limit`)
	require.NoError(t, err)
	require.Equal(t, "64MB", show())

	for _, v := range []string{"'1536kB'", "'32MB'", "1000"} {
		_, err = s.Exec(ctx, `SET memory_limit = `+v)
		require.NoError(t, err, v)
	}
	require.Equal(t, "1000B", show())
	for _, v := range []string{"'64 mb'", "'-1'", "'lots'", "'99999999999TB'"} {
		_, err = s.Exec(ctx, `SET memory_limit = `+v)
		require.Error(t, err, v)
		require.Equal(t, sqlerr.InvalidParameterValue, sqlerr.Code(err), v)
	}
}

// Concurrent writers to the same rows: the first to commit wins and the
// other's COMMIT fails with 40001 with nothing applied (PostgreSQL's
// REPEATABLE READ rule, docs/storage.md); writers to different rows both
// commit; the failed session goes on outside a block.
func TestWriteConflictsThroughSQL(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	ctx := context.Background()
	s1, s2 := db.Session(), db.Session()
	defer s1.Close()
	defer s2.Close()
	run := func(s *asofsql.Session, sql string) string {
		t.Helper()
		res, err := s.Exec(ctx, sql)
		require.NoError(t, err, sql)
		return res.Tag
	}
	rows := func(sql string) []string {
		t.Helper()
		r, err := sessRows(t, s2, sql)
		require.NoError(t, err, sql)
		return r
	}
	run(s1, "CREATE TABLE acct (k integer, v integer)")
	run(s1, "INSERT INTO acct VALUES (1, 0), (2, 0), (3, 0)")

	run(s1, "BEGIN")
	require.Equal(t, "DELETE 1", run(s1, "DELETE FROM acct WHERE k = 3"))
	require.Equal(t, "UPDATE 1", run(s1, "UPDATE acct SET v = v + 1 WHERE k = 1"))
	require.Equal(t, "UPDATE 1", run(s2, "UPDATE acct SET v = v + 10 WHERE k = 1"))
	_, err := s1.Exec(ctx, "COMMIT")
	require.Equal(t, "40001", sqlerr.Code(err), "%v", err)
	require.Equal(t, []string{"1 | 10", "2 | 0", "3 | 0"}, rows("SELECT k, v FROM acct ORDER BY k"))

	// the retry succeeds; different rows do not conflict
	run(s1, "BEGIN")
	require.Equal(t, "UPDATE 1", run(s1, "UPDATE acct SET v = v + 1 WHERE k = 1"))
	require.Equal(t, "DELETE 1", run(s2, "DELETE FROM acct WHERE k = 2"))
	require.Equal(t, "UPDATE 1", run(s2, "UPDATE acct SET v = 5 WHERE k = 3"))
	require.Equal(t, "COMMIT", run(s1, "COMMIT"))
	require.Equal(t, []string{"1 | 11", "3 | 5"}, rows("SELECT k, v FROM acct ORDER BY k"))

	// an autocommit UPDATE that loses fails the same way
	run(s2, "BEGIN")
	run(s2, "DELETE FROM acct WHERE k = 1")
	require.Equal(t, "UPDATE 1", run(s1, "UPDATE acct SET v = 0 WHERE k = 1"))
	_, err = s2.Exec(ctx, "COMMIT")
	require.Equal(t, "40001", sqlerr.Code(err), "%v", err)
	require.Equal(t, []string{"1 | 0", "3 | 5"}, rows("SELECT k, v FROM acct ORDER BY k"))
}

// A block reads its own writes on top of the committed state of the
// statement: the latest under READ COMMITTED, the block's snapshot under
// REPEATABLE READ; a concurrent committer's rows only in the former.
func TestReadYourWritesIsolation(t *testing.T) {
	db, mem := openTest(t)
	defer mem.AssertSize(t, 0)
	defer db.Close()
	ctx := context.Background()
	s, other := db.Session(), db.Session()
	defer s.Close()
	defer other.Close()
	run := func(sess *asofsql.Session, sql string) {
		t.Helper()
		_, err := sess.Exec(ctx, sql)
		require.NoError(t, err, sql)
	}
	rows := func(sql string) []string {
		t.Helper()
		r, err := sessRows(t, s, sql)
		require.NoError(t, err, sql)
		return r
	}
	run(s, `CREATE TABLE ryw (a INT)`)
	run(s, `INSERT INTO ryw VALUES (1)`)
	for _, c := range []struct {
		iso  string
		want []string
	}{{"READ COMMITTED", []string{"1", "2", "3"}}, {"REPEATABLE READ", []string{"1", "3"}}} {
		run(s, `BEGIN ISOLATION LEVEL `+c.iso)
		require.Equal(t, []string{"1"}, rows(`SELECT a FROM ryw`))
		run(other, `INSERT INTO ryw VALUES (2)`)
		run(s, `INSERT INTO ryw VALUES (3)`)
		require.Equal(t, c.want, rows(`SELECT a FROM ryw ORDER BY a`), c.iso)
		run(s, `ROLLBACK`)
		run(other, `DELETE FROM ryw WHERE a = 2`)
	}
}
