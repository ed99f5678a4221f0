package eval

import (
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// evalMasked evaluates n for the rows where mask is true; rows outside
// the mask hold NULL or any value (callers ignore them). Postgres evaluates
// CASE arms, the right side of AND/OR and later COALESCE arguments only
// when needed, so `CASE WHEN x = 0 THEN 0 ELSE 1/x END` must not raise
// division by zero: the rows that do not need an expression never reach
// it. An expression that cannot fail is simply evaluated over the whole
// batch, which is cheaper than selecting the rows.
func evalMasked(c *call, n node, b arrow.RecordBatch, mask []bool) (arrow.Array, error) {
	if !canFail(n) {
		return n.eval(c, b)
	}
	rows := int(b.NumRows())
	cnt := 0
	for _, m := range mask {
		if m {
			cnt++
		}
	}
	if cnt == rows {
		return n.eval(c, b)
	}
	if cnt == 0 {
		return array.MakeArrayOfNull(c.mem, n.typ().Arrow(), rows), nil
	}
	sub, err := FilterBatch(c.mem, b, mask)
	if err != nil {
		return nil, err
	}
	part, err := n.eval(c, sub)
	sub.Release()
	if err != nil {
		return nil, err
	}
	defer part.Release()
	which := make([]int, rows)
	idx := make([]int, rows)
	k := 0
	for i, m := range mask {
		which[i] = -1
		if m {
			which[i], idx[i] = 0, k
			k++
		}
	}
	return vec.Gather(c.mem, n.typ(), []arrow.Array{part}, which, idx), nil
}

// canFail reports whether evaluating n may raise an error for some row.
// It is conservative: only column references, literals, comparisons of
// fixed-width values, boolean logic and NULL tests are known safe.
func canFail(n node) bool {
	switch x := n.(type) {
	case *colNode, *litNode:
		return false
	case *isNullNode:
		return canFail(x.x)
	case *notNode:
		return canFail(x.x)
	case *logicNode:
		return canFail(x.l) || canFail(x.r)
	case *cmpNode:
		return canFail(x.l) || canFail(x.r)
	}
	return true
}

// boolVals reads a boolean array as (value, valid) slices.
func boolVals(a arrow.Array) (vals []bool, valid []bool) {
	ba := a.(*array.Boolean)
	vals = make([]bool, a.Len())
	valid = make([]bool, a.Len())
	for i := range vals {
		valid[i] = ba.IsValid(i)
		vals[i] = valid[i] && ba.Value(i)
	}
	return vals, valid
}

// logicNode is three-valued AND / OR; the right side is evaluated only
// for rows the left side does not decide.
type logicNode struct {
	and  bool
	l, r node
}

func (n *logicNode) typ() sqltypes.Type { return sqltypes.BoolType }

func (n *logicNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	la, err := n.l.eval(c, b)
	if err != nil {
		return nil, err
	}
	lv, lok := boolVals(la)
	la.Release()
	mask := make([]bool, len(lv))
	for i := range mask {
		// AND needs the right side unless left is FALSE; OR unless TRUE.
		mask[i] = !lok[i] || lv[i] == n.and
	}
	ra, err := evalMasked(c, n.r, b, mask)
	if err != nil {
		return nil, err
	}
	rv, rok := boolVals(ra)
	ra.Release()
	out := make([]bool, len(lv))
	valid := make([]bool, len(lv))
	for i := range out {
		decided := !n.and // the deciding value: FALSE for AND, TRUE for OR
		switch {
		case lok[i] && lv[i] == decided, rok[i] && rv[i] == decided:
			out[i], valid[i] = decided, true
		case lok[i] && rok[i]:
			out[i], valid[i] = !decided, true
		}
	}
	return vec.MakeBool(c.mem, out, valid), nil
}

type notNode struct{ x node }

func (n *notNode) typ() sqltypes.Type { return sqltypes.BoolType }

func (n *notNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	x, err := n.x.eval(c, b)
	if err != nil {
		return nil, err
	}
	v, valid := boolVals(x)
	x.Release()
	for i := range v {
		v[i] = valid[i] && !v[i]
	}
	return vec.MakeBool(c.mem, v, valid), nil
}

type isNullNode struct {
	x   node
	not bool
}

func (n *isNullNode) typ() sqltypes.Type { return sqltypes.BoolType }

func (n *isNullNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	x, err := n.x.eval(c, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	out := make([]bool, x.Len())
	for i := range out {
		out[i] = x.IsNull(i) != n.not
	}
	return vec.MakeBool(c.mem, out, nil), nil
}

// inNode is x IN (list): TRUE on a match, else NULL if x or any list value
// is NULL, else FALSE; NOT IN negates that.
type inNode struct {
	x    node
	list []node
	not  bool
}

func (n *inNode) typ() sqltypes.Type { return sqltypes.BoolType }

func (c *compiler) compileIn(e *expr.In) (node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	list, err := c.compileAll(e.List)
	if err != nil {
		return nil, err
	}
	for _, l := range list {
		if !vec.SameClass(l.typ(), x.typ()) {
			return nil, unsupported("IN", x.typ(), l.typ())
		}
	}
	return &inNode{x: x, list: list, not: e.Not}, nil
}

func (n *inNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	x, err := n.x.eval(c, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	rows := x.Len()
	found := make([]bool, rows)
	sawNull := make([]bool, rows)
	for _, ln := range n.list {
		la, err := ln.eval(c, b)
		if err != nil {
			return nil, err
		}
		cmp, err := vec.Comparator(n.x.typ(), x, la)
		if err != nil {
			la.Release()
			return nil, err
		}
		for i := 0; i < rows; i++ {
			if found[i] {
				continue
			}
			if x.IsNull(i) || la.IsNull(i) {
				sawNull[i] = true
				continue
			}
			if cmp(i, i) == 0 {
				found[i] = true
			}
		}
		la.Release()
	}
	valid := make([]bool, rows)
	for i := range found {
		valid[i] = found[i] || !sawNull[i]
		found[i] = found[i] != n.not
	}
	return vec.MakeBool(c.mem, found, valid), nil
}

// caseNode is a searched CASE; a simple CASE is compiled into one by
// comparing the operand with each WHEN value.
type caseNode struct {
	conds, results []node
	els            node // nil = NULL
	t              sqltypes.Type
}

func (n *caseNode) typ() sqltypes.Type { return n.t }

func (c *compiler) compileCase(e *expr.Case) (node, error) {
	n := &caseNode{t: e.T}
	var operand node
	if e.Operand != nil {
		var err error
		if operand, err = c.compile(e.Operand); err != nil {
			return nil, err
		}
	}
	for _, w := range e.Whens {
		cond, err := c.compile(w.Cond)
		if err != nil {
			return nil, err
		}
		if operand != nil {
			if !vec.SameClass(cond.typ(), operand.typ()) {
				return nil, unsupported("CASE operand =", operand.typ(), cond.typ())
			}
			cond = &cmpNode{op: expr.Eq, l: operand, r: cond}
		} else if cond.typ().Kind != sqltypes.Bool {
			return nil, sqlerr.New(sqlerr.DatatypeMismatch, "argument of CASE/WHEN must be type boolean, not type %s", cond.typ())
		}
		res, err := c.compile(w.Result)
		if err != nil {
			return nil, err
		}
		cres, err := c.coerce(res, e.T)
		if err != nil {
			return nil, sqlerr.New(sqlerr.DatatypeMismatch, "CASE result %s has type %s, expected %s", w.Result, res.typ(), e.T)
		}
		res = cres
		n.conds = append(n.conds, cond)
		n.results = append(n.results, res)
	}
	if e.Else != nil {
		els, err := c.compile(e.Else)
		if err != nil {
			return nil, err
		}
		cels, err := c.coerce(els, e.T)
		if err != nil {
			return nil, sqlerr.New(sqlerr.DatatypeMismatch, "CASE ELSE %s has type %s, expected %s", e.Else, els.typ(), e.T)
		}
		els = cels
		n.els = els
	}
	return n, nil
}

func (n *caseNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	rows := int(b.NumRows())
	remaining := make([]bool, rows)
	for i := range remaining {
		remaining[i] = true
	}
	which := make([]int, rows)
	for i := range which {
		which[i] = -1
	}
	var srcs []arrow.Array
	defer func() { vec.Release(srcs) }()
	for k, cond := range n.conds {
		ca, err := evalMasked(c, cond, b, remaining)
		if err != nil {
			return nil, err
		}
		cv, _ := boolVals(ca)
		ca.Release()
		take := make([]bool, rows)
		for i := range take {
			take[i] = remaining[i] && cv[i]
		}
		ra, err := evalMasked(c, n.results[k], b, take)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, ra)
		for i := range take {
			if take[i] {
				which[i] = len(srcs) - 1
				remaining[i] = false
			}
		}
	}
	if n.els != nil {
		ea, err := evalMasked(c, n.els, b, remaining)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, ea)
		for i := range remaining {
			if remaining[i] {
				which[i] = len(srcs) - 1
			}
		}
	}
	return vec.Pick(c.mem, n.t, srcs, which, rows), nil
}

// ---- LIKE ----

type likeNode struct {
	l, r   node
	ilike  bool
	negate bool
	last   string
	m      *likePattern
}

func (n *likeNode) typ() sqltypes.Type { return sqltypes.BoolType }

func (n *likeNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	l, r, err := eval2(c, b, n.l, n.r)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	defer r.Release()
	rows := l.Len()
	valid := vec.Validity(rows, l, r)
	ls, rs := l.(*array.String), r.(*array.String)
	out := make([]bool, rows)
	for i := range out {
		if !vec.Valid(valid, i) {
			continue
		}
		p := rs.Value(i)
		if n.m == nil || p != n.last {
			m, err := compileLike(p, n.ilike)
			if err != nil {
				return nil, err
			}
			n.m, n.last = m, p
		}
		s := ls.Value(i)
		if n.ilike {
			s = strings.ToLower(s)
		}
		out[i] = n.m.match(s) != n.negate
	}
	return vec.MakeBool(c.mem, out, valid), nil
}

// likePattern is a LIKE pattern as tokens: literal runes, '_' (any one
// character) and '%' (any run), with backslash escapes resolved.
type likePattern struct {
	toks []likeTok
}

type likeTok struct {
	kind byte // 'c' literal, '_' one, '%' any
	r    rune
}

func compileLike(p string, fold bool) (*likePattern, error) {
	if fold {
		p = strings.ToLower(p)
	}
	var lp likePattern
	for i := 0; i < len(p); {
		r, sz := utf8.DecodeRuneInString(p[i:])
		i += sz
		switch r {
		case '\\':
			if i >= len(p) {
				return nil, sqlerr.New("22025", "LIKE pattern must not end with escape character")
			}
			r2, sz2 := utf8.DecodeRuneInString(p[i:])
			i += sz2
			lp.toks = append(lp.toks, likeTok{kind: 'c', r: r2})
		case '%':
			if n := len(lp.toks); n > 0 && lp.toks[n-1].kind == '%' {
				continue
			}
			lp.toks = append(lp.toks, likeTok{kind: '%'})
		case '_':
			lp.toks = append(lp.toks, likeTok{kind: '_'})
		default:
			lp.toks = append(lp.toks, likeTok{kind: 'c', r: r})
		}
	}
	return &lp, nil
}

// match is the classic greedy wildcard match with one backtrack point per
// '%': linear in practice, O(n·m) at worst.
func (lp *likePattern) match(s string) bool {
	toks := lp.toks
	si, ti := 0, 0
	starT, starS := -1, 0
	for si < len(s) {
		if ti < len(toks) {
			t := toks[ti]
			switch t.kind {
			case '%':
				starT, starS = ti, si
				ti++
				continue
			case '_':
				_, sz := utf8.DecodeRuneInString(s[si:])
				si += sz
				ti++
				continue
			default:
				r, sz := utf8.DecodeRuneInString(s[si:])
				if r == t.r {
					si += sz
					ti++
					continue
				}
			}
		}
		if starT < 0 {
			return false
		}
		_, sz := utf8.DecodeRuneInString(s[starS:])
		starS += sz
		si, ti = starS, starT+1
	}
	for ti < len(toks) && toks[ti].kind == '%' {
		ti++
	}
	return ti == len(toks)
}
