package exec

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// SetOpKind is INTERSECT or EXCEPT.
type SetOpKind uint8

const (
	Intersect SetOpKind = iota
	Except
)

func (k SetOpKind) String() string {
	if k == Except {
		return "EXCEPT"
	}
	return "INTERSECT"
}

// HashSetOp is left INTERSECT [ALL] right or left EXCEPT [ALL] right
// with PostgreSQL's duplicate rules: a row found m times on the left and
// n times on the right comes out min(m,n) times from INTERSECT ALL,
// max(m-n,0) times from EXCEPT ALL, and at most once without ALL. Rows
// compare as in DISTINCT (NULL equals NULL).
//
// It hashes the right side into a count per distinct row, then streams
// the left, spending those counts: every output row is a left row, so the
// left side is never held, only the right's distinct rows (plus, for
// EXCEPT without ALL, the left's distinct rows, to emit each once).
type HashSetOp struct {
	left, right Operator
	mem         memory.Allocator
	kind        SetOpKind
	all         bool
	schema      *arrow.Schema
	types       []sqltypes.Type
	counts      map[string]int64
	built       bool
	budget      memBudget
}

var _ Operator = (*HashSetOp)(nil)

// emitted marks a key already output by a set operation without ALL (or,
// for EXCEPT, found on the right): no further copy of it comes out.
const emitted = -1

// NewHashSetOp returns left kind [ALL] right. Both inputs must have the
// same column types; names come from the left. memoryLimit bounds the
// hash table (0 = unlimited; 53200 beyond).
func NewHashSetOp(left, right Operator, kind SetOpKind, all bool, mem memory.Allocator, memoryLimit int64) (*HashSetOp, error) {
	ls, rs := left.Schema(), right.Schema()
	if ls.NumFields() != rs.NumFields() {
		return nil, sqlerr.New(sqlerr.SyntaxError, "each %s query must have the same number of columns", kind)
	}
	op := &HashSetOp{left: left, right: right, mem: mem, kind: kind, all: all, schema: ls,
		counts: map[string]int64{}, budget: newBudget(kind.String(), mem, memoryLimit)}
	for i := 0; i < ls.NumFields(); i++ {
		if !arrow.TypeEqual(ls.Field(i).Type, rs.Field(i).Type) {
			return nil, sqlerr.New(sqlerr.DatatypeMismatch, "%s types %s and %s cannot be matched", kind, ls.Field(i).Type, rs.Field(i).Type)
		}
		t, err := columnType(ls, i)
		if err != nil {
			return nil, err
		}
		op.types = append(op.types, t)
	}
	return op, nil
}

func (h *HashSetOp) Schema() *arrow.Schema { return h.schema }

func (h *HashSetOp) Open(ctx context.Context) error {
	if err := h.left.Open(ctx); err != nil {
		return err
	}
	return h.right.Open(ctx)
}

func (h *HashSetOp) Close() error {
	h.counts = nil
	err := h.left.Close()
	if rerr := h.right.Close(); err == nil {
		err = rerr
	}
	return err
}

// build counts the right side's rows per distinct value.
func (h *HashSetOp) build(ctx context.Context) error {
	var buf []byte
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := h.right.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		enc := keyEncoder{cols: b.Columns(), types: h.types}
		var added int64
		for i := 0; i < int(b.NumRows()); i++ {
			buf = enc.encode(buf[:0], i)
			n, ok := h.counts[string(buf)]
			if !ok {
				added += int64(len(buf)) + 48
			}
			h.counts[string(buf)] = n + 1
		}
		b.Release()
		if err := h.budget.grow(added); err != nil {
			return err
		}
	}
}

func (h *HashSetOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if !h.built {
		if err := h.build(ctx); err != nil {
			return nil, err
		}
		h.built = true
	}
	var buf []byte
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := h.left.Next(ctx)
		if err != nil {
			return nil, err
		}
		enc := keyEncoder{cols: b.Columns(), types: h.types}
		mask := make([]bool, b.NumRows())
		kept := 0
		var added int64
		for i := range mask {
			buf = enc.encode(buf[:0], i)
			n, ok := h.counts[string(buf)]
			var keep bool
			switch {
			case h.kind == Intersect && h.all:
				// Each right copy pairs off one left copy.
				keep = n > 0
				if keep {
					h.counts[string(buf)] = n - 1
				}
			case h.kind == Intersect:
				keep = n > 0
				if keep {
					h.counts[string(buf)] = emitted
				}
			case h.all: // EXCEPT ALL: each right copy cancels one left copy.
				keep = n <= 0
				if n > 0 {
					h.counts[string(buf)] = n - 1
				}
			default: // EXCEPT: left rows never on the right, once each.
				keep = !ok
				if keep {
					h.counts[string(buf)] = emitted
					added += int64(len(buf)) + 48
				}
			}
			if keep {
				mask[i] = true
				kept++
			}
		}
		if err := h.budget.grow(added); err != nil {
			b.Release()
			return nil, err
		}
		if kept == 0 {
			b.Release()
			continue
		}
		if kept == len(mask) {
			return b, nil
		}
		out, err := eval.FilterBatch(h.mem, b, mask)
		b.Release()
		return out, err
	}
}
