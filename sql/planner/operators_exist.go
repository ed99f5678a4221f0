package planner

import (
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// noEquality reports whether t has no equality operator in PostgreSQL:
// json (jsonb has one) and the pseudo-type void, and arrays of them. Such
// values cannot be grouped, deduplicated, joined on or compared, and
// PostgreSQL says so while planning, as the binder does here; the
// operators never see them.
func noEquality(t sqltypes.Type) bool {
	switch t.Kind {
	case sqltypes.JSON, sqltypes.Void:
		return true
	case sqltypes.Array:
		return noEquality(t.ElemType())
	}
	return false
}

// needEquality is PostgreSQL's error for grouping or deduplicating a
// value of type t (GROUP BY, DISTINCT, UNION, PARTITION BY): 42883 at at.
func (b *binder) needEquality(t sqltypes.Type, at ast.ExprNode) error {
	if !noEquality(t) {
		return nil
	}
	err := sqlerr.New(sqlerr.UndefinedFunction, "could not identify an equality operator for type %s", t)
	if at != nil {
		err = err.WithPosition(b.pos(at))
	}
	return err
}

// needOrdering is PostgreSQL's error for sorting by a value of type t
// (ORDER BY, a window's or an aggregate's ORDER BY): 42883 at at.
func (b *binder) needOrdering(t sqltypes.Type, at ast.ExprNode) error {
	if !noEquality(t) { // the types without equality are the ones without order
		return nil
	}
	err := sqlerr.New(sqlerr.UndefinedFunction, "could not identify an ordering operator for type %s", t).
		WithHint("Use an explicit ordering operator or modify the query.")
	if at != nil {
		err = err.WithPosition(b.pos(at))
	}
	return err
}

// needComparison is greatest's and least's error (no position, as in
// PostgreSQL).
func needComparison(t sqltypes.Type) error {
	if !noEquality(t) {
		return nil
	}
	return sqlerr.New(sqlerr.UndefinedFunction, "could not identify a comparison function for type %s", t)
}
