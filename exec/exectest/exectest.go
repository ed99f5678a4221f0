package exectest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/stretchr/testify/require"
)

// BatchSizes are the fixed sizes every operator case reruns at.
var BatchSizes = []int{1, 2, 3, 7, 1024}

// Workers are the degrees of parallelism a case with Parallel reruns at,
// under every layout.
var Workers = []int{1, 2, 3, 8}

// Layout says how one whole input table is cut into batches.
type Layout struct {
	Name string
	// Size > 0 cuts fixed-size batches; Size == 0 cuts at random points.
	Size int
	// Empty injects zero-row batches at the start, between batches and at
	// the end.
	Empty bool
	Seed  uint64
}

// Layouts returns the standard set: each fixed size with and without empty
// batches, plus two random splittings with empties.
func Layouts() []Layout {
	var ls []Layout
	for _, s := range BatchSizes {
		ls = append(ls, Layout{Name: fmt.Sprintf("size=%d", s), Size: s})
		ls = append(ls, Layout{Name: fmt.Sprintf("size=%d+empty", s), Size: s, Empty: true, Seed: uint64(s)})
	}
	ls = append(ls, Layout{Name: "random-a", Empty: true, Seed: 11}, Layout{Name: "random-b", Seed: 12})
	return ls
}

// Split cuts rec into batches according to l. The batches are slices that
// share rec's buffers (each holds its own reference); rec itself is not
// released. Empty batches are zero-length slices.
func Split(rec arrow.RecordBatch, l Layout, salt uint64) []arrow.RecordBatch {
	rng := rand.New(rand.NewPCG(l.Seed, salt))
	n := rec.NumRows()
	var out []arrow.RecordBatch
	empty := func() {
		if l.Empty && rng.IntN(3) == 0 {
			out = append(out, rec.NewSlice(0, 0))
		}
	}
	if l.Empty {
		out = append(out, rec.NewSlice(0, 0))
	}
	for i := int64(0); i < n; {
		size := int64(l.Size)
		if size <= 0 {
			size = 1 + int64(rng.IntN(9))
			if rng.IntN(5) == 0 {
				size = 1 + int64(rng.IntN(200))
			}
		}
		j := min(n, i+size)
		out = append(out, rec.NewSlice(i, j))
		i = j
		empty()
	}
	if l.Empty {
		out = append(out, rec.NewSlice(n, n))
	}
	return out
}

// Case is one operator test case.
type Case struct {
	// Inputs builds the whole input tables with mem; the harness releases
	// them.
	Inputs func(mem memory.Allocator) []arrow.RecordBatch
	// Build wires the operator under test over the split inputs.
	Build func(mem memory.Allocator, inputs []operator.Operator) (operator.Operator, error)
	// Parallel, when set, replaces Build: it wires the operator to run
	// with the given number of workers, and the case runs at each of
	// Workers under every layout, all runs giving one answer.
	Parallel func(mem memory.Allocator, inputs []operator.Operator, workers int) (operator.Operator, error)
	// Workers overrides the worker counts Parallel runs at.
	Workers []int
	// Check inspects the concatenated output of one run (nil rows with a
	// non-nil err when the run failed). It runs for every layout.
	Check func(t *testing.T, got arrow.RecordBatch, err error)
	// Layouts overrides the standard layouts.
	Layouts []Layout
}

// Run executes c under every layout, checks each run with c.Check, requires
// all runs to produce identical output (or identical error text), and
// requires every allocator to end at zero bytes.
func Run(t *testing.T, c Case) {
	t.Helper()
	layouts := c.Layouts
	if layouts == nil {
		layouts = Layouts()
	}
	workers := []int{0}
	if c.Parallel != nil {
		workers = Workers
		if c.Workers != nil {
			workers = c.Workers
		}
	}
	var first, firstName string
	for i, l := range layouts {
		for j, w := range workers {
			name := l.Name
			if c.Parallel != nil {
				name += fmt.Sprintf(" workers=%d", w)
			}
			got := runOne(t, c, l, w)
			if i == 0 && j == 0 {
				first, firstName = got, name
				continue
			}
			if got != first {
				t.Fatalf("%s gave a different answer than %s:\n--- %s\n%s\n--- %s\n%s",
					name, firstName, firstName, first, name, got)
			}
		}
	}
}

func runOne(t *testing.T, c Case, l Layout, workers int) string {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tables := c.Inputs(mem)
	ops := make([]operator.Operator, len(tables))
	for i, tbl := range tables {
		ops[i] = operator.NewBatches(tbl.Schema(), Split(tbl, l, uint64(i)))
		tbl.Release()
	}
	var op operator.Operator
	var err error
	if c.Parallel != nil {
		op, err = c.Parallel(mem, ops, workers)
	} else {
		op, err = c.Build(mem, ops)
	}
	if err != nil {
		for _, o := range ops {
			o.Close()
		}
		c.Check(t, nil, err)
		return "build error: " + err.Error()
	}
	got, err := Collect(context.Background(), op, mem)
	if got != nil {
		defer got.Release()
	}
	c.Check(t, got, err)
	if err != nil {
		return "error: " + err.Error()
	}
	return Format(got)
}

// Collect opens op, drains it, closes it and concatenates the output into
// one batch (an empty batch with op's schema when there were no rows).
func Collect(ctx context.Context, op operator.Operator, mem memory.Allocator) (arrow.RecordBatch, error) {
	schema := op.Schema()
	var parts []arrow.RecordBatch
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	err := operator.Drain(ctx, op, func(b arrow.RecordBatch) error {
		if !b.Schema().Equal(schema) {
			return fmt.Errorf("batch schema %s differs from operator schema %s", b.Schema(), schema)
		}
		b.Retain()
		parts = append(parts, b)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return Concat(schema, parts, mem)
}

// Concat concatenates batches of one schema into one batch.
func Concat(schema *arrow.Schema, parts []arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, schema.NumFields())
	var rows int64
	for _, p := range parts {
		rows += p.NumRows()
	}
	for i := range cols {
		var arrs []arrow.Array
		for _, p := range parts {
			arrs = append(arrs, p.Column(i))
		}
		if len(arrs) == 0 {
			b := array.NewBuilder(mem, schema.Field(i).Type)
			cols[i] = b.NewArray()
			b.Release()
			continue
		}
		c, err := array.Concatenate(arrs, mem)
		if err != nil {
			for _, done := range cols[:i] {
				done.Release()
			}
			return nil, err
		}
		cols[i] = c
	}
	rec := array.NewRecordBatch(schema, cols, rows)
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}

// Format renders a batch as one line per row, values separated by " | ",
// NULL as "NULL": a stable text for comparing runs and writing expectations.
func Format(rec arrow.RecordBatch) string {
	var sb strings.Builder
	for r := 0; r < int(rec.NumRows()); r++ {
		for c := 0; c < int(rec.NumCols()); c++ {
			if c > 0 {
				sb.WriteString(" | ")
			}
			col := rec.Column(c)
			if col.IsNull(r) {
				sb.WriteString("NULL")
			} else {
				sb.WriteString(col.ValueStr(r))
			}
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// Rows renders a batch like Format but returns one string per row.
func Rows(rec arrow.RecordBatch) []string {
	s := Format(rec)
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// RequireRows checks a batch against expected rows in Format's notation.
func RequireRows(t *testing.T, want []string, got arrow.RecordBatch) {
	t.Helper()
	require.Equal(t, want, Rows(got))
}
