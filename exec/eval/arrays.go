package eval

import (
	"strconv"
	"strings"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// Arrays are TEXT holding Postgres' array text form (see sql/pgcatalog).
// These functions read one-dimensional arrays in the three forms the
// catalogs show: `{a,b}` (lower bound 1), `[lo:hi]={a,b}` and the
// space-separated int2vector/oidvector form `1 2` (lower bound 0, as
// Postgres subscripts those types).

// arrayFuncs are the array functions compileArrayFunc accepts.
var arrayFuncs = map[string][]sqltypes.Kind{
	"array_in":        {sqltypes.Text},
	"array_lower":     {sqltypes.Text, sqltypes.Int4},
	"array_upper":     {sqltypes.Text, sqltypes.Int4},
	"array_subscript": {sqltypes.Text, sqltypes.Int8},
	"array_cat":       {sqltypes.Text, sqltypes.Text},
}

// ParseArray returns the lower bound and elements (nil for NULL) of a
// one-dimensional array in any of the forms above; 22P02 if malformed.
func ParseArray(s string) (int, []*string, error) { return parseArray(s) }

// parseArray returns an array's lower bound and elements (nil for NULL).
func parseArray(s string) (int, []*string, error) {
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
	elems, err := ParseArrayText(t)
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
	s := arrayText(vals)
	if lb != 1 && len(elems) > 0 {
		s = "[" + strconv.Itoa(lb) + ":" + strconv.Itoa(lb+len(elems)-1) + "]=" + s
	}
	return s
}

func (c *compiler) compileArrayFunc(e *expr.Func) (node, bool, error) {
	want, ok := arrayFuncs[e.Name]
	if !ok {
		return nil, false, nil
	}
	args, err := c.compileAll(e.Args)
	if err != nil {
		return nil, true, err
	}
	types := make([]sqltypes.Type, len(args))
	for i, a := range args {
		types[i] = a.typ()
	}
	if len(args) != len(want) {
		return nil, true, unsupported("function "+e.Name, types...)
	}
	for i, a := range args {
		k := a.typ().Kind
		if !(k == want[i] || vec.IsStringKind(k) && vec.IsStringKind(want[i]) || a.typ().IsInteger() && sqltypes.Type{Kind: want[i]}.IsInteger()) {
			return nil, true, unsupported("function "+e.Name, types...)
		}
	}
	var f func(v []any) (any, error)
	switch e.Name {
	case "array_in":
		f = func(v []any) (any, error) {
			lb, elems, err := parseArray(v[0].(string))
			if err != nil {
				return nil, err
			}
			return formatArray(lb, elems), nil
		}
	case "array_lower", "array_upper":
		upper := e.Name == "array_upper"
		f = func(v []any) (any, error) {
			lb, elems, err := parseArray(v[0].(string))
			if err != nil || len(elems) == 0 || v[1].(int64) != 1 {
				return nil, err
			}
			if upper {
				return int64(lb + len(elems) - 1), nil
			}
			return int64(lb), nil
		}
	case "array_cat":
		// Postgres' array || array: a NULL side gives the other side.
		strict := false
		f = func(v []any) (any, error) {
			if v[0] == nil || v[1] == nil {
				if v[0] == nil {
					return v[1], nil
				}
				return v[0], nil
			}
			lb, l, err := parseArray(v[0].(string))
			if err != nil {
				return nil, err
			}
			rlb, r, err := parseArray(v[1].(string))
			if err != nil {
				return nil, err
			}
			if len(l) == 0 {
				lb = rlb
			}
			return formatArray(lb, append(l, r...)), nil
		}
		return &rowFuncNode{args: args, t: e.T, strict: strict, f: f}, true, nil
	case "array_subscript":
		f = func(v []any) (any, error) {
			lb, elems, err := parseArray(v[0].(string))
			if err != nil {
				return nil, err
			}
			i := v[1].(int64) - int64(lb)
			if i < 0 || i >= int64(len(elems)) || elems[i] == nil {
				return nil, nil
			}
			return *elems[i], nil
		}
	}
	return &rowFuncNode{args: args, t: e.T, strict: true, f: f}, true, nil
}
