package functions

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// Typed arrays (sqltypes.Array, Arrow lists). The text-form functions of
// arrays.go still serve the virtual catalog's text array columns; a typed
// array reaches them through its text form (arrayAsText).

// ArrayCtor is ARRAY[a, b, ...]: the planner unifies the elements' types
// as Postgres does and passes them as the arguments.
var ArrayCtor = register(&Def{
	Name: "array", Internal: true, MinArgs: 0, MaxArgs: -1,
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if !t.IsArray() {
			return nil, errTypes
		}
		et := t.ElemType()
		for _, a := range args {
			if a.Type() != et {
				return nil, errTypes
			}
		}
		k := len(args)
		return func(in Input) (arrow.Array, error) {
			arrs, err := argsAll(in, k)
			if err != nil {
				return nil, err
			}
			defer vec.Release(arrs)
			rows := in.Rows()
			which, idx := make([]int, rows*k), make([]int, rows*k)
			offsets := make([]int32, rows+1)
			for i := 0; i < rows; i++ {
				for j := 0; j < k; j++ {
					which[i*k+j], idx[i*k+j] = j, i
				}
				offsets[i+1] = int32((i + 1) * k)
			}
			if err := need(in, "an array result", int64(rows*k)*8); err != nil {
				return nil, err
			}
			vals := vec.Gather(in.Mem(), et, arrs, which, idx)
			defer vals.Release()
			return vec.MakeList(in.Mem(), t, offsets, nil, vals), nil
		}, nil
	},
	Examples: []Example{{"ARRAY[1, 2, NULL]", "{1,2,NULL}"}, {"ARRAY['a b', 'c']", `{"a b",c}`}},
})

// ArrayCompare is x op ANY (array) and x op ALL (array) over a typed
// array whose element type is x's; the arguments are x, the array, the
// operator (a text literal) and whether it is ALL (a boolean literal).
// NULL rules are Postgres': ANY is true if a comparison is true, else
// NULL if x or an element is NULL, else false; ALL is false if one is
// false, else NULL if x or an element is NULL, else true. An empty array
// gives false (ANY) or true (ALL) even for a NULL x.
var ArrayCompare = register(&Def{
	Name: "array_compare", Internal: true, MinArgs: 4, MaxArgs: 4,
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if len(args) != 4 || t.Kind != sqltypes.Bool || !args[1].Type().IsArray() || args[1].Type().ElemType() != args[0].Type() {
			return nil, errTypes
		}
		lit, _ := args[2].(*expr.Literal)
		allLit, _ := args[3].(*expr.Literal)
		if lit == nil || allLit == nil {
			return nil, errTypes
		}
		op, _ := lit.Value.(string)
		all, _ := allLit.Value.(bool)
		holds := anyCompare[op]
		if holds == nil {
			return nil, errTypes
		}
		et := args[0].Type()
		return func(in Input) (arrow.Array, error) {
			x, err := in.Arg(0)
			if err != nil {
				return nil, err
			}
			defer x.Release()
			a, err := in.Arg(1)
			if err != nil {
				return nil, err
			}
			defer a.Release()
			l := a.(*array.List)
			vals := l.ListValues()
			cmp, err := vec.Comparator(et, x, vals)
			if err != nil {
				return nil, err
			}
			rows := in.Rows()
			out, valid := make([]bool, rows), make([]bool, rows)
			for i := 0; i < rows; i++ {
				if l.IsNull(i) {
					continue
				}
				start, end := l.ValueOffsets(i)
				if start == end {
					out[i], valid[i] = all, true
					continue
				}
				if x.IsNull(i) {
					continue
				}
				sawNull, decided := false, false
				for j := int(start); j < int(end); j++ {
					if vals.IsNull(j) {
						sawNull = true
						continue
					}
					if holds(cmp(i, j)) != all {
						out[i], valid[i], decided = !all, true, true
						break
					}
				}
				if !decided && !sawNull {
					out[i], valid[i] = all, true
				}
			}
			return vec.MakeBool(in.Mem(), out, valid), nil
		}, nil
	},
	Examples: []Example{{"2 = ANY (ARRAY[1, 2])", "t"}, {"3 <> ALL (ARRAY[1, NULL])", "NULL"}},
})

// ArrayElement is arr[i] on a typed array: 1-based, NULL out of range.
var ArrayElement = register(&Def{
	Name: "array_element", Internal: true, MinArgs: 2, MaxArgs: 2,
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if len(args) != 2 || !args[0].Type().IsArray() || args[0].Type().ElemType() != t || args[1].Type().Kind != sqltypes.Int8 {
			return nil, errTypes
		}
		return func(in Input) (arrow.Array, error) {
			arrs, err := argsAll(in, 2)
			if err != nil {
				return nil, err
			}
			defer vec.Release(arrs)
			l, ix := arrs[0].(*array.List), arrs[1].(*array.Int64)
			rows := in.Rows()
			which, idx := make([]int, rows), make([]int, rows)
			for i := range which {
				which[i] = -1
				if l.IsNull(i) || ix.IsNull(i) {
					continue
				}
				start, end := l.ValueOffsets(i)
				if k := ix.Value(i); k >= 1 && k <= end-start {
					which[i], idx[i] = 0, int(start+k-1)
				}
			}
			return vec.Gather(in.Mem(), t, []arrow.Array{l.ListValues()}, which, idx), nil
		}, nil
	},
	Examples: []Example{{"(ARRAY[10, 20])[2]", "20"}, {"(ARRAY[10])[5]", "NULL"}},
})

// arrayRule types f(array, params...): the first argument must be a typed
// array (an untyped literal cannot be: Postgres cannot tell its type).
func arrayRule(res sqltypes.Type, params ...sqltypes.Type) Rule {
	return func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		if !args[0].Type().IsArray() {
			return nil, res, b.NoMatch(args)
		}
		for i := 1; i < len(args); i++ {
			a, err := b.Coerce(args[i], i, params[i-1])
			if err != nil {
				return nil, res, err
			}
			args[i] = a
		}
		return args, res, nil
	}
}

// listLens runs f over each non-NULL row's element count.
func listLens(in Input, f func(i int, n int64, dim []arrow.Array) (int64, bool)) (arrow.Array, error) {
	a, err := in.Arg(0)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	l := a.(*array.List)
	rows := in.Rows()
	out, valid := make([]int32, rows), make([]bool, rows)
	for i := 0; i < rows; i++ {
		if l.IsNull(i) {
			continue
		}
		start, end := l.ValueOffsets(i)
		v, ok := f(i, end-start, nil)
		out[i], valid[i] = int32(v), ok
	}
	return vec.MakeFixed(in.Mem(), arrow.PrimitiveTypes.Int32, out, valid), nil
}

// ArrayLength is array_length(arr, dim): the number of elements for
// dimension 1, NULL for an empty array or another dimension.
var ArrayLength = register(&Def{
	Name: "array_length", MinArgs: 2, MaxArgs: 2,
	Rule: arrayRule(i4, i4),
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if !args[0].Type().IsArray() || !args[1].Type().IsInteger() {
			return nil, errTypes
		}
		return func(in Input) (arrow.Array, error) {
			d, err := in.Arg(1)
			if err != nil {
				return nil, err
			}
			defer d.Release()
			dims, err := vec.ReadInts(d, args[1].Type())
			if err != nil {
				return nil, err
			}
			return listLens(in, func(i int, n int64, _ []arrow.Array) (int64, bool) {
				return n, n > 0 && !d.IsNull(i) && dims[i] == 1
			})
		}, nil
	},
	Examples: []Example{{"array_length(ARRAY[1, 2, 3], 1)", "3"}, {"array_length(ARRAY[1], 2)", "NULL"}},
})

// Cardinality is cardinality(arr): the number of elements (0 when empty).
var Cardinality = register(&Def{
	Name: "cardinality", MinArgs: 1, MaxArgs: 1,
	Rule: arrayRule(i4),
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if !args[0].Type().IsArray() {
			return nil, errTypes
		}
		return func(in Input) (arrow.Array, error) {
			return listLens(in, func(_ int, n int64, _ []arrow.Array) (int64, bool) { return n, true })
		}, nil
	},
	Examples: []Example{{"cardinality(ARRAY['a', 'b'])", "2"}, {"cardinality('{}'::int[])", "0"}},
})

// arrayAsText lets a text-form array function take a typed array: it is
// passed through its text form, which those functions read.
func arrayAsText(next Rule) Rule {
	return func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		if len(args) > 0 && args[0].Type().IsArray() {
			args[0] = &expr.Cast{X: args[0], T: text}
		}
		return next(b, args)
	}
}

// ArrayConcat is || on typed arrays: array || array (array_cat, a NULL
// side giving the other side), array || element (array_append) and
// element || array (array_prepend), a NULL array there being empty and a
// NULL element appended as NULL, as in Postgres.
var ArrayConcat = register(&Def{
	Name: "array_concat", Internal: true, MinArgs: 2, MaxArgs: 2,
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if len(args) != 2 || !t.IsArray() {
			return nil, errTypes
		}
		isArr := [2]bool{}
		for i, a := range args {
			switch a.Type() {
			case t:
				isArr[i] = true
			case t.ElemType():
			default:
				return nil, errTypes
			}
		}
		if !isArr[0] && !isArr[1] {
			return nil, errTypes
		}
		et := t.ElemType()
		return func(in Input) (arrow.Array, error) {
			arrs, err := argsAll(in, 2)
			if err != nil {
				return nil, err
			}
			defer vec.Release(arrs)
			rows := in.Rows()
			srcs := make([]arrow.Array, 2)
			for k := range arrs {
				srcs[k] = arrs[k]
				if isArr[k] {
					srcs[k] = arrs[k].(*array.List).ListValues()
				}
			}
			var which, idx []int
			offsets, valid := make([]int32, rows+1), make([]bool, rows)
			for i := 0; i < rows; i++ {
				for k := range arrs {
					if !isArr[k] {
						which, idx = append(which, k), append(idx, i)
						if arrs[k].IsNull(i) {
							which[len(which)-1] = -1
						}
						valid[i] = true
						continue
					}
					l := arrs[k].(*array.List)
					if l.IsNull(i) {
						continue
					}
					valid[i] = true
					start, end := l.ValueOffsets(i)
					for j := start; j < end; j++ {
						which, idx = append(which, k), append(idx, int(j))
					}
				}
				offsets[i+1] = int32(len(which))
			}
			if err := need(in, "an array result", int64(len(which))*8); err != nil {
				return nil, err
			}
			vals := vec.Gather(in.Mem(), et, srcs, which, idx)
			defer vals.Release()
			return vec.MakeList(in.Mem(), t, offsets, valid, vals), nil
		}, nil
	},
	Examples: []Example{{"ARRAY[1] || ARRAY[2, 3]", "{1,2,3}"}, {"ARRAY['a'] || 'b'::text", "{a,b}"}, {"0 || ARRAY[1]", "{0,1}"}},
})

// StringToArray is string_to_array(s, delim [, null_string]): s split at
// each delim into a text[]; a NULL delim splits into characters, an empty
// one gives s whole, an empty s gives {}; elements equal to null_string
// are NULL. NULL s gives NULL.
var StringToArray = register(&Def{
	Name: "string_to_array", MinArgs: 2, MaxArgs: 3,
	Rule: func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		for i := range args {
			a, err := b.Coerce(args[i], i, text)
			if err != nil {
				return nil, textArray, err
			}
			args[i] = a
		}
		return args, textArray, nil
	},
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		for _, a := range args {
			if !kindIs(a.Type(), stringKind) {
				return nil, errTypes
			}
		}
		if t != textArray {
			return nil, errTypes
		}
		k := len(args)
		return func(in Input) (arrow.Array, error) {
			arrs, err := argsAll(in, k)
			if err != nil {
				return nil, err
			}
			defer vec.Release(arrs)
			s, d := arrs[0].(*array.String), arrs[1].(*array.String)
			var ns *array.String
			if k == 3 {
				ns = arrs[2].(*array.String)
			}
			bld := array.NewListBuilder(in.Mem(), arrow.BinaryTypes.String)
			defer bld.Release()
			vb := bld.ValueBuilder().(*array.StringBuilder)
			for i := 0; i < in.Rows(); i++ {
				if s.IsNull(i) {
					bld.AppendNull()
					continue
				}
				if err := growData(in, vb, s.ValueLen(i)); err != nil {
					return nil, err
				}
				str := s.Value(i)
				var parts []string
				switch {
				case str == "":
				case d.IsNull(i):
					for _, r := range str {
						parts = append(parts, string(r))
					}
				case d.Value(i) == "":
					parts = []string{str}
				default:
					parts = strings.Split(str, d.Value(i))
				}
				bld.Append(true)
				for _, p := range parts {
					if ns != nil && ns.IsValid(i) && p == ns.Value(i) {
						vb.AppendNull()
					} else {
						vb.Append(p)
					}
				}
			}
			return bld.NewArray(), nil
		}, nil
	},
	Examples: []Example{{"string_to_array('a,b,,c', ',', '')", "{a,b,NULL,c}"}, {"string_to_array('xy', NULL)", "{x,y}"}},
})

var textArray = sqltypes.ArrayOf(sqltypes.TextType)
