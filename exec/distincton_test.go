package exec_test

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/sqltypes"
)

// quotesBySym is sorted by (sym, ts DESC) as DISTINCT ON's plan delivers
// it; B's run of 40 rows spans batches at every layout but 1024.
func quotesBySym(t testing.TB) func(mem memory.Allocator) []arrow.RecordBatch {
	sym := []string{"A", "A", "A"}
	ts := []string{"30", "20", "10"}
	px := []string{"1.5", "NULL", "1.25"}
	for i := 0; i < 40; i++ {
		sym, ts, px = append(sym, "B"), append(ts, fmt.Sprint(100-i)), append(px, fmt.Sprint(i))
	}
	sym = append(sym, "C", "NULL", "NULL")
	ts = append(ts, "5", "7", "6")
	px = append(px, "-0", "0", "2")
	return func(mem memory.Allocator) []arrow.RecordBatch {
		return []arrow.RecordBatch{mkTable(t, mem,
			tcol{"sym", sqltypes.TextType, sym},
			tcol{"ts", sqltypes.Int8Type, ts},
			tcol{"px", sqltypes.Float8Type, px},
		)}
	}
}

func TestDistinctOn(t *testing.T) {
	build := func(keys ...int) func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
		return func(mem memory.Allocator, in []exec.Operator) (exec.Operator, error) {
			return exec.NewDistinctOn(in[0], mem, keys)
		}
	}
	t.Run("latest per symbol", func(t *testing.T) {
		exectest.Run(t, exectest.Case{
			Inputs: quotesBySym(t),
			Build:  build(0),
			// NULL keys form one group, as in Postgres.
			Check: wantPG("A|30|1.5", "B|100|0", "C|5|-0", "|7|0"),
		})
	})
	t.Run("float key: -0 equals 0", func(t *testing.T) {
		exectest.Run(t, exectest.Case{
			Inputs: func(mem memory.Allocator) []arrow.RecordBatch {
				return []arrow.RecordBatch{mkTable(t, mem,
					tcol{"k", sqltypes.Float8Type, []string{"-0", "0", "0", "NaN", "NaN", "NULL", "NULL", "1"}},
					tcol{"v", sqltypes.Int4Type, []string{"1", "2", "3", "4", "5", "6", "7", "8"}},
				)}
			},
			Build: build(0),
			Check: wantPG("-0|1", "NaN|4", "|6", "1|8"),
		})
	})
	t.Run("two keys", func(t *testing.T) {
		exectest.Run(t, exectest.Case{
			Inputs: func(mem memory.Allocator) []arrow.RecordBatch {
				return []arrow.RecordBatch{mkTable(t, mem,
					tcol{"a", sqltypes.Int4Type, []string{"1", "1", "1", "1", "2", "2", "NULL", "NULL"}},
					tcol{"b", sqltypes.TextType, []string{"x", "x", "y", "NULL", "NULL", "NULL", "x", "x"}},
					tcol{"v", sqltypes.Int4Type, []string{"1", "2", "3", "4", "5", "6", "7", "8"}},
				)}
			},
			Build: build(0, 1),
			Check: wantPG("1|x|1", "1|y|3", "1||4", "2||5", "|x|7"),
		})
	})
	t.Run("every row its own group", func(t *testing.T) {
		exectest.Run(t, exectest.Case{Inputs: quotesBySym(t), Build: build(1), Check: func(t *testing.T, got arrow.RecordBatch, err error) {
			t.Helper()
			if err != nil || got.NumRows() != 46 {
				t.Fatalf("want all 46 rows, got %v rows, err %v", got, err)
			}
		}})
	})
	t.Run("no rows", func(t *testing.T) {
		exectest.Run(t, exectest.Case{
			Inputs: func(mem memory.Allocator) []arrow.RecordBatch {
				return []arrow.RecordBatch{mkTable(t, mem, tcol{"k", sqltypes.Int4Type, nil})}
			},
			Build: build(0),
			Check: wantPG(),
		})
	})
	t.Run("bad key column", func(t *testing.T) {
		exectest.Run(t, exectest.Case{Inputs: quotesBySym(t), Build: build(5), Check: func(t *testing.T, got arrow.RecordBatch, err error) {
			t.Helper()
			if err == nil {
				t.Fatal("want an error for a key column out of range")
			}
		}})
	})
}

func init() {
	extraCancelBuilds = append(extraCancelBuilds,
		struct {
			name  string
			build func(mem memory.Allocator, in exec.Operator) (exec.Operator, error)
		}{"distincton", func(mem memory.Allocator, in exec.Operator) (exec.Operator, error) {
			return exec.NewDistinctOn(in, mem, []int{0})
		}},
	)
}
