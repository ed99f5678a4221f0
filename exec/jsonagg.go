package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/memacct"
	"github.com/asofsql/asofsql/internal/pgjson"
	"github.com/asofsql/asofsql/sql/functions"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// jsonAggAcc is json_agg(x) and jsonb_agg(x) (each group's values, NULL
// ones as null, in input order: "[1, null, 2]") and json_object_agg(k, v)
// ("{ "k" : v, ... }"), written as to_json writes values; NULL for a group
// without rows, as in Postgres. jsonb_agg's result is normalized.
type jsonAggAcc struct {
	fn    string
	t     sqltypes.Type // the (first) argument's type
	valT  sqltypes.Type // json_object_agg's value type
	opts  *sqltypes.Options
	buf   [][]byte
	seen  []bool
	val   arrow.Array
	cond  *array.Boolean // FILTER (WHERE cond), nil without
	bytes int64
	acct  *memacct.Account
}

var (
	_ multiArg  = (*jsonAggAcc)(nil)
	_ varState  = (*jsonAggAcc)(nil)
	_ accounted = (*jsonAggAcc)(nil)
)

func (a *jsonAggAcc) setAccount(acct *memacct.Account) { a.acct = acct }
func (a *jsonAggAcc) resize(n int)                     { a.buf, a.seen = grow(a.buf, n), grow(a.seen, n) }
func (a *jsonAggAcc) keep(g int)                       { a.buf, a.seen = keep1(a.buf, g), keep1(a.seen, g) }
func (a *jsonAggAcc) groupBytes() int64                { return 32 }
func (a *jsonAggAcc) varBytes() int64                  { return a.bytes }

// setExtra takes json_object_agg's values, then the FILTER condition
// when the call has one (as array_agg's: these aggregates keep NULLs, so
// a filter cannot be a NULL argument).
func (a *jsonAggAcc) setExtra(args []arrow.Array) {
	a.val, a.cond = nil, nil
	if a.fn == "json_object_agg" && len(args) > 0 {
		a.val, args = args[0], args[1:]
	}
	if len(args) > 0 {
		a.cond, _ = args[0].(*array.Boolean)
	}
}

func (a *jsonAggAcc) options() *sqltypes.Options {
	if a.opts == nil {
		return sqltypes.DefaultOptions()
	}
	return a.opts
}

func (a *jsonAggAcc) add(gids []int32, arg arrow.Array) error {
	o := a.options()
	start := a.bytes
	obj := a.fn == "json_object_agg"
	for i, g := range gids {
		if g < 0 || a.cond != nil && (!a.cond.IsValid(i) || !a.cond.Value(i)) {
			continue
		}
		b := a.buf[g]
		before := len(b)
		if a.seen[g] {
			b = append(b, ", "...)
		}
		if obj {
			if arg.IsNull(i) {
				return sqlerr.New(sqlerr.InvalidParameterValue, "field name must not be null")
			}
			b = pgjson.AppendString(b, string(sqltypes.EncodeText(nil, arg, i, a.t, o)))
			b = append(b, " : "...)
			if a.val == nil {
				b = append(b, "null"...)
			} else {
				b = functions.AppendJSON(b, a.val, i, a.valT, o)
			}
		} else {
			b = functions.AppendJSON(b, arg, i, a.t, o)
		}
		if a.acct != nil && cap(b) > cap(a.buf[g]) {
			if err := a.acct.Need(a.fn, a.bytes-start+int64(cap(b))); err != nil {
				return err
			}
		}
		a.buf[g], a.seen[g] = b, true
		a.bytes += int64(len(b) - before)
	}
	return nil
}

func (a *jsonAggAcc) finish(mem memory.Allocator, n int) (arrow.Array, error) {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	open, closing := "[", "]"
	if a.fn == "json_object_agg" {
		open, closing = "{ ", " }"
	}
	for g := 0; g < n; g++ {
		if !a.seen[g] {
			b.AppendNull()
			continue
		}
		s := open + string(a.buf[g]) + closing
		if a.fn == "jsonb_agg" {
			v, err := pgjson.Parse(s)
			if err != nil {
				return nil, sqlerr.New(sqlerr.InternalError, "jsonb_agg built invalid JSON: %v", err)
			}
			s = v.JSONB()
		}
		b.Append(s)
	}
	return b.NewArray(), nil
}
