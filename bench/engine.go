package main

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/asof"
)

// Engine runs a shape's join. The harness calls Prepare once per dataset
// (not timed), Run once per timed repetition, and Finish when the dataset
// is released (shapes on the same data share it). Run must time only the join producing the full, materialised
// result: it calls p.Begin just before and p.End just after, and builds
// the Summary after End.
//
// Engines: OperatorEngine (the bare exec/asof operator), SQLEngine
// (asofsql's embedded SQL API over tables in its catalog), WireEngine
// (the same through the wire server and pgx) and DuckDBEngine.
type Engine interface {
	Name() string
	// Supports reports whether the engine runs this shape at all.
	Supports(s Shape) bool
	Prepare(ctx context.Context, d *Dataset) error
	Run(ctx context.Context, p *Probe) (Measure, Summary, error)
	Finish() error
}

// OperatorEngine runs exec/asof directly on the dataset's batches: the
// inputs are replayed from memory, the output batches are kept until the
// run ends (the materialised result, as DuckDB's CREATE TABLE AS keeps
// its), and the summary is taken from them after the clock stops.
type OperatorEngine struct {
	// Serial runs the right inputs on the caller's goroutine
	// (asof.Options.Serial); it only differs for shapes with several.
	Serial bool
	d      *Dataset
}

var _ Engine = (*OperatorEngine)(nil)

func (e *OperatorEngine) Name() string {
	if e.Serial {
		return "asofsql serial"
	}
	return "asofsql"
}

// Supports: the ASOF shapes.
func (e *OperatorEngine) Supports(s Shape) bool { return !s.IsQuery() }

func (e *OperatorEngine) Prepare(_ context.Context, d *Dataset) error {
	e.d = d
	return nil
}

func (e *OperatorEngine) Finish() error {
	e.d = nil
	return nil
}

// specs builds the join's right inputs. Each right outputs its t and its
// payload, so the result has the columns of DuckDB's SELECT:
// t, k, lp, then rt, rp per right input.
func (e *OperatorEngine) specs() []asof.Right {
	s := e.d.Shape
	var specs []asof.Right
	for _, in := range e.d.Rights {
		specs = append(specs, asof.Right{
			Name: in.Name, Input: replay(in),
			LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1},
			Lo: s.Lo, Hi: s.Hi, Kind: asof.Left, Payload: []int{0, 2},
		})
	}
	return specs
}

func replay(in Input) exec.Operator {
	bs := make([]arrow.RecordBatch, len(in.Batches))
	for i, b := range in.Batches {
		b.Retain()
		bs[i] = b
	}
	return exec.NewBatches(in.Schema, bs)
}

func (e *OperatorEngine) Run(ctx context.Context, p *Probe) (Measure, Summary, error) {
	left := replay(e.d.Left)
	specs := e.specs()
	var out []arrow.RecordBatch
	defer func() {
		for _, b := range out {
			b.Release()
		}
	}()
	p.Begin()
	j, err := asof.New(left, specs, asof.Options{Allocator: p.Allocator(), LeftName: e.d.Left.Name, Serial: e.Serial})
	if err != nil {
		// New has closed the inputs.
		p.End()
		return Measure{}, Summary{}, err
	}
	err = exec.Drain(ctx, j, func(b arrow.RecordBatch) error {
		b.Retain()
		out = append(out, b)
		return nil
	})
	m := p.End()
	if err != nil {
		return m, Summary{}, err
	}
	z := NewSummarizer(len(specs), int(e.d.Left.Schema.NumFields()))
	for _, b := range out {
		if err := z.Add(b); err != nil {
			return m, Summary{}, err
		}
	}
	return m, z.Summary(), nil
}
