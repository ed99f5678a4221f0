package planner

import (
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/ordering"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// asofOnConds classifies the conjuncts of an ON form (and the keys of
// MATCH_CONDITION ... USING) by the inputs their columns belong to (spec
// §2.5): the time condition is the one inequality or BETWEEN comparing a
// column of each input; an equality of a column of each input is a key;
// everything else (two columns of one input included) is an extra
// condition, returned with the parser's own extras.
//
// Two opposite inequalities on the same two columns (l.t >= r.t AND l.t <=
// r.t + 5) are one range: the first is the time condition and second the
// other, which the caller folds into its range (combineRange).
func (b *binder) asofOnConds(a *parser.AsofJoin, l, r *rel, cs *scope, lw int) (lkeys, rkeys []scopeCol, nullSafe []bool, extra []ast.ExprNode, second *parser.TimeCond, err error) {
	side := func(x *ast.ColumnNameExpr) (bool, error) {
		c, err := cs.resolve(b, x)
		return c.idx < lw, err
	}
	if !a.Match {
		var cross []parser.TimeCond
		for _, tc := range a.Cands {
			lx, err := side(tc.Left)
			if err != nil {
				return nil, nil, nil, nil, nil, err
			}
			rx, err := side(tc.Right)
			if err != nil {
				return nil, nil, nil, nil, nil, err
			}
			if lx != rx {
				cross = append(cross, tc)
				continue
			}
			extra = append(extra, tc.Expr)
		}
		switch {
		case len(cross) == 0:
			// Every candidate compares two columns of one input: point at
			// the first, the one the user most likely meant.
			return nil, nil, nil, nil, nil, sqlerr.New(sqlerr.SyntaxError, "ASOF JOIN ON needs one inequality (l.t >= r.t) or a BETWEEN range comparing a column of each input").
				WithPosition(b.pos(a.Cands[0].Expr)).WithHint("Write ON l.k = r.k AND l.t >= r.t, or MATCH_CONDITION (l.t >= r.t) ON l.k = r.k.")
		case len(cross) > 1:
			// Of several, the one comparing the columns both inputs are
			// ordered by is the time condition (or two opposite ones on
			// them, a range); the others decide eligibility per pair.
			var time []int
			ord := b.orderedCands(cross, l, r, cs, lw)
			switch {
			case len(cross) == 2 && b.rangePair(cross[0], cross[1], cs, lw):
				time = []int{0, 1}
			case len(ord) == 1:
				time = ord
			case len(ord) == 2 && b.rangePair(cross[ord[0]], cross[ord[1]], cs, lw):
				time = ord
			default:
				return nil, nil, nil, nil, nil, sqlerr.New(sqlerr.SyntaxError, "ASOF JOIN ON allows only one inequality or BETWEEN between the time columns").
					WithPosition(b.pos(cross[1].Expr)).WithHint("Name the time condition with MATCH_CONDITION (l.t >= r.t): every other condition in ON then decides eligibility per pair.")
			}
			for i, tc := range cross {
				if !slices.Contains(time, i) {
					extra = append(extra, tc.Expr)
				}
			}
			if len(time) == 2 {
				second = &cross[time[1]]
			}
			a.SetTime(cross[time[0]])
		default:
			a.SetTime(cross[0])
		}
	}
	for _, k := range a.Keys {
		ca, err := cs.resolve(b, k.A)
		if err != nil {
			return nil, nil, nil, nil, nil, err
		}
		cb, err := cs.resolve(b, k.B)
		if err != nil {
			return nil, nil, nil, nil, nil, err
		}
		switch {
		case ca.idx < lw && cb.idx >= lw:
		case cb.idx < lw && ca.idx >= lw:
			ca, cb = cb, ca
		default:
			extra = append(extra, k.Expr)
			continue
		}
		cb.idx -= lw
		lkeys, rkeys, nullSafe = append(lkeys, ca), append(rkeys, cb), append(nullSafe, k.NullSafe)
	}
	for _, u := range a.Using {
		lk, rk, err := b.asofUsingCol(a, l, r, u.Name.O, "USING")
		if err != nil {
			return nil, nil, nil, nil, nil, err
		}
		lkeys, rkeys, nullSafe = append(lkeys, lk), append(rkeys, rk), append(nullSafe, false)
	}
	return lkeys, rkeys, nullSafe, append(extra, a.Extra...), second, nil
}

// rangePair reports two candidate time conditions that are opposite
// inequalities (one bounding Δ above, one below) between the same two
// columns.
func (b *binder) rangePair(p, q parser.TimeCond, cs *scope, lw int) bool {
	var cols [2][2]int
	var upper [2]bool
	for i, tc := range []parser.TimeCond{p, q} {
		if tc.Form != parser.FormInequality {
			return false
		}
		x, err := cs.resolve(b, tc.Left)
		if err != nil {
			return false
		}
		y, err := cs.resolve(b, tc.Right)
		if err != nil {
			return false
		}
		op := tc.Op
		if x.idx >= lw {
			x, y, op = y, x, flip(op)
		}
		cols[i] = [2]int{x.idx, y.idx}
		upper[i] = op == opcode.GE || op == opcode.GT
	}
	return cols[0] == cols[1] && upper[0] != upper[1]
}

// combineRange folds the second of two opposite inequalities into ar's
// range (the first's, one side unbounded), as BETWEEN would give it (spec
// §3): lo > hi as written is 22023 at the lower bound; a range that only
// the strict forms' steps empty matches nothing.
func (b *binder) combineRange(a *parser.AsofJoin, ar *AsofRight, second parser.TimeCond, cs *scope, lw int, ct scopeCol) error {
	first := parser.TimeCond{Expr: a.Time, Form: a.Form, Left: a.Left, Right: a.Right, Op: a.Op, Off: a.Off, OffPos: a.OffPos}
	bounds := func(tc parser.TimeCond, strict bool) (lo, hi Bound, pos int, err error) {
		x, err := cs.resolve(b, tc.Left)
		if err != nil {
			return lo, hi, 0, err
		}
		swapped := x.idx >= lw
		op := tc.Op
		if swapped {
			op = flip(op)
		}
		if !strict {
			switch op {
			case opcode.GT:
				op = opcode.GE
			case opcode.LT:
				op = opcode.LE
			}
		}
		tmp := &AsofRight{}
		tmp.Lo, tmp.Hi = Bound{Unbounded: true}, Bound{Unbounded: true}
		pos = b.pos(tc.Expr)
		if tc.Off == nil {
			err = b.inequalityBounds(tmp, op, ct, a)
		} else {
			v := tc.Off
			if !swapped {
				v = negateNode(v)
			}
			saved := a.OffPos
			a.OffPos, pos = tc.OffPos, tc.OffPos
			err = b.offsetBounds(tmp, op, a, v, ct)
			a.OffPos = saved
		}
		return tmp.Lo, tmp.Hi, pos, err
	}
	var lo, hi, wlo, whi Bound
	loPos := 0
	for _, tc := range []parser.TimeCond{first, second} {
		l, h, pos, err := bounds(tc, true)
		if err != nil {
			return err
		}
		wl, wh, _, err := bounds(tc, false)
		if err != nil {
			return err
		}
		if !l.Unbounded {
			lo, wlo, loPos = l, wl, pos
		} else {
			hi, whi = h, wh
		}
	}
	lo.Pos = loPos
	ar.Lo, ar.Hi = lo, hi
	if lo.deferred() || hi.deferred() {
		return nil
	}
	if err := CheckAsofRange(wlo, whi, ct.typ, loPos); err != nil {
		return err
	}
	ar.Empty = steppedEmpty(lo, hi, ct.typ)
	return nil
}

// steppedEmpty reports a range whose strict edges crossed or met.
func steppedEmpty(lo, hi Bound, t sqltypes.Type) bool {
	if lo.Cal != nil || hi.Cal != nil {
		return false
	}
	meet := lo.Exclusive || hi.Exclusive
	switch {
	case isFloat(t):
		return lo.Float > hi.Float || lo.Float == hi.Float && meet
	case lo.HasDec && hi.HasDec:
		return lo.Dec.Greater(hi.Dec) || lo.Dec == hi.Dec && meet
	}
	return lo.Int > hi.Int || lo.Int == hi.Int && meet
}

// orderedCands returns the candidate time conditions comparing a left
// column the left input is ordered by with a right column the right input
// is ordered by.
func (b *binder) orderedCands(cross []parser.TimeCond, l, r *rel, cs *scope, lw int) []int {
	var found []int
	lo, ro := l.node.Ordering(), r.node.Ordering()
	for i, tc := range cross {
		x, err := cs.resolve(b, tc.Left)
		if err != nil {
			return nil
		}
		y, err := cs.resolve(b, tc.Right)
		if err != nil {
			return nil
		}
		if x.idx >= lw {
			x, y = y, x
		}
		if lo.Satisfies(ordering.Lex{ordering.Asc(x.idx)}) && ro.Satisfies(ordering.Lex{ordering.Asc(y.idx - lw)}) {
			found = append(found, i)
		}
	}
	return found
}

// offsetBounds turns an inequality with a constant offset into its range
// on Δ = right.t − left.t. op is the inequality as `left.t op right.t +
// c`, v the bound it gives (−c, or c when the user wrote the right column
// first): >= and > bound Δ above by v, <= and < below; the strict forms
// leave v itself out.
func (b *binder) offsetBounds(ar *AsofRight, op opcode.Op, a *parser.AsofJoin, v ast.ExprNode, lt scopeCol) error {
	upper := op == opcode.GE || op == opcode.GT
	strict := op == opcode.GT || op == opcode.LT
	bd, err := b.asofBound(v, a.OffPos, lt, !upper)
	if err != nil {
		return err
	}
	if strict && bd.Param == nil {
		bd = strictBound(b, bd, v, a.OffPos, lt, upper)
	}
	ar.Lo, ar.Hi = Bound{Unbounded: true}, Bound{Unbounded: true}
	if upper {
		ar.Hi = bd
	} else {
		ar.Lo = bd
	}
	return nil
}

// strictBound leaves the bound's own value out: one unit inward for exact
// types whose value is on the column's grid, an exclusive edge for floats
// and 128-bit decimals. A NUMERIC offset between two grid values was
// already rounded inward, so it stays inclusive.
func strictBound(b *binder, bd Bound, v ast.ExprNode, pos int, lt scopeCol, upper bool) Bound {
	if lt.typ.Kind == sqltypes.Numeric {
		other, err := b.asofBound(v, pos, lt, upper)
		if err == nil && (other.Int != bd.Int || other.Dec != bd.Dec) {
			return bd
		}
	}
	switch {
	case isFloat(lt.typ) || bd.HasDec && bd.Int == 0 && bd.Dec.Sign() != 0:
		bd.Exclusive = true
	case upper && bd.Int > math.MinInt64:
		bd.Int--
		bd.Float = float64(bd.Int)
		if bd.HasDec {
			bd.Dec = bd.Dec.Sub(decimal128.FromI64(1))
		}
	case !upper && bd.Int < math.MaxInt64:
		bd.Int++
		bd.Float = float64(bd.Int)
		if bd.HasDec {
			bd.Dec = bd.Dec.Add(decimal128.FromI64(1))
		}
	default:
		bd.Exclusive = true
	}
	return bd
}

// negateNode wraps e in a unary minus, keeping its position for errors.
func negateNode(e ast.ExprNode) ast.ExprNode {
	u := &ast.UnaryOperationExpr{Op: opcode.Minus, V: e}
	u.SetOriginTextPosition(e.OriginTextPosition())
	return u
}

// asofExtras binds the extra ON conditions and sorts them by the inputs
// they read: filters on the right input alone or on none (bound against
// the right input), conditions on the left input alone (bound against
// the left input), and conditions on both (bound against the join's
// scope). One that is not deterministic is 0A000.
func (b *binder) asofExtras(extra []ast.ExprNode, ar *AsofRight, l, r *rel, cs *scope, lw int) (filters, leftConds, pairConds []expr.Expr, err error) {
	for _, x := range extra {
		e, err := b.bindExpr(x, &exprCtx{sc: cs, clause: "JOIN conditions"})
		if err != nil {
			return nil, nil, nil, err
		}
		if volatile(e) {
			return nil, nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "ASOF JOIN condition %s is not deterministic, which is not supported", e).
				WithPosition(b.pos(x)).WithHint("Eligibility must not depend on when a row is read: compute the value in a subquery.")
		}
		var onLeft, onRight bool
		for _, c := range expr.Columns(e) {
			if c < lw {
				onLeft = true
			} else {
				onRight = true
			}
		}
		sc := r.sc
		switch {
		case onLeft && onRight:
			// Bound over the join's scope: left columns, then right ones.
			if e, err = b.coerce(e, sqltypes.BoolType, x, "argument of JOIN/ON"); err != nil {
				return nil, nil, nil, err
			}
			pairConds = append(pairConds, e)
			continue
		case onLeft:
			sc = l.sc
		}
		if e, err = b.bindExpr(x, &exprCtx{sc: sc, clause: "JOIN conditions"}); err != nil {
			return nil, nil, nil, err
		}
		if e, err = b.coerce(e, sqltypes.BoolType, x, "argument of JOIN/ON"); err != nil {
			return nil, nil, nil, err
		}
		if onLeft {
			leftConds = append(leftConds, e)
		} else {
			filters = append(filters, e)
		}
	}
	return filters, leftConds, pairConds, nil
}

// asofPairCond sets ar's condition on both inputs from e (bound over the
// join's scope, left columns below lw): PairCond reads a compact batch of
// the columns it needs, PairLeft then PairRight.
func asofPairCond(ar *AsofRight, e expr.Expr, lw, rw int) {
	m := make([]int, lw+rw)
	used := make([]bool, lw+rw)
	for _, c := range expr.Columns(e) {
		used[c] = true
	}
	var left, right []int
	for c, u := range used {
		switch {
		case !u:
		case c < lw:
			left = append(left, c)
		default:
			right = append(right, c-lw)
		}
	}
	for i, c := range left {
		m[c] = i
	}
	for i, c := range right {
		m[c+lw] = len(left) + i
	}
	ar.PairCond, ar.PairLeft, ar.PairRight = remap(e, m), left, right
}

// keysByValue reports key types of different classes that PostgreSQL
// compares by value, which the operator converts per side: an integer
// against a float or a NUMERIC of scale at most 18, a NUMERIC against a
// float.
func keysByValue(a, b sqltypes.Type) bool {
	num := func(t sqltypes.Type) bool { return t.Kind == sqltypes.Numeric && numericScale(t) <= 18 }
	switch {
	case a.IsInteger() && (isFloat(b) || num(b)), b.IsInteger() && (isFloat(a) || num(a)):
		return true
	case a.Kind == sqltypes.Numeric && isFloat(b), b.Kind == sqltypes.Numeric && isFloat(a):
		return true
	}
	return false
}
