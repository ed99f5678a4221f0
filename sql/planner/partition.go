package planner

import (
	"slices"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
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

// Stored reads, for Partition, what it needs to know of a table's rows.
// Both methods count rows in the order a Scan produces them (its Range
// applied, not its Rows).
type Stored interface {
	// ValueAt is the value of table column col in the row at index row of
	// s's output as an int64 (integer, date and timestamp columns); ok is
	// false for NULL, for a row past the end and for other types.
	ValueAt(s *Scan, col int, row int64) (v int64, ok bool, err error)
	// RowsBefore counts the rows of s's output whose first ordering
	// column is below v (an int64 of the column's unit).
	RowsBefore(s *Scan, v int64) (int64, error)
	// Count counts the rows of s's output.
	Count(s *Scan) (int64, error)
}

// Partition cuts the row-wise plan root into at most n parts over the
// driving table's rows (balanced by the table's row count, or the rows of
// its Range, the last part
// open-ended so that rows the count misses still belong to one), or
// returns nil when root is not row-wise, n < 2, or the table has fewer
// rows than parts. root is left unchanged: each part is a copy of the
// nodes above the driving Scan.
//
// A part's ASOF joins then skip the right rows that part cannot match
// when at is given and the range has a finite lower end lo: the left
// table is ordered by its on column, so every left row of a part starting
// at row S has t >= t_S, and a right row with t < t_S + lo is eligible for
// none of them. The right Scan (of a table ordered by its on column)
// starts at the first row with t >= t_S + lo (its Rows): the rows before
// are passed over as whole stored batches, without being joined. A
// backward join (lo unbounded) reads the right rows from the start in
// every part: the rows before the part hold each key's prevailing row.
func Partition(root Node, n int, at Stored) ([]Node, error) {
	if n < 2 {
		return nil, nil
	}
	scan := drivingScan(root)
	if scan == nil || scan.Rows != nil {
		return nil, nil
	}
	total := scan.Table.Rows
	if scan.Range != nil && at != nil {
		// A range (WHERE ts >= ...) keeps part of the table: balance the
		// parts by what it keeps.
		var err error
		if total, err = at.Count(scan); err != nil {
			return nil, err
		}
	}
	if int64(n) > total {
		n = int(total)
	}
	if n < 2 {
		return nil, nil
	}
	parts := make([]Node, n)
	for i := range parts {
		r := RowRange{Start: total * int64(i) / int64(n), End: total * int64(i+1) / int64(n)}
		if i == n-1 {
			r.End = -1
		}
		p := &partitioner{r: r, at: at}
		parts[i] = p.restrict(root)
		if p.err != nil {
			return nil, p.err
		}
	}
	return parts, nil
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

type partitioner struct {
	r   RowRange
	at  Stored
	err error
}

// restrict copies the nodes from n down to its driving Scan, the copy of
// the Scan reading p.r.
func (p *partitioner) restrict(n Node) Node {
	switch x := n.(type) {
	case *Scan:
		c := *x
		c.Rows = &p.r
		return &c
	case *Filter:
		c := *x
		c.Input = p.restrict(x.Input)
		return &c
	case *Project:
		c := *x
		c.Input = p.restrict(x.Input)
		return &c
	case *AsofJoin:
		c := *x
		c.Left = p.restrict(x.Left)
		if p.r.Start > 0 && p.at != nil && p.err == nil {
			c.Rights = slices.Clone(c.Rights)
			for i, r := range c.Rights {
				c.Rights[i] = p.narrow(c.Left, r)
			}
		}
		return &c
	}
	panic("planner: restrict of a plan that is not row-wise")
}

// narrow returns r reading only the right rows a part of left can match
// (see Partition), or r itself when that cannot be told from the plan.
func (p *partitioner) narrow(left Node, r *AsofRight) *AsofRight {
	ls := underFilters(left)
	rs := underFilters(r.Input)
	if ls == nil || rs == nil || rs.Range != nil || rs.Rows != nil || r.Empty || r.KeysFirst ||
		r.Lo.Unbounded || r.Lo.Param != nil || r.Lo.Expr != nil || r.Lo.Cal != nil || r.Lo.HasDec {
		return r
	}
	lcol, rcol := ls.Columns[r.LeftOn], rs.Columns[r.On]
	if len(ls.Table.OrderKeys) == 0 || ls.Table.OrderKeys[0] != lcol || len(rs.Table.OrderKeys) == 0 || rs.Table.OrderKeys[0] != rcol {
		return r
	}
	lt, rt := ls.Table.Columns[lcol].Type, rs.Table.Columns[rcol].Type
	if lt != rt || (r.OnType.Kind != sqltypes.Unknown && r.OnType != lt) {
		return r
	}
	switch lt.Kind {
	case sqltypes.Int2, sqltypes.Int4, sqltypes.Int8, sqltypes.Date, sqltypes.Timestamp, sqltypes.TimestampTZ:
	default:
		return r
	}
	first, ok, err := p.at.ValueAt(ls, lcol, ls.Rows.Start)
	if err != nil {
		p.err = err
		return r
	}
	from := first + r.Lo.Int
	if !ok || (r.Lo.Int < 0 && from > first) || (r.Lo.Int > 0 && from < first) {
		return r // NULL (every later row is too: no match anyway), or overflow
	}
	skip, err := p.at.RowsBefore(rs, from)
	if err != nil {
		p.err = err
		return r
	}
	if skip == 0 {
		return r
	}
	c := *r
	c.Input = fromRow(r.Input, skip)
	return &c
}

// underFilters is the Scan under n's Filters, nil if n is something else.
func underFilters(n Node) *Scan {
	for {
		switch x := n.(type) {
		case *Filter:
			n = x.Input
		case *Scan:
			return x
		default:
			return nil
		}
	}
}

// fromRow copies the Filters over a Scan, the Scan starting at row start.
func fromRow(n Node, start int64) Node {
	switch x := n.(type) {
	case *Filter:
		c := *x
		c.Input = fromRow(x.Input, start)
		return &c
	case *Scan:
		c := *x
		c.Rows = &RowRange{Start: start, End: -1}
		return &c
	}
	panic("planner: fromRow of a node that is not a filtered Scan")
}
