package planner

import (
	"github.com/asofsql/asofsql/sql/expr"
)

// Partitioned results (Arrow Flight SQL's parallel fetch). A query whose
// result is a row-wise function of one stored table's rows in their
// stored order can be cut into parts that run on their own, on one
// snapshot: part i restricts that driving table's Scan to a contiguous
// RowRange of the rows it produces, and the parts' results concatenated in
// order are the whole query's result. Row-wise here means every node from
// the root down to the driving Scan is a Filter, a Project, or an AsofJoin
// whose left input leads to it (each left row's output depends only on
// that row and the right inputs, and comes in left order), with right
// inputs that are themselves Scans, Filters and Projects (read whole by
// every part), no RIGHT or FULL join (unmatched right rows belong to no
// part), and no expression that calls a volatile function or holds a
// subquery. Anything else (aggregates, sorts, LIMIT, DISTINCT, windows,
// set operations, other joins, a driving input that is not a stored
// table) is not row-wise and gets one part.

// RowRange is the rows [Start, End) of a Scan's output, counted from 0 in
// the order it produces them; End < 0 means to the end.
type RowRange struct {
	Start, End int64
}

// Partition cuts the row-wise plan root into at most n parts over the
// driving table's rows (balanced by the table's row count, the last part
// open-ended so that rows the count misses still belong to one), or
// returns nil when root is not row-wise, n < 2, or the table has fewer
// rows than parts. root is left unchanged: each part is a copy of the
// nodes above the driving Scan.
func Partition(root Node, n int) []Node {
	if n < 2 {
		return nil
	}
	scan := drivingScan(root)
	if scan == nil || scan.Rows != nil {
		return nil
	}
	total := scan.Table.Rows
	if int64(n) > total {
		n = int(total)
	}
	if n < 2 {
		return nil
	}
	parts := make([]Node, n)
	for i := range parts {
		r := RowRange{Start: total * int64(i) / int64(n), End: total * int64(i+1) / int64(n)}
		if i == n-1 {
			r.End = -1
		}
		parts[i] = restrict(root, r)
	}
	return parts
}

// drivingScan returns the Scan whose rows drive the row-wise plan n, or
// nil when n is not row-wise.
func drivingScan(n Node) *Scan {
	switch x := n.(type) {
	case *Scan:
		return x
	case *Filter:
		if !rowWise(x.Cond) {
			return nil
		}
		return drivingScan(x.Input)
	case *Project:
		for _, e := range x.Exprs {
			if !rowWise(e) {
				return nil
			}
		}
		return drivingScan(x.Input)
	case *AsofJoin:
		for _, r := range x.Rights {
			if r.Kind.outer() || !rowWise(r.LeftCond) || !rowWise(r.Cond) || !rowWise(r.PairCond) || !stable(r.Input) {
				return nil
			}
		}
		return drivingScan(x.Left)
	}
	return nil
}

// stable reports whether n reads the same rows in the same order every
// time it runs on one snapshot: a Scan under Filters and Projects.
func stable(n Node) bool {
	switch x := n.(type) {
	case *Scan:
		return true
	case *Filter:
		return rowWise(x.Cond) && stable(x.Input)
	case *Project:
		for _, e := range x.Exprs {
			if !rowWise(e) {
				return false
			}
		}
		return stable(x.Input)
	}
	return false
}

// rowWise reports whether e's value for a row depends on that row alone:
// no volatile function, no subquery.
func rowWise(e expr.Expr) bool {
	ok := true
	expr.Walk(e, func(x expr.Expr) bool {
		switch f := x.(type) {
		case *expr.Func:
			ok = !isVolatile(f)
		case *expr.Subquery:
			ok = false
		}
		return ok
	})
	return ok
}

// restrict copies the nodes from n down to its driving Scan, the copy of
// the Scan reading r.
func restrict(n Node, r RowRange) Node {
	switch x := n.(type) {
	case *Scan:
		c := *x
		c.Rows = &r
		return &c
	case *Filter:
		c := *x
		c.Input = restrict(x.Input, r)
		return &c
	case *Project:
		c := *x
		c.Input = restrict(x.Input, r)
		return &c
	case *AsofJoin:
		c := *x
		c.Left = restrict(x.Left, r)
		return &c
	}
	panic("planner: restrict of a plan that is not row-wise")
}
