package functions

import (
	"cmp"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// Postgres' catalog and regular-expression functions, the ones psql's
// meta-commands and drivers' catalog queries call. Catalog functions that
// need catalog lookups (pg_table_is_visible, pg_get_userbyid, ...) are
// expanded by the planner into expressions over its virtual catalog
// instead; these are pure.

var (
	i8      = sqltypes.Int8Type
	boolean = sqltypes.BoolType
)

// PgTypeof is pg_typeof(x): the name of x's type without modifiers, as
// Postgres prints a regtype (text here). x is still evaluated, so its
// run-time errors are raised. The rule passes the name as a second,
// constant argument.
var PgTypeof = register(&Def{
	Name: "pg_typeof", MinArgs: 1, MaxArgs: 1,
	Rule: func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		t := args[0].Type()
		x := args[0]
		if t.Kind == sqltypes.Unknown {
			x = b.ResolveUnknown(x)
			if x.Type().Kind == sqltypes.Unknown {
				x = &expr.Literal{T: text}
			}
		}
		name := sqltypes.Base(t.Kind).String()
		if t.IsArray() { // Base drops the element type: unknown[]
			name = sqltypes.ArrayOf(t.ElemType()).String()
		}
		return []expr.Expr{x, &expr.Literal{Value: name, T: text}}, text, nil
	},
	Prepare: prepareIf(func([]expr.Expr, sqltypes.Type) Kernel {
		return func(in Input) (arrow.Array, error) {
			arrs, err := argsAll(in, 2)
			if err != nil {
				return nil, err
			}
			defer vec.Release(arrs)
			names := arrs[1].(*array.String)
			bld := array.NewStringBuilder(in.Mem())
			defer bld.Release()
			for i := 0; i < in.Rows(); i++ {
				bld.Append(names.Value(min(i, names.Len()-1)))
			}
			return bld.NewArray(), nil
		}
	}, sqltypes.Text, anyKind, stringKind),
	Examples: []Example{{"pg_typeof(1.5)", "numeric"}, {"pg_typeof('x')", "unknown"}, {"pg_typeof(now())", "timestamp with time zone"}},
})

// FormatType is format_type(type oid, typmod): the SQL spelling of a
// type with its modifier (formatType).
var FormatType = register(&Def{
	Name: "format_type", MinArgs: 2, MaxArgs: 2,
	Rule: fixed(text, i8, i4),
	Prepare: prepareIf(func([]expr.Expr, sqltypes.Type) Kernel {
		return rowKernel(text, 2, false, func(v []any) (any, error) {
			if v[0] == nil {
				return nil, nil
			}
			mod := int64(-1)
			if v[1] != nil {
				mod = v[1].(int64)
			}
			return formatType(v[0].(int64), mod), nil
		})
	}, stringKind, sqltypes.Int8, sqltypes.Int4),
	Examples: []Example{{"format_type(1700, 655366)", "numeric(10,2)"}, {"format_type(1043, NULL)", "character varying"}},
})

// PgEncodingToChar is pg_encoding_to_char(encoding number): its name, ""
// for an unknown number.
var PgEncodingToChar = register(&Def{
	Name: "pg_encoding_to_char", MinArgs: 1, MaxArgs: 1,
	Rule: fixed(text, i4),
	Prepare: prepareIf(func([]expr.Expr, sqltypes.Type) Kernel {
		return strict1(text, func(i int64) (string, error) {
			if i >= 0 && i < int64(len(encodings)) {
				return encodings[i], nil
			}
			return "", nil
		})
	}, stringKind, sqltypes.Int4),
	Examples: []Example{{"pg_encoding_to_char(6)", "UTF8"}},
})

// PgGetExpr is pg_get_expr(node tree, relation [, pretty]). asofsql's
// catalogs hold no expression trees (their pg_node_tree columns are
// NULL), so NULL gives NULL and anything else is 22023.
var PgGetExpr = register(&Def{
	Name: "pg_get_expr", MinArgs: 2, MaxArgs: 3,
	Rule: fixed(text, text, i8, boolean),
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if !(kindsAre(args, stringKind, sqltypes.Int8) || kindsAre(args, stringKind, sqltypes.Int8, sqltypes.Bool)) || !vec.IsStringKind(t.Kind) {
			return nil, errTypes
		}
		return rowKernel(t, len(args), true, func(v []any) (any, error) {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "pg_get_expr: %q is not an expression tree of this database", v[0])
		}), nil
	},
	Examples: []Example{{"pg_get_expr(NULL, 1)", "NULL"}},
})

// PgSizePretty is pg_size_pretty(bigint) (sizePretty). Postgres also has
// a numeric version, so a smaller integer or an untyped literal, which
// converts to both, is ambiguous there (42725); asofsql has the bigint one
// only, so numeric and other arguments are 42883.
var PgSizePretty = register(&Def{
	Name: "pg_size_pretty", MinArgs: 1, MaxArgs: 1,
	Rule: func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		switch t := args[0].Type(); {
		case t.Kind == sqltypes.Int8:
			return args, text, nil
		case t.Kind == sqltypes.Unknown || t.IsInteger():
			return nil, text, b.Errorf(codeAmbiguousFunction, "function pg_size_pretty(%s) is not unique", t).
				WithHint("Could not choose a best candidate function. You might need to add explicit type casts.")
		}
		return nil, text, b.NoMatch(args)
	},
	Prepare: prepareIf(func([]expr.Expr, sqltypes.Type) Kernel {
		return strict1(text, func(v int64) (string, error) { return sizePretty(v), nil })
	}, stringKind, sqltypes.Int8),
	Examples: []Example{{"pg_size_pretty(10485248::bigint)", "10 MB"}},
})

// codeAmbiguousFunction is Postgres' 42725 ambiguous_function.
const codeAmbiguousFunction = "42725"

// TextRegexEq is x ~ pattern (textregexeq): a POSIX regular expression
// match in the syntax RE2 shares with Postgres' ARE; a bad pattern is
// 2201B.
var TextRegexEq = register(&Def{
	Name: "textregexeq", Internal: true, MinArgs: 2, MaxArgs: 2,
	Prepare:  prepareRegex(false),
	Examples: []Example{{"'trades' ~ '^t.*s$'", "t"}},
})

// TextRegexNe is x !~ pattern (textregexne).
var TextRegexNe = register(&Def{
	Name: "textregexne", Internal: true, MinArgs: 2, MaxArgs: 2,
	Prepare:  prepareRegex(true),
	Examples: []Example{{"'trades' !~ 'x'", "t"}},
})

func prepareRegex(neg bool) func([]expr.Expr, sqltypes.Type) (Kernel, error) {
	return prepareIf(func([]expr.Expr, sqltypes.Type) Kernel {
		// Postgres' default flags: '.' and bracket expressions match a
		// newline, as in regexp_like without flags.
		cache, flags := regexCache{}, reFlags{prefix: "(?s)"}
		return strict2(boolean, func(s, p string) (bool, error) {
			re, err := flags.compile(cache, p)
			if err != nil {
				return false, err
			}
			return re.MatchString(s) != neg, nil
		})
	}, sqltypes.Bool, stringKind, stringKind)
}

// ScalarOpAny is x op ANY (array), the planner's form of it: the array is
// text in Postgres' array form whose elements are read as x's type (text,
// an integer type or boolean); the third argument is the operator (= <> <
// <= > >=), a constant. True if any comparison holds, else NULL if the
// array, x or an element is NULL (and the array is not empty), else false.
var ScalarOpAny = register(&Def{
	Name: "scalar_op_any", Internal: true, MinArgs: 3, MaxArgs: 3,
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if len(args) != 3 || t.Kind != sqltypes.Bool {
			return nil, errTypes
		}
		lit, isLit := args[2].(*expr.Literal)
		op, _ := lit.Value.(string)
		cmp := anyCompare[op]
		if !isLit || cmp == nil {
			return nil, sqlerr.New(sqlerr.InternalError, "scalar_op_any needs a comparison literal")
		}
		lk := args[0].Type().Kind
		if !kindsAre(args, anyKind, stringKind, stringKind) {
			return nil, errTypes
		}
		return rowKernel(boolean, 3, false, func(v []any) (any, error) {
			if v[1] == nil {
				return nil, nil
			}
			elems, err := parseArrayText(v[1].(string))
			if err != nil || len(elems) == 0 {
				return false, err
			}
			sawNull := v[0] == nil
			for _, el := range elems {
				if el == nil || v[0] == nil {
					sawNull = true
					continue
				}
				c, err := compareElem(v[0], *el, lk)
				if err != nil {
					return nil, err
				}
				if cmp(c) {
					return true, nil
				}
			}
			if sawNull {
				return nil, nil
			}
			return false, nil
		}), nil
	},
	Examples: []Example{{"'x' = ANY (spcoptions) FROM pg_tablespace WHERE spcname = 'pg_default'", "NULL"}},
})

// compileRegex compiles a Postgres regular expression (the subset RE2
// shares with Postgres' ARE syntax), caching by pattern. Errors are 2201B
// as in Postgres.
func compileRegex(p string, cache map[string]*regexp.Regexp) (*regexp.Regexp, error) {
	if re, ok := cache[p]; ok {
		return re, nil
	}
	re, err := regexp.Compile(p)
	if err != nil {
		msg := err.Error()
		if e, ok := err.(*syntax.Error); ok {
			msg = e.Code.String()
		}
		return nil, sqlerr.New("2201B", "invalid regular expression: %s", msg)
	}
	if len(cache) < 64 {
		cache[p] = re
	}
	return re, nil
}

// anyCompare maps scalar_op_any's operators to tests of a comparison.
var anyCompare = map[string]func(int) bool{
	"=": func(c int) bool { return c == 0 }, "<>": func(c int) bool { return c != 0 },
	"<": func(c int) bool { return c < 0 }, "<=": func(c int) bool { return c <= 0 },
	">": func(c int) bool { return c > 0 }, ">=": func(c int) bool { return c >= 0 },
}

// compareElem compares x (of kind k) with an array element's text, read
// as k: text bytewise, integers and booleans by value.
func compareElem(x any, el string, k sqltypes.Kind) (int, error) {
	switch v := x.(type) {
	case string:
		return strings.Compare(v, el), nil
	case int64:
		n, err := strconv.ParseInt(strings.TrimSpace(el), 10, 64)
		if err != nil {
			t := sqltypes.Base(k)
			return 0, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type %s: %q", t, el)
		}
		return cmp.Compare(v, n), nil
	case bool:
		var bv bool
		switch strings.ToLower(strings.TrimSpace(el)) {
		case "t", "true", "yes", "y", "on", "1":
			bv = true
		case "f", "false", "no", "n", "off", "0":
		default:
			return 0, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type boolean: %q", el)
		}
		switch {
		case v == bv:
			return 0, nil
		case !v:
			return -1, nil
		}
		return 1, nil
	}
	return 0, sqlerr.New(sqlerr.InternalError, "functions: compareElem %T", x)
}

// encodings are Postgres' encoding names by number (pg_wchar.h).
var encodings = []string{"SQL_ASCII", "EUC_JP", "EUC_CN", "EUC_KR", "EUC_TW", "EUC_JIS_2004", "UTF8",
	"MULE_INTERNAL", "LATIN1", "LATIN2", "LATIN3", "LATIN4", "LATIN5", "LATIN6", "LATIN7", "LATIN8",
	"LATIN9", "LATIN10", "WIN1256", "WIN1258", "WIN866", "WIN874", "KOI8R", "WIN1251", "WIN1252",
	"ISO_8859_5", "ISO_8859_6", "ISO_8859_7", "ISO_8859_8", "WIN1250", "WIN1253", "WIN1254", "WIN1255",
	"WIN1257", "KOI8U", "SJIS", "BIG5", "GBK", "UHC", "GB18030", "JOHAB", "SHIFT_JIS_2004"}

// otherTypeNames are format_type's names for types asofsql has no values
// of but Postgres clients may ask about.
var otherTypeNames = map[int64]string{
	18: `"char"`, 19: "name", 26: "oid", 28: "xid", 194: "pg_node_tree", 1033: "aclitem",
	1042: "character", 2205: "regclass", 2206: "regtype", 4089: "regnamespace", 24: "regproc",
}

// formatType is Postgres' format_type(oid, typmod) for the types asofsql
// knows: the SQL spelling with the modifier; "???" for an unknown OID.
func formatType(oid, typmod int64) string {
	if s, ok := otherTypeNames[oid]; ok {
		return s
	}
	t, ok := sqltypes.FromOID(uint32(oid))
	if !ok || oid < 0 || oid > 1<<32-1 {
		return "???"
	}
	switch t.Kind {
	case sqltypes.Numeric:
		if typmod >= 4 {
			t = sqltypes.NumericType(int((typmod-4)>>16)&0xffff, int((typmod-4)&0xffff))
		}
	case sqltypes.Varchar:
		if typmod >= 4 {
			t = sqltypes.VarcharOf(int(typmod - 4))
		}
	case sqltypes.Timestamp, sqltypes.TimestampTZ:
		if typmod >= 0 {
			t.Precision = int(typmod)
		}
	}
	return t.String()
}

// maxArrayDims is PostgreSQL's MAXDIM.
const maxArrayDims = 6

// parseArrayText parses Postgres' array text form ('{a,"b c",NULL}';
// nested braces flatten) into its elements, nil for NULL. A malformed
// literal is 22P02; more than maxArrayDims nested braces are 54000, as in
// PostgreSQL.
func parseArrayText(s string) ([]*string, error) {
	bad := func() error {
		return sqlerr.New(sqlerr.InvalidTextRepresentation, "malformed array literal: %q", s)
	}
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") {
		return nil, bad()
	}
	var out []*string
	depth, i := 0, 0
	expectElem := false
	for i < len(s) {
		switch c := s[i]; {
		case c == '{':
			if depth++; depth > maxArrayDims {
				return nil, sqlerr.New(sqlerr.ProgramLimitExceeded, "number of array dimensions (%d) exceeds the maximum allowed (%d)", depth, maxArrayDims)
			}
			i++
			expectElem = false
		case c == '}':
			if expectElem {
				return nil, bad()
			}
			depth--
			i++
			if depth == 0 {
				if strings.TrimSpace(s[i:]) != "" {
					return nil, bad()
				}
				return out, nil
			}
		case c == ',':
			expectElem = true
			i++
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"':
			var b strings.Builder
			i++
			for {
				if i >= len(s) {
					return nil, bad()
				}
				if s[i] == '\\' && i+1 < len(s) {
					b.WriteByte(s[i+1])
					i += 2
					continue
				}
				if s[i] == '"' {
					i++
					break
				}
				b.WriteByte(s[i])
				i++
			}
			v := b.String()
			out = append(out, &v)
			expectElem = false
		default:
			j := i
			var b strings.Builder
			for j < len(s) && s[j] != ',' && s[j] != '}' && s[j] != '{' && s[j] != '"' {
				if s[j] == '\\' && j+1 < len(s) {
					b.WriteByte(s[j+1])
					j += 2
					continue
				}
				b.WriteByte(s[j])
				j++
			}
			v := strings.TrimRight(b.String(), " \t\n\r")
			if strings.EqualFold(v, "NULL") && !strings.Contains(s[i:j], `\`) {
				out = append(out, nil)
			} else {
				out = append(out, &v)
			}
			i = j
			expectElem = false
		}
	}
	return nil, bad()
}

// sizePrettyUnits are Postgres 15's pg_size_pretty units: a unit is used
// when the absolute value is below its limit (or it is the last); the
// rounded units halve-round the value kept one bit larger.
var sizePrettyUnits = []struct {
	name  string
	limit uint64
	round bool
	shift uint
}{
	{"bytes", 10 * 1024, false, 0},
	{"kB", 20*1024 - 1, true, 10},
	{"MB", 20*1024 - 1, true, 20},
	{"GB", 20*1024 - 1, true, 30},
	{"TB", 20*1024 - 1, true, 40},
	{"PB", 20*1024 - 1, true, 50},
}

// sizePretty is pg_size_pretty(bigint), Postgres 15's algorithm: the
// value is shifted down unit by unit (truncating toward zero, one bit
// short where the next unit rounds) and half-rounded away from zero in
// the unit it stops at, e.g. 10239 bytes, 10240 -> 10 kB, 10485247 ->
// 10239 kB, 10485248 -> 10 MB.
func sizePretty(size int64) string {
	i := 0
	for ; i < len(sizePrettyUnits)-1; i++ {
		u, next := sizePrettyUnits[i], sizePrettyUnits[i+1]
		abs := uint64(size)
		if size < 0 {
			abs = -abs
		}
		if abs < u.limit {
			break
		}
		bits := next.shift - u.shift
		if next.round {
			bits--
		}
		if u.round {
			bits++
		}
		size /= int64(1) << bits
	}
	u := sizePrettyUnits[i]
	if u.round {
		if size < 0 {
			size = (size - 1) / 2
		} else {
			size = (size + 1) / 2
		}
	}
	return strconv.FormatInt(size, 10) + " " + u.name
}
