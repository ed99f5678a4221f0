package ordering

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSatisfies(t *testing.T) {
	tests := []struct {
		name string
		p    Props
		req  Lex
		want bool
	}{
		{"empty requirement", Props{}, nil, true},
		{"no order", Props{}, Lex{Asc(0)}, false},
		{"exact", Props{Lex: Lex{Asc(0)}}, Lex{Asc(0)}, true},
		{"prefix of longer", Props{Lex: Lex{Asc(0), Asc(1)}}, Lex{Asc(0)}, true},
		{"second key only", Props{Lex: Lex{Asc(1), Asc(0)}}, Lex{Asc(0)}, false},
		{"longer requirement", Props{Lex: Lex{Asc(0)}}, Lex{Asc(0), Asc(1)}, false},
		{"descending is not ascending", Props{Lex: Lex{{Col: 0, Desc: true}}}, Lex{Asc(0)}, false},
		{"nulls first is not nulls last", Props{Lex: Lex{{Col: 0, NullsFirst: true}}}, Lex{Asc(0)}, false},
		{"leading constant key skipped", Props{Lex: Lex{Asc(1), Asc(0)}, Const: []int{1}}, Lex{Asc(0)}, true},
		{"constant required key skipped", Props{Lex: Lex{Asc(0)}, Const: []int{2}}, Lex{Asc(2), Asc(0)}, true},
		{"equivalent column", Props{Lex: Lex{Asc(0)}, Equiv: [][]int{{0, 3}}}, Lex{Asc(3)}, true},
		{"constant by equivalence", Props{Lex: Lex{Asc(1), Asc(0)}, Equiv: [][]int{{1, 4}}, Const: []int{4}}, Lex{Asc(0)}, true},
		{"keys then t", Props{Lex: Lex{Asc(2), Asc(0)}}, Lex{Asc(2), Asc(0)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.p.Satisfies(tt.req))
		})
	}
}

func TestProject(t *testing.T) {
	tests := []struct {
		name string
		p    Props
		src  []int
		want Props
	}{
		{"rename keeps order", Props{Lex: Lex{Asc(0)}}, []int{2, 0}, Props{Lex: Lex{Asc(1)}}},
		{"dropped key truncates", Props{Lex: Lex{Asc(0), Asc(1)}}, []int{1}, Props{}},
		{"dropped second key keeps prefix", Props{Lex: Lex{Asc(0), Asc(1)}}, []int{0}, Props{Lex: Lex{Asc(0)}}},
		{"computed column knows nothing", Props{Lex: Lex{Asc(0)}}, []int{-1}, Props{}},
		{"dropped constant key skipped", Props{Lex: Lex{Asc(1), Asc(0)}, Const: []int{1}}, []int{0}, Props{Lex: Lex{Asc(0)}}},
		{"duplicate output equivalent", Props{Lex: Lex{Asc(0)}}, []int{0, 0}, Props{Lex: Lex{Asc(0)}, Equiv: [][]int{{0, 1}}}},
		{"key through equivalent", Props{Lex: Lex{Asc(0)}, Equiv: [][]int{{0, 1}}}, []int{1}, Props{Lex: Lex{Asc(0)}}},
		{"constant kept", Props{Const: []int{3}}, []int{3, 1}, Props{Const: []int{0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.p.Project(tt.src))
		})
	}
}

func TestEquivAndShift(t *testing.T) {
	p := Props{Lex: Lex{Asc(0)}}
	p = p.WithEquiv(0, 2).WithEquiv(3, 4).WithEquiv(2, 4)
	require.Equal(t, [][]int{{0, 2, 3, 4}}, p.Equiv)
	require.True(t, p.Satisfies(Lex{Asc(3)}))
	// WithEquiv does not alias the receiver's classes.
	q := Props{Equiv: [][]int{{0, 1}}}
	_ = q.WithEquiv(1, 5)
	require.Equal(t, [][]int{{0, 1}}, q.Equiv)

	s := Props{Lex: Lex{Asc(1)}, Equiv: [][]int{{0, 1}}, Const: []int{2}}.Shift(10)
	require.Equal(t, Props{Lex: Lex{Asc(11)}, Equiv: [][]int{{10, 11}}, Const: []int{12}}, s)

	m := Props{Lex: Lex{Asc(0)}}.Merge(Props{Lex: Lex{Asc(5)}, Equiv: [][]int{{5, 6}}, Const: []int{7}})
	require.Equal(t, Props{Lex: Lex{Asc(0)}, Equiv: [][]int{{5, 6}}, Const: []int{7}}, m)
}

func TestFormat(t *testing.T) {
	l := Lex{Asc(0), {Col: 1, Desc: true, NullsFirst: true}, {Col: 2, Desc: true}, {Col: 3, NullsFirst: true}}
	names := []string{"t", "k", "x", "y"}
	require.Equal(t, "t, k DESC, x DESC NULLS LAST, y NULLS FIRST", l.Format(func(i int) string { return names[i] }))
	require.Equal(t, "#0", Lex{Asc(0)}.Format(nil))
}
