package exec_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// TestOrderedSetAgainstNaive compares percentile_cont, percentile_disc and
// mode (both directions), grouped by hash and by stream over random batch
// splits with empty batches, with a direct computation: sort each group's
// non-NULL values and read the answer off, as Postgres defines it.
func TestOrderedSetAgainstNaive(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rng := rand.New(rand.NewPCG(seed, 7))
			n := 1 + rng.IntN(700)
			groups := 1 + rng.IntN(30)
			frac := []float64{0, 0.1, 0.25, 0.5, 0.9, 1, 0.333}[rng.IntN(7)]
			ks, vs, ss := make([]string, n), make([]string, n), make([]string, n)
			type row struct {
				k    int
				v    *float64
				s    *string
				vnul bool
			}
			rows := make([]row, n)
			for i := range rows {
				r := row{k: rng.IntN(groups)}
				ks[i] = fmt.Sprint(r.k)
				vs[i], ss[i] = "NULL", "NULL"
				if rng.IntN(10) > 0 {
					v := float64(rng.IntN(200)) / 4
					r.v, vs[i] = &v, strconv.FormatFloat(v, 'f', -1, 64)
				}
				if rng.IntN(10) > 0 {
					s := fmt.Sprintf("s%02d", rng.IntN(12))
					r.s, ss[i] = &s, s
				}
				rows[i] = r
			}
			tbl := mkTable(t, mem, tcol{"k", sqltypes.Int4Type, ks}, tcol{"v", sqltypes.Float8Type, vs}, tcol{"s", sqltypes.TextType, ss})
			defer tbl.Release()
			k := &expr.Column{Index: 0, Name: "k", T: sqltypes.Int4Type}
			v := &expr.Column{Index: 1, Name: "v", T: sqltypes.Float8Type}
			s := &expr.Column{Index: 2, Name: "s", T: sqltypes.TextType}
			f := &expr.Literal{Value: frac, T: sqltypes.Float8Type}
			fs := &expr.Literal{Value: []any{frac, nil, frac}, T: sqltypes.ArrayOf(sqltypes.Float8Type)}
			set := func(fn string, desc bool, args ...expr.Expr) exec.AggSpec {
				return exec.AggSpec{Func: fn, Args: args, Desc: desc, Name: fn}
			}
			aggs := []exec.AggSpec{
				set("percentile_cont", false, v, f), set("percentile_cont", true, v, f),
				set("percentile_disc", false, v, f), set("percentile_disc", true, s, f),
				set("mode", false, s), set("mode", true, v),
				// Arrays of fractions: each element is the scalar form's
				// answer (checked below against columns 1 and 4).
				set("percentile_cont", false, v, fs), set("percentile_disc", true, s, fs),
			}
			// The naive answers, one line per group as pgRows prints them.
			var want []string
			for g := 0; g < groups; g++ {
				var fv []float64
				var sv []string
				for _, r := range rows {
					if r.k != g {
						continue
					}
					if r.v != nil {
						fv = append(fv, *r.v)
					}
					if r.s != nil {
						sv = append(sv, *r.s)
					}
				}
				if len(fv) == 0 && len(sv) == 0 && !slices.ContainsFunc(rows, func(r row) bool { return r.k == g }) {
					continue
				}
				asc := slices.Sorted(slices.Values(fv))
				desc := slices.Clone(asc)
				slices.Reverse(desc)
				sasc := slices.Sorted(slices.Values(sv))
				sdesc := slices.Clone(sasc)
				slices.Reverse(sdesc)
				cont := func(xs []float64) string {
					if len(xs) == 0 {
						return ""
					}
					p := frac * float64(len(xs)-1)
					lo, hi := math.Floor(p), math.Ceil(p)
					return fmt.Sprint(xs[int(lo)] + (p-lo)*(xs[int(hi)]-xs[int(lo)]))
				}
				disc := func(n int) int { return max(int(math.Ceil(frac*float64(n))), 1) - 1 }
				line := []string{fmt.Sprint(g), cont(asc), cont(desc), "", "", "", ""}
				if len(asc) > 0 {
					line[3] = fmt.Sprint(asc[disc(len(asc))])
					line[6] = fmt.Sprint(modeOf(desc))
				}
				if len(sdesc) > 0 {
					line[4] = sdesc[disc(len(sdesc))]
					line[5] = modeOf(sasc)
				}
				want = append(want, strings.Join(line, "|"))
			}
			slices.Sort(want)
			for _, stream := range []bool{false, true} {
				got := runAgg(t, mem, rng, tbl, seed, k, aggs, stream)
				require.Equal(t, len(want), len(got), "stream=%v", stream)
				for i := range want {
					cells := strings.Split(got[i], "|")
					require.Len(t, cells, 9)
					for _, c := range [][2]int{{1, 7}, {4, 8}} {
						multi := ""
						if one := cells[c[0]]; one != "" {
							multi = "{" + one + ",NULL," + one + "}"
						}
						require.Equal(t, multi, cells[c[1]], "stream=%v: %s", stream, got[i])
					}
					require.Equal(t, normFloats(want[i]), normFloats(strings.Join(cells[:7], "|")), "stream=%v", stream)
				}
			}
		})
	}
}

// modeOf is the most frequent value of sorted xs, the first of equally
// frequent ones.
func modeOf[T comparable](xs []T) T {
	best, bestN := xs[0], 0
	for i := 0; i < len(xs); {
		j := i
		for j < len(xs) && xs[j] == xs[i] {
			j++
		}
		if j-i > bestN {
			best, bestN = xs[i], j-i
		}
		i = j
	}
	return best
}

// normFloats rewrites every field that parses as a number in Go's
// shortest form, so Postgres' float text and fmt agree.
func normFloats(line string) string {
	parts := strings.Split(line, "|")
	for i, p := range parts {
		if f, err := strconv.ParseFloat(p, 64); err == nil {
			parts[i] = strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	return strings.Join(parts, "|")
}
