package expr

import (
	"fmt"
	"strings"

	"github.com/asofsql/asofsql/sqltypes"
)

// SubqueryKind says what a Subquery's rows become.
type SubqueryKind uint8

const (
	// ScalarSub is `(SELECT x ...)`: the one row's value, NULL for no row,
	// SQLSTATE 21000 for more than one.
	ScalarSub SubqueryKind = iota
	// ExistsSub is `EXISTS (SELECT ...)`: whether there is a row.
	ExistsSub
	// AnySub is `x op ANY (SELECT y ...)` (and `x IN (...)`): the plan's
	// one BOOLEAN column is `x op y` per row; the result is TRUE if any row
	// is TRUE, else NULL if any is NULL, else FALSE (FALSE for no row).
	AnySub
	// AllSub is `x op ALL (SELECT y ...)`: FALSE if any row is FALSE, else
	// NULL if any is NULL, else TRUE (TRUE for no row).
	AllSub
	// ArraySub is `ARRAY(SELECT x ...)`: the rows' values, in order, as
	// Postgres array text (`{a,"b c",NULL}`); the plan's one column is
	// already TEXT (elements in their text form).
	ArraySub
)

var subKindNames = [...]string{ScalarSub: "", ExistsSub: "EXISTS ", AnySub: "ANY ", AllSub: "ALL ", ArraySub: "ARRAY"}

// Subquery is a subquery used as an expression. Plan is the subquery's
// planner.Node (plain data, typed any so this package stays below the
// planner); it reads the outer row only through OuterRef{N}, whose value
// is Args[N-1] evaluated over the outer row. A Subquery without Args is
// uncorrelated: it has one value for the whole statement.
type Subquery struct {
	Kind SubqueryKind
	Plan any
	Args []Expr
	T    sqltypes.Type
	// ID numbers the subqueries of a statement from 1 for EXPLAIN.
	ID int
}

// OuterRef is the N-th (1-based) outer value of the innermost enclosing
// Subquery's Args, read inside that subquery's plan. Name is for display.
type OuterRef struct {
	N    int
	Name string
	T    sqltypes.Type
}

func (*Subquery) isExpr() {}
func (*OuterRef) isExpr() {}

func (e *Subquery) Type() sqltypes.Type { return e.T }
func (e *OuterRef) Type() sqltypes.Type { return e.T }

func (e *Subquery) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s(SubPlan %d", subKindNames[e.Kind], e.ID)
	if len(e.Args) > 0 {
		sb.WriteString("; " + join(e.Args))
	}
	sb.WriteString(")")
	return sb.String()
}

func (e *OuterRef) String() string {
	if e.Name != "" {
		return fmt.Sprintf("outer(%s)", e.Name)
	}
	return fmt.Sprintf("outer($%d)", e.N)
}
