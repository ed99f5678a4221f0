package exec_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
)

// TestHashJoinVersusNestedLoop checks HashJoin (both build sides, INNER,
// LEFT, RIGHT and FULL, with and without a residual) against a nested loop written
// from the definition, on random data with NULL and duplicate keys.
func TestHashJoinVersusNestedLoop(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		rng := rand.New(rand.NewPCG(seed, 5))
		nl, nr := 1+rng.IntN(120), 1+rng.IntN(60)
		keys := 1 + rng.IntN(15)
		vals := func(n, null int, f func() string) []string {
			out := make([]string, n)
			for i := range out {
				if rng.IntN(100) < null {
					out[i] = "NULL"
				} else {
					out[i] = f()
				}
			}
			return out
		}
		lk := vals(nl, 10, func() string { return fmt.Sprint(rng.IntN(keys)) })
		lx := vals(nl, 10, func() string { return fmt.Sprint(rng.IntN(10)) })
		rk := vals(nr, 10, func() string { return fmt.Sprint(rng.IntN(keys)) })
		ry := vals(nr, 10, func() string { return fmt.Sprint(rng.IntN(10)) })
		inputs := func(mem memory.Allocator) []arrow.RecordBatch {
			return []arrow.RecordBatch{
				mkTable(t, mem, tcol{"k", sqltypes.Int8Type, lk}, tcol{"x", sqltypes.Int4Type, lx}),
				mkTable(t, mem, tcol{"k", sqltypes.Int8Type, rk}, tcol{"y", sqltypes.Int4Type, ry}),
			}
		}
		// Residual x < y over the joined row (x is column 1, y column 3).
		residual := bin(expr.Lt, bt, &expr.Column{Index: 1, T: sqltypes.Int4Type}, &expr.Column{Index: 3, T: sqltypes.Int4Type})
		for _, typ := range []exec.JoinType{exec.InnerJoin, exec.LeftJoin, exec.RightJoin, exec.FullJoin} {
			for _, withRes := range []bool{false, true} {
				// The reference: every pair with equal non-NULL keys
				// (and x < y, both non-NULL, with the residual); for LEFT,
				// left rows without any such pair once with NULLs.
				var want []string
				rmatched := make([]bool, nr)
				for i := 0; i < nl; i++ {
					matched := false
					for j := 0; j < nr; j++ {
						if lk[i] == "NULL" || lk[i] != rk[j] {
							continue
						}
						if withRes && (lx[i] == "NULL" || ry[j] == "NULL" || !(atoi(lx[i]) < atoi(ry[j]))) {
							continue
						}
						matched, rmatched[j] = true, true
						want = append(want, pgRow(lk[i], lx[i], rk[j], ry[j]))
					}
					if !matched && (typ == exec.LeftJoin || typ == exec.FullJoin) {
						want = append(want, pgRow(lk[i], lx[i], "NULL", "NULL"))
					}
				}
				for j := 0; j < nr; j++ {
					if !rmatched[j] && (typ == exec.RightJoin || typ == exec.FullJoin) {
						want = append(want, pgRow("NULL", "NULL", rk[j], ry[j]))
					}
				}
				slices.Sort(want)
				for _, buildLeft := range []bool{false, true} {
					name := fmt.Sprintf("seed=%d/%s/residual=%v/buildLeft=%v", seed, typ, withRes, buildLeft)
					t.Run(name, func(t *testing.T) {
						opts := exec.HashJoinOptions{}
						if buildLeft {
							opts.LeftRows, opts.RightRows = 1, 2
						}
						var res expr.Expr
						if withRes {
							res = residual
						}
						exectest.Run(t, exectest.Case{
							Inputs: inputs,
							Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
								return exec.NewHashJoin(in[0], in[1], mem, typ, []int{0}, []int{0}, res, eval.Env{}, opts)
							},
							Check: wantPGUnordered(want...),
						})
					})
				}
			}
		}
	}
}

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

// pgRow renders values as pgRows does (NULL as empty).
func pgRow(vs ...string) string {
	out := ""
	for i, v := range vs {
		if i > 0 {
			out += "|"
		}
		if v != "NULL" {
			out += v
		}
	}
	return out
}
