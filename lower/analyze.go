package lower

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/sql/planner"
)

// NodeStats are what EXPLAIN ANALYZE reports of one plan node: the rows
// and batches its operator returned and the time spent in its Open and
// Next calls, children included (as Postgres' "actual time").
type NodeStats struct {
	Rows, Batches int64
	Time          time.Duration
}

// Analysis collects NodeStats per plan node while a lowered query runs.
// Set Env.Analysis to one before Query: every node's operator is then
// wrapped in a counting operator. It is filled by the goroutine running
// the query and read after the query has finished.
type Analysis struct {
	stats map[planner.Node]*NodeStats
	// parts are the counters of parallel workers' copies of a node, one
	// per copy (no two workers share one), added up by Stats once the
	// query has finished.
	parts map[planner.Node][]*NodeStats
}

// NewAnalysis returns an empty Analysis.
func NewAnalysis() *Analysis { return &Analysis{stats: map[planner.Node]*NodeStats{}} }

// Stats returns n's counters; false if n was never built (a node inside a
// subtree lowering skipped).
func (a *Analysis) Stats(n planner.Node) (NodeStats, bool) {
	s, ok := a.stats[n]
	parts := a.parts[n]
	if !ok && len(parts) == 0 {
		return NodeStats{}, false
	}
	var sum NodeStats
	if ok {
		sum = *s
	}
	for _, p := range parts {
		sum.Rows += p.Rows
		sum.Batches += p.Batches
		sum.Time += p.Time
	}
	return sum, true
}

// Text renders root as planner.ExplainText does, each line followed by
// the node's actual rows, batches and time.
func (a *Analysis) Text(root planner.Node) string {
	var sb strings.Builder
	a.text(&sb, root, 0)
	return sb.String()
}

func (a *Analysis) text(sb *strings.Builder, n planner.Node, depth int) {
	sb.WriteString(strings.Repeat("  ", depth))
	if depth == 0 {
		sb.WriteString(planner.RootLine(n))
	} else {
		sb.WriteString(planner.NodeLine(n))
	}
	if s, ok := a.Stats(n); ok {
		fmt.Fprintf(sb, " (actual rows=%d batches=%d time=%.3f ms)", s.Rows, s.Batches,
			float64(s.Time.Nanoseconds())/1e6)
	} else {
		sb.WriteString(" (never executed)")
	}
	sb.WriteString("\n")
	for _, c := range n.Children() {
		a.text(sb, c, depth+1)
	}
	// Subquery runs are not counted (they run once per outer value).
	for _, sq := range planner.NodeSubqueries(n) {
		fmt.Fprintf(sb, "%sSubPlan %d (runs not counted)\n", strings.Repeat("  ", depth+1), sq.ID)
		if p, ok := sq.Plan.(planner.Node); ok {
			subText(sb, p, depth+2)
		}
	}
}

func subText(sb *strings.Builder, n planner.Node, depth int) {
	sb.WriteString(strings.Repeat("  ", depth) + planner.NodeLine(n) + "\n")
	for _, c := range n.Children() {
		subText(sb, c, depth+1)
	}
	for _, sq := range planner.NodeSubqueries(n) {
		fmt.Fprintf(sb, "%sSubPlan %d\n", strings.Repeat("  ", depth+1), sq.ID)
		if p, ok := sq.Plan.(planner.Node); ok {
			subText(sb, p, depth+2)
		}
	}
}

// counting wraps one node's operator and adds to its NodeStats.
type counting struct {
	exec.Operator
	s *NodeStats
}

func (a *Analysis) wrap(n planner.Node, op exec.Operator) exec.Operator {
	s := a.stats[n]
	if s == nil {
		s = &NodeStats{}
		a.stats[n] = s
	}
	return &counting{Operator: op, s: s}
}

// wrapPart is wrap for one parallel worker's copy of n: its own counters,
// summed with the other copies' by Stats (times add up over workers).
func (a *Analysis) wrapPart(n planner.Node, op exec.Operator) exec.Operator {
	if a.parts == nil {
		a.parts = map[planner.Node][]*NodeStats{}
	}
	s := &NodeStats{}
	a.parts[n] = append(a.parts[n], s)
	return &counting{Operator: op, s: s}
}

func (c *counting) Schema() *arrow.Schema { return c.Operator.Schema() }

func (c *counting) Open(ctx context.Context) error {
	start := time.Now()
	err := c.Operator.Open(ctx)
	c.s.Time += time.Since(start)
	return err
}

func (c *counting) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	b, err := c.Operator.Next(ctx)
	c.s.Time += time.Since(start)
	if err == nil {
		c.s.Batches++
		c.s.Rows += b.NumRows()
	}
	return b, err
}
