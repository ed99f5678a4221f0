package lower

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/sql/planner"
)

// recursive builds WITH RECURSIVE's iteration. The recursive term is
// built anew for each iteration (operators run once), over a scan of the
// working table the RecursiveUnion refills; building it once here checks
// it before any row flows.
func (b *builder) recursive(n *planner.RecursiveCTE) (exec.Operator, error) {
	base, err := b.node(n.Base)
	if err != nil {
		return nil, err
	}
	// Recursive rows may be NULL where the base's never are.
	bs := base.Schema()
	fields := make([]arrow.Field, bs.NumFields())
	for i, f := range bs.Fields() {
		f.Nullable = true
		fields[i] = f
	}
	md := bs.Metadata()
	wt := exec.NewWorkTable(arrow.NewSchema(fields, &md))
	if b.workTables == nil {
		b.workTables = map[int]*exec.WorkTable{}
	}
	b.workTables[n.ID] = wt
	build := func() (exec.Operator, error) { return b.node(n.Recursive) }
	probe, err := build()
	if err != nil {
		base.Close()
		return nil, err
	}
	if err := probe.Close(); err != nil {
		base.Close()
		return nil, err
	}
	op, err := exec.NewRecursiveUnion(nullableSchema{Operator: base, s: wt.Schema()}, wt, build, b.env.Mem, n.Distinct, b.env.MemoryLimit)
	if err != nil {
		base.Close()
		return nil, err
	}
	return op, nil
}

// nullableSchema presents an operator's batches under an equal schema
// whose fields are all nullable.
type nullableSchema struct {
	exec.Operator
	s *arrow.Schema
}

func (n nullableSchema) Schema() *arrow.Schema { return n.s }
