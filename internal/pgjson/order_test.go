package pgjson

import (
	"math/rand"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// pgOrder is PostgreSQL 15's order of these jsonb values, with its ranks
// (dense_rank() OVER (ORDER BY v::jsonb): equal ranks are equal values),
// captured from a real server.
var pgOrder = []struct {
	rank int
	text string
}{
	{1, `[]`},
	{2, `null`},
	{3, `""`},
	{4, `"A"`},
	{5, `"a"`},
	{6, `"ab"`},
	{7, `"b"`},
	{8, `-100`},
	{9, `-1.5`},
	{10, `-0`},
	{10, `0`},
	{11, `0.002`},
	{11, `2e-3`},
	{12, `1`},
	{12, `1.0`},
	{13, `1.5`},
	{14, `10`},
	{14, `1e1`},
	{15, `100`},
	{16, `false`},
	{17, `true`},
	{18, `[null]`},
	{19, `["a"]`},
	{20, `[1.00]`},
	{20, `[1]`},
	{21, `[2]`},
	{22, `[true]`},
	{23, `[[]]`},
	{24, `[{}]`},
	{25, `[1,2]`},
	{26, `[1,[2]]`},
	{27, `[1,[2,3]]`},
	{28, `[[1],1]`},
	{29, `{}`},
	{30, `{"a":null}`},
	{31, `{"a":"x"}`},
	{32, `{"a":1}`},
	{33, `{"a":2}`},
	{34, `{"a":[1]}`},
	{35, `{"a":{"b":1}}`},
	{36, `{"aa":1}`},
	{37, `{"b":1}`},
	{38, `{"a":1,"b":2}`},
	{38, `{"b":2,"a":1}`},
}

func TestCompareMatchesPostgres(t *testing.T) {
	vals := make([]Value, len(pgOrder))
	for i, c := range pgOrder {
		v, err := ParseJSONB(c.text)
		require.NoError(t, err, c.text)
		vals[i] = v
	}
	for i := range vals {
		for j := range vals {
			want := sign(pgOrder[i].rank - pgOrder[j].rank)
			require.Equal(t, want, Compare(vals[i], vals[j]), "%s vs %s", pgOrder[i].text, pgOrder[j].text)
			// The normal form orders as the source text does.
			nf, err := ParseJSONB(vals[i].JSONB())
			require.NoError(t, err)
			require.Equal(t, want, Compare(nf, vals[j]), "%s (normal form) vs %s", pgOrder[i].text, pgOrder[j].text)
			sameKey := string(AppendKey(nil, vals[i])) == string(AppendKey(nil, vals[j]))
			require.Equal(t, want == 0, sameKey, "keys of %s and %s", pgOrder[i].text, pgOrder[j].text)
		}
	}
	// A sort by Compare gives PostgreSQL's ranks in order.
	perm := rand.New(rand.NewSource(1)).Perm(len(vals))
	idx := make([]int, len(vals))
	copy(idx, perm)
	sort.SliceStable(idx, func(a, b int) bool { return Compare(vals[idx[a]], vals[idx[b]]) < 0 })
	for n := 1; n < len(idx); n++ {
		require.LessOrEqual(t, pgOrder[idx[n-1]].rank, pgOrder[idx[n]].rank)
	}
}

func TestCompareNumbers(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"0", "-0", 0}, {"0.0", "0e5", 0}, {"1e2", "100.00", 0}, {"123.456", "1.23456e2", 0},
		{"0.001", "0.01", -1}, {"-0.001", "-0.01", 1}, {"99", "100", -1}, {"-99", "-100", 1},
		{"1e-400", "0", 1}, {"-1e400", "1", -1}, {"12", "1.2e1", 0}, {"120", "12", 1},
	} {
		require.Equal(t, c.want, compareNumbers(c.a, c.b), "%s vs %s", c.a, c.b)
		require.Equal(t, -c.want, compareNumbers(c.b, c.a), "%s vs %s", c.b, c.a)
	}
}
