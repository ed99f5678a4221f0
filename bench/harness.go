package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/asofsql/asofsql/sqlerr"
)

// EngineResult is one engine's runs of one shape.
type EngineResult struct {
	Engine string
	Times  []time.Duration
	// CPU holds each timed run's process CPU time.
	CPU []time.Duration
	// PeakRSS and PeakArrow are the largest over the runs (-1: unknown).
	PeakRSS, PeakArrow int64
}

// Median is the median run time (the mean of the middle two for an even
// number of runs).
func (r EngineResult) Median() time.Duration { return median(r.Times) }

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ShapeResult is everything measured for one shape.
type ShapeResult struct {
	Shape   Shape
	Summary Summary
	Engines []EngineResult
}

// RunShape runs shape s on ds (its data, or data with the same DataKey)
// with every engine that supports s: it prepares them, and runs each
// engine's query once untimed (warm-up and peak-RSS measurement), then
// runs times. Every run's summary must equal the first engine's first
// one, else RunShape stops with a 22000 error showing both. The caller
// calls the engines' Finish when it releases ds.
func RunShape(ctx context.Context, s Shape, ds *Dataset, all []Engine, runs int, probe *Probe, log io.Writer) (ShapeResult, error) {
	res := ShapeResult{Shape: s}
	if runs < 1 {
		return res, sqlerr.New(sqlerr.InvalidParameterValue, "-runs must be at least 1, got %d", runs)
	}
	var engines []Engine
	for _, e := range all {
		if e.Supports(s) {
			engines = append(engines, e)
		}
	}
	if len(engines) == 0 {
		return res, sqlerr.New(sqlerr.InvalidParameterValue, "no engine to run %s", s.Name)
	}
	if ds.Shape.DataKey() != s.DataKey() {
		return res, sqlerr.New(sqlerr.InternalError, "%s: data generated for %s", s.Name, ds.Shape.DataKey())
	}
	ds.Shape = s
	for _, e := range engines {
		t0 := time.Now()
		if err := e.Prepare(ctx, ds); err != nil {
			return res, fmt.Errorf("%s: prepare %s: %w", s.Name, e.Name(), err)
		}
		if d := time.Since(t0); d > time.Second {
			fmt.Fprintf(log, "%s: %s ready in %v\n", s.Name, e.Name(), d.Round(time.Millisecond))
		}
	}
	res.Engines = make([]EngineResult, len(engines))
	for i, e := range engines {
		res.Engines[i] = EngineResult{Engine: e.Name(), PeakRSS: -1, PeakArrow: -1}
	}
	var ref *Summary
	refName := ""
	check := func(e Engine, run int, sum Summary) error {
		if ref == nil {
			ref, refName, res.Summary = &sum, e.Name(), sum
			return nil
		}
		if !sum.Equal(*ref) {
			return sqlerr.New(sqlerr.DataException, "%s: %s and %s disagree (run %d)", s.Name, refName, e.Name(), run).
				WithDetail("%s: %s\n%s: %s", refName, *ref, e.Name(), sum)
		}
		return nil
	}
	// Each engine runs its warm-up (run 0, untimed, the one that measures
	// peak RSS, see Probe.MeasureRSS) and then its timed runs back to back.
	// Interleaving the engines was tried: an engine's first run after
	// another engine's cost 2-3x its next one, for asofsql and DuckDB
	// alike (for asofsql, partly Go heap pages returned to the OS during
	// DuckDB's run and faulted in again), which measures the neighbour,
	// not the engine.
	for i, e := range engines {
		er := &res.Engines[i]
		for run := 0; run <= runs; run++ {
			if run == 0 {
				probe.MeasureRSS()
			}
			m, sum, err := e.Run(ctx, probe)
			if err != nil {
				return res, fmt.Errorf("%s: %s run %d: %w", s.Name, e.Name(), run, err)
			}
			if err := check(e, run, sum); err != nil {
				return res, err
			}
			er.PeakRSS = max(er.PeakRSS, m.PeakRSS)
			er.PeakArrow = max(er.PeakArrow, m.PeakArrow)
			if run == 0 {
				fmt.Fprintf(log, "%s: %-14s warm-up: %v, peak RSS +%s MiB\n", s.Name, e.Name(), m.Elapsed.Round(time.Microsecond), mib(m.PeakRSS))
				continue
			}
			er.Times = append(er.Times, m.Elapsed)
			er.CPU = append(er.CPU, m.CPU)
			fmt.Fprintf(log, "%s: %-14s run %d: %v (CPU %v)\n", s.Name, e.Name(), run, m.Elapsed.Round(time.Microsecond), m.CPU.Round(time.Millisecond))
		}
	}
	return res, nil
}

// WriteTable prints the results as a Markdown table. The ratio columns
// are the shape's first engine's (asofsql's: the operator for ASOF shapes,
// SQL for the operator shapes) median over this engine's, in wall and in
// CPU time: below 1 means asofsql is faster. CPU ns/row is the median of
// the runs' process CPU time: with two threads it counts both. "row" is a
// left row of an ASOF join, a row of table t for the operator shapes.
func WriteTable(w io.Writer, results []ShapeResult) {
	fmt.Fprintln(w, "| shape | rows | engine | median ms | ns/row | CPU ns/row | peak RSS Δ MiB | Arrow peak MiB | asofsql/engine | asofsql/engine CPU |")
	fmt.Fprintln(w, "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range results {
		if len(r.Engines) == 0 {
			continue
		}
		base, baseCPU := r.Engines[0].Median(), median(r.Engines[0].CPU)
		sizes := fmt.Sprintf("%s × %d×%s", rowsString(r.Shape.Left), r.Shape.Rights, rowsString(r.Shape.Right))
		switch {
		case r.Shape.IsQuery():
			sizes = rowsString(r.Shape.Left)
		case r.Shape.Rights == 1:
			sizes = rowsString(r.Shape.Left) + " × " + rowsString(r.Shape.Right)
		}
		for i, e := range r.Engines {
			med, cpu := e.Median(), median(e.CPU)
			ratio, ratioCPU := "—", "—"
			if i > 0 && med > 0 {
				ratio = fmt.Sprintf("%.2f", float64(base)/float64(med))
			}
			if i > 0 && cpu > 0 {
				ratioCPU = fmt.Sprintf("%.2f", float64(baseCPU)/float64(cpu))
			}
			fmt.Fprintf(w, "| %s | %s | %s | %.1f | %.1f | %.1f | %s | %s | %s | %s |\n",
				r.Shape.Name, sizes, e.Engine, float64(med)/1e6, float64(med)/float64(r.Shape.Left),
				float64(cpu)/float64(r.Shape.Left), mib(e.PeakRSS), mib(e.PeakArrow), ratio, ratioCPU)
		}
	}
}

// WriteChecks prints, per shape, the answer every engine agreed on.
func WriteChecks(w io.Writer, results []ShapeResult) {
	for _, r := range results {
		fmt.Fprintf(w, "- %s (%s): %s\n", r.Shape.Name, r.Shape.Desc, r.Summary)
	}
}

func mib(b int64) string {
	if b < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", float64(b)/(1<<20))
}

// rowsString prints a row count compactly: 1M for 1<<20, else the number.
func rowsString(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%dM", n>>20)
	}
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
