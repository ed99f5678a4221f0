package planner

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
)

// ExplainText renders a plan as EXPLAIN prints it: an indented tree, one
// node a line, children two spaces deeper, each node with the ordering
// its output provides ([ordering: ...], omitted when none is known).
func ExplainText(p Plan) string {
	var sb strings.Builder
	explainPlan(&sb, p)
	return sb.String()
}

func explainPlan(sb *strings.Builder, p Plan) {
	switch x := p.(type) {
	case *Query:
		explainRoot(sb, x.Root)
	case *Insert:
		fmt.Fprintf(sb, "Insert %s\n", x.Table.Name)
		explainNode(sb, x.Input, 1)
	case *Explain:
		explainPlan(sb, x.Stmt)
	case *CreateTable:
		var cols []string
		for _, c := range x.Def.Columns {
			s := c.Name + " " + c.Type.String()
			if c.NotNull {
				s += " NOT NULL"
			}
			cols = append(cols, s)
		}
		fmt.Fprintf(sb, "CreateTable %s (%s)", x.Def.Name, strings.Join(cols, ", "))
		if len(x.Def.OrderBy) > 0 {
			fmt.Fprintf(sb, " ORDER BY (%s)", strings.Join(x.Def.OrderBy, ", "))
		}
		sb.WriteString("\n")
	case *DropTable:
		fmt.Fprintf(sb, "DropTable %s\n", strings.Join(x.Names, ", "))
	case *Delete:
		fmt.Fprintf(sb, "Delete %s%s\n", x.Table.Name, explainWhere(x.Table, x.Range, x.Where))
		explainExprSubqueries(sb, append(boundExprs(x.Range), x.Where))
	case *Update:
		var sets []string
		for i, e := range x.Set {
			if x.Assigned[i] {
				sets = append(sets, x.Table.Columns[i].Name+" = "+exprSQL(e))
			}
		}
		fmt.Fprintf(sb, "Update %s set %s%s\n", x.Table.Name, strings.Join(sets, ", "), explainWhere(x.Table, x.Range, x.Where))
		explainExprSubqueries(sb, append(append(boundExprs(x.Range), x.Where), x.Set...))
	case *Truncate:
		var names []string
		for _, t := range x.Tables {
			names = append(names, t.Name)
		}
		fmt.Fprintf(sb, "Truncate %s\n", strings.Join(names, ", "))
	case *CreateTableAs:
		fmt.Fprintf(sb, "CreateTableAs %s", x.Def.Name)
		if len(x.Def.OrderBy) > 0 {
			sort := "sorted stably"
			if x.Sorted {
				sort = "input already ordered, no sort"
			}
			fmt.Fprintf(sb, " ORDER BY (%s) [%s]", strings.Join(x.Def.OrderBy, ", "), sort)
		}
		if !x.WithData {
			sb.WriteString(" WITH NO DATA")
		}
		sb.WriteString("\n")
		explainNode(sb, x.Query.Root, 1)
	case *Copy:
		if x.Query != nil {
			sb.WriteString("Copy (query) TO\n")
			explainNode(sb, x.Query.Root, 1)
			return
		}
		dir := "TO"
		if x.From {
			dir = "FROM"
		}
		fmt.Fprintf(sb, "Copy %s %s\n", x.Table.Name, dir)
	default:
		fmt.Fprintf(sb, "%T\n", p)
	}
}

// explainWhere renders DELETE and UPDATE's row choice: the key range the
// catalog prunes segments with, then the rest of WHERE.
func explainWhere(t *catalog.TableInfo, bounds []KeyBound, where expr.Expr) string {
	s := ""
	if len(bounds) > 0 {
		key := t.Columns[t.OrderKeys[0]].Name
		var parts []string
		for _, b := range bounds {
			parts = append(parts, key+" "+b.Op.String()+" "+exprSQL(b.Value))
		}
		s += " range " + strings.Join(parts, " AND ")
	}
	if where != nil {
		s += " where " + exprSQL(where)
	}
	return s
}

// explainExprSubqueries prints the subqueries of a statement's own
// expressions, as explainNode does for a node's.
func explainExprSubqueries(sb *strings.Builder, es []expr.Expr) {
	for _, e := range es {
		expr.Walk(e, func(x expr.Expr) bool {
			if sq, ok := x.(*expr.Subquery); ok {
				fmt.Fprintf(sb, "  SubPlan %d\n", sq.ID)
				if p, ok := sq.Plan.(Node); ok {
					explainNode(sb, p, 2)
				}
			}
			return true
		})
	}
}

func explainNode(sb *strings.Builder, n Node, depth int) {
	sb.WriteString(strings.Repeat("  ", depth))
	sb.WriteString(NodeLine(n))
	sb.WriteString("\n")
	for _, c := range n.Children() {
		explainNode(sb, c, depth+1)
	}
	for _, sq := range NodeSubqueries(n) { // bind_subquery.go
		fmt.Fprintf(sb, "%sSubPlan %d\n", strings.Repeat("  ", depth+1), sq.ID)
		if p, ok := sq.Plan.(Node); ok {
			explainNode(sb, p, depth+2)
		}
	}
}

// explainRoot is explainNode for a query's root, whose line ends with the
// whole query's estimate (RootLine).
func explainRoot(sb *strings.Builder, n Node) {
	sb.WriteString(RootLine(n))
	sb.WriteString("\n")
	for _, c := range n.Children() {
		explainNode(sb, c, 1)
	}
	for _, sq := range NodeSubqueries(n) {
		fmt.Fprintf(sb, "  SubPlan %d\n", sq.ID)
		if p, ok := sq.Plan.(Node); ok {
			explainNode(sb, p, 2)
		}
	}
}

// RootLine is the EXPLAIN line of a query's root: NodeLine, then the
// query's estimate as Postgres prints one, "  (cost=S..T rows=R
// width=W)". It is the only line with an estimate: postgres_fdw's
// use_remote_estimate reads it from the first line.
func RootLine(n Node) string {
	return NodeLine(n) + "  " + EstimateOf(n).String()
}

// NodeLine is one node's EXPLAIN line (without children).
func NodeLine(n Node) string {
	s := describe(n)
	cols := n.Schema()
	if lex := n.Ordering().Lex; len(lex) > 0 {
		s += " [ordering: " + lex.Format(func(i int) string { return qualName(cols[i]) }) + "]"
	}
	return s
}

func describe(n Node) string {
	switch x := n.(type) {
	case *Scan:
		var names []string
		for _, c := range x.cols {
			names = append(names, c.Name)
		}
		s := "Scan " + x.Table.Name
		if x.Alias != x.Table.Name {
			s += " AS " + x.Alias
		}
		s += " (" + strings.Join(names, ", ") + ")"
		if x.Range != nil {
			s += " range " + formatRange(x)
		}
		return s
	case *Filter:
		return "Filter " + exprSQL(x.Cond)
	case *Project:
		var parts []string
		for i, e := range x.Exprs {
			s := exprSQL(e)
			if c, ok := e.(*expr.Column); !ok || columnName(c) != x.Cols[i].Name {
				s += " AS " + x.Cols[i].Name
			}
			parts = append(parts, s)
		}
		return "Project " + strings.Join(parts, ", ")
	case *AsofJoin:
		var parts []string
		lcols := x.Left.Schema()
		for _, r := range x.Rights {
			parts = append(parts, describeRight(r, lcols))
		}
		s := "AsofJoin " + strings.Join(parts, " | ")
		if x.Serial != "" {
			s += " (serial: " + x.Serial + ")"
		}
		return s
	case *Repartition:
		return describeRepartition(x)
	case *Merge:
		return describeMerge(x)
	case *Morsels:
		return describeMorsels(x)
	case *PartialAggregate:
		return "Partial " + describe(x.Agg)
	case *FinalAggregate:
		return describeFinalAggregate(x)
	case *GatherMerge:
		return describeGatherMerge(x)
	case *ParallelHashJoin:
		return describeParallelHashJoin(x)
	case *ParallelWindow:
		return describeParallelWindow(x)
	case *Sort:
		cols := x.Schema()
		s := "Sort " + x.Keys.Format(func(i int) string { return qualName(cols[i]) })
		if x.Serial != "" {
			s += " (serial: " + x.Serial + ")"
		}
		return s
	case *Limit:
		s := "Limit"
		if x.Count != nil {
			s += " " + exprSQL(x.Count)
		}
		if x.Offset != nil {
			s += " offset " + exprSQL(x.Offset)
		}
		return s
	case *Aggregate:
		var g, a []string
		for _, e := range x.GroupBy {
			g = append(g, exprSQL(e))
		}
		for _, c := range x.Aggs {
			a = append(a, aggKey(c))
		}
		s := "Aggregate"
		if x.Sets != nil {
			s = "GroupingSets " + explainSets(x.GroupBy, x.Sets) // grouping.go
		} else if len(g) > 0 {
			s += " group (" + strings.Join(g, ", ") + ")"
		}
		if len(a) > 0 {
			s += " aggs " + strings.Join(a, ", ")
		}
		if x.Serial != "" {
			s += " (serial: " + x.Serial + ")"
		}
		return s
	case *Join:
		if x.Kind == JoinCross {
			return "CrossJoin"
		}
		s := "NestedLoopJoin " + x.Kind.String()
		if len(x.LeftKeys) > 0 {
			l, r := x.Left.Schema(), x.Right.Schema()
			var ks []string
			for i := range x.LeftKeys {
				ks = append(ks, qualName(l[x.LeftKeys[i]])+" = "+qualName(r[x.RightKeys[i]]))
			}
			s = "HashJoin " + x.Kind.String() + " keys (" + strings.Join(ks, ", ") + ")"
		}
		if x.Residual != nil {
			s += " filter " + exprSQL(x.Residual)
		}
		if x.Serial != "" {
			s += " (serial: " + x.Serial + ")"
		}
		return s
	case *LateralJoin:
		return x.describe() // lateral.go
	case *Values:
		return fmt.Sprintf("Values %d rows", len(x.Rows))
	case *Unnest:
		if x.Matches != nil {
			args := make([]string, len(x.Matches))
			for i, a := range x.Matches {
				args[i] = exprSQL(a)
			}
			return "Unnest regexp_matches(" + strings.Join(args, ", ") + ")"
		}
		return "Unnest unnest(" + exprSQL(x.Array) + ")"
	case *Series:
		args := []expr.Expr{x.Start, x.Stop}
		if x.Step != nil {
			args = append(args, x.Step)
		}
		return "Series generate_series(" + exprsSQL(args) + ")"
	case *UnionAll:
		return "UnionAll"
	case *RecursiveCTE:
		if x.Distinct {
			return "RecursiveUnion " + x.Name + " distinct"
		}
		return "RecursiveUnion " + x.Name
	case *WorkTable:
		return "WorkTableScan " + x.Name
	case *SetOp:
		// Postgres' own words: HashSetOp Intersect All, HashSetOp Except.
		s := "HashSetOp Intersect"
		if x.Kind == Except {
			s = "HashSetOp Except"
		}
		if x.All {
			s += " All"
		}
		return s
	case *Distinct:
		return "Distinct"
	case *DistinctOn:
		cols := x.Schema()
		names := make([]string, len(x.Keys))
		for i, k := range x.Keys {
			names[i] = qualName(cols[k])
		}
		return "DistinctOn " + strings.Join(names, ", ")
	case *Window:
		in := x.Input.Schema()
		s := "Window"
		if len(x.Partition) > 0 {
			var ps []string
			for _, p := range x.Partition {
				ps = append(ps, qualName(in[p]))
			}
			s += " partition (" + strings.Join(ps, ", ") + ")"
		}
		if len(x.Order) > 0 {
			s += " order (" + x.Order.Format(func(i int) string { return qualName(in[i]) }) + ")"
		}
		var fs []string
		for _, f := range x.Funcs {
			a := exprsSQL(f.Args)
			if f.Star {
				a = "*"
			}
			c := f.Func + "(" + a + ")"
			if f.Frame != DefaultFrame() {
				c += " " + f.Frame.String()
			}
			fs = append(fs, c)
		}
		s += " funcs " + strings.Join(fs, ", ")
		if x.Serial != "" {
			s += " (serial: " + x.Serial + ")"
		}
		return s
	}
	return fmt.Sprintf("%T", n)
}

func describeRight(r *AsofRight, lcols []Column) string {
	rcols := r.Input.Schema()
	lt, rt := lcols[r.LeftOn], rcols[r.On]
	s := r.Kind.String() + " " + r.Name
	on := "on " + lt.Name
	if lt.Name != rt.Name {
		on = "on " + qualName(lt) + " ~ " + qualName(rt)
	}
	ot := r.OnType
	if ot.Kind == sqltypes.Unknown {
		ot = lt.Type
	}
	s += " " + on + " range " + formatRangeBounds(r.Lo, r.Hi, ot)
	if r.Empty || AsofRangeEmpty(r.Lo, r.Hi) {
		s += " (empty)"
	}
	s += " PREFER " + r.Tie.String()
	if len(r.Keys) > 0 {
		var ks []string
		for i := range r.Keys {
			l, rr := lcols[r.LeftKeys[i]], rcols[r.Keys[i]]
			switch {
			case i < len(r.NullSafe) && r.NullSafe[i]:
				ks = append(ks, qualName(l)+" IS NOT DISTINCT FROM "+qualName(rr))
			case l.Name == rr.Name:
				ks = append(ks, l.Name)
			default:
				ks = append(ks, qualName(l)+" = "+qualName(rr))
			}
		}
		s += " keys (" + strings.Join(ks, ", ") + ")"
	}
	if r.LeftCond != nil {
		s += " left-condition " + exprSQL(r.LeftCond)
	}
	if r.Cond != nil {
		s += " condition " + exprSQL(r.Cond)
	}
	if r.PairCond != nil {
		s += " pair-condition " + exprSQL(r.PairCond)
	}
	if r.KeysFirst {
		s += " keys-first"
	}
	return s
}

func formatRangeBounds(lo, hi Bound, t sqltypes.Type) string {
	l, h := "[", "]"
	if lo.Unbounded || lo.Exclusive {
		l = "("
	}
	if hi.Unbounded || hi.Exclusive {
		h = ")"
	}
	ls, hs := formatBound(lo, t), formatBound(hi, t)
	if lo.Unbounded {
		ls = "-inf"
	}
	if hi.Unbounded {
		hs = "+inf"
	}
	return l + ls + ", " + hs + h
}

// formatBound renders a bound in SQL terms of the on column's type:
// integers and days as numbers, timestamps as an interval, numerics at
// their scale.
func formatBound(b Bound, t sqltypes.Type) string {
	switch {
	case b.Param != nil:
		return b.Param.String()
	case b.Expr != nil:
		return exprSQL(b.Expr)
	case b.Cal != nil:
		return b.Cal.String()
	case b.Unbounded:
		return "inf"
	case isFloat(t):
		return fmt.Sprintf("%g", b.Float)
	case t.Kind == sqltypes.Numeric:
		coef := decimal128.FromI64(b.Int)
		if b.HasDec {
			coef = b.Dec
		}
		return sqltypes.Decimal{Coef: coef, Scale: int32(numericScale(t))}.String()
	case t.Kind == sqltypes.Date:
		if b.Int == 1 || b.Int == -1 {
			return fmt.Sprintf("%d day", b.Int)
		}
		return fmt.Sprintf("%d days", b.Int)
	case t.Kind == sqltypes.Timestamp || t.Kind == sqltypes.TimestampTZ:
		return formatMicros(b.Int)
	}
	return fmt.Sprintf("%d", b.Int)
}

// formatMicros prints microseconds as Postgres prints such an interval
// (days, then hh:mm:ss[.ffffff]).
func formatMicros(us int64) string {
	iv := sqltypes.IntervalValue{Days: int32(us / 86_400_000_000), Microseconds: us % 86_400_000_000}
	return iv.String()
}

func formatRange(s *Scan) string {
	r := s.Range
	t := s.rangeType
	lo, hi := "(-inf", "+inf)"
	if r.Lo != nil {
		lo = "[" + literalSQL(r.Lo, t)
		if r.LoExclusive {
			lo = "(" + literalSQL(r.Lo, t)
		}
	}
	if r.Hi != nil {
		hi = literalSQL(r.Hi, t) + "]"
		if r.HiExclusive {
			hi = literalSQL(r.Hi, t) + ")"
		}
	}
	return lo + ", " + hi
}
