package planner

import (
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/sql/expr"
)

// optimize applies the rewrites that never change results, in order:
// filter pushdown (spec-safe: never into an ASOF join's right side, never
// below the null-extended side of a LEFT join), scan ranges from filters
// on a table's first ordering column, and projection pruning so scans
// read only the columns the query uses.
func optimize(n Node) (Node, error) {
	n = pushDown(n)
	n = scanRanges(n)
	all := make([]bool, len(n.Schema()))
	for i := range all {
		all[i] = true
	}
	n, _ = prune(n, all)
	return n, nil
}

// mapChildren replaces each child c of n by f(c), in place.
func mapChildren(n Node, f func(Node) Node) Node {
	switch x := n.(type) {
	case *Filter:
		x.Input = f(x.Input)
	case *Project:
		x.Input = f(x.Input)
	case *AsofJoin:
		x.Left = f(x.Left)
		for _, r := range x.Rights {
			r.Input = f(r.Input)
		}
	case *Sort:
		x.Input = f(x.Input)
	case *Limit:
		x.Input = f(x.Input)
	case *Aggregate:
		x.Input = f(x.Input)
	case *Join:
		x.Left, x.Right = f(x.Left), f(x.Right)
	case *LateralJoin:
		x.Left, x.Right = f(x.Left), f(x.Right)
	case *UnionAll:
		for i := range x.Inputs {
			x.Inputs[i] = f(x.Inputs[i])
		}
	case *RecursiveCTE:
		x.Base, x.Recursive = f(x.Base), f(x.Recursive)
	case *SetOp:
		x.Left, x.Right = f(x.Left), f(x.Right)
	case *Distinct:
		x.Input = f(x.Input)
	case *DistinctOn:
		x.Input = f(x.Input)
	case *Window:
		x.Input = f(x.Input)
	case *Repartition:
		x.Input = f(x.Input)
	case *Merge:
		x.Input = f(x.Input)
	}
	return n
}

// pushDown moves each Filter's conjuncts as far down as semantics allow.
func pushDown(n Node) Node {
	n = mapChildren(n, pushDown)
	f, ok := n.(*Filter)
	if !ok {
		return n
	}
	var keep []expr.Expr
	in := f.Input
	for _, c := range expr.Conjuncts(f.Cond) {
		var pushed bool
		in, pushed = pushInto(in, c)
		if !pushed {
			keep = append(keep, c)
		}
	}
	if len(keep) == 0 {
		return in
	}
	return &Filter{Input: in, Cond: expr.AndAll(keep...)}
}

// addFilter puts cond on top of n (merging with a Filter there) and
// pushes it further down.
func addFilter(n Node, cond expr.Expr) Node {
	if f, ok := n.(*Filter); ok {
		return pushDown(&Filter{Input: f.Input, Cond: expr.AndAll(f.Cond, cond)})
	}
	return pushDown(&Filter{Input: n, Cond: cond})
}

// pushInto tries to place conjunct c (over n's output) below n.
func pushInto(n Node, c expr.Expr) (Node, bool) {
	if volatile(c) {
		return n, false
	}
	switch x := n.(type) {
	case *Filter:
		return addFilter(x.Input, expr.AndAll(x.Cond, c)), true
	case *Project:
		sub := mapColumns(c, func(col *expr.Column) expr.Expr { return x.Exprs[col.Index] })
		if volatile(sub) {
			return n, false
		}
		x.Input = addFilter(x.Input, sub)
		return x, true
	case *Sort:
		x.Input = addFilter(x.Input, c)
		return x, true
	case *AsofJoin:
		// Left-only conditions select left rows; each left row's winner
		// does not depend on the other left rows, so filtering first is
		// the same. Right columns are never filtered before the join: that
		// would change which row wins (spec §2.5). Not under RIGHT or
		// FULL: a left row filtered first would leave its winner unmatched,
		// output with NULL left columns the filter no longer sees.
		if !x.outer() && colsWithin(c, 0, len(x.Left.Schema())) {
			x.Left = addFilter(x.Left, c)
			return x, true
		}
	case *LateralJoin:
		// Left-only conditions select left rows, which are joined one by
		// one (INNER or LEFT): filtering first is the same.
		if colsWithin(c, 0, len(x.Left.Schema())) {
			x.Left = addFilter(x.Left, c)
			return x, true
		}
	case *Join:
		lw := len(x.Left.Schema())
		switch {
		case !x.Kind.leftNullable() && colsWithin(c, 0, lw):
			// (Below a RIGHT or FULL join the left rows are the padded
			// side: filtering them first would turn a filtered-out row
			// into a NULL-padded one.)
			x.Left = addFilter(x.Left, c)
			return x, true
		case !x.Kind.rightNullable() && x.Kind != JoinFull && colsWithin(c, lw, lw+len(x.Right.Schema())):
			x.Right = addFilter(x.Right, shift(c, -lw))
			return x, true
		case x.Kind == JoinCross:
			x.Kind = JoinInner
			if lk, rk, ok := equiPair(c, lw); ok {
				x.LeftKeys, x.RightKeys = append(x.LeftKeys, lk), append(x.RightKeys, rk-lw)
			} else {
				x.Residual = expr.AndAll(x.Residual, c)
			}
			return x, true
		case x.Kind == JoinInner:
			if lk, rk, ok := equiPair(c, lw); ok {
				x.LeftKeys, x.RightKeys = append(x.LeftKeys, lk), append(x.RightKeys, rk-lw)
			} else {
				x.Residual = expr.AndAll(x.Residual, c)
			}
			return x, true
		}
	}
	return n, false
}

// scanRanges turns conjuncts `col op constant` on a table's first
// ordering column, in a Filter right above its Scan, into the Scan's
// Range so whole segments are skipped. The Filter stays: the range only
// prunes.
func scanRanges(n Node) Node {
	n = mapChildren(n, scanRanges)
	f, ok := n.(*Filter)
	if !ok {
		return n
	}
	s, ok := f.Input.(*Scan)
	if !ok || len(s.Table.OrderKeys) == 0 {
		return n
	}
	key := -1
	for i, c := range s.Columns {
		if c == s.Table.OrderKeys[0] {
			key = i
		}
	}
	if key < 0 {
		return n
	}
	colType := s.cols[key].Type
	r := &catalog.Range{}
	found := false
	for _, c := range expr.Conjuncts(f.Cond) {
		b, ok := c.(*expr.Binary)
		if !ok || !b.Op.IsComparison() || b.Op == expr.Ne {
			continue
		}
		op, col, lit := b.Op, b.L, b.R
		if _, ok := col.(*expr.Column); !ok {
			op, col, lit = flipCmp(op), b.R, b.L
		}
		cc, ok := col.(*expr.Column)
		l, ok2 := lit.(*expr.Literal)
		if !ok || !ok2 || cc.Index != key || l.Value == nil || l.T != colType {
			continue
		}
		v := l.Value
		switch op {
		case expr.Eq:
			tightenLo(r, v, false)
			tightenHi(r, v, false)
		case expr.Gt:
			tightenLo(r, v, true)
		case expr.Ge:
			tightenLo(r, v, false)
		case expr.Lt:
			tightenHi(r, v, true)
		case expr.Le:
			tightenHi(r, v, false)
		}
		found = true
	}
	if found {
		s.Range, s.rangeType = r, colType
	}
	return n
}

func flipCmp(op expr.BinaryOp) expr.BinaryOp {
	switch op {
	case expr.Lt:
		return expr.Gt
	case expr.Le:
		return expr.Ge
	case expr.Gt:
		return expr.Lt
	case expr.Ge:
		return expr.Le
	}
	return op
}

func tightenLo(r *catalog.Range, v any, ex bool) {
	if r.Lo == nil {
		r.Lo, r.LoExclusive = v, ex
		return
	}
	c := cmpValue(v, r.Lo)
	if c > 0 || c == 0 && ex {
		r.Lo, r.LoExclusive = v, ex
	}
}

func tightenHi(r *catalog.Range, v any, ex bool) {
	if r.Hi == nil {
		r.Hi, r.HiExclusive = v, ex
		return
	}
	c := cmpValue(v, r.Hi)
	if c < 0 || c == 0 && ex {
		r.Hi, r.HiExclusive = v, ex
	}
}

// cmpValue compares two literal values of one type.
func cmpValue(a, b any) int {
	switch x := a.(type) {
	case int64:
		return cmp3(x, b.(int64))
	case int32:
		return cmp3(x, b.(int32))
	case float64:
		return cmp3(x, b.(float64))
	case string:
		return cmp3(x, b.(string))
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case decimal128.Num:
		return x.Cmp(b.(decimal128.Num))
	}
	return 0
}

func cmp3[T int64 | int32 | float64 | string](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
