package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/memacct"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// arrayAggAcc is array_agg(x): each group's values, NULLs included, in
// input order (the planner sorts the input for array_agg(x ORDER BY y));
// NULL for a group without rows. With FILTER (WHERE cond) the condition
// arrives as a further argument, and only rows where it is true count
// (a FILTER cannot be folded into x as for the NULL-skipping aggregates).
type arrayAggAcc struct {
	t     sqltypes.Type // the element type
	vals  [][]any       // per group, in vec.Value's representation
	seen  []bool
	cond  *array.Boolean
	bytes int64
	acct  *memacct.Account
}

var (
	_ multiArg  = (*arrayAggAcc)(nil)
	_ varState  = (*arrayAggAcc)(nil)
	_ accounted = (*arrayAggAcc)(nil)
)

func (a *arrayAggAcc) setAccount(acct *memacct.Account) { a.acct = acct }
func (a *arrayAggAcc) resize(n int)                     { a.vals, a.seen = grow(a.vals, n), grow(a.seen, n) }
func (a *arrayAggAcc) keep(g int)                       { a.vals, a.seen = keep1(a.vals, g), keep1(a.seen, g) }
func (a *arrayAggAcc) groupBytes() int64                { return 32 }
func (a *arrayAggAcc) varBytes() int64                  { return a.bytes }
func (a *arrayAggAcc) setExtra(args []arrow.Array) {
	a.cond = nil
	if len(args) > 0 {
		a.cond, _ = args[0].(*array.Boolean)
	}
}

// elemBytes is what one held value costs: the interface and its payload.
func elemBytes(v any) int64 {
	switch x := v.(type) {
	case string:
		return 32 + int64(len(x))
	case []byte:
		return 40 + int64(len(x))
	}
	return 32
}

func (a *arrayAggAcc) add(gids []int32, arg arrow.Array) error {
	var added int64
	for i, g := range gids {
		if g < 0 || a.cond != nil && (!a.cond.IsValid(i) || !a.cond.Value(i)) {
			continue
		}
		v := vec.Value(arg, i)
		n := elemBytes(v)
		if a.acct != nil && added+n > 1<<16 {
			// Asked for in steps, so one batch into one group cannot
			// run far past the limit unnoticed.
			if err := a.acct.Need("array_agg", added+n); err != nil {
				return err
			}
			added = 0
		}
		added += n
		a.vals[g] = append(a.vals[g], v)
		a.seen[g] = true
		a.bytes += n
	}
	return nil
}

func (a *arrayAggAcc) finish(mem memory.Allocator, n int) (arrow.Array, error) {
	b := array.NewListBuilder(mem, a.t.Arrow())
	defer b.Release()
	for g := 0; g < n; g++ {
		if !a.seen[g] {
			b.AppendNull()
			continue
		}
		vec.AppendValue(b, a.vals[g])
	}
	return b.NewArray(), nil
}
