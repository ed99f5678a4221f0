package functions

import (
	"strconv"
	"strings"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// The virtual catalog's array columns are TEXT holding Postgres' array
// text form (see sql/pgcatalog), and clients query them. These functions
// read one-dimensional arrays in the forms ParseArray reads; typed arrays
// (arrays_typed.go) reach array_to_string, array_lower and array_upper
// through their text form.

// ArrayToString is array_to_string(arr, delim [, null string]): the
// elements joined, NULL elements skipped (or written as the null string).
var ArrayToString = register(&Def{
	Name: "array_to_string", MinArgs: 2, MaxArgs: 3,
	Rule: arrayAsText(fixed(text, text)),
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if !(kindsAre(args, stringKind, stringKind) || kindsAre(args, stringKind, stringKind, stringKind)) || !kindIs(t, stringKind) {
			return nil, errTypes
		}
		return rowKernel(t, len(args), false, func(v []any) (any, error) {
			if v[0] == nil || v[1] == nil {
				return nil, nil
			}
			elems, err := parseArrayText(v[0].(string))
			if err != nil {
				return nil, err
			}
			var parts []string
			for _, el := range elems {
				switch {
				case el != nil:
					parts = append(parts, *el)
				case len(v) > 2 && v[2] != nil:
					parts = append(parts, v[2].(string))
				}
			}
			return strings.Join(parts, v[1].(string)), nil
		}), nil
	},
	Examples: []Example{{"array_to_string('{a,NULL,b}'::text[], '-', '*')", "a-*-b"}, {"array_to_string(ARRAY[1, 2], ',')", "1,2"}},
})

// ArrayLower is array_lower(arr, dim): the lower bound of dimension 1
// (NULL for another dimension or an empty array).
var ArrayLower = register(&Def{
	Name: "array_lower", MinArgs: 2, MaxArgs: 2,
	Rule:     arrayAsText(fixed(i4, text, i4)),
	Prepare:  prepareBound(false),
	Examples: []Example{{"array_lower('{a,b}'::text[], 1)", "1"}},
})

// ArrayUpper is array_upper(arr, dim): the upper bound of dimension 1.
var ArrayUpper = register(&Def{
	Name: "array_upper", MinArgs: 2, MaxArgs: 2,
	Rule:     arrayAsText(fixed(i4, text, i4)),
	Prepare:  prepareBound(true),
	Examples: []Example{{"array_upper('{a,b,c}'::text[], 1)", "3"}, {"array_upper('{}'::text[], 1)", "NULL"}},
})

func prepareBound(upper bool) func([]expr.Expr, sqltypes.Type) (Kernel, error) {
	return prepareIf(func(_ []expr.Expr, t sqltypes.Type) Kernel {
		return rowKernel(t, 2, true, func(v []any) (any, error) {
			lb, elems, err := ParseArray(v[0].(string))
			if err != nil || len(elems) == 0 || v[1].(int64) != 1 {
				return nil, err
			}
			if upper {
				return int64(lb + len(elems) - 1), nil
			}
			return int64(lb), nil
		})
	}, intKind, stringKind, intKind)
}

// ArraySubscript is arr[i] (array_subscript): the element, NULL outside
// the bounds.
var ArraySubscript = register(&Def{
	Name: "array_subscript", Internal: true, MinArgs: 2, MaxArgs: 2,
	Prepare: prepareIf(func(_ []expr.Expr, t sqltypes.Type) Kernel {
		return rowKernel(t, 2, true, func(v []any) (any, error) {
			lb, elems, err := ParseArray(v[0].(string))
			if err != nil {
				return nil, err
			}
			i := v[1].(int64) - int64(lb)
			if i < 0 || i >= int64(len(elems)) || elems[i] == nil {
				return nil, nil
			}
			return *elems[i], nil
		})
	}, stringKind, stringKind, intKind),
	Examples: []Example{{"spcacl[1] FROM pg_tablespace WHERE spcname = 'pg_default'", "NULL"}},
})

// ParseArray returns the lower bound and elements (nil for NULL) of a
// one-dimensional array in any of the three forms the catalogs show:
// `{a,b}` (lower bound 1), `[lo:hi]={a,b}` and the space-separated
// int2vector/oidvector form `1 2` (lower bound 0, as Postgres subscripts
// those types); 22P02 if malformed.
func ParseArray(s string) (int, []*string, error) {
	t := strings.TrimSpace(s)
	lb := 1
	if strings.HasPrefix(t, "[") {
		eq := strings.Index(t, "]=")
		colon := strings.IndexByte(t, ':')
		if eq < 0 || colon < 0 || colon > eq {
			return 0, nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "malformed array literal: %q", s)
		}
		n, err := strconv.Atoi(strings.TrimSpace(t[1:colon]))
		if err != nil {
			return 0, nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "malformed array literal: %q", s)
		}
		lb, t = n, t[eq+2:]
	} else if !strings.HasPrefix(t, "{") {
		var out []*string
		for _, f := range strings.Fields(t) {
			f := f
			out = append(out, &f)
		}
		return 0, out, nil
	}
	elems, err := parseArrayText(t)
	return lb, elems, err
}
