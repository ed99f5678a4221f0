package planner

import (
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/ordering"
)

// prune drops the output columns of n its parent does not need (need[i]
// for output i) wherever that saves work, down to the scans. It returns
// the new node and where each old output column went (-1: dropped).
// Columns needed are always kept; some nodes keep more (Distinct and
// UnionAll keep all, Aggregate keeps its outputs).
func prune(n Node, need []bool) (Node, []int) {
	switch x := n.(type) {
	case *Scan:
		var cols []int
		var sc []Column
		m := make([]int, len(x.Columns))
		for i := range x.Columns {
			m[i] = -1
			if need[i] {
				m[i] = len(cols)
				cols = append(cols, x.Columns[i])
				sc = append(sc, x.cols[i])
			}
		}
		if len(cols) == 0 && len(x.Columns) > 0 {
			// Row count still matters (count(*)): read the narrowest
			// thing we can, the first column.
			m[0] = 0
			cols, sc = x.Columns[:1], x.cols[:1]
		}
		x.Columns, x.cols = cols, sc
		return x, m
	case *Filter:
		cn := orCols(need, x.Cond)
		in, m := prune(x.Input, cn)
		x.Input, x.Cond = in, remap(x.Cond, m)
		return x, m
	case *Project:
		cn := make([]bool, len(x.Input.Schema()))
		var exprs []expr.Expr
		var cols []Column
		m := make([]int, len(x.Exprs))
		for i, e := range x.Exprs {
			m[i] = -1
			if need[i] {
				m[i] = len(exprs)
				exprs = append(exprs, e)
				cols = append(cols, x.Cols[i])
				for _, c := range expr.Columns(e) {
					cn[c] = true
				}
			}
		}
		in, im := prune(x.Input, cn)
		for i := range exprs {
			exprs[i] = remap(exprs[i], im)
		}
		x.Input, x.Exprs, x.Cols = in, exprs, cols
		return x, m
	case *Sort:
		cn := append([]bool(nil), need...)
		for _, k := range x.Keys {
			cn[k.Col] = true
		}
		in, m := prune(x.Input, cn)
		keys := make(ordering.Lex, len(x.Keys))
		for i, k := range x.Keys {
			keys[i] = ordering.Key{Col: m[k.Col], Desc: k.Desc, NullsFirst: k.NullsFirst}
		}
		x.Input, x.Keys = in, keys
		return x, m
	case *Limit:
		in, m := prune(x.Input, need)
		x.Input = in
		return x, m
	case *AsofJoin:
		return pruneAsof(x, need)
	case *Join:
		return pruneJoin(x, need)
	case *LateralJoin:
		return pruneLateral(x, need) // lateral.go
	case *Aggregate:
		cn := make([]bool, len(x.Input.Schema()))
		for _, g := range x.GroupBy {
			orInto(cn, g)
		}
		for _, a := range x.Aggs {
			for _, e := range a.Args {
				orInto(cn, e)
			}
		}
		in, im := prune(x.Input, cn)
		for i := range x.GroupBy {
			x.GroupBy[i] = remap(x.GroupBy[i], im)
		}
		for i := range x.Aggs {
			for j := range x.Aggs[i].Args {
				x.Aggs[i].Args[j] = remap(x.Aggs[i].Args[j], im)
			}
		}
		x.Input = in
		return x, identity(len(x.cols))
	case *Window:
		return pruneWindow(x, need)
	case *DistinctOn:
		cn := append([]bool(nil), need...)
		for _, k := range x.Keys {
			cn[k] = true
		}
		in, m := prune(x.Input, cn)
		keys := make([]int, len(x.Keys))
		for i, k := range x.Keys {
			keys[i] = m[k]
		}
		order := make(ordering.Lex, len(x.Order))
		for i, k := range x.Order {
			order[i] = ordering.Key{Col: m[k.Col], Desc: k.Desc, NullsFirst: k.NullsFirst}
		}
		x.Input, x.Keys, x.Order = in, keys, order
		return x, m
	case *Distinct:
		x.Input = pruneAll(x.Input)
		return x, identity(len(x.Schema()))
	case *UnionAll:
		for i := range x.Inputs {
			x.Inputs[i] = pruneAll(x.Inputs[i])
		}
		return x, identity(len(x.Cols))
	case *RecursiveCTE:
		// The working table's rows are the whole output rows.
		x.Base, x.Recursive = pruneAll(x.Base), pruneAll(x.Recursive)
		return x, identity(len(x.cols))
	case *SetOp:
		// Every column is part of the row compared.
		x.Left, x.Right = pruneAll(x.Left), pruneAll(x.Right)
		return x, identity(len(x.Cols))
	}
	return n, identity(len(n.Schema()))
}

// pruneAll prunes below n keeping all of n's own columns.
func pruneAll(n Node) Node {
	all := make([]bool, len(n.Schema()))
	for i := range all {
		all[i] = true
	}
	out, _ := prune(n, all)
	return out
}

func identity(n int) []int {
	m := make([]int, n)
	for i := range m {
		m[i] = i
	}
	return m
}

func orInto(need []bool, e expr.Expr) {
	for _, c := range expr.Columns(e) {
		need[c] = true
	}
}

func orCols(need []bool, e expr.Expr) []bool {
	out := append([]bool(nil), need...)
	orInto(out, e)
	return out
}

// pruneAsof keeps the left columns needed above plus every on column and
// key, and narrows each right's Payload to the columns needed above.
func pruneAsof(j *AsofJoin, need []bool) (Node, []int) {
	lw := len(j.Left.Schema())
	ln := append([]bool(nil), need[:lw]...)
	for _, r := range j.Rights {
		ln[r.LeftOn] = true
		for _, k := range r.LeftKeys {
			ln[k] = true
		}
		if r.LeftCond != nil {
			orInto(ln, r.LeftCond)
		}
		for _, c := range r.PairLeft {
			ln[c] = true
		}
	}
	left, lm := prune(j.Left, ln)
	j.Left = left
	m := make([]int, len(need))
	copy(m, lm)
	out := 0
	for _, v := range lm {
		if v >= 0 {
			out++
		}
	}
	var cols []Column
	for i, c := range j.cols[:lw] {
		if lm[i] >= 0 {
			cols = append(cols, c)
		}
	}
	pos := lw
	for _, r := range j.Rights {
		rn := make([]bool, len(r.Input.Schema()))
		rn[r.On] = true
		for _, k := range r.Keys {
			rn[k] = true
		}
		if r.Cond != nil {
			orInto(rn, r.Cond)
		}
		for _, c := range r.PairRight {
			rn[c] = true
		}
		var keepPayload []int
		for pi, p := range r.Payload {
			m[pos+pi] = -1
			if need[pos+pi] {
				rn[p] = true
				keepPayload = append(keepPayload, pi)
			}
		}
		in, rm := prune(r.Input, rn)
		r.LeftOn = lm[r.LeftOn]
		for i, k := range r.LeftKeys {
			r.LeftKeys[i] = lm[k]
		}
		r.On = rm[r.On]
		for i, k := range r.Keys {
			r.Keys[i] = rm[k]
		}
		if r.LeftCond != nil {
			r.LeftCond = remap(r.LeftCond, lm)
		}
		if r.Cond != nil {
			r.Cond = remap(r.Cond, rm)
		}
		for i, c := range r.PairLeft {
			r.PairLeft[i] = lm[c]
		}
		for i, c := range r.PairRight {
			r.PairRight[i] = rm[c]
		}
		var payload []int
		for _, pi := range keepPayload {
			m[pos+pi] = out
			out++
			payload = append(payload, rm[r.Payload[pi]])
			cols = append(cols, j.cols[pos+pi])
		}
		pos += len(r.Payload)
		r.Input, r.Payload = in, payload
	}
	j.cols = cols
	return j, m
}

// pruneSides prunes the two inputs of a join whose columns are left's then
// right's, keeping also the columns cond reads; m maps the join's columns
// (-1: pruned), lm and rm each input's.
func pruneSides(l, r Node, ln, rn []bool, cond expr.Expr) (left, right Node, lm, rm, m []int) {
	lw := len(ln)
	for _, c := range expr.Columns(cond) {
		if c < lw {
			ln[c] = true
		} else {
			rn[c-lw] = true
		}
	}
	left, lm = prune(l, ln)
	right, rm = prune(r, rn)
	nl := len(left.Schema())
	m = make([]int, lw+len(rn))
	copy(m, lm)
	for i, v := range rm {
		m[lw+i] = -1
		if v >= 0 {
			m[lw+i] = nl + v
		}
	}
	return left, right, lm, rm, m
}

func pruneJoin(j *Join, need []bool) (Node, []int) {
	lw := len(j.Left.Schema())
	ln := append([]bool(nil), need[:lw]...)
	rn := append([]bool(nil), need[lw:]...)
	for _, k := range j.LeftKeys {
		ln[k] = true
	}
	for _, k := range j.RightKeys {
		rn[k] = true
	}
	left, right, lm, rm, m := pruneSides(j.Left, j.Right, ln, rn, j.Residual)
	for i, k := range j.LeftKeys {
		j.LeftKeys[i] = lm[k]
	}
	for i, k := range j.RightKeys {
		j.RightKeys[i] = rm[k]
	}
	if j.Residual != nil {
		j.Residual = remap(j.Residual, m)
	}
	j.Left, j.Right = left, right
	j.cols = joinColsOf(left.Schema(), right.Schema(), j.Kind)
	return j, m
}

// pruneWindow keeps the input columns needed above or by the window
// (partition, order, arguments) and every window function.
func pruneWindow(w *Window, need []bool) (Node, []int) {
	iw := len(w.Input.Schema())
	cn := append([]bool(nil), need[:iw]...)
	for _, p := range w.Partition {
		cn[p] = true
	}
	for _, k := range w.Order {
		cn[k.Col] = true
	}
	for _, f := range w.Funcs {
		for _, a := range f.Args {
			orInto(cn, a)
		}
	}
	in, im := prune(w.Input, cn)
	for i, p := range w.Partition {
		w.Partition[i] = im[p]
	}
	for i, k := range w.Order {
		w.Order[i].Col = im[k.Col]
	}
	for i := range w.Funcs {
		for j := range w.Funcs[i].Args {
			w.Funcs[i].Args[j] = remap(w.Funcs[i].Args[j], im)
		}
	}
	nin := len(in.Schema())
	m := make([]int, len(need))
	copy(m, im)
	cols := append([]Column(nil), in.Schema()...)
	for i := range w.Funcs {
		m[iw+i] = nin + i
		cols = append(cols, w.cols[iw+i])
	}
	w.Input, w.cols = in, cols
	return w, m
}
