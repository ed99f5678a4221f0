package asofsql_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql"
	"github.com/stretchr/testify/require"
)

// The differential test runs random ASOF queries over random tables
// through SQL and compares every result, row order included, with a naive
// reference written from the spec (/work/shared/spec/asof-join.md §2): for
// each left row, scan every right row, keep the eligible ones, pick the
// winner by |Δ|, the tie rule and the same-t rule.

type drow struct {
	t, k *int64 // NULL when nil
	id   int64  // insertion sequence number: the input order of equal t
}

// inputOrder is the scan order of a table ORDER BY (t): t ascending,
// NULLs last, equal t in insertion order.
func inputOrder(rows []drow) []drow {
	out := append([]drow(nil), rows...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].t, out[j].t
		if a == nil || b == nil {
			return a != nil && b == nil
		}
		return *a < *b
	})
	return out
}

type dspec struct {
	left         bool // ASOF LEFT JOIN
	lo, hi       int64
	loInf, hiInf bool
	keyed        bool
	later        bool   // PREFER LATER
	filter       bool   // right-only condition: r.id % 3 <> 0
	compat       string // "" range form, else the inequality of the compatibility form
}

// sql renders the join clause of right table alias a against the left.
func (s dspec) sql(alias string) string {
	kind := "ASOF JOIN"
	if s.left {
		kind = "ASOF LEFT JOIN"
	}
	var on string
	if s.compat != "" {
		on = "l.t " + s.compat + " " + alias + ".t"
		if s.keyed {
			on = "l.k = " + alias + ".k AND " + on
		}
	} else {
		on = fmt.Sprintf("t BETWEEN %d AND %d", s.lo, s.hi)
	}
	if s.filter {
		on += " AND " + alias + ".id % 3 <> 0"
	}
	q := fmt.Sprintf("%s r AS %s ON %s", kind, alias, on)
	if s.compat == "" && s.keyed {
		q += " USING (k)"
	}
	if s.later {
		q += " PREFER LATER"
	}
	return q
}

// match is the reference: the index in right (input order) of the
// winner for l, or -1.
func (s dspec) match(l drow, right []drow) int {
	if l.t == nil || (s.keyed && l.k == nil) {
		return -1
	}
	best, bestDist, bestSign := -1, int64(0), 0
	for i, r := range right {
		if r.t == nil || (s.keyed && (r.k == nil || *r.k != *l.k)) || (s.filter && r.id%3 == 0) {
			continue
		}
		d := *r.t - *l.t
		if (!s.loInf && d < s.lo) || (!s.hiInf && d > s.hi) {
			continue
		}
		dist, sign := d, 0
		switch {
		case d < 0:
			dist, sign = -d, -1
		case d > 0:
			sign = 1
		}
		switch {
		case best < 0 || dist < bestDist:
			best, bestDist, bestSign = i, dist, sign
		case dist == bestDist && sign != bestSign:
			if (sign < 0) != s.later { // opposite sides: the tie rule
				best, bestSign = i, sign
			}
		case dist == bestDist && sign <= 0:
			best = i // same t at or before: the last one prevails
		}
	}
	return best
}

func randSpec(rng *rand.Rand, chained bool) dspec {
	s := dspec{left: rng.IntN(2) == 0, keyed: rng.IntN(3) > 0, later: rng.IntN(3) == 0, filter: rng.IntN(4) == 0}
	if !chained && rng.IntN(3) == 0 {
		s.compat = []string{">=", ">", "<=", "<"}[rng.IntN(4)]
		switch s.compat {
		case ">=":
			s.loInf, s.hi = true, 0
		case ">":
			s.loInf, s.hi = true, -1
		case "<=":
			s.lo, s.hiInf = 0, true
		case "<":
			s.lo, s.hiInf = 1, true
		}
		return s
	}
	s.lo = int64(rng.IntN(11) - 7)
	s.hi = s.lo + int64(rng.IntN(9))
	return s
}

func randRows(rng *rand.Rand, n int, seq *int64, tmax, kmax int) []drow {
	rows := make([]drow, n)
	for i := range rows {
		*seq++
		rows[i].id = *seq
		if rng.IntN(12) > 0 {
			t := int64(rng.IntN(tmax))
			rows[i].t = &t
		}
		if rng.IntN(10) > 0 {
			k := int64(rng.IntN(kmax))
			rows[i].k = &k
		}
	}
	return rows
}

func sqlInt(v *int64) string {
	if v == nil {
		return "NULL"
	}
	return fmt.Sprint(*v)
}

// insert loads rows in several INSERT statements (so scans merge several
// segments) and returns them in insertion order.
func insert(t *testing.T, db *asofsql.DB, table string, rows []drow, rng *rand.Rand) {
	for len(rows) > 0 {
		n := 1 + rng.IntN(len(rows))
		var vals []string
		for _, r := range rows[:n] {
			vals = append(vals, fmt.Sprintf("(%s, %s, %d)", sqlInt(r.t), sqlInt(r.k), r.id))
		}
		_, err := db.Exec(context.Background(), "INSERT INTO "+table+" VALUES "+strings.Join(vals, ", "))
		require.NoError(t, err)
		rows = rows[n:]
	}
}

func TestDifferentialAsof(t *testing.T) {
	seed := uint64(20261130)
	rng := rand.New(rand.NewPCG(seed, 1))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	queries := 0
	for round := 0; round < 12; round++ {
		db, err := asofsql.Open(":memory:", asofsql.WithAllocator(mem))
		require.NoError(t, err)
		_, err = db.Exec(context.Background(), `
			CREATE TABLE l (t BIGINT, k BIGINT, id BIGINT) ORDER BY (t);
			CREATE TABLE r (t BIGINT, k BIGINT, id BIGINT) ORDER BY (t)`)
		require.NoError(t, err)
		var seq int64
		tmax := 5 + rng.IntN(40)
		kmax := 1 + rng.IntN(4)
		lrows := randRows(rng, rng.IntN(60), &seq, tmax, kmax)
		rrows := randRows(rng, rng.IntN(80), &seq, tmax, kmax)
		insert(t, db, "l", lrows, rng)
		insert(t, db, "r", rrows, rng)
		left, right := inputOrder(lrows), inputOrder(rrows)
		for q := 0; q < 15; q++ {
			specs := []dspec{randSpec(rng, false)}
			if specs[0].compat == "" && rng.IntN(3) == 0 {
				s := randSpec(rng, true)
				// k is ambiguous in the left input unless the first join
				// merged it with USING (spec §2.7).
				s.keyed = s.keyed && specs[0].keyed
				specs = append(specs, s)
			}
			sql := "SELECT l.id"
			for i := range specs {
				sql += fmt.Sprintf(", r%d.id", i)
			}
			sql += " FROM l"
			for i, s := range specs {
				sql += " " + s.sql(fmt.Sprintf("r%d", i))
			}
			var want []string
			for _, lr := range left {
				row := []string{fmt.Sprint(lr.id)}
				keep := true
				for _, s := range specs {
					m := s.match(lr, right)
					switch {
					case m >= 0:
						row = append(row, fmt.Sprint(right[m].id))
					case s.left:
						row = append(row, "NULL")
					default:
						keep = false
					}
				}
				if keep {
					want = append(want, strings.Join(row, " | "))
				}
			}
			got, err := queryRows(t, db, mem, sql)
			require.NoError(t, err, sql)
			require.Equal(t, want, got, "seed %d round %d: %s", seed, round, sql)
			queries++
		}
		require.NoError(t, db.Close())
	}
	require.Equal(t, 12*15, queries)

}
