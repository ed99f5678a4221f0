package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/asofsql/asofsql/sql/ordering"
)

// Parallel windows (issue 15, par-window). A Window with a PARTITION BY
// runs as a ParallelWindow: a Morsels node hands the batches of its input
// to the workers (each running the Filters and Projects above the
// Morsels), every row goes to the worker hash(Keys) picks, so each
// partition is whole in one worker, and each worker sorts its rows (kept
// in input order, so the stable sort keeps ties as the serial one) and
// runs the Window over them. The workers' outputs are merged by the
// partition keys: the serial Window's output, row for row, at every
// degree. Windows stacked directly on each other (one query's windows)
// run in one ParallelWindow when their PARTITION BYs share columns: those
// are the Keys. A Window without PARTITION BY is one partition and stays
// serial; EXPLAIN says why.

// ParallelWindow runs Input (a Window, or Windows each directly over the
// next, the bottom one's input a pipeline of Filters and Projects over a
// Morsels) on Workers workers, rows split by the hash of Keys: columns
// of the bottom window's input in every window's PARTITION BY. It
// provides the top Window's ordering.
type ParallelWindow struct {
	Input   *Window
	Keys    []int
	Workers int
}

func (p *ParallelWindow) Schema() []Column                 { return p.Input.Schema() }
func (p *ParallelWindow) Children() []Node                 { return []Node{p.Input} }
func (p *ParallelWindow) Ordering() ordering.Props         { return p.Input.Ordering() }
func (p *ParallelWindow) RequiredOrdering() []ordering.Lex { return []ordering.Lex{nil} }
func (p *ParallelWindow) PreservesOrder() []bool           { return []bool{true} }

// parallelWindow splits w for workers, or says in w why it stays serial.
// A Window over a ParallelWindow whose keys it shares joins that one's
// stack (the keys shrink to the shared ones).
func parallelWindow(w *Window, d *degrees) Node {
	if w.Serial = windowSerial(w); w.Serial != "" {
		return w
	}
	if pw, ok := w.Input.(*ParallelWindow); ok {
		var keys []int
		for _, k := range pw.Keys {
			if slices.Contains(w.Partition, k) {
				keys = append(keys, k)
			}
		}
		if len(keys) > 0 {
			w.Input, pw.Input, pw.Keys = pw.Input, w, keys
			return pw
		}
	}
	workers, why := d.of(w.Input)
	if w.Serial = why; why != "" {
		return w
	}
	w.Input = morselize(w.Input, workers)
	return &ParallelWindow{Input: w, Keys: slices.Clone(w.Partition), Workers: workers}
}

// windowSerial says why w stays serial, "" when it splits.
func windowSerial(w *Window) string {
	if len(w.Partition) == 0 {
		return "no PARTITION BY: one partition"
	}
	for _, f := range w.Funcs {
		safe := parallelSafe(f.Frame.Start.Offset) && parallelSafe(f.Frame.End.Offset)
		for _, a := range f.Args {
			safe = safe && parallelSafe(a)
		}
		if !safe {
			return "volatile function or subquery in an argument"
		}
	}
	return ""
}

func describeParallelWindow(p *ParallelWindow) string {
	// A stacked Window keeps its input's columns where they are: the keys
	// name the same columns in every window's input.
	in := p.Input.Input.Schema()
	var ks []string
	for _, k := range p.Keys {
		ks = append(ks, qualName(in[k]))
	}
	return fmt.Sprintf("ParallelWindow workers=%d hash(%s) (whole partitions per worker, merged by partition keys)",
		p.Workers, strings.Join(ks, ", "))
}
