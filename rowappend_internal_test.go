package asofsql

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// The gathered appends of a prepared INSERT in a block (rowappend.go)
// are checked against the path they replace: the same script of
// statements, run once with ExecuteParams (gathering) and once with
// Execute of the same values as lower.Values (the ordinary path, what
// the wire server ran before), must answer every statement the same
// (tags, rows, errors), leave the same tables (in storage order) and
// the same tables after a reopen of the data directory (the log's
// replay of the gathered append).

// appendScript is one session A running prepared INSERTs in blocks among
// other statements, and one session B changing the tables between them
// in autocommit.
type scriptOp struct {
	who  byte   // 'A' or 'B'
	sql  string // a statement, or "" for a prepared INSERT
	stmt int    // which prepared INSERT
	vals []Param
}

const (
	scriptT1 = `CREATE TABLE t1 (ts BIGINT NOT NULL, sym TEXT, px DOUBLE PRECISION) ORDER BY (ts)`
	scriptT2 = `CREATE TABLE t2 (a INTEGER, b BOOLEAN, c TIMESTAMPTZ, d SMALLINT, e TIMESTAMP)`
)

var scriptInserts = []string{
	`INSERT INTO t1 VALUES ($1, $2, $3)`,
	`INSERT INTO t2 VALUES ($1, $2, $3, $4, $5)`,
	`INSERT INTO t1 (ts, px) VALUES ($1, $2)`, // not a direct append
}

func genScript(seed uint64, n int) []scriptOp {
	r := rand.New(rand.NewPCG(seed, 7))
	var ops []scriptOp
	a := func(sql string) { ops = append(ops, scriptOp{who: 'A', sql: sql}) }
	b := func(sql string) { ops = append(ops, scriptOp{who: 'B', sql: sql}) }
	null := func() bool { return r.IntN(20) == 0 }
	key := func() int64 { return int64(r.IntN(60)) }
	ins := func(k int) {
		var v []Param
		switch k {
		case 0:
			v = []Param{{T: sqltypes.Int8Type, Int: key(), Null: r.IntN(60) == 0},
				{T: sqltypes.TextType, Str: []string{"AAPL", "MSFT", "", "日本"}[r.IntN(4)], Null: null()},
				{T: sqltypes.Float8Type, Float: float64(r.IntN(1000)) / 8, Null: null()}}
		case 1:
			v = []Param{{T: sqltypes.Int4Type, Int: int64(r.Int32()) - math.MaxInt32/2, Null: null()},
				{T: sqltypes.BoolType, Bool: r.IntN(2) == 0, Null: null()},
				{T: sqltypes.TimestampTZType, Int: r.Int64N(1 << 50), Null: null()},
				{T: sqltypes.Int2Type, Int: int64(r.IntN(math.MaxUint16)) + math.MinInt16, Null: null()},
				{T: sqltypes.TimestampType, Int: -r.Int64N(1 << 50), Null: null()}}
		case 2:
			v = []Param{{T: sqltypes.Int8Type, Int: key()}, {T: sqltypes.Float8Type, Float: 0.5, Null: null()}}
		}
		ops = append(ops, scriptOp{who: 'A', stmt: k, vals: v})
	}
	inBlock := false
	for len(ops) < n {
		switch x := r.IntN(100); {
		case !inBlock && x < 30:
			a([]string{"BEGIN", "BEGIN ISOLATION LEVEL REPEATABLE READ", "BEGIN"}[r.IntN(3)])
			inBlock = true
		case inBlock && x < 4:
			a("COMMIT")
			inBlock = false
		case inBlock && x < 6:
			a("ROLLBACK")
			inBlock = false
		case x < 60:
			for range 1 + r.IntN(30) {
				ins(0)
			}
		case x < 66:
			for range 1 + r.IntN(5) {
				ins(1)
			}
		case x < 68:
			ins(2)
		case x < 71:
			a("SELECT count(*), sum(ts), count(sym), sum(px) FROM t1")
		case x < 72:
			a("SELECT * FROM t1")
		case x < 73:
			a("SELECT * FROM t2")
		case x < 74:
			a([]string{"SET TimeZone = 'America/New_York'", "SET TimeZone = 'UTC'", "SET extra_float_digits = 1"}[r.IntN(3)])
		case x < 75:
			a("DELETE FROM t1 WHERE ts < " + fmt.Sprint(key()/4))
		case x < 76:
			a("UPDATE t1 SET px = 1.5 WHERE ts % 7 = 0")
		case x < 77:
			a([]string{"DISCARD PLANS", "SYNC FAILED"}[r.IntN(2)])
		case x < 78:
			a("CREATE TEMP TABLE t1 (ts BIGINT NOT NULL, sym TEXT, px DOUBLE PRECISION)")
		case x < 79:
			a("DROP TABLE IF EXISTS pg_temp.t1")
		case x < 85:
			b("SELECT count(*), sum(ts) FROM t1")
		case x < 89:
			b(fmt.Sprintf("INSERT INTO t1 VALUES (%d, 'B', 2.5)", key()))
		case x < 91:
			b([]string{"ALTER TABLE t1 ADD COLUMN extra INTEGER", "ALTER TABLE t1 DROP COLUMN extra",
				"ALTER TABLE t1 RENAME COLUMN sym TO sym2", "ALTER TABLE t1 RENAME COLUMN sym2 TO sym"}[r.IntN(4)])
		case x < 92:
			b("DROP TABLE t1")
			b(scriptT1)
		case x < 93:
			b("TRUNCATE t1")
		case x < 94:
			b("ALTER TABLE t2 RENAME TO t2x")
			b("ALTER TABLE t2x RENAME TO t2")
		case inBlock && x < 97:
			// Rows gathered across another session's DDL, read back
			// in the block.
			for range 1 + r.IntN(4) {
				ins(0)
			}
			switch r.IntN(4) {
			case 0:
				b("ALTER TABLE t1 ADD COLUMN extra INTEGER")
			case 1:
				b("ALTER TABLE t1 DROP COLUMN IF EXISTS extra")
			case 2:
				b("ALTER TABLE t1 RENAME COLUMN sym TO sym2")
				b("ALTER TABLE t1 RENAME COLUMN sym2 TO sym")
			case 3:
				b("DROP TABLE t1")
				b(scriptT1)
			}
			for range 1 + r.IntN(4) {
				ins(0)
			}
			a("SELECT * FROM t1")
		}
	}
	if inBlock {
		a("COMMIT")
	}
	return ops
}

// runScript runs ops on a database at dir (":memory:" or a directory),
// gathering (fast) or not, and returns the log of every statement's
// answer and the tables at the end; with a directory also the tables
// after a reopen. taken counts the rows that took the gathered append.
func runScript(t *testing.T, dir string, ops []scriptOp, fast bool) (log []string, taken int) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	db, err := Open(dir, WithAllocator(mem))
	require.NoError(t, err)
	a, b := db.Session(), db.Session()
	for _, sql := range []string{scriptT1, scriptT2} {
		_, err := a.Exec(ctx, sql)
		require.NoError(t, err)
	}
	stmts := make([]*Stmt, len(scriptInserts))
	for i, sql := range scriptInserts {
		stmts[i], err = a.Prepare(ctx, sql, nil)
		require.NoError(t, err)
	}
	for i, op := range ops {
		s := a
		if op.who == 'B' {
			s = b
		}
		var out string
		if op.sql == "SYNC FAILED" {
			// An error the wire server sent (a malformed Bind, say)
			// fails the block at the next Sync.
			require.NoError(t, s.Sync(ctx, true))
			out = string(s.TxStatus())
		} else if op.sql != "" {
			out = scriptQuery(s, op.sql)
		} else {
			st := stmts[op.stmt]
			var c *Cursor
			var err error
			if fast {
				before := gathered(a, st)
				c, err = st.ExecuteParams(ctx, op.vals)
				if err == nil && gathered(a, st) == before+1 {
					taken++
				}
			} else {
				args := make([]any, len(op.vals))
				for i, p := range op.vals {
					args[i] = ParamArg(p)
				}
				c, err = st.Execute(ctx, args...)
			}
			out = answer(c, err)
		}
		log = append(log, fmt.Sprintf("%d %c %s%v: %s", i, op.who, op.sql, op.vals, out))
	}
	log = append(log, "A end: "+scriptQuery(a, "SELECT * FROM t1"), "A end: "+scriptQuery(a, "SELECT * FROM t2"))
	require.NoError(t, a.Close())
	require.NoError(t, b.Close())
	require.NoError(t, db.Close())
	if dir != ":memory:" {
		db, err := Open(dir, WithAllocator(mem))
		require.NoError(t, err)
		s := db.Session()
		log = append(log, "reopened: "+scriptQuery(s, "SELECT * FROM t1"), "reopened: "+scriptQuery(s, "SELECT * FROM t2"))
		require.NoError(t, s.Close())
		require.NoError(t, db.Close())
	}
	return log, taken
}

// gathered is the number of rows s gathers for st now.
func gathered(s *Session, st *Stmt) int {
	if s.app == nil || s.app.st != st {
		return 0
	}
	return s.app.n
}

// scriptQuery runs one statement and renders its answer.
func scriptQuery(s *Session, sql string) string {
	st, err := s.parseOnce(context.Background(), sql)
	if err != nil {
		return answer(nil, err)
	}
	c, err := s.run(context.Background(), st, nil, false, nil)
	return answer(c, err)
}

func answer(c *Cursor, err error) string {
	if err != nil {
		e, _ := sqlerr.As(err)
		if e == nil {
			return "error " + err.Error()
		}
		return "error " + e.Code + " " + e.Message
	}
	defer c.Release()
	var sb strings.Builder
	cols := c.Columns()
	for c.Next() {
		rec := c.RecordBatch()
		for i := range int(rec.NumRows()) {
			sb.WriteString("(")
			for j, col := range rec.Columns() {
				if j > 0 {
					sb.WriteString(", ")
				}
				if col.IsNull(i) {
					sb.WriteString("NULL")
				} else {
					sb.Write(sqltypes.EncodeText(nil, col, i, cols[j].Type, sqltypes.DefaultOptions()))
				}
			}
			sb.WriteString(")")
		}
	}
	if err := c.Err(); err != nil {
		return answer(nil, err)
	}
	return c.Tag() + " " + sb.String()
}

// TestRowAppendMatchesExecute: random scripts answer alike with and
// without gathered appends, in memory and in a data directory (reopened),
// and most of their INSERTs took the gathered path.
func TestRowAppendMatchesExecute(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 3
	}
	total := 0
	for seed := range uint64(seeds) {
		ops := genScript(seed, 400)
		dir := ":memory:"
		if seed%3 == 0 {
			dir = t.TempDir()
		}
		want, _ := runScript(t, dir, ops, false)
		if dir != ":memory:" {
			dir = t.TempDir()
		}
		got, taken := runScript(t, dir, ops, true)
		for i := range min(len(want), len(got)) {
			require.Equal(t, want[i], got[i], "seed %d, step %d", seed, i)
		}
		require.Equal(t, len(want), len(got))
		t.Logf("seed %d: %d rows gathered", seed, taken)
		total += taken
	}
	require.Greater(t, total, 40*seeds, "the gathered path was hardly taken")
}
