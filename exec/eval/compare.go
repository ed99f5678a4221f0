package eval

import (
	"bytes"
	"math/big"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Comparator returns a function that compares l[i] with r[j] in Postgres'
// order for values of type t (both arrays hold t.Arrow() values, the
// positions must be non-NULL): -1, 0 or +1. Floats order NaN above every
// number and equal to itself, -0 equals 0; text compares bytewise (the C
// collation); intervals compare as Postgres does, with a month counted as
// 30 days. Sort, aggregates and joins use it so that every operator agrees
// with the = and < of expressions.
func Comparator(t sqltypes.Type, l, r arrow.Array) (func(i, j int) int, error) {
	switch t.Kind {
	case sqltypes.Bool:
		la, ra := l.(*array.Boolean), r.(*array.Boolean)
		return func(i, j int) int { return cmpBool(la.Value(i), ra.Value(j)) }, nil
	case sqltypes.Int2:
		return ordCmp(fixed[int16](l), fixed[int16](r)), nil
	case sqltypes.Int4, sqltypes.Date:
		return ordCmp(fixed[int32](l), fixed[int32](r)), nil
	case sqltypes.Int8, sqltypes.Timestamp, sqltypes.TimestampTZ:
		return ordCmp(fixed[int64](l), fixed[int64](r)), nil
	case sqltypes.Float4:
		lv, rv := fixed[float32](l), fixed[float32](r)
		return func(i, j int) int { return operator.CmpFloat(float64(lv[i]), float64(rv[j])) }, nil
	case sqltypes.Float8:
		lv, rv := fixed[float64](l), fixed[float64](r)
		return func(i, j int) int { return operator.CmpFloat(lv[i], rv[j]) }, nil
	case sqltypes.Numeric:
		la, ra := l.(*array.Decimal128), r.(*array.Decimal128)
		ls := la.DataType().(*arrow.Decimal128Type).Scale
		rs := ra.DataType().(*arrow.Decimal128Type).Scale
		if ls == rs {
			return func(i, j int) int { return la.Value(i).Cmp(ra.Value(j)) }, nil
		}
		return func(i, j int) int {
			s := max(ls, rs)
			return rescaleBig(la.Value(i).BigInt(), ls, s).Cmp(rescaleBig(ra.Value(j).BigInt(), rs, s))
		}, nil
	case sqltypes.Text, sqltypes.Varchar, sqltypes.Unknown:
		la, ra := l.(*array.String), r.(*array.String)
		return func(i, j int) int { return strings.Compare(la.Value(i), ra.Value(j)) }, nil
	case sqltypes.Bytea:
		la, ra := l.(*array.Binary), r.(*array.Binary)
		return func(i, j int) int { return bytes.Compare(la.Value(i), ra.Value(j)) }, nil
	case sqltypes.Interval:
		lv, rv := fixed[arrow.MonthDayNanoInterval](l), fixed[arrow.MonthDayNanoInterval](r)
		return func(i, j int) int { return intervalKey(lv[i]).Cmp(intervalKey(rv[j])) }, nil
	}
	return nil, sqlerr.New(sqlerr.UndefinedFunction, "could not identify an ordering operator for type %s", t)
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

func ordCmp[T int16 | int32 | int64](l, r []T) func(i, j int) int {
	return func(i, j int) int {
		switch a, b := l[i], r[j]; {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	}
}

// intervalKey is Postgres' interval_cmp_value: the span in microseconds
// with 30-day months and 24-hour days, exact (it can exceed int64).
func intervalKey(v arrow.MonthDayNanoInterval) *big.Int {
	days := int64(v.Months)*30 + int64(v.Days)
	k := big.NewInt(days)
	k.Mul(k, big.NewInt(86_400_000_000))
	return k.Add(k, big.NewInt(v.Nanoseconds/1000))
}

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
		cmp, err := Comparator(t, l, r)
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
		return makeBool(c.mem, out, nil), nil
	}
	valid := validity(rows, l, r)
	switch t.Kind {
	case sqltypes.Int2:
		cmpFixed(n.op, fixed[int16](l), fixed[int16](r), out)
	case sqltypes.Int4, sqltypes.Date:
		cmpFixed(n.op, fixed[int32](l), fixed[int32](r), out)
	case sqltypes.Int8, sqltypes.Timestamp, sqltypes.TimestampTZ:
		cmpFixed(n.op, fixed[int64](l), fixed[int64](r), out)
	case sqltypes.Float8:
		lv, rv := fixed[float64](l), fixed[float64](r)
		for i := range out {
			out[i] = opHolds(n.op, operator.CmpFloat(lv[i], rv[i]))
		}
	default:
		cmp, err := Comparator(t, l, r)
		if err != nil {
			return nil, err
		}
		for i := range out {
			if ok(valid, i) {
				out[i] = opHolds(n.op, cmp(i, i))
			}
		}
	}
	return makeBool(c.mem, out, valid), nil
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
