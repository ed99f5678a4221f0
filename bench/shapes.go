package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/asofsql/asofsql/exec/asof"
	"github.com/asofsql/asofsql/sqlerr"
)

// Shape is one benchmark join: a left input and Rights right inputs with
// sorted int64 t, a by-key k (int64, or 16-character strings when StrKeys)
// uniform over Card values, and a float64 payload on each side. Every join
// is a LEFT join on k with the range [Lo, Hi] on Δ = right.t − left.t.
type Shape struct {
	Name string
	// Desc says what the shape stands for, for the results table.
	Desc string
	// Left and Right are row counts before scaling; every right input has
	// Right rows. When Right < Left the right inputs are spread over the
	// left input's time span (t multiplied by Left/Right), as in
	// exec/asof's BenchmarkJoin.
	Left, Right int64
	Card        int
	StrKeys     bool
	Lo, Hi      asof.Bound
	Rights      int
	// Wire also runs the join through asofsql's SQL API and its wire
	// server (pgx, binary and text results): S1, to show the protocol's
	// cost next to the embedded figures.
	Wire bool
	// Query, when set, makes this a SQL operator shape (issue 6) instead
	// of an ASOF join: Left is then the row count of the one table t,
	// Right, Card, Lo, Hi and Rights are unused.
	Query *QuerySpec
}

// Shapes are the operator issue's S1–S6, with the sizes, seeds and
// generator of exec/asof's BenchmarkJoin (1M means 1<<20 rows), so the
// operator-level benchmark and this peer comparison measure the same data.
var Shapes = []Shape{
	{Name: "S1", Desc: "1M×1M, 1,000 int keys, backward", Left: 1 << 20, Right: 1 << 20, Card: 1000, Lo: asof.Unbounded, Hi: asof.IntBound(0), Rights: 1, Wire: true},
	{Name: "S2", Desc: "10M×10M, 1,000 int keys, backward", Left: 10 << 20, Right: 10 << 20, Card: 1000, Lo: asof.Unbounded, Hi: asof.IntBound(0), Rights: 1},
	{Name: "S3", Desc: "10M×1M, 1,000 int keys, range [-1000, 0]", Left: 10 << 20, Right: 1 << 20, Card: 1000, Lo: asof.IntBound(-1000), Hi: asof.IntBound(0), Rights: 1},
	{Name: "S4", Desc: "5M×5M, 5,000 16-char string keys, backward", Left: 5 << 20, Right: 5 << 20, Card: 5000, StrKeys: true, Lo: asof.Unbounded, Hi: asof.IntBound(0), Rights: 1},
	{Name: "S5", Desc: "1M×1M, 1,000 int keys, nearest [-500, 500]", Left: 1 << 20, Right: 1 << 20, Card: 1000, Lo: asof.IntBound(-500), Hi: asof.IntBound(500), Rights: 1},
	{Name: "S6", Desc: "1M × 4 rights of 1M, 1,000 int keys, backward", Left: 1 << 20, Right: 1 << 20, Card: 1000, Lo: asof.Unbounded, Hi: asof.IntBound(0), Rights: 4},
}

// AllShapes are the ASOF shapes followed by the SQL operator shapes.
func AllShapes() []Shape { return append(append([]Shape(nil), Shapes...), QueryShapes...) }

// IsQuery reports whether s is a SQL operator shape.
func (s Shape) IsQuery() bool { return s.Query != nil }

// DataKey identifies the data a shape runs on: the operator shapes share
// one table of a given size, so it is generated and loaded once.
func (s Shape) DataKey() string {
	if s.IsQuery() {
		return fmt.Sprintf("table t, %d rows", s.Left)
	}
	return fmt.Sprintf("%s %d×%d×%d card %d str %v", s.Name, s.Left, s.Rights, s.Right, s.Card, s.StrKeys)
}

// Scaled returns s with its row counts multiplied by f (at least one row
// each). Key cardinality is kept: a small run has fewer rows per key, not
// fewer keys, so the key tables stay the same size.
func (s Shape) Scaled(f float64) Shape {
	if f == 1 {
		return s
	}
	s.Left = max(1, int64(math.Round(float64(s.Left)*f)))
	s.Right = max(1, int64(math.Round(float64(s.Right)*f)))
	return s
}

// SelectShapes resolves the -shapes flag: a comma-separated list of shape
// names (case-insensitive), "asof" (S1–S6), "ops" (the SQL operator
// shapes), or "all" (both).
func SelectShapes(list string) ([]Shape, error) {
	if strings.TrimSpace(list) == "" || strings.EqualFold(strings.TrimSpace(list), "all") {
		return AllShapes(), nil
	}
	var out []Shape
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.ToUpper(strings.TrimSpace(name))
		if seen[name] {
			continue
		}
		var group []Shape
		switch name {
		case "ASOF":
			group = Shapes
		case "OPS":
			group = QueryShapes
		}
		if group != nil {
			for _, s := range group {
				if !seen[s.Name] {
					out = append(out, s)
					seen[s.Name] = true
				}
			}
			seen[name] = true
			continue
		}
		found := false
		for _, s := range AllShapes() {
			if s.Name == name {
				out = append(out, s)
				found, seen[name] = true, true
				break
			}
		}
		if !found {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unknown shape %q in -shapes", name).
				WithHint("Known shapes: %s; or the groups asof, ops, all.", strings.Join(shapeNames(), ", "))
		}
	}
	return out, nil
}

// String renders the range the way the spec writes it.
func rangeString(lo, hi asof.Bound) string {
	b := func(x asof.Bound, inf string) string {
		if x.Unbounded {
			return inf
		}
		return fmt.Sprint(x.Int)
	}
	return "[" + b(lo, "-inf") + ", " + b(hi, "+inf") + "]"
}

func shapeNames() []string {
	var names []string
	for _, s := range AllShapes() {
		names = append(names, s.Name)
	}
	return names
}
