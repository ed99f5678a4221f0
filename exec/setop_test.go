package exec_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/sqltypes"
)

// setOpInputs: duplicates on both sides, rows with one and with all
// columns NULL, and a row on each side only.
func setOpInputs(t testing.TB) func(mem memory.Allocator) []arrow.RecordBatch {
	return func(mem memory.Allocator) []arrow.RecordBatch {
		return []arrow.RecordBatch{
			mkTable(t, mem,
				tcol{"k", sqltypes.TextType, []string{"A", "A", "A", "B", "NULL", "NULL", "C", "NULL", "B"}},
				tcol{"v", sqltypes.Int4Type, []string{"1", "1", "1", "2", "NULL", "NULL", "3", "1", "2"}},
			),
			mkTable(t, mem,
				tcol{"k2", sqltypes.TextType, []string{"A", "A", "B", "NULL", "D", "NULL", "NULL", "NULL"}},
				tcol{"v2", sqltypes.Int4Type, []string{"1", "1", "2", "NULL", "4", "1", "1", "1"}},
			),
		}
	}
}

// Expected rows from PostgreSQL 15 over the same tables l and r:
//
//	select * from l intersect [all] select * from r;
//	select * from l except [all] select * from r;
func TestHashSetOp(t *testing.T) {
	cases := []struct {
		kind exec.SetOpKind
		all  bool
		want []string
	}{
		{exec.Intersect, false, []string{"A|1", "B|2", "|1", "|"}},
		{exec.Intersect, true, []string{"A|1", "A|1", "B|2", "|1", "|"}},
		{exec.Except, false, []string{"C|3"}},
		{exec.Except, true, []string{"A|1", "B|2", "C|3", "|"}},
	}
	for _, c := range cases {
		name := c.kind.String()
		if c.all {
			name += " ALL"
		}
		t.Run(name, func(t *testing.T) {
			exectest.Run(t, exectest.Case{
				Inputs: setOpInputs(t),
				Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
					return exec.NewHashSetOp(in[0], in[1], c.kind, c.all, mem, 0)
				},
				Check: wantPGUnordered(c.want...),
			})
			// Swapped sides: what was only on the right now is only on the left.
			exectest.Run(t, exectest.Case{
				Inputs: func(mem memory.Allocator) []arrow.RecordBatch {
					in := setOpInputs(t)(mem)
					return []arrow.RecordBatch{in[1], in[0]}
				},
				Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
					return exec.NewHashSetOp(in[0], in[1], c.kind, c.all, mem, 0)
				},
				Check: func(t *testing.T, got arrow.RecordBatch, err error) {
					t.Helper()
					if got != nil && got.Schema().Field(0).Name != "k2" {
						t.Fatalf("output names come from the left input, got %s", got.Schema())
					}
					wantPGUnordered(swapped[name]...)(t, got, err)
				},
			})
		})
	}
}

// select * from r intersect [all] / except [all] select * from l;
var swapped = map[string][]string{
	"INTERSECT":     {"A|1", "B|2", "|1", "|"},
	"INTERSECT ALL": {"A|1", "A|1", "B|2", "|1", "|"},
	"EXCEPT":        {"D|4"},
	"EXCEPT ALL":    {"D|4", "|1", "|1"},
}

func TestHashSetOpEmptyAndLimits(t *testing.T) {
	emptyLike := func(mem memory.Allocator, from arrow.RecordBatch) arrow.RecordBatch {
		e := from.NewSlice(0, 0)
		from.Release()
		return e
	}
	// An empty right side: INTERSECT is empty, EXCEPT ALL is the left.
	for _, c := range []struct {
		kind exec.SetOpKind
		all  bool
		want []string
	}{
		{exec.Intersect, true, nil},
		{exec.Except, true, []string{"A|1", "A|1", "A|1", "B|2", "|", "|", "C|3", "|1", "B|2"}},
		{exec.Except, false, []string{"A|1", "B|2", "|", "C|3", "|1"}},
	} {
		exectest.Run(t, exectest.Case{
			Inputs: func(mem memory.Allocator) []arrow.RecordBatch {
				in := setOpInputs(t)(mem)
				return []arrow.RecordBatch{in[0], emptyLike(mem, in[1])}
			},
			Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
				return exec.NewHashSetOp(in[0], in[1], c.kind, c.all, mem, 0)
			},
			Check: wantPGUnordered(c.want...),
		})
	}
	// The right side's hash table is charged; so are the left's distinct
	// rows that EXCEPT must remember.
	exectest.Run(t, exectest.Case{
		Inputs: setOpInputs(t),
		Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			return exec.NewHashSetOp(in[0], in[1], exec.Intersect, true, mem, 100)
		},
		Check: wantCode("53200", "INTERSECT exceeded the memory limit of 100 bytes"),
	})
	exectest.Run(t, exectest.Case{
		Inputs: func(mem memory.Allocator) []arrow.RecordBatch {
			in := setOpInputs(t)(mem)
			return []arrow.RecordBatch{in[0], emptyLike(mem, in[1])}
		},
		Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			return exec.NewHashSetOp(in[0], in[1], exec.Except, false, mem, 100)
		},
		Check: wantCode("53200", "EXCEPT exceeded the memory limit of 100 bytes"),
	})
	// Mismatched inputs are refused when built.
	exectest.Run(t, exectest.Case{
		Inputs: func(mem memory.Allocator) []arrow.RecordBatch {
			in := setOpInputs(t)(mem)
			in[1].Release()
			return []arrow.RecordBatch{in[0], trades(t)(mem)[0]}
		},
		Build: func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			return exec.NewHashSetOp(in[0], in[1], exec.Except, false, mem, 0)
		},
		Check:   wantCode("42601", "each EXCEPT query must have the same number of columns"),
		Layouts: exectest.Layouts()[:1],
	})
}
