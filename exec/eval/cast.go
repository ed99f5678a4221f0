package eval

import (
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// castNode converts between SQL types. Numeric conversions are direct
// typed loops (their errors are Postgres' "integer out of range" & co);
// everything that involves text, and conversions among the date/time
// types, goes through the text codecs of sqltypes, which already implement
// Postgres' input and output functions — that is also how Postgres defines
// the I/O conversion casts.
type castNode struct {
	x      node
	from   sqltypes.Type
	to     sqltypes.Type
	kind   castKind
	assign bool // an assignment cast: to varchar(n), 22001 instead of truncating
}

type castKind uint8

const (
	castSame castKind = iota
	castIntInt
	castIntFloat
	castFloatInt
	castFloatFloat
	castIntNum
	castNumInt
	castNumNum
	castBoolInt
	castIntBool
	castVarchar // to varchar(n): an explicit cast truncates
	castText    // through the text form
)

func (c *compiler) compileCast(e *expr.Cast) (node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	n, err := c.compileCastNode(x, e.T)
	if cn, ok := n.(*castNode); ok && e.Assign {
		cn.assign = true
	}
	return n, err
}

func (c *compiler) compileCastNode(x node, to sqltypes.Type) (node, error) {
	from := x.typ()
	n := &castNode{x: x, from: from, to: to}
	isFloat := func(k sqltypes.Kind) bool { return k == sqltypes.Float4 || k == sqltypes.Float8 }
	isTime := func(k sqltypes.Kind) bool {
		return k == sqltypes.Date || k == sqltypes.Timestamp || k == sqltypes.TimestampTZ
	}
	fk, tk := from.Kind, to.Kind
	switch {
	case from == to || (isStringKind(fk) && tk == sqltypes.Text) || (isStringKind(fk) && tk == sqltypes.Varchar && to.Length == sqltypes.NoLimit),
		fk == sqltypes.Numeric && tk == sqltypes.Numeric && arrow.TypeEqual(from.Arrow(), to.Arrow()): // only the display scale differs
		n.kind = castSame
	case isStringKind(fk) && tk == sqltypes.Varchar:
		n.kind = castVarchar
	case from.IsInteger() && to.IsInteger():
		n.kind = castIntInt
	case from.IsInteger() && isFloat(tk):
		n.kind = castIntFloat
	case isFloat(fk) && to.IsInteger():
		n.kind = castFloatInt
	case isFloat(fk) && isFloat(tk):
		n.kind = castFloatFloat
	case from.IsInteger() && tk == sqltypes.Numeric:
		n.kind = castIntNum
	case fk == sqltypes.Numeric && to.IsInteger():
		n.kind = castNumInt
	case fk == sqltypes.Numeric && tk == sqltypes.Numeric:
		n.kind = castNumNum
	case fk == sqltypes.Bool && to.IsInteger():
		n.kind = castBoolInt
	case from.IsInteger() && tk == sqltypes.Bool:
		n.kind = castIntBool
	case isStringKind(fk) || isStringKind(tk),
		isTime(fk) && isTime(tk),
		fk == tk, // same kind, other modifiers: timestamp(p), interval
		fk == sqltypes.Numeric && isFloat(tk), isFloat(fk) && tk == sqltypes.Numeric:
		n.kind = castText
	default:
		return nil, sqlerr.New("42846", "cannot cast type %s to %s", from, to)
	}
	return n, nil
}

func (n *castNode) typ() sqltypes.Type { return n.to }

func (n *castNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	x, err := n.x.eval(c, b)
	if err != nil {
		return nil, err
	}
	if n.kind == castSame {
		if arrow.TypeEqual(x.DataType(), n.to.Arrow()) {
			return x, nil
		}
		// Same values, other Arrow type metadata (e.g. text vs unknown).
		d := array.NewData(n.to.Arrow(), x.Len(), x.Data().Buffers(), nil, x.NullN(), x.Data().Offset())
		out := array.MakeFromData(d)
		d.Release()
		x.Release()
		return out, nil
	}
	defer x.Release()
	rows := x.Len()
	valid := validity(rows, x)
	switch n.kind {
	case castIntInt, castBoolInt:
		in, err := readInts(x, n.from)
		if err != nil {
			return nil, err
		}
		return writeInts(c, n.to, in, valid)
	case castIntFloat:
		in, _ := readInts(x, n.from)
		fs := make([]float64, rows)
		for i, v := range in {
			fs[i] = float64(v)
		}
		return writeFloats(c, n.to, fs, valid)
	case castFloatFloat:
		fs := readFloats(x, n.from)
		if n.to.Kind == sqltypes.Float4 {
			for i, f := range fs {
				if !ok(valid, i) {
					continue
				}
				g := float32(f)
				if math.IsInf(float64(g), 0) && !math.IsInf(f, 0) {
					return nil, sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
				}
				if g == 0 && f != 0 {
					return nil, sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: underflow")
				}
			}
		}
		return writeFloats(c, n.to, fs, valid)
	case castFloatInt:
		fs := readFloats(x, n.from)
		lo, hi := intRange(n.to.Kind)
		is := make([]int64, rows)
		for i, f := range fs {
			if !ok(valid, i) {
				continue
			}
			r := math.RoundToEven(f) // Postgres uses rint()
			if math.IsNaN(r) || r < float64(lo) || r >= -float64(lo) || r > float64(hi)+0.5 {
				return nil, errIntRange(n.to.Kind)
			}
			is[i] = int64(r)
		}
		return writeInts(c, n.to, is, valid)
	case castIntNum:
		in, _ := readInts(x, n.from)
		s := decScale(n.to)
		return buildDec(c, n.to, rows, valid, func(i int) (decimalNum, error) {
			return fitDec(rescaleBig(big.NewInt(in[i]), 0, s), n.to)
		})
	case castNumNum:
		xa := x.(*array.Decimal128)
		fs, ts := decScale(n.from), decScale(n.to)
		return buildDec(c, n.to, rows, valid, func(i int) (decimalNum, error) {
			return fitDec(rescaleBig(xa.Value(i).BigInt(), fs, ts), n.to)
		})
	case castNumInt:
		xa := x.(*array.Decimal128)
		fs := decScale(n.from)
		lo, hi := intRange(n.to.Kind)
		is := make([]int64, rows)
		for i := range is {
			if !ok(valid, i) {
				continue
			}
			v := rescaleBig(xa.Value(i).BigInt(), fs, 0)
			if !v.IsInt64() || v.Int64() < lo || v.Int64() > hi {
				return nil, errIntRange(n.to.Kind)
			}
			is[i] = v.Int64()
		}
		return writeInts(c, n.to, is, valid)
	case castIntBool:
		in, _ := readInts(x, n.from)
		bs := make([]bool, rows)
		for i, v := range in {
			bs[i] = v != 0
		}
		return makeBool(c.mem, bs, valid), nil
	case castVarchar:
		if n.assign {
			return castViaText(c, x, n.from, n.to, true)
		}
		xs := x.(*array.String)
		bld := array.NewStringBuilder(c.mem)
		defer bld.Release()
		for i := 0; i < rows; i++ {
			if !ok(valid, i) {
				bld.AppendNull()
				continue
			}
			bld.Append(truncRunes(xs.Value(i), n.to.Length))
		}
		return bld.NewArray(), nil
	}
	return castViaText(c, x, n.from, n.to, n.assign)
}

func truncRunes(s string, n int) string {
	cnt := 0
	for i := range s {
		if cnt == n {
			return s[:i]
		}
		cnt++
	}
	return s
}

// castViaText converts through the text form; assign keeps the input
// function's 22001 for an over-long varchar(n) instead of truncating.
func castViaText(c *call, x arrow.Array, from, to sqltypes.Type, assign bool) (arrow.Array, error) {
	bld := array.NewBuilder(c.mem, to.Arrow())
	defer bld.Release()
	bld.Reserve(x.Len())
	xs, isStr := x.(*array.String)
	var buf []byte
	for i := 0; i < x.Len(); i++ {
		if x.IsNull(i) {
			bld.AppendNull()
			continue
		}
		var s string
		if isStr {
			s = xs.Value(i)
		} else {
			buf = sqltypes.EncodeText(buf[:0], x, i, from, c.env.Options)
			s = string(buf)
		}
		if to.Kind == sqltypes.Text || to.Kind == sqltypes.Varchar && to.Length == sqltypes.NoLimit {
			bld.(*array.StringBuilder).Append(s)
			continue
		}
		if to.Kind == sqltypes.Varchar && !assign {
			bld.(*array.StringBuilder).Append(truncRunes(s, to.Length))
			continue
		}
		if err := sqltypes.DecodeText(bld, to, s, c.env.Options); err != nil {
			return nil, err
		}
	}
	return bld.NewArray(), nil
}

// readInts widens an integer (or boolean) array to int64.
func readInts(x arrow.Array, t sqltypes.Type) ([]int64, error) {
	out := make([]int64, x.Len())
	switch t.Kind {
	case sqltypes.Int2:
		for i, v := range fixed[int16](x) {
			out[i] = int64(v)
		}
	case sqltypes.Int4:
		for i, v := range fixed[int32](x) {
			out[i] = int64(v)
		}
	case sqltypes.Int8:
		copy(out, fixed[int64](x))
	case sqltypes.Bool:
		ba := x.(*array.Boolean)
		for i := range out {
			if ba.IsValid(i) && ba.Value(i) {
				out[i] = 1
			}
		}
	default:
		return nil, internalf("readInts on %s", t)
	}
	return out, nil
}

// writeInts narrows int64 values to t, checking the range of valid rows.
func writeInts(c *call, t sqltypes.Type, in []int64, valid []bool) (arrow.Array, error) {
	lo, hi := intRange(t.Kind)
	for i, v := range in {
		if ok(valid, i) && (v < lo || v > hi) {
			return nil, errIntRange(t.Kind)
		}
	}
	switch t.Kind {
	case sqltypes.Int2:
		return narrow[int16](c, t, in, valid), nil
	case sqltypes.Int4:
		return narrow[int32](c, t, in, valid), nil
	}
	return narrow[int64](c, t, in, valid), nil
}

func narrow[T int16 | int32 | int64](c *call, t sqltypes.Type, in []int64, valid []bool) arrow.Array {
	buf, out := newFixed[T](c.mem, len(in))
	for i, v := range in {
		out[i] = T(v)
	}
	return finishFixedMem(c.mem, t.Arrow(), len(in), buf, valid)
}

func readFloats(x arrow.Array, t sqltypes.Type) []float64 {
	if t.Kind == sqltypes.Float4 {
		in := fixed[float32](x)
		out := make([]float64, len(in))
		for i, v := range in {
			out[i] = float64(v)
		}
		return out
	}
	return append([]float64(nil), fixed[float64](x)...)
}

func writeFloats(c *call, t sqltypes.Type, in []float64, valid []bool) (arrow.Array, error) {
	if t.Kind == sqltypes.Float4 {
		buf, out := newFixed[float32](c.mem, len(in))
		for i, v := range in {
			out[i] = float32(v)
		}
		return finishFixedMem(c.mem, t.Arrow(), len(in), buf, valid), nil
	}
	buf, out := newFixed[float64](c.mem, len(in))
	copy(out, in)
	return finishFixedMem(c.mem, t.Arrow(), len(in), buf, valid), nil
}

func buildDec(c *call, t sqltypes.Type, rows int, valid []bool, f func(i int) (decimalNum, error)) (arrow.Array, error) {
	bld := array.NewDecimal128Builder(c.mem, t.Arrow().(*arrow.Decimal128Type))
	defer bld.Release()
	bld.Reserve(rows)
	for i := 0; i < rows; i++ {
		if !ok(valid, i) {
			bld.UnsafeAppendBoolToBitmap(false)
			continue
		}
		v, err := f(i)
		if err != nil {
			return nil, err
		}
		bld.UnsafeAppend(v)
	}
	return bld.NewArray(), nil
}
