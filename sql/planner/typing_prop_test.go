package planner

import (
	"context"
	"fmt"
	"github.com/apache/arrow-go/v18/arrow"
	"math/rand/v2"
	"testing"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// TestRandomExpressionsTyping binds random expressions over every type
// and checks the typing contract of sql/expr: planning ends in a plan or
// a *sqlerr.Error; comparisons and numeric arithmetic get operands of one
// type (the planner inserts the casts); AND/OR/NOT and WHERE see
// booleans; no expression is nil.
func TestRandomExpressionsTyping(t *testing.T) {
	cat := newCatalog(t)
	ctx := context.Background()
	p, err := plan(t, cat, `CREATE TABLE alltypes (b boolean, i2 smallint, i4 integer, i8 bigint, f4 real, f8 double precision, n numeric(12,3), nu numeric, s text, vc varchar(5), d date, ts timestamp, tz timestamptz, iv interval, by bytea)`)
	require.NoError(t, err)
	tx := cat.Begin()
	require.NoError(t, tx.CreateTable(ctx, p.(*CreateTable).Def, false))
	require.NoError(t, tx.Commit(ctx))

	families := [][]string{
		{"i2", "i4", "i8", "f4", "f8", "n", "nu", "1", "3000000000", "1.5", "2e3", "'7'", "NULL", "$1", "5::numeric(4,1)", "-2"},
		{"s", "vc", "'abc'", "'x'::text", "NULL", "$2", "lower(s)"},
		{"d", "ts", "tz", "'2024-01-02'", "TIMESTAMP '2024-01-01 00:00'", "DATE '2024-01-01'", "NULL", "$3"},
		{"b", "true", "'t'", "NULL", "$4", "i4 > 1", "s LIKE 'a%'", "d IS NULL"},
	}
	ops := [][]string{
		{"+", "-", "*", "/", "%"},
		{"||"},
		{"-"},
		{"AND", "OR"},
	}
	cmps := []string{"=", "<>", "<", "<=", ">", ">=", "IS DISTINCT FROM"}
	rng := rand.New(rand.NewPCG(1, 2))
	var gen func(depth, fam int) string
	gen = func(depth, fam int) string {
		leaves := families[fam]
		if rng.IntN(12) == 0 {
			leaves = families[rng.IntN(len(families))] // an occasional misfit
		}
		if depth == 0 || rng.IntN(3) == 0 {
			return leaves[rng.IntN(len(leaves))]
		}
		switch rng.IntN(7) {
		case 0:
			if fam == 3 {
				return "NOT (" + gen(depth-1, fam) + ")"
			}
			return fmt.Sprintf("(%s) %s (%s)", gen(depth-1, fam), ops[fam][rng.IntN(len(ops[fam]))], gen(depth-1, fam))
		case 1:
			if fam == 0 {
				return "-(" + gen(depth-1, fam) + ")"
			}
			return gen(depth-1, fam)
		case 2:
			return fmt.Sprintf("coalesce(%s, %s)", gen(depth-1, fam), gen(depth-1, fam))
		case 3:
			return fmt.Sprintf("CASE WHEN %s THEN %s ELSE %s END", gen(depth-1, 3), gen(depth-1, fam), gen(depth-1, fam))
		case 4:
			if fam == 3 {
				f := rng.IntN(3)
				return fmt.Sprintf("(%s) IN (%s, %s)", gen(depth-1, f), gen(depth-1, f), gen(depth-1, f))
			}
		case 5:
			if fam == 3 {
				f := rng.IntN(3)
				return fmt.Sprintf("(%s) BETWEEN (%s) AND (%s)", gen(depth-1, f), gen(depth-1, f), gen(depth-1, f))
			}
		}
		if fam == 3 {
			f := rng.IntN(3)
			return fmt.Sprintf("(%s) %s (%s)", gen(depth-1, f), cmps[rng.IntN(len(cmps))], gen(depth-1, f))
		}
		return fmt.Sprintf("(%s) %s (%s)", gen(depth-1, fam), ops[fam][rng.IntN(len(ops[fam]))], gen(depth-1, fam))
	}
	ok, rejected := 0, 0
	for i := 0; i < 3000; i++ {
		sql := fmt.Sprintf("SELECT %s FROM alltypes WHERE %s", gen(3, rng.IntN(4)), gen(2, 3))
		p, err := func() (p Plan, err error) {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("%s: panic %v", sql, r)
				}
			}()
			return plan(t, cat, sql)
		}()
		if err != nil {
			_, isSQL := sqlerr.As(err)
			require.True(t, isSQL, "%s: %v", sql, err)
			rejected++
			if e, _ := sqlerr.As(err); debugTyping {
				t.Logf("%s => %s %s", sql, e.Code, e.Message)
			}
			continue
		}
		ok++
		checkTyping(t, p.(*Query).Root, sql)
	}
	t.Logf("%d planned, %d rejected", ok, rejected)
	require.Greater(t, ok, 1000)
}

// debugTyping logs every rejection (flip to read them).
const debugTyping = false

func checkTyping(t *testing.T, n Node, sql string) {
	var exprs []expr.Expr
	switch x := n.(type) {
	case *Filter:
		require.Equal(t, sqltypes.BoolType, x.Cond.Type(), sql)
		exprs = append(exprs, x.Cond)
	case *Project:
		exprs = append(exprs, x.Exprs...)
	}
	for _, e := range exprs {
		require.NotNil(t, e, sql)
		expr.Walk(e, func(x expr.Expr) bool {
			require.NotNil(t, x, sql)
			switch b := x.(type) {
			case *expr.Binary:
				require.NotNil(t, b.L, sql)
				require.NotNil(t, b.R, sql)
				lt, rt := b.L.Type(), b.R.Type()
				switch {
				case b.Op.IsComparison(), b.Op == expr.IsDistinctFrom, b.Op == expr.IsNotDistinctFrom:
					require.Equal(t, lt, rt, "%s: %s", sql, b)
				case b.Op == expr.And, b.Op == expr.Or:
					require.Equal(t, sqltypes.BoolType, lt, "%s: %s", sql, b)
					require.Equal(t, sqltypes.BoolType, rt, "%s: %s", sql, b)
				case lt.Kind == sqltypes.Numeric && rt.Kind == sqltypes.Numeric && b.T.Kind == sqltypes.Numeric:
					// Unconstrained numerics differ only in display scale.
					require.True(t, arrow.TypeEqual(lt.Arrow(), rt.Arrow()), "%s: %s", sql, b)
					require.True(t, arrow.TypeEqual(lt.Arrow(), b.T.Arrow()), "%s: %s", sql, b)
				case categoryOf(lt) == catNumeric && categoryOf(rt) == catNumeric:
					require.Equal(t, lt, rt, "%s: %s", sql, b)
					require.Equal(t, lt, b.T, "%s: %s", sql, b)
				}
			case *expr.Unary:
				if b.Op == expr.Not {
					require.Equal(t, sqltypes.BoolType, b.X.Type(), "%s: %s", sql, b)
				}
			case *expr.In:
				for _, it := range b.List {
					require.Equal(t, b.X.Type(), it.Type(), "%s: %s", sql, b)
				}
			case *expr.Case:
				for _, w := range b.Whens {
					require.Equal(t, sqltypes.BoolType, w.Cond.Type(), "%s: %s", sql, b)
					require.Equal(t, b.T, w.Result.Type(), "%s: %s", sql, b)
				}
			}
			return true
		})
	}
	for _, c := range n.Children() {
		checkTyping(t, c, sql)
	}
}
