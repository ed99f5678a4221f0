package functions

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// Conditional expressions: Postgres parses them as their own node types,
// asofsql as functions. None is strict: NULL arguments are skipped.

// Coalesce is coalesce(a, ...): the first non-NULL argument. Later
// arguments are evaluated only for the rows still NULL, so
// coalesce(x, 1/0) does not fail where x is not NULL.
var Coalesce = register(&Def{
	Name: "coalesce", MinArgs: 1, MaxArgs: -1,
	Rule: common,
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if !castArgs(args, t) {
			return nil, errTypes
		}
		n := len(args)
		return func(in Input) (arrow.Array, error) {
			rows := in.Rows()
			remaining := make([]bool, rows)
			which := make([]int, rows)
			for i := range remaining {
				remaining[i] = true
				which[i] = -1
			}
			var srcs []arrow.Array
			defer func() { vec.Release(srcs) }()
			for k := 0; k < n; k++ {
				arr, err := in.ArgWhere(k, remaining)
				if err != nil {
					return nil, err
				}
				srcs = append(srcs, arr)
				left := false
				for i := range remaining {
					if remaining[i] && arr.IsValid(i) {
						remaining[i] = false
						which[i] = len(srcs) - 1
					}
					left = left || remaining[i]
				}
				if !left {
					break
				}
			}
			return vec.Pick(in.Mem(), t, srcs, which, rows), nil
		}, nil
	},
	Examples: []Example{{"coalesce(NULL, 2, 3)", "2"}, {"coalesce(NULL::text, NULL)", "NULL"}},
})

// NullIf is nullif(a, b): NULL where a = b, else a.
var NullIf = register(&Def{
	Name: "nullif", MinArgs: 2, MaxArgs: 2,
	Rule: commonCompared,
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if !castArgs(args, t) {
			return nil, errTypes
		}
		return func(in Input) (arrow.Array, error) {
			arrs, err := argsAll(in, 2)
			if err != nil {
				return nil, err
			}
			defer vec.Release(arrs)
			x, y := arrs[0], arrs[1]
			cmp, err := vec.Comparator(t, x, y)
			if err != nil {
				return nil, err
			}
			which := make([]int, x.Len())
			for i := range which {
				if x.IsValid(i) && y.IsValid(i) && cmp(i, i) == 0 {
					which[i] = -1
				}
			}
			return vec.Pick(in.Mem(), t, []arrow.Array{x}, which, x.Len()), nil
		}, nil
	},
	Examples: []Example{{"nullif(1, 1)", "NULL"}, {"nullif('a', 'b')", "a"}},
})

// Greatest is greatest(a, ...): the largest non-NULL argument, NULL when
// all are NULL.
var Greatest = register(&Def{
	Name: "greatest", MinArgs: 1, MaxArgs: -1,
	Rule:     commonOrdered,
	Prepare:  prepareExtreme(true),
	Examples: []Example{{"greatest(1, NULL, 3, 2)", "3"}},
})

// Least is least(a, ...): the smallest non-NULL argument.
var Least = register(&Def{
	Name: "least", MinArgs: 1, MaxArgs: -1,
	Rule:     commonOrdered,
	Prepare:  prepareExtreme(false),
	Examples: []Example{{"least('b', 'a', NULL)", "a"}},
})

func prepareExtreme(greatest bool) func([]expr.Expr, sqltypes.Type) (Kernel, error) {
	return func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if !castArgs(args, t) {
			return nil, errTypes
		}
		n := len(args)
		return func(in Input) (arrow.Array, error) {
			arrs, err := argsAll(in, n)
			if err != nil {
				return nil, err
			}
			defer vec.Release(arrs)
			rows := in.Rows()
			which := make([]int, rows)
			for i := range which {
				which[i] = -1
			}
			for k := range arrs {
				cmps := make([]func(i, j int) int, k)
				for j := 0; j < k; j++ {
					cmp, err := vec.Comparator(t, arrs[k], arrs[j])
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
					if (greatest && d > 0) || (!greatest && d < 0) {
						which[i] = k
					}
				}
			}
			return vec.Pick(in.Mem(), t, arrs, which, rows), nil
		}, nil
	}
}

// castArgs makes every argument be stored as values of t (the same Arrow
// type, so rows of any of them can be merged), casting those of t's class
// stored otherwise (numeric(10,2) in a numeric(12,4) COALESCE); it
// reports false for an argument of another class. The common rule already
// casts the planner's calls so.
func castArgs(args []expr.Expr, t sqltypes.Type) bool {
	for i, a := range args {
		at := a.Type()
		if !(at.Kind == t.Kind || vec.IsStringKind(at.Kind) && vec.IsStringKind(t.Kind)) {
			return false
		}
		if !arrow.TypeEqual(at.Arrow(), t.Arrow()) {
			args[i] = &expr.Cast{X: a, T: t}
		}
	}
	return len(args) > 0
}
