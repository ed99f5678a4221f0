package eval

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// numMathFuncs are the functions compileNumMath handles: ln, exp, sqrt,
// log and power on NUMERIC (Postgres' numeric.c result scales, through
// sqltypes.NumericMath), and trunc and sign on NUMERIC and double.
var numMathFuncs = map[string]bool{"ln": true, "exp": true, "sqrt": true, "log": true, "log10": true,
	"power": true, "pow": true, "trunc": true, "sign": true}

// compileNumMath compiles e when it is one of numMathFuncs with a NUMERIC
// result, or trunc/sign/log on double; ok is false to leave e to the
// general function table (the double versions of ln, exp, sqrt, power).
func compileNumMath(e *expr.Func, args []node) (n node, ok bool, err error) {
	if !numMathFuncs[e.Name] {
		return nil, false, nil
	}
	name := e.Name
	if name == "pow" {
		name = "power"
	}
	if name == "log" && len(args) == 1 {
		name = "log10"
	}
	want := map[string][2]int{"ln": {1, 1}, "exp": {1, 1}, "sqrt": {1, 1}, "log10": {1, 1}, "log": {2, 2},
		"power": {2, 2}, "trunc": {1, 2}, "sign": {1, 1}}[name]
	if len(args) < want[0] || len(args) > want[1] {
		return nil, true, unsupported("function "+e.Name, nodeTypes(args)...)
	}
	switch e.T.Kind {
	case sqltypes.Numeric:
		for i, a := range args {
			k := a.typ().Kind
			if !(k == sqltypes.Numeric || (name == "trunc" && i == 1 && k == sqltypes.Int4)) {
				return nil, true, unsupported("function "+e.Name, nodeTypes(args)...)
			}
		}
		return &numMathNode{name: name, args: args, t: e.T}, true, nil
	case sqltypes.Float8:
		if name != "trunc" && name != "sign" && name != "log10" || len(args) != 1 || args[0].typ().Kind != sqltypes.Float8 {
			return nil, false, nil
		}
		return &numMathNode{name: name, args: args, t: e.T}, true, nil
	}
	return nil, false, nil
}

func nodeTypes(args []node) []sqltypes.Type {
	ts := make([]sqltypes.Type, len(args))
	for i, a := range args {
		ts[i] = a.typ()
	}
	return ts
}

// numMathNode evaluates one of numMathFuncs row by row.
type numMathNode struct {
	name string
	args []node
	t    sqltypes.Type
}

func (n *numMathNode) typ() sqltypes.Type { return n.t }

func (n *numMathNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	arrs, err := evalAll(c, b, n.args)
	if err != nil {
		return nil, err
	}
	defer vec.Release(arrs)
	rows := arrs[0].Len()
	valid := vec.Validity(rows, arrs...)
	if n.t.Kind == sqltypes.Float8 {
		xs := vec.ReadFloats(arrs[0], n.args[0].typ())
		out := make([]float64, rows)
		for i, x := range xs {
			if !vec.Valid(valid, i) {
				continue
			}
			switch n.name {
			case "trunc":
				out[i] = math.Trunc(x)
			case "sign":
				switch {
				case x > 0:
					out[i] = 1
				case x < 0:
					out[i] = -1
				}
			case "log10":
				if x == 0 {
					return nil, errLog(true)
				}
				if x < 0 {
					return nil, errLog(false)
				}
				out[i] = math.Log10(x)
			}
		}
		return vec.WriteFloats(c.mem, n.t, out, valid)
	}
	ts := vec.DecScale(n.t)
	return vec.BuildDecimal(c.mem, n.t, rows, valid, func(i int) (decimalNum, error) {
		x := n.decArg(arrs, 0, i)
		switch n.name {
		case "trunc":
			places := int32(0)
			if len(arrs) > 1 {
				places = arrs[1].(*array.Int32).Value(i)
			}
			if places < x.Scale {
				p := max(places, -38)
				v := x.Coef.BigInt()
				v.Quo(v, vec.Pow10(x.Scale-p)) // truncates toward zero
				return vec.FitDecimal(vec.Rescale(v, p, ts), n.t)
			}
			return vec.FitDecimal(vec.Rescale(x.Coef.BigInt(), x.Scale, ts), n.t)
		case "sign":
			return decimal128.FromI64(int64(x.Coef.Sign())).IncreaseScaleBy(ts), nil
		}
		args := []sqltypes.Decimal{x}
		if len(arrs) > 1 {
			args = append(args, n.decArg(arrs, 1, i))
		}
		v, rscale, err := sqltypes.NumericMath(n.name, args, int(ts))
		if err != nil {
			return decimalNum{}, err
		}
		return vec.FitDecimal(vec.Rescale(v.BigInt(), int32(min(rscale, int(ts))), ts), n.t)
	})
}

// decArg is argument j at row i with its display scale: the one its type
// promises, or else the digits it has (trailing zeros dropped), which is
// what it prints as.
func (n *numMathNode) decArg(arrs []arrow.Array, j, i int) sqltypes.Decimal {
	t := n.args[j].typ()
	v, s := arrs[j].(*array.Decimal128).Value(i), vec.DecScale(t)
	if d, ok := t.DisplayScale(); ok && int32(d) <= s {
		return sqltypes.Decimal{Coef: decimal128.FromBigInt(vec.Rescale(v.BigInt(), s, int32(d))), Scale: int32(d)}
	}
	for s > 0 {
		q, r := v.Div(decimal128.FromU64(10))
		if r != (decimal128.Num{}) {
			break
		}
		v, s = q, s-1
	}
	return sqltypes.Decimal{Coef: v, Scale: s}
}

func errLog(zero bool) error {
	if zero {
		return sqlerr.New("2201E", "cannot take logarithm of zero")
	}
	return sqlerr.New("2201E", "cannot take logarithm of a negative number")
}
