package ordering

import (
	"fmt"
	"slices"
	"strings"
)

// Key is one sort key: column Col of a node's output, ascending unless
// Desc, NULLs last unless NullsFirst (Postgres' defaults for ASC; a DESC
// key written without NULLS has NullsFirst set by the planner).
type Key struct {
	Col        int
	Desc       bool
	NullsFirst bool
}

// Asc is the catalog's key order for column col: ascending, NULLs last.
func Asc(col int) Key { return Key{Col: col} }

// sameDirection reports whether two keys order rows the same way.
func (k Key) sameDirection(o Key) bool { return k.Desc == o.Desc && k.NullsFirst == o.NullsFirst }

// Lex is a lexicographic ordering, most significant key first. A nil Lex
// is "no order".
type Lex []Key

// Format renders the ordering, naming columns with name (nil: #i).
func (l Lex) Format(name func(int) string) string {
	parts := make([]string, len(l))
	for i, k := range l {
		n := fmt.Sprintf("#%d", k.Col)
		if name != nil {
			n = name(k.Col)
		}
		switch {
		case k.Desc && !k.NullsFirst:
			n += " DESC NULLS LAST"
		case k.Desc:
			n += " DESC"
		case k.NullsFirst:
			n += " NULLS FIRST"
		}
		parts[i] = n
	}
	return strings.Join(parts, ", ")
}

// Props are the ordering facts of a node's output.
type Props struct {
	// Lex is the order rows come in (nil: none known).
	Lex Lex
	// Equiv are classes of columns holding equal values in every row
	// (each class has at least two members, no column is in two classes).
	Equiv [][]int
	// Const are columns holding a single value across the whole output.
	Const []int
}

// IsConst reports whether col is known constant.
func (p Props) IsConst(col int) bool { return slices.Contains(p.Const, col) }

// equivalent reports whether a and b are the same column or in one class.
func (p Props) equivalent(a, b int) bool {
	if a == b {
		return true
	}
	for _, c := range p.Equiv {
		if slices.Contains(c, a) && slices.Contains(c, b) {
			return true
		}
	}
	return false
}

// constClass reports whether col, or a column equivalent to it, is
// constant.
func (p Props) constClass(col int) bool {
	for _, c := range p.Const {
		if p.equivalent(c, col) {
			return true
		}
	}
	return false
}

// Satisfies reports whether every output of a node with these props is
// ordered by req. Constant columns can be skipped on either side (they
// never decide an order), and a key may be met by an equivalent column.
// An empty req is always satisfied.
func (p Props) Satisfies(req Lex) bool {
	have := p.Lex
	i := 0
	for _, r := range req {
		if p.constClass(r.Col) {
			continue
		}
		for i < len(have) && p.constClass(have[i].Col) {
			i++
		}
		if i >= len(have) {
			return false
		}
		h := have[i]
		if !p.equivalent(h.Col, r.Col) || !h.sameDirection(r) {
			return false
		}
		i++
	}
	return true
}

// WithConst returns p with cols recorded as constant (a filter col = c).
func (p Props) WithConst(cols ...int) Props {
	out := p.clone()
	for _, c := range cols {
		if !slices.Contains(out.Const, c) {
			out.Const = append(out.Const, c)
		}
	}
	return out
}

// WithEquiv returns p with a and b recorded as equal in every row (a
// filter a = b, or an inner equi-join).
func (p Props) WithEquiv(a, b int) Props {
	if p.equivalent(a, b) {
		return p
	}
	out := p.clone()
	var ca, cb = -1, -1
	for i, c := range out.Equiv {
		if slices.Contains(c, a) {
			ca = i
		}
		if slices.Contains(c, b) {
			cb = i
		}
	}
	switch {
	case ca < 0 && cb < 0:
		out.Equiv = append(out.Equiv, []int{a, b})
	case ca >= 0 && cb < 0:
		out.Equiv[ca] = append(out.Equiv[ca], b)
	case ca < 0 && cb >= 0:
		out.Equiv[cb] = append(out.Equiv[cb], a)
	default:
		out.Equiv[ca] = append(out.Equiv[ca], out.Equiv[cb]...)
		out.Equiv = slices.Delete(out.Equiv, cb, cb+1)
	}
	return out
}

func (p Props) clone() Props {
	out := Props{Lex: slices.Clone(p.Lex), Const: slices.Clone(p.Const)}
	for _, c := range p.Equiv {
		out.Equiv = append(out.Equiv, slices.Clone(c))
	}
	return out
}

// Project maps p through a projection whose output column i is input
// column src[i] (src[i] < 0: computed, nothing known). The ordering is
// kept up to its first key no output column carries (an input column
// may appear several times; any copy serves, and copies are equivalent).
func (p Props) Project(src []int) Props {
	// out(in) lists the output columns reading input column in, or one
	// equivalent to it.
	outsOf := func(in int) []int {
		var o []int
		for i, s := range src {
			if s >= 0 && p.equivalent(s, in) {
				o = append(o, i)
			}
		}
		return o
	}
	var res Props
	for _, k := range p.Lex {
		o := outsOf(k.Col)
		if len(o) == 0 {
			if p.constClass(k.Col) {
				// A constant key decides nothing: dropping it keeps the order.
				continue
			}
			break
		}
		res.Lex = append(res.Lex, Key{Col: o[0], Desc: k.Desc, NullsFirst: k.NullsFirst})
	}
	seen := map[int]bool{}
	for i, s := range src {
		if s < 0 || seen[i] {
			continue
		}
		o := outsOf(s)
		for _, x := range o {
			seen[x] = true
		}
		if len(o) > 1 {
			res.Equiv = append(res.Equiv, o)
		}
		if p.constClass(s) {
			res.Const = append(res.Const, o...)
		}
	}
	return res
}

// Shift returns p with every column index moved by off (the left or a
// right part of a join's output).
func (p Props) Shift(off int) Props {
	out := p.clone()
	for i := range out.Lex {
		out.Lex[i].Col += off
	}
	for _, c := range out.Equiv {
		for i := range c {
			c[i] += off
		}
	}
	for i := range out.Const {
		out.Const[i] += off
	}
	return out
}

// Merge adds the equivalences and constants of q (already in p's column
// space) to p, keeping p's Lex: a join's left order with facts about its
// right columns.
func (p Props) Merge(q Props) Props {
	out := p.clone()
	for _, c := range q.Equiv {
		for _, x := range c[1:] {
			out = out.WithEquiv(c[0], x)
		}
	}
	return out.WithConst(q.Const...)
}
