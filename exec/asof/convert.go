package asof

import (
	"context"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/sqlerr"
)

// On columns of different numeric classes compare by value, as PostgreSQL
// compares them (spec §3): an integer against a float as float64 (int8 =
// float8 casts the integer), an integer or decimal against a decimal of a
// larger scale as a decimal of that scale, a decimal against a float as
// float64. The side to convert gets its on column converted into an extra
// column appended to its batches (castOn); the kernels then join two
// columns of one type, and the payload and left columns stay as they were.
// Lo and Hi are in the common type's unit (Float for float, unscaled units
// at the common scale for decimals).

// onTarget returns the type each side's on column is converted to (nil:
// kept) for on columns of types lt and rt, or ok false when they are not
// of convertible numeric classes.
func onTarget(lt, rt arrow.DataType) (l, r arrow.DataType, ok bool) {
	lc, rc := numClass(lt), numClass(rt)
	if lc == numNone || rc == numNone || lc == rc && lc != numDecimal {
		return nil, nil, false
	}
	switch {
	case lc == numFloat:
		return nil, f64Type, true
	case rc == numFloat:
		return f64Type, nil, true
	case lc == numDecimal && rc == numDecimal:
		ls, rs := lt.(*arrow.Decimal128Type).Scale, rt.(*arrow.Decimal128Type).Scale
		switch {
		case ls < rs:
			return decimalTarget(rs), nil, true
		case rs < ls:
			return nil, decimalTarget(ls), true
		}
		return nil, nil, false
	case lc == numDecimal:
		return nil, decimalTarget(lt.(*arrow.Decimal128Type).Scale), true
	}
	return decimalTarget(rt.(*arrow.Decimal128Type).Scale), nil, true
}

var f64Type = arrow.PrimitiveTypes.Float64

func decimalTarget(scale int32) arrow.DataType {
	return &arrow.Decimal128Type{Precision: 38, Scale: scale}
}

type numClassKind uint8

const (
	numNone numClassKind = iota
	numInt
	numFloat
	numDecimal
)

func numClass(dt arrow.DataType) numClassKind {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return numInt
	case arrow.FLOAT32, arrow.FLOAT64:
		return numFloat
	case arrow.DECIMAL128:
		return numDecimal
	}
	return numNone
}

// convertOns rewrites the rights whose on column must be converted: the
// left input (or a right input) is wrapped to append the converted
// column, and LeftOn (On) points at it. It returns the (possibly wrapped)
// left input.
func convertOns(left operator.Operator, rights []Right, mem memory.Allocator) (operator.Operator, []Right) {
	ls := left.Schema()
	var lcasts []onCast
	out := append([]Right(nil), rights...)
	for i := range out {
		r := &out[i]
		if r.Input == nil || r.LeftOn < 0 || r.LeftOn >= ls.NumFields() || r.On < 0 || r.On >= r.Input.Schema().NumFields() {
			continue // validate reports it
		}
		lt, rt, _ := onTarget(ls.Field(r.LeftOn).Type, r.Input.Schema().Field(r.On).Type)
		if lt != nil {
			idx := -1
			for k, c := range lcasts {
				if c.col == r.LeftOn && arrow.TypeEqual(c.to, lt) {
					idx = ls.NumFields() + k
				}
			}
			if idx < 0 {
				idx = ls.NumFields() + len(lcasts)
				lcasts = append(lcasts, onCast{col: r.LeftOn, to: lt})
			}
			r.LeftOn = idx
		}
		if rt != nil {
			r.Input = newCastOn(r.Input, []onCast{{col: r.On, to: rt}}, mem)
			r.On = r.Input.Schema().NumFields() - 1
		}
	}
	if len(lcasts) > 0 {
		left = newCastOn(left, lcasts, mem)
	}
	return left, out
}

type onCast struct {
	col int
	to  arrow.DataType
}

// castOn appends converted copies of some columns to each batch of its
// input.
type castOn struct {
	in     operator.Operator
	casts  []onCast
	schema *arrow.Schema
	mem    memory.Allocator
}

func newCastOn(in operator.Operator, casts []onCast, mem memory.Allocator) *castOn {
	s := in.Schema()
	fields := append([]arrow.Field(nil), s.Fields()...)
	for _, c := range casts {
		f := s.Field(c.col)
		fields = append(fields, arrow.Field{Name: f.Name, Type: c.to, Nullable: true})
	}
	return &castOn{in: in, casts: casts, schema: arrow.NewSchema(fields, nil), mem: mem}
}

func (c *castOn) Schema() *arrow.Schema          { return c.schema }
func (c *castOn) Open(ctx context.Context) error { return c.in.Open(ctx) }
func (c *castOn) Close() error                   { return c.in.Close() }
func (c *castOn) Next(ctx context.Context) (arrow.RecordBatch, error) {
	b, err := c.in.Next(ctx)
	if err != nil {
		return nil, err
	}
	defer b.Release()
	cols := append([]arrow.Array(nil), b.Columns()...)
	var made []arrow.Array
	defer func() {
		for _, a := range made {
			a.Release()
		}
	}()
	for _, cc := range c.casts {
		a, err := convertArray(c.mem, b.Column(cc.col), cc.to)
		if err != nil {
			return nil, err
		}
		made = append(made, a)
		cols = append(cols, a)
	}
	return array.NewRecordBatch(c.schema, cols, b.NumRows()), nil
}

// convertArray converts an integer, float or decimal array to float64 or
// to a decimal of a scale at least its own, exactly where the target
// holds the value (a decimal beyond 38 digits is 22003).
func convertArray(mem memory.Allocator, a arrow.Array, to arrow.DataType) (arrow.Array, error) {
	n := a.Len()
	if to.ID() == arrow.FLOAT64 {
		b := array.NewFloat64Builder(mem)
		defer b.Release()
		b.Reserve(n)
		for i := 0; i < n; i++ {
			if a.IsNull(i) {
				b.AppendNull()
				continue
			}
			b.UnsafeAppend(floatOf(a, i))
		}
		return b.NewArray(), nil
	}
	dt := to.(*arrow.Decimal128Type)
	b := array.NewDecimal128Builder(mem, dt)
	defer b.Release()
	b.Reserve(n)
	for i := 0; i < n; i++ {
		if a.IsNull(i) {
			b.AppendNull()
			continue
		}
		v, ok := decimalOf(a, i, dt.Scale)
		if !ok {
			return nil, sqlerr.New(sqlerr.NumericValueOutOfRange, "ASOF on column value %s does not fit numeric at scale %d", a.ValueStr(i), dt.Scale)
		}
		b.UnsafeAppend(v)
	}
	return b.NewArray(), nil
}

func floatOf(a arrow.Array, i int) float64 {
	switch a := a.(type) {
	case *array.Int8:
		return float64(a.Value(i))
	case *array.Int16:
		return float64(a.Value(i))
	case *array.Int32:
		return float64(a.Value(i))
	case *array.Int64:
		return float64(a.Value(i))
	case *array.Uint8:
		return float64(a.Value(i))
	case *array.Uint16:
		return float64(a.Value(i))
	case *array.Uint32:
		return float64(a.Value(i))
	case *array.Uint64:
		return float64(a.Value(i))
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.Decimal128:
		return a.Value(i).ToFloat64(a.DataType().(*arrow.Decimal128Type).Scale)
	}
	panic("asof: no float conversion for " + a.DataType().String())
}

// decimalOf returns row i of a scaled to scale (not below its own).
func decimalOf(a arrow.Array, i int, scale int32) (decimal128.Num, bool) {
	var v *big.Int
	var from int32
	switch a := a.(type) {
	case *array.Decimal128:
		v, from = a.Value(i).BigInt(), a.DataType().(*arrow.Decimal128Type).Scale
	case *array.Uint64:
		v = new(big.Int).SetUint64(a.Value(i))
	default:
		v = big.NewInt(int64(floatOrInt(a, i)))
	}
	v.Mul(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale-from)), nil))
	if v.BitLen() > 126 {
		return decimal128.Num{}, false
	}
	return decimal128.FromBigInt(v), true
}

func floatOrInt(a arrow.Array, i int) int64 {
	switch a := a.(type) {
	case *array.Int8:
		return int64(a.Value(i))
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Uint8:
		return int64(a.Value(i))
	case *array.Uint16:
		return int64(a.Value(i))
	case *array.Uint32:
		return int64(a.Value(i))
	}
	panic("asof: no decimal conversion for " + a.DataType().String())
}
