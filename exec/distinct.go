package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sqltypes"
)

// Distinct streams the first occurrence of each distinct row (all
// columns; NULLs are equal to each other here, as in SELECT DISTINCT). It
// remembers every row seen, within a memory limit.
type Distinct struct {
	child  Operator
	mem    memory.Allocator
	types  []sqltypes.Type
	seen   map[string]struct{}
	budget memBudget
}

var _ Operator = (*Distinct)(nil)

// NewDistinct returns SELECT DISTINCT * over child; memoryLimit bounds the
// set of seen rows (0 = unlimited; 53200 beyond).
func NewDistinct(child Operator, mem memory.Allocator, memoryLimit int64) (*Distinct, error) {
	s := child.Schema()
	d := &Distinct{child: child, mem: mem, seen: map[string]struct{}{}, budget: newBudget("distinct", mem, memoryLimit)}
	for i := 0; i < s.NumFields(); i++ {
		t, err := columnType(s, i)
		if err != nil {
			return nil, err
		}
		d.types = append(d.types, t)
	}
	return d, nil
}

func (d *Distinct) Schema() *arrow.Schema          { return d.child.Schema() }
func (d *Distinct) Open(ctx context.Context) error { return d.child.Open(ctx) }

func (d *Distinct) Close() error {
	d.seen = nil
	return d.child.Close()
}

func (d *Distinct) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := d.child.Next(ctx)
		if err != nil {
			return nil, err
		}
		mask, kept, added := markUnseen(d.seen, keyEncoder{cols: b.Columns(), types: d.types}, int(b.NumRows()))
		if err := d.budget.grow(added); err != nil {
			b.Release()
			return nil, err
		}
		if kept == 0 {
			b.Release()
			continue
		}
		out, err := eval.FilterBatch(d.mem, b, mask)
		b.Release()
		return out, err
	}
}

// markUnseen adds the rows of enc not in seen to it: mask marks them, kept
// counts them and added is the bytes seen grew by (keys and map overhead).
func markUnseen(seen map[string]struct{}, enc keyEncoder, rows int) (mask []bool, kept int, added int64) {
	mask = make([]bool, rows)
	var buf []byte
	for i := range mask {
		buf = enc.encode(buf[:0], i)
		if _, dup := seen[string(buf)]; dup {
			continue
		}
		seen[string(buf)] = struct{}{}
		added += int64(len(buf)) + 48
		mask[i] = true
		kept++
	}
	return mask, kept, added
}
