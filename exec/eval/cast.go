package eval

import (
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
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
	case from == to || (vec.IsStringKind(fk) && tk == sqltypes.Text) || (vec.IsStringKind(fk) && tk == sqltypes.Varchar && to.Length == sqltypes.NoLimit),
		fk == sqltypes.Numeric && tk == sqltypes.Numeric && arrow.TypeEqual(from.Arrow(), to.Arrow()): // only the display scale differs
		n.kind = castSame
	case vec.IsStringKind(fk) && tk == sqltypes.Varchar:
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
	case vec.IsStringKind(fk) || vec.IsStringKind(tk),
		isTime(fk) && isTime(tk),
		(fk == sqltypes.JSON || fk == sqltypes.JSONB) && (tk == sqltypes.JSON || tk == sqltypes.JSONB),
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
	valid := vec.Validity(rows, x)
	switch n.kind {
	case castIntInt, castBoolInt:
		in, err := vec.ReadInts(x, n.from)
		if err != nil {
			return nil, err
		}
		return vec.WriteInts(c.mem, n.to, in, valid)
	case castIntFloat:
		in, _ := vec.ReadInts(x, n.from)
		fs := make([]float64, rows)
		for i, v := range in {
			fs[i] = float64(v)
		}
		return vec.WriteFloats(c.mem, n.to, fs, valid)
	case castFloatFloat:
		fs := vec.ReadFloats(x, n.from)
		if n.to.Kind == sqltypes.Float4 {
			for i, f := range fs {
				if !vec.Valid(valid, i) {
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
		return vec.WriteFloats(c.mem, n.to, fs, valid)
	case castFloatInt:
		fs := vec.ReadFloats(x, n.from)
		lo, hi := vec.IntRange(n.to.Kind)
		is := make([]int64, rows)
		for i, f := range fs {
			if !vec.Valid(valid, i) {
				continue
			}
			r := math.RoundToEven(f) // Postgres uses rint()
			if math.IsNaN(r) || r < float64(lo) || r >= -float64(lo) || r > float64(hi)+0.5 {
				return nil, vec.ErrIntRange(n.to.Kind)
			}
			is[i] = int64(r)
		}
		return vec.WriteInts(c.mem, n.to, is, valid)
	case castIntNum:
		in, _ := vec.ReadInts(x, n.from)
		s := vec.DecScale(n.to)
		return vec.BuildDecimal(c.mem, n.to, rows, valid, func(i int) (decimalNum, error) {
			return vec.FitDecimal(vec.Rescale(big.NewInt(in[i]), 0, s), n.to)
		})
	case castNumNum:
		xa := x.(*array.Decimal128)
		fs, ts := vec.DecScale(n.from), vec.DecScale(n.to)
		return vec.BuildDecimal(c.mem, n.to, rows, valid, func(i int) (decimalNum, error) {
			return vec.FitDecimal(vec.Rescale(xa.Value(i).BigInt(), fs, ts), n.to)
		})
	case castNumInt:
		xa := x.(*array.Decimal128)
		fs := vec.DecScale(n.from)
		lo, hi := vec.IntRange(n.to.Kind)
		is := make([]int64, rows)
		for i := range is {
			if !vec.Valid(valid, i) {
				continue
			}
			v := vec.Rescale(xa.Value(i).BigInt(), fs, 0)
			if !v.IsInt64() || v.Int64() < lo || v.Int64() > hi {
				return nil, vec.ErrIntRange(n.to.Kind)
			}
			is[i] = v.Int64()
		}
		return vec.WriteInts(c.mem, n.to, is, valid)
	case castIntBool:
		in, _ := vec.ReadInts(x, n.from)
		bs := make([]bool, rows)
		for i, v := range in {
			bs[i] = v != 0
		}
		return vec.MakeBool(c.mem, bs, valid), nil
	case castVarchar:
		if n.assign {
			return castViaText(c, x, n.from, n.to, true)
		}
		xs := x.(*array.String)
		bld := array.NewStringBuilder(c.mem)
		defer bld.Release()
		for i := 0; i < rows; i++ {
			if !vec.Valid(valid, i) {
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
