package asofsql_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql"
	"github.com/stretchr/testify/require"
)

// The differential test runs random ASOF queries over random tables
// through SQL and compares every result, row order included, with a naive
// reference written from the spec (../shared/spec/asof-join.md §2): for
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

// dtypes are the on-column and key types a round uses: values are small
// integers rendered in each type (seconds for TIMESTAMP, days for DATE),
// bounds in the spelling spec §3 requires.
type dtypes struct {
	t, k string
}

// TEXT t is rendered zero-padded (bytewise order is numeric order) and
// joins in the inequality forms only; NUMERIC t is v·1000 with bounds in
// the same unit, beyond int64 unscaled units at its scale 16.
var tTypes = []string{"BIGINT", "INTEGER", "DOUBLE PRECISION", "TIMESTAMP", "DATE", "TEXT", "NUMERIC"}

func (d dtypes) tLit(v *int64) string {
	if v == nil {
		return "NULL"
	}
	switch d.t {
	case "TIMESTAMP":
		return "'" + time.Unix(1704067200+*v, 0).UTC().Format("2006-01-02 15:04:05") + "'"
	case "DATE":
		return "'" + time.Unix(1704067200+*v*86400, 0).UTC().Format("2006-01-02") + "'"
	case "TEXT":
		return fmt.Sprintf("'t%03d'", *v)
	case "NUMERIC":
		return fmt.Sprint(*v * 1000)
	}
	return fmt.Sprint(*v)
}

func (d dtypes) kLit(v *int64) string {
	if v == nil {
		return "NULL"
	}
	if d.k == "TEXT" {
		return fmt.Sprintf("'k%d'", *v)
	}
	return fmt.Sprint(*v)
}

func (d dtypes) bound(v int64) string {
	switch d.t {
	case "TIMESTAMP":
		return fmt.Sprintf("INTERVAL '%d seconds'", v)
	case "NUMERIC":
		return fmt.Sprint(v * 1000)
	}
	return fmt.Sprint(v)
}

// sql renders the join clause of right table alias a against the left.
func (s dspec) sql(alias string, d dtypes) string {
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
		on = fmt.Sprintf("t BETWEEN %s AND %s", d.bound(s.lo), d.bound(s.hi))
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

func randSpec(rng *rand.Rand, chained bool, d dtypes) dspec {
	s := dspec{left: rng.IntN(2) == 0, keyed: rng.IntN(3) > 0, later: rng.IntN(3) == 0, filter: rng.IntN(4) == 0}
	if d.t == "TEXT" || !chained && rng.IntN(3) == 0 {
		ops := []string{">=", ">", "<=", "<"}
		s.compat = ops[rng.IntN(len(ops))]
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

// insert loads rows in several INSERT statements (so scans merge several
// segments) and returns them in insertion order.
func insert(t *testing.T, db *asofsql.DB, table string, rows []drow, d dtypes, rng *rand.Rand) {
	for len(rows) > 0 {
		n := 1 + rng.IntN(len(rows))
		var vals []string
		for _, r := range rows[:n] {
			vals = append(vals, fmt.Sprintf("(%s, %s, %d)", d.tLit(r.t), d.kLit(r.k), r.id))
		}
		_, err := db.Exec(context.Background(), "INSERT INTO "+table+" VALUES "+strings.Join(vals, ", "))
		require.NoError(t, err)
		rows = rows[n:]
	}
}

func TestDifferentialAsof(t *testing.T) {
	// ASOFSQL_DIFF_SEED reruns with another seed (the failure message
	// names the seed).
	seed := uint64(20261130)
	if v, err := strconv.ParseUint(os.Getenv("ASOFSQL_DIFF_SEED"), 10, 64); err == nil {
		seed = v
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	queries := 0
	for round := 0; round < 15; round++ {
		db, err := asofsql.Open(":memory:", asofsql.WithAllocator(mem))
		require.NoError(t, err)
		d := dtypes{t: tTypes[round%len(tTypes)], k: []string{"BIGINT", "TEXT"}[rng.IntN(2)]}
		_, err = db.Exec(context.Background(), fmt.Sprintf(`
			CREATE TABLE l (t %[1]s, k %[2]s, id BIGINT) ORDER BY (t);
			CREATE TABLE r (t %[1]s, k %[2]s, id BIGINT) ORDER BY (t)`, d.t, d.k))
		require.NoError(t, err)
		var seq int64
		tmax := 5 + rng.IntN(40)
		kmax := 1 + rng.IntN(4)
		lrows := randRows(rng, rng.IntN(60), &seq, tmax, kmax)
		rrows := randRows(rng, rng.IntN(80), &seq, tmax, kmax)
		insert(t, db, "l", lrows, d, rng)
		insert(t, db, "r", rrows, d, rng)
		left, right := inputOrder(lrows), inputOrder(rrows)
		for q := 0; q < 15; q++ {
			specs := []dspec{randSpec(rng, false, d)}
			if specs[0].compat == "" && rng.IntN(3) == 0 {
				s := randSpec(rng, true, d)
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
				sql += " " + s.sql(fmt.Sprintf("r%d", i), d)
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
			require.Equal(t, want, got, "seed %d round %d (%s): %s", seed, round, d.t, sql)
			queries++
		}
		require.NoError(t, db.Close())
	}
	require.Equal(t, 15*15, queries)

}
