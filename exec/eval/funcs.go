package eval

import (
	"math"
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// Functions lists the scalar functions Compile accepts (by Func.Name).
var Functions = []string{
	"abs", "btrim", "ceil", "ceiling", "char_length", "coalesce", "concat", "date_part",
	"date_trunc", "exp", "extract", "floor", "greatest", "least", "length", "ln",
	"lower", "ltrim", "now", "nullif", "pow", "power", "round", "rtrim", "sqrt",
	"substr", "substring", "time_bucket", "to_timestamp", "upper",
	"log", "log10", "sign", "trunc", // nummath.go
}

func (c *compiler) compileFunc(e *expr.Func) (node, error) {
	args, err := c.compileAll(e.Args)
	if err != nil {
		return nil, err
	}
	types := make([]sqltypes.Type, len(args))
	kinds := make([]sqltypes.Kind, len(args))
	for i, a := range args {
		types[i], kinds[i] = a.typ(), a.typ().Kind
	}
	bad := func() (node, error) { return nil, unsupported("function "+e.Name, types...) }
	if n, ok, err := compileNumMath(e, args); ok { // nummath.go
		return n, err
	}
	coerceAll := func() error {
		for i := range args {
			n, err := c.coerce(args[i], e.T)
			if err != nil {
				return err
			}
			args[i] = n
		}
		return nil
	}
	sameAsResult := func() bool {
		for _, k := range kinds {
			if !(k == e.T.Kind || (vec.IsStringKind(k) && vec.IsStringKind(e.T.Kind))) {
				return false
			}
		}
		return len(args) > 0
	}
	switch e.Name {
	case "coalesce":
		if !sameAsResult() || coerceAll() != nil {
			return bad()
		}
		return &coalesceNode{args: args, t: e.T}, nil
	case "nullif":
		if len(args) != 2 || !vec.SameClass(types[0], types[1]) || !vec.SameClass(types[0], e.T) {
			return bad()
		}
		a, err := c.coerce(args[0], e.T)
		if err != nil {
			return bad()
		}
		return &nullifNode{a: a, b: args[1], t: e.T}, nil
	case "greatest", "least":
		if !sameAsResult() || coerceAll() != nil {
			return bad()
		}
		return &extremeNode{args: args, greatest: e.Name == "greatest", t: e.T}, nil
	case "concat":
		if !vec.IsStringKind(e.T.Kind) {
			return bad()
		}
		return &concatNode{args: args, t: e.T, env: c.env}, nil
	case "lower", "upper":
		if len(args) != 1 || !vec.IsStringKind(kinds[0]) {
			return bad()
		}
		f := strings.ToLower
		if e.Name == "upper" {
			f = strings.ToUpper
		}
		return &strMapNode{x: args[0], t: e.T, f: func(s string, _ []string) (string, error) { return f(s), nil }}, nil
	case "btrim", "ltrim", "rtrim":
		if len(args) < 1 || len(args) > 2 || !vec.IsStringKind(kinds[0]) || (len(args) == 2 && !vec.IsStringKind(kinds[1])) {
			return bad()
		}
		name := e.Name
		return &strMapNode{x: args[0], extra: args[1:], t: e.T, f: func(s string, ex []string) (string, error) {
			cut := " "
			if len(ex) > 0 {
				cut = ex[0]
			}
			switch name {
			case "ltrim":
				return strings.TrimLeft(s, cut), nil
			case "rtrim":
				return strings.TrimRight(s, cut), nil
			}
			return strings.Trim(s, cut), nil
		}}, nil
	case "length", "char_length":
		if len(args) != 1 || (!vec.IsStringKind(kinds[0]) && kinds[0] != sqltypes.Bytea) || e.T.Kind != sqltypes.Int4 {
			return bad()
		}
		return &lengthNode{x: args[0]}, nil
	case "substr", "substring":
		if len(args) < 2 || len(args) > 3 || !vec.IsStringKind(kinds[0]) || kinds[1] != sqltypes.Int4 || (len(args) == 3 && kinds[2] != sqltypes.Int4) {
			return bad()
		}
		return &substrNode{args: args, t: e.T}, nil
	case "abs":
		if len(args) != 1 || kinds[0] != e.T.Kind {
			return bad()
		}
		return &mathNode{name: "abs", args: args, t: e.T}, nil
	case "round", "floor", "ceil", "ceiling":
		name := e.Name
		if name == "ceiling" {
			name = "ceil"
		}
		switch {
		case len(args) == 1 && kinds[0] == sqltypes.Float8 && e.T.Kind == sqltypes.Float8,
			len(args) == 1 && kinds[0] == sqltypes.Numeric && e.T.Kind == sqltypes.Numeric,
			name == "round" && len(args) == 2 && kinds[0] == sqltypes.Numeric && kinds[1] == sqltypes.Int4 && e.T.Kind == sqltypes.Numeric:
			return &mathNode{name: name, args: args, t: e.T}, nil
		}
		return bad()
	case "sqrt", "ln", "exp": // (numeric: nummath.go)
		if len(args) != 1 || kinds[0] != sqltypes.Float8 || e.T.Kind != sqltypes.Float8 {
			return bad()
		}
		return &mathNode{name: e.Name, args: args, t: e.T}, nil
	case "power", "pow":
		if len(args) != 2 || kinds[0] != sqltypes.Float8 || kinds[1] != sqltypes.Float8 || e.T.Kind != sqltypes.Float8 {
			return bad()
		}
		return &mathNode{name: "power", args: args, t: e.T}, nil
	case "now":
		if len(args) != 0 || e.T.Kind != sqltypes.TimestampTZ {
			return bad()
		}
		return &litNode{v: c.env.Now.UnixMicro(), t: e.T}, nil
	case "date_trunc":
		if len(args) < 2 || len(args) > 3 || !vec.IsStringKind(kinds[0]) || (kinds[1] != sqltypes.Timestamp && kinds[1] != sqltypes.TimestampTZ && kinds[1] != sqltypes.Interval) || e.T.Kind != kinds[1] ||
			len(args) == 3 && (kinds[1] != sqltypes.TimestampTZ || !vec.IsStringKind(kinds[2])) {
			return bad()
		}
		n := &dateTruncNode{unit: args[0], x: args[1], t: e.T}
		if len(args) == 3 {
			n.zone = args[2]
		}
		return n, nil
	case "date_part", "extract":
		switch {
		case len(args) != 2 || !vec.IsStringKind(kinds[0]):
			return bad()
		case kinds[1] != sqltypes.Timestamp && kinds[1] != sqltypes.TimestampTZ && kinds[1] != sqltypes.Date && kinds[1] != sqltypes.Interval:
			return bad()
		case e.T.Kind != sqltypes.Float8 && e.T.Kind != sqltypes.Numeric:
			return bad()
		}
		return &datePartNode{unit: args[0], x: args[1], t: e.T}, nil
	case "to_timestamp":
		if len(args) != 1 || kinds[0] != sqltypes.Float8 || e.T.Kind != sqltypes.TimestampTZ {
			return bad()
		}
		return &toTimestampNode{x: args[0]}, nil
	case "time_bucket":
		if len(args) < 2 || len(args) > 3 || kinds[0] != sqltypes.Interval ||
			(kinds[1] != sqltypes.Timestamp && kinds[1] != sqltypes.TimestampTZ && kinds[1] != sqltypes.Date) || e.T.Kind != kinds[1] ||
			(len(args) == 3 && kinds[2] != sqltypes.Interval && kinds[2] != kinds[1]) {
			return bad()
		}
		n := &timeBucketNode{width: args[0], x: args[1], t: e.T}
		if len(args) == 3 {
			n.extra, n.offset = args[2], kinds[2] == sqltypes.Interval
		}
		return n, nil
	}
	if n, ok, err := c.compileStrFunc(e, args, kinds); ok {
		return n, err
	}
	return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s does not exist", e).
		WithHint("No function matches the given name and argument types.")
}

// coalesceNode returns the first non-NULL argument, evaluating each
// argument only for the rows still NULL.
type coalesceNode struct {
	args []node
	t    sqltypes.Type
}

func (n *coalesceNode) typ() sqltypes.Type { return n.t }

func (n *coalesceNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	rows := int(b.NumRows())
	remaining := make([]bool, rows)
	which := make([]int, rows)
	for i := range remaining {
		remaining[i] = true
		which[i] = -1
	}
	var srcs []arrow.Array
	defer func() { vec.Release(srcs) }()
	for _, a := range n.args {
		arr, err := evalMasked(c, a, b, remaining)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, arr)
		any := false
		for i := range remaining {
			if remaining[i] && arr.IsValid(i) {
				remaining[i] = false
				which[i] = len(srcs) - 1
			}
			any = any || remaining[i]
		}
		if !any {
			break
		}
	}
	return vec.Pick(c.mem, n.t, srcs, which, rows), nil
}

type nullifNode struct {
	a, b node
	t    sqltypes.Type
}

func (n *nullifNode) typ() sqltypes.Type { return n.t }

func (n *nullifNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	x, y, err := eval2(c, b, n.a, n.b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	defer y.Release()
	cmp, err := vec.Comparator(n.a.typ(), x, y)
	if err != nil {
		return nil, err
	}
	which := make([]int, x.Len())
	for i := range which {
		if x.IsValid(i) && y.IsValid(i) && cmp(i, i) == 0 {
			which[i] = -1
		}
	}
	return vec.Pick(c.mem, n.t, []arrow.Array{x}, which, x.Len()), nil
}

// extremeNode is GREATEST/LEAST: NULL arguments are ignored, the result is
// NULL only when all are.
type extremeNode struct {
	args     []node
	greatest bool
	t        sqltypes.Type
}

func (n *extremeNode) typ() sqltypes.Type { return n.t }

func (n *extremeNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	arrs, err := evalAll(c, b, n.args)
	if err != nil {
		return nil, err
	}
	defer vec.Release(arrs)
	rows := int(b.NumRows())
	which := make([]int, rows)
	for i := range which {
		which[i] = -1
	}
	for k := range arrs {
		cmps := make([]func(i, j int) int, k)
		for j := 0; j < k; j++ {
			cmp, err := vec.Comparator(n.t, arrs[k], arrs[j])
			if err != nil {
				return nil, err
			}
			cmps[j] = cmp
		}
		for i := 0; i < rows; i++ {
			if arrs[k].IsNull(i) {
				continue
			}
			w := which[i]
			if w < 0 {
				which[i] = k
				continue
			}
			d := cmps[w](i, i)
			if (n.greatest && d > 0) || (!n.greatest && d < 0) {
				which[i] = k
			}
		}
	}
	return vec.Pick(c.mem, n.t, arrs, which, rows), nil
}

// strMapNode maps a string through f, with optional extra string
// arguments; NULL in any argument gives NULL.
type strMapNode struct {
	x     node
	extra []node
	t     sqltypes.Type
	f     func(s string, extra []string) (string, error)
}

func (n *strMapNode) typ() sqltypes.Type { return n.t }

func (n *strMapNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	arrs, err := evalAll(c, b, append([]node{n.x}, n.extra...))
	if err != nil {
		return nil, err
	}
	defer vec.Release(arrs)
	rows := arrs[0].Len()
	valid := vec.Validity(rows, arrs...)
	bld := array.NewStringBuilder(c.mem)
	defer bld.Release()
	bld.Reserve(rows)
	ex := make([]string, len(n.extra))
	for i := 0; i < rows; i++ {
		if !vec.Valid(valid, i) {
			bld.AppendNull()
			continue
		}
		for k := range ex {
			ex[k] = arrs[k+1].(*array.String).Value(i)
		}
		s, err := n.f(arrs[0].(*array.String).Value(i), ex)
		if err != nil {
			return nil, err
		}
		bld.Append(s)
	}
	return bld.NewArray(), nil
}

type lengthNode struct{ x node }

func (n *lengthNode) typ() sqltypes.Type { return sqltypes.Int4Type }

func (n *lengthNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	x, err := n.x.eval(c, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	rows := x.Len()
	valid := vec.Validity(rows, x)
	buf, out := vec.NewFixed[int32](c.mem, rows)
	for i := 0; i < rows; i++ {
		out[i] = 0
		if !vec.Valid(valid, i) {
			continue
		}
		switch a := x.(type) {
		case *array.String:
			out[i] = int32(utf8.RuneCountInString(a.Value(i)))
		case *array.Binary:
			out[i] = int32(len(a.Value(i)))
		}
	}
	return vec.FinishFixed(c.mem, sqltypes.Int4Type.Arrow(), rows, buf, valid), nil
}

// substrNode is Postgres' substr(s, start [, count]): characters from the
// 1-based start; a start before 1 eats into the count.
type substrNode struct {
	args []node
	t    sqltypes.Type
}

func (n *substrNode) typ() sqltypes.Type { return n.t }

func (n *substrNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	arrs, err := evalAll(c, b, n.args)
	if err != nil {
		return nil, err
	}
	defer vec.Release(arrs)
	rows := arrs[0].Len()
	valid := vec.Validity(rows, arrs...)
	ss := arrs[0].(*array.String)
	starts := vec.Values[int32](arrs[1])
	var counts []int32
	if len(arrs) == 3 {
		counts = vec.Values[int32](arrs[2])
	}
	bld := array.NewStringBuilder(c.mem)
	defer bld.Release()
	for i := 0; i < rows; i++ {
		if !vec.Valid(valid, i) {
			bld.AppendNull()
			continue
		}
		start := int64(starts[i])
		end := int64(math.MaxInt64)
		if counts != nil {
			if counts[i] < 0 {
				return nil, sqlerr.New("22011", "negative substring length not allowed")
			}
			end = start + int64(counts[i])
		}
		s := ss.Value(i)
		from, to := len(s), len(s)
		pos := int64(1)
		for bi := range s {
			if pos == max(start, 1) && from == len(s) {
				from = bi
			}
			if pos == end {
				to = bi
				break
			}
			pos++
		}
		if end <= 1 || from > to {
			bld.Append("")
			continue
		}
		bld.Append(s[from:to])
	}
	return bld.NewArray(), nil
}

// mathNode covers abs, round, floor, ceil, and sqrt, ln, exp and power on
// double precision.
type mathNode struct {
	name string
	args []node
	t    sqltypes.Type
}

func (n *mathNode) typ() sqltypes.Type { return n.t }

func (n *mathNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	arrs, err := evalAll(c, b, n.args)
	if err != nil {
		return nil, err
	}
	defer vec.Release(arrs)
	rows := arrs[0].Len()
	valid := vec.Validity(rows, arrs...)
	k := n.args[0].typ().Kind
	switch {
	case n.name == "abs" && n.t.IsInteger():
		in, _ := vec.ReadInts(arrs[0], n.t)
		lo, _ := vec.IntRange(n.t.Kind)
		for i, v := range in {
			if vec.Valid(valid, i) && v == lo {
				return nil, vec.ErrIntRange(n.t.Kind)
			}
			if v < 0 {
				in[i] = -v
			}
		}
		return vec.WriteInts(c.mem, n.t, in, valid)
	case k == sqltypes.Numeric:
		return n.numeric(c, arrs, valid)
	}
	// float
	xs := vec.ReadFloats(arrs[0], n.args[0].typ())
	var ys []float64
	if len(arrs) > 1 {
		ys = vec.ReadFloats(arrs[1], n.args[1].typ())
	}
	out := make([]float64, rows)
	for i, x := range xs {
		if !vec.Valid(valid, i) {
			continue
		}
		var v float64
		switch n.name {
		case "abs":
			v = math.Abs(x)
		case "round":
			v = math.RoundToEven(x) // float8 round is rint(), as in Postgres
		case "floor":
			v = math.Floor(x)
		case "ceil":
			v = math.Ceil(x)
		case "sqrt":
			if x < 0 {
				return nil, sqlerr.New("2201F", "cannot take square root of a negative number")
			}
			v = math.Sqrt(x)
		case "ln":
			if x == 0 {
				return nil, sqlerr.New("2201E", "cannot take logarithm of zero")
			}
			if x < 0 {
				return nil, sqlerr.New("2201E", "cannot take logarithm of a negative number")
			}
			v = math.Log(x)
		case "exp":
			v = math.Exp(x)
			if math.IsInf(v, 0) && !math.IsInf(x, 0) {
				return nil, sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
			}
			if v == 0 && !math.IsInf(x, 0) {
				return nil, sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: underflow")
			}
		case "power":
			y := ys[i]
			if x == 0 && y < 0 {
				return nil, sqlerr.New("2201F", "zero raised to a negative power is undefined")
			}
			if x < 0 && math.Floor(y) != y && !math.IsInf(y, 0) {
				return nil, sqlerr.New("2201F", "a negative number raised to a non-integer power yields a complex result")
			}
			v = math.Pow(x, y)
			if math.IsInf(v, 0) && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
				return nil, sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
			}
			if v == 0 && x != 0 && !math.IsInf(y, 0) {
				return nil, sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: underflow")
			}
		}
		out[i] = v
	}
	return vec.WriteFloats(c.mem, n.t, out, valid)
}

// numeric implements abs, round (half away from zero, to n places),
// floor and ceil on decimals.
func (n *mathNode) numeric(c *call, arrs []arrow.Array, valid []bool) (arrow.Array, error) {
	xa := arrs[0].(*array.Decimal128)
	xs, ts := vec.DecScale(n.args[0].typ()), vec.DecScale(n.t)
	var places []int32
	if len(arrs) > 1 {
		places = vec.Values[int32](arrs[1])
	}
	return vec.BuildDecimal(c.mem, n.t, xa.Len(), valid, func(i int) (decimalNum, error) {
		v := xa.Value(i).BigInt()
		switch n.name {
		case "abs":
			v.Abs(v)
		case "round":
			p := int32(0)
			if places != nil {
				p = places[i]
			}
			if p < xs {
				if p < -38 {
					p = -38
				}
				// Round to p places, then back to the input scale.
				v = vec.Rescale(v, xs, p)
				if p >= 0 {
					v.Mul(v, vec.Pow10(xs-p))
				} else {
					v.Mul(v, vec.Pow10(xs-p))
				}
			}
		case "floor", "ceil":
			q, r := new(big.Int).QuoRem(v, vec.Pow10(xs), new(big.Int))
			if r.Sign() != 0 {
				if n.name == "floor" && v.Sign() < 0 {
					q.Sub(q, big.NewInt(1))
				}
				if n.name == "ceil" && v.Sign() > 0 {
					q.Add(q, big.NewInt(1))
				}
			}
			v = q.Mul(q, vec.Pow10(xs))
		}
		return vec.FitDecimal(vec.Rescale(v, xs, ts), n.t)
	})
}
