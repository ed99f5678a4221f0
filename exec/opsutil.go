package exec

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/memacct"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// DefaultBatchSize is the number of rows materializing operators (sort,
// aggregate, join build) put in each output batch.
const DefaultBatchSize = 4096

// columnType returns the SQL type of column i of s, requiring that its
// Arrow storage is the one sqltypes assigns (operators read values with
// typed loops that rely on it).
func columnType(s *arrow.Schema, i int) (sqltypes.Type, error) {
	if i < 0 || i >= s.NumFields() {
		return sqltypes.Type{}, sqlerr.New(sqlerr.UndefinedColumn, "column index %d is not in the input (%d columns)", i, s.NumFields())
	}
	f := s.Field(i)
	t, err := sqltypes.FromField(f)
	if err != nil {
		return sqltypes.Type{}, err
	}
	if !arrow.TypeEqual(t.Arrow(), f.Type) {
		return sqltypes.Type{}, sqlerr.New(sqlerr.FeatureNotSupported, "column %q has Arrow type %s, which is not the storage of a SQL type", f.Name, f.Type)
	}
	return t, nil
}

// memBudget tracks the bytes a materializing operator holds. Under a
// query's account (its allocator is a *memacct.Account) the account does
// the bounding: Arrow batches are counted by the allocator as they are
// made, so retaining one only checks the account, and Go-heap state is
// charged to it. Without an account the operator bounds itself by limit
// (0 = unlimited), estimating the batches it retains.
type memBudget struct {
	op    string
	limit int64
	acct  *memacct.Account
	used  int64
}

func newBudget(op string, mem memory.Allocator, limit int64) memBudget {
	return memBudget{op: op, limit: limit, acct: memacct.Of(mem)}
}

// set replaces the tracked amount of Go-heap state by n.
func (m *memBudget) set(n int64) error { return m.grow(n - m.used) }

// grow charges n more bytes of Go-heap state (n < 0 returns them).
func (m *memBudget) grow(n int64) error {
	if m.acct != nil {
		if err := m.acct.Grow(m.op, n); err != nil {
			return err
		}
		m.used += n
		return nil
	}
	m.used += n
	if m.limit > 0 && m.used > m.limit {
		return sqlerr.New(sqlerr.OutOfMemory, "%s exceeded the memory limit of %d bytes", m.op, m.limit).
			WithHint("Raise memory_limit (SET memory_limit = '1GB'), or reduce the input of the %s.", m.op)
	}
	return nil
}

// retain accounts for a batch the operator keeps.
func (m *memBudget) retain(b arrow.RecordBatch) error {
	if m.acct != nil {
		return m.acct.Check(m.op)
	}
	return m.grow(batchBytes(b))
}

// check fails once the query's account is over its limit (nil without
// an account: the operator's own estimate counts only what it retains).
func (m *memBudget) check() error {
	if m.acct != nil {
		return m.acct.Check(m.op)
	}
	return nil
}

// hold replaces every batch the operator keeps by b (top-N's best rows).
func (m *memBudget) hold(b arrow.RecordBatch) error {
	if m.acct != nil {
		return m.acct.Check(m.op)
	}
	return m.set(batchBytes(b))
}

// arrayBytes estimates the bytes a's rows occupy (not the buffers it may
// share with other slices, which would count the same memory many times).
func arrayBytes(a arrow.Array) int64 {
	n := int64(a.Len())
	size := (n + 7) / 8
	switch x := a.(type) {
	case *array.String:
		if n > 0 {
			size += int64(x.ValueOffset(int(n-1))+x.ValueLen(int(n-1))-x.ValueOffset(0)) + 4*n
		}
	case *array.Binary:
		if n > 0 {
			size += int64(x.ValueOffset(int(n-1))+x.ValueLen(int(n-1))-x.ValueOffset(0)) + 4*n
		}
	case *array.Boolean:
		size += (n + 7) / 8
	default:
		if fw, ok := a.DataType().(arrow.FixedWidthDataType); ok {
			size += n * int64(fw.BitWidth()/8)
		}
	}
	return size
}

// BatchBytes estimates the bytes b's rows occupy, as the materializing
// operators count them against a memory limit.
func BatchBytes(b arrow.RecordBatch) int64 { return batchBytes(b) }

func batchBytes(b arrow.RecordBatch) int64 {
	var s int64
	for _, c := range b.Columns() {
		s += arrayBytes(c)
	}
	return s
}

// concatBatches concatenates batches of one schema into one batch.
func concatBatches(mem memory.Allocator, schema *arrow.Schema, parts []arrow.RecordBatch) (arrow.RecordBatch, error) {
	var rows int64
	for _, p := range parts {
		rows += p.NumRows()
	}
	if len(parts) == 1 {
		parts[0].Retain()
		return parts[0], nil
	}
	cols := make([]arrow.Array, schema.NumFields())
	for i := range cols {
		if len(parts) == 0 {
			cols[i] = array.MakeArrayOfNull(mem, schema.Field(i).Type, 0)
			continue
		}
		arrs := make([]arrow.Array, len(parts))
		for k, p := range parts {
			arrs[k] = p.Column(i)
		}
		c, err := array.Concatenate(arrs, mem)
		if err != nil {
			for _, d := range cols[:i] {
				d.Release()
			}
			return nil, err
		}
		cols[i] = c
	}
	out := array.NewRecordBatch(schema, cols, rows)
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}

// drainAll reads child to the end, retaining each non-empty batch and
// charging it to budget.
func drainAll(ctx context.Context, child Operator, budget *memBudget) ([]arrow.RecordBatch, error) {
	var parts []arrow.RecordBatch
	for {
		b, err := child.Next(ctx)
		if errors.Is(err, io.EOF) {
			return parts, nil
		}
		if err != nil {
			releaseBatches(parts)
			return nil, err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		parts = append(parts, b)
		if err := budget.retain(b); err != nil {
			releaseBatches(parts)
			return nil, err
		}
	}
}

func releaseBatches(bs []arrow.RecordBatch) {
	for _, b := range bs {
		if b != nil {
			b.Release()
		}
	}
}

// compileAll compiles exprs against schema.
func compileAll(es []exprLike, schema *arrow.Schema, env eval.Env) ([]*eval.Evaluator, error) {
	out := make([]*eval.Evaluator, len(es))
	for i, e := range es {
		ev, err := eval.Compile(e, schema, env)
		if err != nil {
			return nil, err
		}
		out[i] = ev
	}
	return out, nil
}
