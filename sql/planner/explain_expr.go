package planner

import (
	"strings"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
)

// exprSQL renders an expression for EXPLAIN like expr's String, but
// with constants in their SQL text form (timestamps and dates as
// '2024-01-02 00:00:00', numerics at their scale) instead of the
// physical values.
func exprSQL(e expr.Expr) string {
	switch x := e.(type) {
	case *expr.Literal:
		switch x.T.Kind {
		case sqltypes.Date, sqltypes.Timestamp, sqltypes.TimestampTZ, sqltypes.Numeric, sqltypes.Interval:
			s := literalSQL(x.Value, x.T)
			if x.T.Kind != sqltypes.Numeric && x.T.Kind != sqltypes.Interval && x.Value != nil {
				s += "::" + x.T.String()
			}
			return s
		}
		return x.String()
	case *expr.Cast:
		return "CAST(" + exprSQL(x.X) + " AS " + x.T.String() + ")"
	case *expr.Unary:
		if x.Op == expr.Not {
			return "(NOT " + exprSQL(x.X) + ")"
		}
		return "(-" + exprSQL(x.X) + ")"
	case *expr.Binary:
		return "(" + exprSQL(x.L) + " " + x.Op.String() + " " + exprSQL(x.R) + ")"
	case *expr.IsNull:
		if x.Not {
			return "(" + exprSQL(x.X) + " IS NOT NULL)"
		}
		return "(" + exprSQL(x.X) + " IS NULL)"
	case *expr.In:
		op := " IN ("
		if x.Not {
			op = " NOT IN ("
		}
		return "(" + exprSQL(x.X) + op + exprsSQL(x.List) + "))"
	case *expr.Case:
		var sb strings.Builder
		sb.WriteString("CASE")
		if x.Operand != nil {
			sb.WriteString(" " + exprSQL(x.Operand))
		}
		for _, w := range x.Whens {
			sb.WriteString(" WHEN " + exprSQL(w.Cond) + " THEN " + exprSQL(w.Result))
		}
		if x.Else != nil {
			sb.WriteString(" ELSE " + exprSQL(x.Else))
		}
		sb.WriteString(" END")
		return sb.String()
	case *expr.Func:
		return x.Name() + "(" + exprsSQL(x.Args) + ")"
	}
	return e.String()
}

func exprsSQL(es []expr.Expr) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = exprSQL(e)
	}
	return strings.Join(s, ", ")
}
