package eval

import (
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

type decimalNum = decimal128.Num

func errDivZero() error { return sqlerr.New(sqlerr.DivisionByZero, "division by zero") }

// Status codes of the scalar kernels: 0 ok, else an error class.
const (
	okRes = iota
	overflowRes
	divZeroRes
	underflowRes
)

func intKernel(op expr.BinaryOp) func(a, b int64) (int64, int) {
	switch op {
	case expr.Add:
		return func(a, b int64) (int64, int) {
			s := a + b
			if (a > 0 && b > 0 && s < 0) || (a < 0 && b < 0 && s >= 0) {
				return 0, overflowRes
			}
			return s, okRes
		}
	case expr.Sub:
		return func(a, b int64) (int64, int) {
			s := a - b
			if (a >= 0 && b < 0 && s < 0) || (a < 0 && b > 0 && s >= 0) {
				return 0, overflowRes
			}
			return s, okRes
		}
	case expr.Mul:
		return func(a, b int64) (int64, int) {
			if a == 0 || b == 0 {
				return 0, okRes
			}
			p := a * b
			if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
				return 0, overflowRes
			}
			return p, okRes
		}
	case expr.Div:
		return func(a, b int64) (int64, int) {
			if b == 0 {
				return 0, divZeroRes
			}
			if b == -1 {
				if a == math.MinInt64 {
					return 0, overflowRes
				}
				return -a, okRes
			}
			return a / b, okRes
		}
	case expr.Mod:
		return func(a, b int64) (int64, int) {
			if b == 0 {
				return 0, divZeroRes
			}
			if b == -1 {
				return 0, okRes
			}
			return a % b, okRes
		}
	}
	return nil
}

type intArithNode struct {
	op   expr.BinaryOp
	l, r node
	t    sqltypes.Type
}

func (n *intArithNode) typ() sqltypes.Type { return n.t }

func (n *intArithNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	l, r, err := eval2(c, b, n.l, n.r)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	defer r.Release()
	switch n.t.Kind {
	case sqltypes.Int2:
		return intArith[int16](c, n, l, r)
	case sqltypes.Int4:
		return intArith[int32](c, n, l, r)
	default:
		return intArith[int64](c, n, l, r)
	}
}

func intArith[T int16 | int32 | int64](c *call, n *intArithNode, l, r arrow.Array) (arrow.Array, error) {
	rows := l.Len()
	lv, rv := vec.Values[T](l), vec.Values[T](r)
	valid := vec.Validity(rows, l, r)
	buf, out := vec.NewFixed[T](c.mem, rows)
	lo, hi := vec.IntRange(n.t.Kind)
	f := intKernel(n.op)
	for i := 0; i < rows; i++ {
		if !vec.Valid(valid, i) {
			out[i] = 0
			continue
		}
		v, st := f(int64(lv[i]), int64(rv[i]))
		if st == okRes && (v < lo || v > hi) {
			st = overflowRes
		}
		if st != okRes {
			buf.Release()
			if st == divZeroRes {
				return nil, errDivZero()
			}
			return nil, vec.ErrIntRange(n.t.Kind)
		}
		out[i] = T(v)
	}
	return vec.FinishFixed(c.mem, n.t.Arrow(), rows, buf, valid), nil
}

type floatArithNode struct {
	op   expr.BinaryOp
	l, r node
	t    sqltypes.Type
}

func (n *floatArithNode) typ() sqltypes.Type { return n.t }

func (n *floatArithNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	l, r, err := eval2(c, b, n.l, n.r)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	defer r.Release()
	if n.t.Kind == sqltypes.Float4 {
		return floatArith[float32](c, n, l, r)
	}
	return floatArith[float64](c, n, l, r)
}

// floatArith follows float8pl & co: an infinite result from finite inputs
// is an overflow, a zero product or quotient of non-zero inputs an
// underflow, x/0 an error even for floats.
func floatArith[T float32 | float64](c *call, n *floatArithNode, l, r arrow.Array) (arrow.Array, error) {
	rows := l.Len()
	lv, rv := vec.Values[T](l), vec.Values[T](r)
	valid := vec.Validity(rows, l, r)
	buf, out := vec.NewFixed[T](c.mem, rows)
	fail := func(err error) (arrow.Array, error) { buf.Release(); return nil, err }
	for i := 0; i < rows; i++ {
		if !vec.Valid(valid, i) {
			out[i] = 0
			continue
		}
		a, bb := lv[i], rv[i]
		var v T
		switch n.op {
		case expr.Add:
			v = a + bb
		case expr.Sub:
			v = a - bb
		case expr.Mul:
			v = a * bb
			if v == 0 && a != 0 && bb != 0 {
				return fail(sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: underflow"))
			}
		case expr.Div:
			if bb == 0 {
				return fail(errDivZero())
			}
			v = a / bb
			if v == 0 && a != 0 && !math.IsInf(float64(bb), 0) {
				return fail(sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: underflow"))
			}
		case expr.Mod:
			return fail(unsupported("operator %", n.t, n.t))
		}
		if math.IsInf(float64(v), 0) && !math.IsInf(float64(a), 0) && !math.IsInf(float64(bb), 0) {
			return fail(sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow"))
		}
		out[i] = v
	}
	return vec.FinishFixed(c.mem, n.t.Arrow(), rows, buf, valid), nil
}

// ---- numeric (decimal128) ----

type numArithNode struct {
	op   expr.BinaryOp
	l, r node
	t    sqltypes.Type
}

func (n *numArithNode) typ() sqltypes.Type { return n.t }

func (n *numArithNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	l, r, err := eval2(c, b, n.l, n.r)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	defer r.Release()
	la, ra := l.(*array.Decimal128), r.(*array.Decimal128)
	ls, rs, ts := vec.DecScale(n.l.typ()), vec.DecScale(n.r.typ()), vec.DecScale(n.t)
	rows := l.Len()
	valid := vec.Validity(rows, l, r)
	bld := array.NewDecimal128Builder(c.mem, n.t.Arrow().(*arrow.Decimal128Type))
	defer bld.Release()
	bld.Reserve(rows)
	// Fast path: + and - at one scale in 128 bits. Operands have at most
	// 38 digits (< 1e38), so a result that wraps past 2^127 lands at a
	// magnitude >= 1.4e38 and fails the precision check like any overflow.
	if (n.op == expr.Add || n.op == expr.Sub) && ls == ts && rs == ts {
		prec := vec.DecPrecision(n.t)
		for i := 0; i < rows; i++ {
			if !vec.Valid(valid, i) {
				bld.UnsafeAppendBoolToBitmap(false)
				continue
			}
			var v decimalNum
			if n.op == expr.Add {
				v = la.Value(i).Add(ra.Value(i))
			} else {
				v = la.Value(i).Sub(ra.Value(i))
			}
			if !v.FitsInPrecision(prec) {
				return nil, vec.ErrNumericOverflow()
			}
			bld.UnsafeAppend(v)
		}
		return bld.NewArray(), nil
	}
	for i := 0; i < rows; i++ {
		if !vec.Valid(valid, i) {
			bld.UnsafeAppendBoolToBitmap(false)
			continue
		}
		v, err := decOp(n.op, la.Value(i).BigInt(), ls, ra.Value(i).BigInt(), rs, ts)
		if err != nil {
			return nil, err
		}
		d, err := vec.FitDecimal(v, n.t)
		if err != nil {
			return nil, err
		}
		bld.UnsafeAppend(d)
	}
	return bld.NewArray(), nil
}

// decOp computes a op b for unscaled a (scale as), b (scale bs), returning
// the result unscaled at scale ts.
func decOp(op expr.BinaryOp, a *big.Int, as int32, b *big.Int, bs int32, ts int32) (*big.Int, error) {
	switch op {
	case expr.Add, expr.Sub:
		s := max(as, bs)
		x, y := vec.Rescale(a, as, s), vec.Rescale(b, bs, s)
		if op == expr.Add {
			x.Add(x, y)
		} else {
			x.Sub(x, y)
		}
		return vec.Rescale(x, s, ts), nil
	case expr.Mul:
		p := new(big.Int).Mul(a, b)
		return vec.Rescale(p, as+bs, ts), nil
	case expr.Div:
		if b.Sign() == 0 {
			return nil, errDivZero()
		}
		// a/10^as / (b/10^bs) * 10^ts = a * 10^(ts+bs-as) / b
		num := new(big.Int).Set(a)
		den := new(big.Int).Set(b)
		if e := ts + bs - as; e >= 0 {
			num.Mul(num, vec.Pow10(e))
		} else {
			den.Mul(den, vec.Pow10(-e))
		}
		return vec.RoundDiv(num, den), nil
	case expr.Mod:
		if b.Sign() == 0 {
			return nil, errDivZero()
		}
		s := max(as, bs)
		x, y := vec.Rescale(a, as, s), vec.Rescale(b, bs, s)
		m := new(big.Int).Rem(x, y) // sign of the dividend, as Postgres
		return vec.Rescale(m, s, ts), nil
	}
	return nil, internalf("numeric operator %s", op)
}

// ---- unary minus ----

type negNode struct {
	x node
	t sqltypes.Type
}

func (n *negNode) typ() sqltypes.Type { return n.t }

func (n *negNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	x, err := n.x.eval(c, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	rows := x.Len()
	valid := vec.Validity(rows, x)
	switch n.t.Kind {
	case sqltypes.Int2:
		return negInt[int16](c, n.t, x, valid, math.MinInt16)
	case sqltypes.Int4:
		return negInt[int32](c, n.t, x, valid, math.MinInt32)
	case sqltypes.Int8:
		return negInt[int64](c, n.t, x, valid, math.MinInt64)
	case sqltypes.Float4:
		return negFloat[float32](c, n.t, x, valid), nil
	case sqltypes.Float8:
		return negFloat[float64](c, n.t, x, valid), nil
	case sqltypes.Numeric:
		return mapDec(c, n.t, x, func(v decimalNum) (decimalNum, error) { return v.Negate(), nil })
	case sqltypes.Interval:
		buf, out := vec.NewFixed[arrow.MonthDayNanoInterval](c.mem, rows)
		in := vec.Values[arrow.MonthDayNanoInterval](x)
		for i := range out {
			out[i] = arrow.MonthDayNanoInterval{Months: -in[i].Months, Days: -in[i].Days, Nanoseconds: -in[i].Nanoseconds}
		}
		return vec.FinishFixed(c.mem, n.t.Arrow(), rows, buf, valid), nil
	}
	return nil, unsupported("operator -", n.t)
}

func negInt[T int16 | int32 | int64](c *call, t sqltypes.Type, x arrow.Array, valid []bool, minV T) (arrow.Array, error) {
	in := vec.Values[T](x)
	buf, out := vec.NewFixed[T](c.mem, len(in))
	for i, v := range in {
		if v == minV && vec.Valid(valid, i) {
			buf.Release()
			return nil, vec.ErrIntRange(t.Kind)
		}
		out[i] = -v
	}
	return vec.FinishFixed(c.mem, t.Arrow(), x.Len(), buf, valid), nil
}

func negFloat[T float32 | float64](c *call, t sqltypes.Type, x arrow.Array, valid []bool) arrow.Array {
	in := vec.Values[T](x)
	buf, out := vec.NewFixed[T](c.mem, len(in))
	for i, v := range in {
		out[i] = -v
	}
	return vec.FinishFixed(c.mem, t.Arrow(), x.Len(), buf, valid)
}

// mapDec applies f to every valid value of the decimal array x, producing
// an array of type t.
func mapDec(c *call, t sqltypes.Type, x arrow.Array, f func(decimalNum) (decimalNum, error)) (arrow.Array, error) {
	xa := x.(*array.Decimal128)
	bld := array.NewDecimal128Builder(c.mem, t.Arrow().(*arrow.Decimal128Type))
	defer bld.Release()
	bld.Reserve(x.Len())
	for i := 0; i < x.Len(); i++ {
		if x.IsNull(i) {
			bld.UnsafeAppendBoolToBitmap(false)
			continue
		}
		v, err := f(xa.Value(i))
		if err != nil {
			return nil, err
		}
		bld.UnsafeAppend(v)
	}
	return bld.NewArray(), nil
}

// eval2 evaluates two nodes.
func eval2(c *call, b arrow.RecordBatch, l, r node) (arrow.Array, arrow.Array, error) {
	la, err := l.eval(c, b)
	if err != nil {
		return nil, nil, err
	}
	ra, err := r.eval(c, b)
	if err != nil {
		la.Release()
		return nil, nil, err
	}
	return la, ra, nil
}
