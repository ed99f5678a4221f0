package eval

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// likeRegexp translates a LIKE pattern into an anchored regexp: the
// reference the hand-written matcher is checked against.
func likeRegexp(p string) *regexp.Regexp {
	var sb strings.Builder
	sb.WriteString(`(?s)\A`)
	rs := []rune(p)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; r {
		case '\\':
			i++
			sb.WriteString(regexp.QuoteMeta(string(rs[i])))
		case '%':
			sb.WriteString(`.*`)
		case '_':
			sb.WriteString(`.`)
		default:
			sb.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	sb.WriteString(`\z`)
	return regexp.MustCompile(sb.String())
}

// TestLikeMatchesRegexp compares the LIKE matcher with a regexp on random
// patterns and strings over a small alphabet (so matches are frequent),
// including multi-byte characters and escapes.
func TestLikeMatchesRegexp(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alpha := []string{"a", "b", "é", "%", "_", "\\"}
	gen := func(n int, pattern bool) string {
		var sb strings.Builder
		for i := 0; i < n; i++ {
			c := alpha[rng.IntN(len(alpha))]
			if !pattern && (c == "%" || c == "_" || c == "\\") && rng.IntN(2) == 0 {
				c = "a"
			}
			sb.WriteString(c)
		}
		s := sb.String()
		if pattern && strings.HasSuffix(s, "\\") && !strings.HasSuffix(s, "\\\\") {
			s += "a" // a trailing escape is an error, tested elsewhere
		}
		return s
	}
	for i := 0; i < 20000; i++ {
		p := gen(rng.IntN(7), true)
		lp, err := compileLike(p, false)
		if err != nil {
			// Only a pattern ending in an unpaired escape may fail.
			require.Contains(t, err.Error(), "escape", p)
			continue
		}
		re := likeRegexp(p)
		for k := 0; k < 5; k++ {
			s := gen(rng.IntN(8), false)
			require.Equal(t, re.MatchString(s), lp.match(s), "%q LIKE %q", s, p)
		}
	}
}
