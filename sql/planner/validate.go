package planner

import (
	"fmt"

	"github.com/asofsql/asofsql/sql/ordering"
	"github.com/asofsql/asofsql/sqlerr"
)

// Validate checks every node's ordering requirements against its
// children's orderings (spec §4), innermost first. An unmet requirement is
// 0A000 naming the input and the column, with a hint giving both fixes;
// the planner never adds a sort itself. Validate sets AsofRight.KeysFirst
// where both inputs are ordered by (keys..., t) but not by t.
func Validate(n Node) error {
	for _, c := range n.Children() {
		if err := Validate(c); err != nil {
			return err
		}
	}
	j, ok := n.(*AsofJoin)
	if !ok {
		return checkGeneric(n)
	}
	left := j.Left.Ordering()
	for _, r := range j.Rights {
		right := r.Input.Ordering()
		lOK := left.Satisfies(ordering.Lex{ordering.Asc(r.LeftOn)})
		rOK := right.Satisfies(ordering.Lex{ordering.Asc(r.On)})
		r.KeysFirst = false
		if lOK && rOK {
			continue
		}
		if len(r.Keys) > 0 && !r.Kind.outer() && r.NullSafe == nil && r.LeftCond == nil && sameKeyTypes(j.Left.Schema(), r) && left.Satisfies(keysThen(r.LeftKeys, r.LeftOn)) && right.Satisfies(keysThen(r.Keys, r.On)) {
			r.KeysFirst = true
			continue
		}
		if !lOK {
			return unordered(j.Left, j.leftDesc, "left", r.LeftOn, r)
		}
		return unordered(r.Input, r.desc, "right", r.On, r)
	}
	return nil
}

// checkGeneric enforces RequiredOrdering for nodes other than AsofJoin
// (none of today's other nodes requires one; this keeps the contract).
func checkGeneric(n Node) error {
	req := n.RequiredOrdering()
	for i, c := range n.Children() {
		if i < len(req) && req[i] != nil && !c.Ordering().Satisfies(req[i]) {
			// No node but AsofJoin requires an order today; reaching this
			// is a planner bug, reported rather than run unordered.
			return sqlerr.New(sqlerr.InternalError, "input %d of %s is not ordered as required", i+1, describe(n))
		}
	}
	return nil
}

// unordered builds the spec §4 rejection for one input.
func unordered(in Node, d inputDesc, side string, col int, r *AsofRight) error {
	cols := in.Schema()
	c := cols[col]
	// Name the column the way the query can: a table or subquery input by
	// its alias, a join's column by its own qualifier.
	qual := qualName(c)
	if d.kind != "join" {
		qual = d.name + "." + c.Name
	}
	props := in.Ordering()
	detail := "It has no known order."
	if len(props.Lex) > 0 {
		detail = fmt.Sprintf("It is ordered by (%s).", props.Lex.Format(func(i int) string { return qualName(cols[i]) }))
	}
	var hint string
	switch d.kind {
	case "table":
		hint = fmt.Sprintf("Declare the table ordered, CREATE TABLE %s (...) ORDER BY (%s), or order the input in a subquery: (SELECT ... FROM %s ORDER BY %s) AS %s.",
			d.table, c.Name, d.table, c.Name, d.name)
	case "subquery":
		hint = fmt.Sprintf("End the subquery %s with ORDER BY %s, or read from a table declared with ORDER BY (%s).", d.name, c.Name, c.Name)
	case "view":
		hint = fmt.Sprintf("Redefine the view with a query that keeps an order by %s (CREATE OR REPLACE VIEW %s AS ... ORDER BY %s), or order the input in a subquery: (SELECT ... FROM %s ORDER BY %s) AS %s.",
			c.Name, d.table, c.Name, d.table, c.Name, d.name)
	default:
		use := ""
		if len(props.Lex) > 0 && !props.Lex[0].Desc {
			use = fmt.Sprintf("join on the column it is ordered by (%s), or ", qualName(cols[props.Lex[0].Col]))
		}
		hint = fmt.Sprintf("A join's output keeps its left input's order, so it is not ordered by %s: %sorder the input in a subquery, (SELECT ... ORDER BY %s).",
			qual, use, c.Name)
	}
	return sqlerr.New(sqlerr.FeatureNotSupported, "ASOF JOIN %s input %s is not ordered by %s", side, d, qual).
		WithDetail("%s", detail).WithHint("%s", hint).WithPosition(r.Pos)
}

func qualName(c Column) string {
	if c.Table != "" {
		return c.Table + "." + c.Name
	}
	return c.Name
}

// sameKeyTypes reports whether every key pair of r compares without a
// conversion (key-major inputs align groups by their encoded keys).
func sameKeyTypes(left []Column, r *AsofRight) bool {
	right := r.Input.Schema()
	for i := range r.Keys {
		if !keysComparable(left[r.LeftKeys[i]].Type, right[r.Keys[i]].Type) {
			return false
		}
	}
	return true
}
