package lower_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/lower"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

func setup(t *testing.T, mem memory.Allocator) *catalog.Catalog {
	ctx := context.Background()
	cat, err := catalog.Open(ctx, catalog.Memory, catalog.Options{Allocator: mem})
	require.NoError(t, err)
	tx := cat.Begin()
	for _, name := range []string{"l", "r"} {
		require.NoError(t, tx.CreateTable(ctx, catalog.TableDef{Name: name, Columns: []catalog.Column{
			{Name: "t", Type: sqltypes.Int8Type}, {Name: "k", Type: sqltypes.Int8Type}}, OrderBy: []string{"t"}}, false))
		_, err := tx.CopyFrom(ctx, name, strings.NewReader("1,1\n2,1\n3,2\n5,1\n"), catalog.CopyOptions{Format: "csv"})
		require.NoError(t, err)
	}
	require.NoError(t, tx.Commit(ctx))
	return cat
}

func plan(t *testing.T, cat *catalog.Catalog, sql string) *planner.Query {
	st, err := parser.ParseOne(sql)
	require.NoError(t, err)
	p, err := planner.Build(cat, st, nil)
	require.NoError(t, err)
	return p.(*planner.Query)
}

func TestAnalysisCountsEveryNode(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cat := setup(t, mem)
	defer cat.Close()
	snap, err := cat.Snapshot()
	require.NoError(t, err)
	defer snap.Release()
	q := plan(t, cat, `SELECT l.t, r.t FROM l ASOF JOIN r ON t BETWEEN -1 AND -1 USING (k) WHERE l.t > 1`)
	an := lower.NewAnalysis()
	params, err := lower.Bind(q.Params, nil, nil)
	require.NoError(t, err)
	op, err := lower.Query(context.Background(), snap, q.Root, lower.Env{Mem: mem, Params: params, Analysis: an})
	require.NoError(t, err)
	var rows int64
	require.NoError(t, exec.Drain(context.Background(), op, func(b arrow.RecordBatch) error { rows += b.NumRows(); return nil }))
	// l.t > 1 keeps 2, 3, 5; only t=2 (k=1) has r.t=1 with k=1 one step back.
	require.Equal(t, int64(1), rows)
	root, ok := an.Stats(q.Root)
	require.True(t, ok)
	require.Equal(t, int64(1), root.Rows)
	require.Positive(t, root.Batches)
	var visit func(n planner.Node)
	nodes := 0
	visit = func(n planner.Node) {
		_, ok := an.Stats(n)
		require.True(t, ok, planner.NodeLine(n))
		nodes++
		for _, c := range n.Children() {
			visit(c)
		}
	}
	visit(q.Root)
	text := an.Text(q.Root)
	require.Equal(t, nodes, strings.Count(text, "(actual rows="), text)
	require.Contains(t, text, "Scan r (t, k)")
	require.Regexp(t, `Scan r \(t, k\).*\(actual rows=4 batches=\d+ time=`, text)
}

func TestBind(t *testing.T) {
	cases := []struct {
		types []sqltypes.Type
		args  []any
		want  []any
		code  string
	}{
		{types: []sqltypes.Type{sqltypes.Int8Type, sqltypes.TextType}, args: []any{int32(5), "x"}, want: []any{int64(5), "x"}},
		{types: []sqltypes.Type{sqltypes.Int4Type}, args: []any{"12"}, want: []any{int64(12)}},
		{types: []sqltypes.Type{sqltypes.UnknownType}, args: []any{2.5}, want: []any{2.5}},
		{types: []sqltypes.Type{sqltypes.Int8Type}, args: []any{nil}, want: []any{nil}},
		{types: []sqltypes.Type{sqltypes.Int4Type}, args: []any{"abc"}, code: sqlerr.InvalidTextRepresentation},
		{types: []sqltypes.Type{sqltypes.Int4Type}, args: nil, code: sqlerr.ProtocolViolation},
	}
	for _, c := range cases {
		lits, err := lower.Bind(c.types, c.args, nil)
		if c.code != "" {
			require.Equal(t, c.code, sqlerr.Code(err), "%v", err)
			continue
		}
		require.NoError(t, err)
		var got []any
		for _, l := range lits {
			got = append(got, l.Value)
		}
		require.Equal(t, c.want, got)
	}
}

// Subqueries run per distinct outer value with the outer value and the
// statement's parameters bound, and stop reading once they have what they
// need; every batch they make is released.
func TestSubqueries(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cat := setup(t, mem)
	defer cat.Close()
	snap, err := cat.Snapshot()
	require.NoError(t, err)
	defer snap.Release()
	run := func(sql string, args ...any) ([]string, error) {
		q := plan(t, cat, sql)
		params, err := lower.Bind(q.Params, args, nil)
		require.NoError(t, err)
		op, err := lower.Query(context.Background(), snap, q.Root, lower.Env{Mem: mem, Params: params})
		if err != nil {
			return nil, err
		}
		var rows []string
		err = exec.Drain(context.Background(), op, func(b arrow.RecordBatch) error {
			for i := 0; i < int(b.NumRows()); i++ {
				var cells []string
				for _, c := range b.Columns() {
					cells = append(cells, c.ValueStr(i))
				}
				rows = append(rows, strings.Join(cells, " "))
			}
			return nil
		})
		return rows, err
	}
	rows, err := run(`SELECT l.t, (SELECT max(r.t) FROM r WHERE r.k = l.k AND r.t < l.t), EXISTS (SELECT 1 FROM r WHERE r.t = l.t + $1) FROM l`, int64(1))
	require.NoError(t, err)
	require.Equal(t, []string{"1 (null) true", "2 1 true", "3 (null) false", "5 2 false"}, rows)
	rows, err = run(`SELECT t FROM l WHERE k IN (SELECT k FROM r WHERE t > 2) AND t NOT IN (SELECT g FROM generate_series(1, 2) g)`)
	require.NoError(t, err)
	require.Equal(t, []string{"3", "5"}, rows)
	_, err = run(`SELECT (SELECT t FROM r WHERE r.k = l.k) FROM l`)
	require.Equal(t, "21000", sqlerr.Code(err))
}

// TestOrderByLimitRunsAsTopN checks ORDER BY ... LIMIT [OFFSET], lowered
// to a top-N under the limit: the same rows as the full sort (stable on
// ties), LIMIT 0, a limit beyond the input, and EXPLAIN ANALYZE still
// counting the Sort node.
func TestOrderByLimitRunsAsTopN(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cat := setup(t, mem)
	defer cat.Close()
	snap, err := cat.Snapshot()
	require.NoError(t, err)
	defer snap.Release()
	runPlan := func(q *planner.Query, an *lower.Analysis) []string {
		op, err := lower.Query(context.Background(), snap, q.Root, lower.Env{Mem: mem, Analysis: an})
		require.NoError(t, err)
		var rows []string
		require.NoError(t, exec.Drain(context.Background(), op, func(b arrow.RecordBatch) error {
			for i := 0; i < int(b.NumRows()); i++ {
				rows = append(rows, b.Column(0).ValueStr(i)+","+b.Column(1).ValueStr(i))
			}
			return nil
		}))
		return rows
	}
	run := func(sql string, an *lower.Analysis) []string { return runPlan(plan(t, cat, sql), an) }
	// l: (t, k) = (1,1) (2,1) (3,2) (5,1).
	require.Equal(t, []string{"1,1", "2,1", "5,1", "3,2"}, run("SELECT t, k FROM l ORDER BY k", nil))
	require.Equal(t, []string{"1,1", "2,1"}, run("SELECT t, k FROM l ORDER BY k LIMIT 2", nil), "stable on ties")
	require.Equal(t, []string{"2,1", "5,1"}, run("SELECT t, k FROM l ORDER BY k LIMIT 2 OFFSET 1", nil))
	require.Equal(t, []string{"3,2", "5,1"}, run("SELECT t, k FROM l ORDER BY k DESC, t DESC LIMIT 2", nil))
	require.Empty(t, run("SELECT t, k FROM l ORDER BY k LIMIT 0", nil))
	require.Equal(t, []string{"5,1", "3,2", "2,1", "1,1"}, run("SELECT t, k FROM l ORDER BY t DESC LIMIT 100", nil))
	require.Equal(t, []string{"3,2"}, run("SELECT t, k FROM l ORDER BY k LIMIT 100 OFFSET 3", nil))
	// A limit above topNMaxRows takes the full sort: same answer.
	require.Equal(t, []string{"1,1", "2,1", "5,1", "3,2"}, run("SELECT t, k FROM l ORDER BY k LIMIT 1000000", nil))

	an := lower.NewAnalysis()
	q := plan(t, cat, "SELECT t, k FROM l ORDER BY k LIMIT 2")
	require.Equal(t, []string{"1,1", "2,1"}, runPlan(q, an))
	text := an.Text(q.Root)
	require.Regexp(t, `Limit 2.*\(actual rows=2 `, text)
	require.Regexp(t, `Sort .*\(actual rows=2 `, text, "the top-N reports as the Sort node")
	require.Regexp(t, `Scan l .*\(actual rows=4 `, text)
}
