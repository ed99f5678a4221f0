package eval

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// cmpNode evaluates = <> < <= > >= (NULL if either side is NULL) and IS
// [NOT] DISTINCT FROM (never NULL).
type cmpNode struct {
	op   expr.BinaryOp
	l, r node
}

func (n *cmpNode) typ() sqltypes.Type { return sqltypes.BoolType }

func (n *cmpNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	l, r, err := eval2(c, b, n.l, n.r)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	defer r.Release()
	rows := l.Len()
	out := make([]bool, rows)
	t := n.l.typ()
	switch n.op {
	case expr.IsDistinctFrom, expr.IsNotDistinctFrom:
		cmp, err := vec.Comparator(t, l, r)
		if err != nil {
			return nil, err
		}
		want := n.op == expr.IsDistinctFrom
		for i := range out {
			ln, rn := l.IsNull(i), r.IsNull(i)
			var distinct bool
			switch {
			case ln || rn:
				distinct = ln != rn
			default:
				distinct = cmp(i, i) != 0
			}
			out[i] = distinct == want
		}
		return vec.MakeBool(c.mem, out, nil), nil
	}
	valid := vec.Validity(rows, l, r)
	switch t.Kind {
	case sqltypes.Int2:
		cmpFixed(n.op, vec.Values[int16](l), vec.Values[int16](r), out)
	case sqltypes.Int4, sqltypes.Date:
		cmpFixed(n.op, vec.Values[int32](l), vec.Values[int32](r), out)
	case sqltypes.Int8, sqltypes.Timestamp, sqltypes.TimestampTZ:
		cmpFixed(n.op, vec.Values[int64](l), vec.Values[int64](r), out)
	case sqltypes.Float8:
		lv, rv := vec.Values[float64](l), vec.Values[float64](r)
		for i := range out {
			out[i] = opHolds(n.op, operator.CmpFloat(lv[i], rv[i]))
		}
	default:
		cmp, err := vec.Comparator(t, l, r)
		if err != nil {
			return nil, err
		}
		for i := range out {
			if vec.Valid(valid, i) {
				out[i] = opHolds(n.op, cmp(i, i))
			}
		}
	}
	return vec.MakeBool(c.mem, out, valid), nil
}

func cmpFixed[T int16 | int32 | int64](op expr.BinaryOp, l, r []T, out []bool) {
	switch op {
	case expr.Eq:
		for i := range out {
			out[i] = l[i] == r[i]
		}
	case expr.Ne:
		for i := range out {
			out[i] = l[i] != r[i]
		}
	case expr.Lt:
		for i := range out {
			out[i] = l[i] < r[i]
		}
	case expr.Le:
		for i := range out {
			out[i] = l[i] <= r[i]
		}
	case expr.Gt:
		for i := range out {
			out[i] = l[i] > r[i]
		}
	case expr.Ge:
		for i := range out {
			out[i] = l[i] >= r[i]
		}
	}
}

func opHolds(op expr.BinaryOp, c int) bool {
	switch op {
	case expr.Eq:
		return c == 0
	case expr.Ne:
		return c != 0
	case expr.Lt:
		return c < 0
	case expr.Le:
		return c <= 0
	case expr.Gt:
		return c > 0
	case expr.Ge:
		return c >= 0
	}
	return false
}
