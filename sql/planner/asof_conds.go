package planner

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/sql/expr"
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
func (b *binder) asofOnConds(a *parser.AsofJoin, l, r *rel, cs *scope, lw int) (lkeys, rkeys []scopeCol, nullSafe []bool, extra []ast.ExprNode, err error) {
	side := func(x *ast.ColumnNameExpr) (bool, error) {
		c, err := cs.resolve(b, x)
		return c.idx < lw, err
	}
	if !a.Match {
		var cross []parser.TimeCond
		for _, tc := range a.Cands {
			lx, err := side(tc.Left)
			if err != nil {
				return nil, nil, nil, nil, err
			}
			rx, err := side(tc.Right)
			if err != nil {
				return nil, nil, nil, nil, err
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
			return nil, nil, nil, nil, sqlerr.New(sqlerr.SyntaxError, "ASOF JOIN ON needs one inequality (l.t >= r.t) or a BETWEEN range comparing a column of each input").
				WithPosition(b.pos(a.Cands[0].Expr)).WithHint("Write ON l.k = r.k AND l.t >= r.t, or MATCH_CONDITION (l.t >= r.t) ON l.k = r.k.")
		case len(cross) > 1:
			return nil, nil, nil, nil, sqlerr.New(sqlerr.SyntaxError, "ASOF JOIN ON allows only one inequality or BETWEEN between the time columns").
				WithPosition(b.pos(cross[1].Expr)).WithHint("Name the time condition with MATCH_CONDITION (l.t >= r.t): every other condition in ON then decides eligibility per pair.")
		}
		a.SetTime(cross[0])
	}
	for _, k := range a.Keys {
		ca, err := cs.resolve(b, k.A)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		cb, err := cs.resolve(b, k.B)
		if err != nil {
			return nil, nil, nil, nil, err
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
			return nil, nil, nil, nil, err
		}
		lkeys, rkeys, nullSafe = append(lkeys, lk), append(rkeys, rk), append(nullSafe, false)
	}
	return lkeys, rkeys, nullSafe, append(extra, a.Extra...), nil
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
// the right input), and conditions on the left input alone (bound
// against the left input). A condition on both inputs, or one that is not
// deterministic, is 0A000.
func (b *binder) asofExtras(extra []ast.ExprNode, ar *AsofRight, l, r *rel, cs *scope, lw int) (filters, leftConds []expr.Expr, err error) {
	for _, x := range extra {
		e, err := b.bindExpr(x, &exprCtx{sc: cs, clause: "JOIN conditions"})
		if err != nil {
			return nil, nil, err
		}
		if volatile(e) {
			return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "ASOF JOIN condition %s is not deterministic, which is not supported", e).
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
			return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "ASOF JOIN condition %s on both inputs is not supported", e).
				WithPosition(b.pos(x)).WithHint("Conditions on the left input %q alone or on the right input %q alone are supported; move this one to WHERE to filter the result instead.", l.desc.label(), ar.Name)
		case onLeft:
			sc = l.sc
		}
		if e, err = b.bindExpr(x, &exprCtx{sc: sc, clause: "JOIN conditions"}); err != nil {
			return nil, nil, err
		}
		if e, err = b.coerce(e, sqltypes.BoolType, x, "argument of JOIN/ON"); err != nil {
			return nil, nil, err
		}
		if onLeft {
			leftConds = append(leftConds, e)
		} else {
			filters = append(filters, e)
		}
	}
	return filters, leftConds, nil
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
