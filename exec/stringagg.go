package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/memacct"
	"github.com/asofsql/asofsql/sqltypes"
)

// multiArg is implemented by accumulators of more than one argument
// (string_agg): setExtra hands them the further arguments of the batch
// whose first argument the next add call folds.
type multiArg interface {
	setExtra(args []arrow.Array)
}

// varState is implemented by accumulators whose state grows with the
// values they hold; varBytes is that state's size beyond groupBytes.
type varState interface {
	varBytes() int64
}

// accounted is implemented by accumulators whose state can grow by a
// lot within one batch (string_agg of long values into one group): they
// ask the query's account before each growth, not only once the batch is
// folded.
type accounted interface {
	setAccount(*memacct.Account)
}

// stringAggAcc is string_agg(value, delimiter) over text or bytea: each
// group's non-NULL values in input order, every one but the first preceded
// by the delimiter of its own row (a NULL delimiter adds nothing), as in
// Postgres; NULL for a group without values.
type stringAggAcc struct {
	bin   bool // bytea rather than text
	buf   [][]byte
	seen  []bool
	delim arrow.Array
	bytes int64
	acct  *memacct.Account // nil: the operator's own estimate, per batch
}

var (
	_ multiArg  = (*stringAggAcc)(nil)
	_ varState  = (*stringAggAcc)(nil)
	_ accounted = (*stringAggAcc)(nil)
	_ accounted = (*distinctAcc)(nil)
)

func (a *stringAggAcc) setAccount(acct *memacct.Account) { a.acct = acct }

func (a *distinctAcc) setAccount(acct *memacct.Account) {
	if in, ok := a.inner.(accounted); ok {
		in.setAccount(acct)
	}
}

func (a *stringAggAcc) resize(n int)      { a.buf, a.seen = grow(a.buf, n), grow(a.seen, n) }
func (a *stringAggAcc) keep(g int)        { a.buf, a.seen = keep1(a.buf, g), keep1(a.seen, g) }
func (a *stringAggAcc) groupBytes() int64 { return 32 }
func (a *stringAggAcc) varBytes() int64   { return a.bytes }
func (a *stringAggAcc) setExtra(args []arrow.Array) {
	a.delim = nil
	if len(args) > 0 {
		a.delim = args[0]
	}
}

func isTextKind(k sqltypes.Kind) bool { return k == sqltypes.Text || k == sqltypes.Varchar }

// bytesAt reads row i of a text or bytea array.
func bytesAt(arr arrow.Array, i int) []byte {
	switch x := arr.(type) {
	case *array.String:
		return []byte(x.Value(i))
	case *array.Binary:
		return x.Value(i)
	}
	return nil
}

func (a *stringAggAcc) add(gids []int32, arg arrow.Array) error {
	// The account holds the state as of the previous batch (the operator
	// charges it after each one); what this batch adds is asked for before
	// a group's buffer is reallocated, along with the new buffer.
	start := a.bytes
	for i, g := range gids {
		if g < 0 || arg.IsNull(i) {
			continue
		}
		before := len(a.buf[g])
		var d []byte
		if a.seen[g] && a.delim != nil && a.delim.IsValid(i) {
			d = bytesAt(a.delim, i)
		}
		v := bytesAt(arg, i)
		if n := before + len(d) + len(v); a.acct != nil && n > cap(a.buf[g]) {
			if err := a.acct.Need("string_agg", a.bytes-start+int64(n)); err != nil {
				return err
			}
		}
		a.buf[g] = append(append(a.buf[g], d...), v...)
		a.seen[g] = true
		a.bytes += int64(len(a.buf[g]) - before)
	}
	return nil
}

func (a *stringAggAcc) finish(mem memory.Allocator, n int) (arrow.Array, error) {
	if a.bin {
		b := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
		defer b.Release()
		for g := 0; g < n; g++ {
			if a.seen[g] {
				b.Append(a.buf[g])
			} else {
				b.AppendNull()
			}
		}
		return b.NewArray(), nil
	}
	b := array.NewStringBuilder(mem)
	defer b.Release()
	for g := 0; g < n; g++ {
		if a.seen[g] {
			b.Append(string(a.buf[g]))
		} else {
			b.AppendNull()
		}
	}
	return b.NewArray(), nil
}
