package planner

import (
	"fmt"
	"math"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Estimate is a plan's estimated output and cost, in Postgres' units
// (what EXPLAIN's "(cost=S..T rows=R width=W)" shows): Rows from the
// tables' row counts, which are exact, and Postgres' default selectivities
// for conditions, since asofsql keeps no column statistics; Width the
// average bytes of a row; Startup and Total costs charged per row as
// Postgres' cpu_tuple_cost and cpu_operator_cost do. It is an estimate for
// clients that plan with it (postgres_fdw's use_remote_estimate), not a
// promise.
type Estimate struct {
	Startup, Total float64
	Rows           float64
	Width          int
}

// Postgres' planner constants (costsize.c, selfuncs.h).
const (
	cpuTupleCost    = 0.01
	cpuOperatorCost = 0.0025
	seqPageCost     = 1.0
	pageBytes       = 8192
	defaultEqSel    = 0.005
	defaultIneqSel  = 1.0 / 3
	defaultMatchSel = 0.005
	defaultGroups   = 200
)

// EstimateOf estimates n.
func EstimateOf(n Node) Estimate {
	e := estimate(n)
	e.Rows = math.Max(1, math.Round(e.Rows))
	e.Width = width(n.Schema())
	return e
}

func estimate(n Node) Estimate {
	var kids []Estimate
	for _, c := range n.Children() {
		kids = append(kids, estimate(c))
	}
	in := Estimate{Rows: 1}
	if len(kids) > 0 {
		in = kids[0]
	}
	pass := func(rows, perRow float64) Estimate {
		return Estimate{Startup: in.Startup, Total: in.Total + in.Rows*perRow, Rows: rows}
	}
	switch x := n.(type) {
	case *PartialAggregate:
		// A parallel plan is estimated as the serial one (parallel.go).
		return estimate(x.Agg)
	case *FinalAggregate, *Morsels, *GatherMerge, *ParallelHashJoin:
		return in
	case *Scan:
		// Pages as Postgres would store the columns read.
		rows := float64(x.Table.Rows)
		pages := math.Ceil(rows * float64(width(x.Schema())) / pageBytes)
		return Estimate{Total: pages*seqPageCost + rows*cpuTupleCost, Rows: rows}
	case *Filter:
		return pass(in.Rows*selectivity(x.Cond), cpuOperatorCost)
	case *Project:
		return pass(in.Rows, cpuOperatorCost*float64(len(x.Exprs)))
	case *Sort:
		sorted := in.Total + 2*cpuOperatorCost*in.Rows*math.Log2(math.Max(in.Rows, 2))
		return Estimate{Startup: sorted, Total: sorted + in.Rows*cpuOperatorCost, Rows: in.Rows}
	case *Limit:
		rows := in.Rows
		if off, ok := literalCount(x.Offset); ok {
			rows = math.Max(0, rows-off)
		}
		if cnt, ok := literalCount(x.Count); ok {
			rows = math.Min(rows, cnt)
		}
		frac := 1.0
		if in.Rows > 0 {
			frac = math.Min(1, rows/in.Rows)
		}
		return Estimate{Startup: in.Startup, Total: in.Startup + (in.Total-in.Startup)*frac, Rows: rows}
	case *Aggregate:
		groups := 1.0
		if len(x.GroupBy) > 0 {
			groups = math.Min(in.Rows, math.Pow(defaultGroups, float64(len(x.GroupBy))))
		}
		total := in.Total + in.Rows*cpuOperatorCost*float64(len(x.Aggs)+len(x.GroupBy))
		return Estimate{Startup: total, Total: total + groups*cpuTupleCost, Rows: groups}
	case *DistinctOn:
		rows := math.Min(in.Rows, math.Pow(defaultGroups, float64(len(x.Keys))))
		return Estimate{Startup: in.Startup, Total: in.Total + in.Rows*cpuOperatorCost, Rows: rows}
	case *Distinct:
		rows := math.Min(in.Rows, defaultGroups)
		return Estimate{Startup: in.Total, Total: in.Total + in.Rows*cpuOperatorCost, Rows: rows}
	case *Join:
		r := kids[1]
		rows := in.Rows * r.Rows
		if x.Kind != JoinCross {
			// Each key pair keeps 1/200 (Postgres' eqjoinsel without
			// statistics).
			rows *= math.Pow(defaultEqSel, float64(len(x.LeftKeys)))
			if x.Residual != nil {
				rows *= selectivity(x.Residual)
			}
			if x.Kind.rightNullable() {
				rows = math.Max(rows, in.Rows)
			}
			if x.Kind.leftNullable() {
				rows = math.Max(rows, r.Rows)
			}
		}
		return Estimate{Startup: r.Total, Total: in.Total + r.Total + (in.Rows+r.Rows)*cpuOperatorCost + rows*cpuTupleCost, Rows: rows}
	case *LateralJoin:
		// The right side runs once per left row (at most).
		r := kids[1]
		rows := in.Rows * r.Rows
		if x.Cond != nil {
			rows *= selectivity(x.Cond)
		}
		if x.Kind == JoinLeft {
			rows = math.Max(rows, in.Rows)
		}
		return Estimate{Startup: in.Startup + r.Startup, Total: in.Total + in.Rows*r.Total + rows*cpuTupleCost, Rows: rows}
	case *AsofJoin:
		// One output row per left row (at most, for inner joins).
		total := in.Total
		for _, k := range kids[1:] {
			total += k.Total + k.Rows*cpuOperatorCost
		}
		return Estimate{Startup: in.Startup, Total: total + in.Rows*cpuTupleCost, Rows: in.Rows}
	case *Values:
		return Estimate{Total: float64(len(x.Rows)) * cpuOperatorCost, Rows: float64(len(x.Rows))}
	case *SetOp:
		// Hash the right side, stream the left: at most the left's rows,
		// at most the right's too for INTERSECT.
		r := kids[1]
		rows := in.Rows
		if x.Kind == Intersect {
			rows = math.Min(rows, r.Rows)
		}
		total := in.Total + r.Total + (in.Rows+r.Rows)*cpuOperatorCost
		return Estimate{Startup: r.Total, Total: total + rows*cpuTupleCost, Rows: rows}
	case *UnionAll:
		var out Estimate
		for _, k := range kids {
			out.Total += k.Total
			out.Rows += k.Rows
		}
		return out
	}
	return pass(in.Rows, cpuOperatorCost)
}

// literalCount reads a LIMIT or OFFSET given as a number.
func literalCount(e expr.Expr) (float64, bool) {
	if l, ok := e.(*expr.Literal); ok {
		if v, ok := l.Value.(int64); ok {
			return float64(v), true
		}
	}
	return 0, false
}

// selectivity is the fraction of rows a condition keeps, by Postgres'
// defaults for conditions it has no statistics for.
func selectivity(e expr.Expr) float64 {
	switch x := e.(type) {
	case *expr.Binary:
		switch x.Op {
		case expr.And:
			return selectivity(x.L) * selectivity(x.R)
		case expr.Or:
			l, r := selectivity(x.L), selectivity(x.R)
			return l + r - l*r
		case expr.Eq, expr.IsNotDistinctFrom:
			return defaultEqSel
		case expr.Ne, expr.IsDistinctFrom:
			return 1 - defaultEqSel
		case expr.Lt, expr.Le, expr.Gt, expr.Ge:
			return defaultIneqSel
		case expr.Like, expr.ILike:
			return defaultMatchSel
		case expr.NotLike, expr.NotILike:
			return 1 - defaultMatchSel
		}
	case *expr.Unary:
		if x.Op == expr.Not {
			return 1 - selectivity(x.X)
		}
	case *expr.IsNull:
		if x.Not {
			return 1 - defaultEqSel
		}
		return defaultEqSel
	case *expr.In:
		s := math.Min(1, defaultEqSel*float64(len(x.List)))
		if x.Not {
			return 1 - s
		}
		return s
	case *expr.Literal:
		if b, ok := x.Value.(bool); ok && !b {
			return 0
		}
		return 1
	}
	return defaultIneqSel
}

// width is the average bytes of a row: fixed-size types' sizes, 32 for
// the others (Postgres' default for a variable-width column).
func width(cols []Column) int {
	w := 0
	for _, c := range cols {
		if n := c.Type.Typlen(); n > 0 && c.Type.Kind != sqltypes.Unknown {
			w += int(n)
		} else {
			w += 32
		}
	}
	return w
}

// String renders the estimate as EXPLAIN does.
func (e Estimate) String() string {
	return fmt.Sprintf("(cost=%.2f..%.2f rows=%.0f width=%d)", e.Startup, e.Total, e.Rows, e.Width)
}
