package functions

import (
	"strconv"
	"strings"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Arrays are TEXT holding Postgres' array text form (see sql/pgcatalog):
// asofsql has no array types, but the virtual catalog has array columns
// and clients query them. These functions read one-dimensional arrays in
// the forms ParseArray reads.

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
	Examples: []Example{{"array_to_string('{a,NULL,b}'::text[], '-', '*')", "a-*-b"}, {"array_to_string('{{1,2},{3,4}}'::int[], ',')", "1,2,3,4"}},
})

// ArrayLower is array_lower(arr, dim): the lower bound of dimension 1
// (NULL for another dimension or an empty array).
var ArrayLower = register(&Def{
	Name: "array_lower", MinArgs: 2, MaxArgs: 2,
	Rule:     arrayAsText(fixed(i4, text, i4)),
	Prepare:  prepareBound(false),
	Examples: []Example{{"array_lower('[0:1]={a,b}'::text[], 1)", "0"}},
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

// ArrayIn is x::type[] (array_in): the text normalized to Postgres' array
// form (vector forms keep their lower bound 0). Elements are not checked
// against the type.
var ArrayIn = register(&Def{
	Name: "array_in", Internal: true, MinArgs: 1, MaxArgs: 1,
	Prepare: prepareIf(func(_ []expr.Expr, t sqltypes.Type) Kernel {
		return rowKernel(t, 1, true, func(v []any) (any, error) {
			lb, elems, err := ParseArray(v[0].(string))
			if err != nil {
				return nil, err
			}
			return formatArray(lb, elems), nil
		})
	}, stringKind, stringKind),
	Examples: []Example{{"'[0:1]={1,2}'::int[]", "[0:1]={1,2}"}, {"'{a, \"b c\"}'::text[]", `{a,"b c"}`}},
})

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
	Examples: []Example{{"('{a,b,c}'::text[])[2]", "b"}, {"('{a}'::text[])[5]", "NULL"}},
})

// ArrayCat is arr || arr (array_cat): the elements of both, a NULL side
// giving the other side.
var ArrayCat = register(&Def{
	Name: "array_cat", Internal: true, MinArgs: 2, MaxArgs: 2,
	Prepare: prepareIf(func(_ []expr.Expr, t sqltypes.Type) Kernel {
		return rowKernel(t, 2, false, func(v []any) (any, error) {
			if v[0] == nil || v[1] == nil {
				if v[0] == nil {
					return v[1], nil
				}
				return v[0], nil
			}
			lb, l, err := ParseArray(v[0].(string))
			if err != nil {
				return nil, err
			}
			rlb, r, err := ParseArray(v[1].(string))
			if err != nil {
				return nil, err
			}
			if len(l) == 0 {
				lb = rlb
			}
			return formatArray(lb, append(l, r...)), nil
		})
	}, stringKind, stringKind, stringKind),
	Examples: []Example{{"'{a}'::text[] || '{b,c}'::text[]", "{a,b,c}"}},
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

// formatArray is Postgres' text form of a one-dimensional array.
func formatArray(lb int, elems []*string) string {
	vals := make([]any, len(elems))
	for i, e := range elems {
		if e != nil {
			vals[i] = *e
		}
	}
	s := ArrayText(vals)
	if lb != 1 && len(elems) > 0 {
		s = "[" + strconv.Itoa(lb) + ":" + strconv.Itoa(lb+len(elems)-1) + "]=" + s
	}
	return s
}

// ArrayText formats text elements as a Postgres array literal: `{}` for
// none, elements quoted when empty, NULL-like, or holding
// delimiters, quotes, backslashes or spaces.
func ArrayText(vals []any) string {
	var sb strings.Builder
	sb.WriteByte('{')
	for i, x := range vals {
		if i > 0 {
			sb.WriteByte(',')
		}
		if x == nil {
			sb.WriteString("NULL")
			continue
		}
		s := x.(string)
		if s == "" || strings.EqualFold(s, "NULL") || strings.ContainsAny(s, "{},\"\\ \t\n\r\v\f") {
			sb.WriteByte('"')
			for _, r := range s {
				if r == '"' || r == '\\' {
					sb.WriteByte('\\')
				}
				sb.WriteRune(r)
			}
			sb.WriteByte('"')
			continue
		}
		sb.WriteString(s)
	}
	sb.WriteByte('}')
	return sb.String()
}
