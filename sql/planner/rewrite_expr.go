package planner

import "github.com/asofsql/asofsql/sql/expr"

// mapColumns returns a copy of e with every Column replaced by f(col)
// (which may return any expression). Nodes without columns are shared.
func mapColumns(e expr.Expr, f func(*expr.Column) expr.Expr) expr.Expr {
	switch x := e.(type) {
	case nil:
		return nil
	case *expr.Column:
		return f(x)
	case *expr.Cast:
		return &expr.Cast{X: mapColumns(x.X, f), T: x.T, Assign: x.Assign}
	case *expr.Unary:
		return &expr.Unary{Op: x.Op, X: mapColumns(x.X, f), T: x.T}
	case *expr.Binary:
		return &expr.Binary{Op: x.Op, L: mapColumns(x.L, f), R: mapColumns(x.R, f), T: x.T}
	case *expr.IsNull:
		return &expr.IsNull{X: mapColumns(x.X, f), Not: x.Not}
	case *expr.In:
		out := &expr.In{X: mapColumns(x.X, f), Not: x.Not}
		for _, it := range x.List {
			out.List = append(out.List, mapColumns(it, f))
		}
		return out
	case *expr.Case:
		out := &expr.Case{Operand: mapColumns(x.Operand, f), Else: mapColumns(x.Else, f), T: x.T}
		for _, w := range x.Whens {
			out.Whens = append(out.Whens, expr.When{Cond: mapColumns(w.Cond, f), Result: mapColumns(w.Result, f)})
		}
		return out
	case *expr.Func:
		out := &expr.Func{Fn: x.Fn, T: x.T}
		for _, a := range x.Args {
			out.Args = append(out.Args, mapColumns(a, f))
		}
		return out
	case *expr.Subquery:
		out := &expr.Subquery{Kind: x.Kind, Plan: x.Plan, T: x.T, ID: x.ID}
		for _, a := range x.Args {
			out.Args = append(out.Args, mapColumns(a, f))
		}
		return out
	}
	return e
}

// shift moves every column index of e by off.
func shift(e expr.Expr, off int) expr.Expr {
	if off == 0 {
		return e
	}
	return mapColumns(e, func(c *expr.Column) expr.Expr {
		return &expr.Column{Index: c.Index + off, Name: c.Name, T: c.T}
	})
}

// remap renumbers columns through m (old index -> new index).
func remap(e expr.Expr, m []int) expr.Expr {
	return mapColumns(e, func(c *expr.Column) expr.Expr {
		return &expr.Column{Index: m[c.Index], Name: c.Name, T: c.T}
	})
}

// volatile reports whether e calls a function whose value changes per
// call, which must not be duplicated or moved.
func volatile(e expr.Expr) bool {
	v := false
	expr.Walk(e, func(x expr.Expr) bool {
		if f, ok := x.(*expr.Func); ok && isVolatile(f) {
			v = true
		}
		return !v
	})
	return v
}

// colsWithin reports whether every column of e lies in [lo, hi).
func colsWithin(e expr.Expr, lo, hi int) bool {
	for _, c := range expr.Columns(e) {
		if c < lo || c >= hi {
			return false
		}
	}
	return true
}
