package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sqltypes"
)

// DistinctOn keeps the first row of each run of rows with equal key
// columns (SELECT DISTINCT ON: NULLs equal each other). Its input must
// arrive with equal keys adjacent (sorted on the keys, in any direction);
// it then needs memory for one key only, however many groups there are.
type DistinctOn struct {
	child Operator
	mem   memory.Allocator
	keys  []int
	types []sqltypes.Type
	last  []byte // the previous row's key, carried across batches
	seen  bool   // whether last holds a key yet
}

var _ Operator = (*DistinctOn)(nil)

// NewDistinctOn returns the first row of each run of equal keys (column
// indexes into child's schema) of child.
func NewDistinctOn(child Operator, mem memory.Allocator, keys []int) (*DistinctOn, error) {
	s := child.Schema()
	d := &DistinctOn{child: child, mem: mem, keys: keys}
	for _, k := range keys {
		t, err := columnType(s, k)
		if err != nil {
			return nil, err
		}
		d.types = append(d.types, t)
	}
	return d, nil
}

func (d *DistinctOn) Schema() *arrow.Schema          { return d.child.Schema() }
func (d *DistinctOn) Open(ctx context.Context) error { return d.child.Open(ctx) }
func (d *DistinctOn) Close() error                   { return d.child.Close() }

func (d *DistinctOn) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := d.child.Next(ctx)
		if err != nil {
			return nil, err
		}
		cols := make([]arrow.Array, len(d.keys))
		for i, k := range d.keys {
			cols[i] = b.Column(k)
		}
		enc := keyEncoder{cols: cols, types: d.types}
		mask := make([]bool, b.NumRows())
		kept := 0
		cur := d.last
		var buf []byte
		for i := range mask {
			buf = enc.encode(buf[:0], i)
			if d.seen && string(buf) == string(cur) {
				continue
			}
			// Swap rather than copy: cur keeps the new key, buf reuses
			// the old one's storage.
			cur, buf = buf, cur
			d.seen = true
			mask[i] = true
			kept++
		}
		d.last = cur
		if kept == 0 {
			b.Release()
			continue
		}
		if kept == len(mask) {
			return b, nil
		}
		out, err := eval.FilterBatch(d.mem, b, mask)
		b.Release()
		return out, err
	}
}
