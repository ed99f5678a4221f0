package eval

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
)

// Postgres catalog and regular-expression functions (the ones psql's
// meta-commands use). Catalog functions that need catalog lookups are
// expanded by the planner instead; these are pure.

// PgFunctions lists the functions compilePgFunc accepts.
var PgFunctions = []string{"array_to_string", "format_type", "pg_encoding_to_char", "pg_get_expr", "pg_size_pretty", "scalar_op_any", "textregexeq", "textregexne"}

// compilePgFunc compiles the functions of PgFunctions; ok is false for
// any other name.
func (c *compiler) compilePgFunc(e *expr.Func) (n node, ok bool, err error) {
	var strict = true
	var f func(v []any) (any, error)
	var want []sqltypes.Kind
	switch e.Name {
	case "textregexeq", "textregexne":
		want = []sqltypes.Kind{sqltypes.Text, sqltypes.Text}
		neg := e.Name == "textregexne"
		cache := map[string]*regexp.Regexp{}
		f = func(v []any) (any, error) {
			re, err := compileRegex(v[1].(string), cache)
			if err != nil {
				return nil, err
			}
			return re.MatchString(v[0].(string)) != neg, nil
		}
	case "format_type":
		want = []sqltypes.Kind{sqltypes.Int8, sqltypes.Int4}
		strict = false
		f = func(v []any) (any, error) {
			if v[0] == nil {
				return nil, nil
			}
			mod := int64(-1)
			if v[1] != nil {
				mod = v[1].(int64)
			}
			return FormatType(v[0].(int64), mod), nil
		}
	case "pg_encoding_to_char":
		want = []sqltypes.Kind{sqltypes.Int4}
		f = func(v []any) (any, error) {
			if i := v[0].(int64); i >= 0 && i < int64(len(encodings)) {
				return encodings[i], nil
			}
			return "", nil
		}
	case "array_to_string":
		want = []sqltypes.Kind{sqltypes.Text, sqltypes.Text, sqltypes.Text}[:len(e.Args)]
		strict = false
		f = func(v []any) (any, error) {
			if v[0] == nil || v[1] == nil {
				return nil, nil
			}
			elems, err := ParseArrayText(v[0].(string))
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
		}
	case "pg_size_pretty":
		want = []sqltypes.Kind{sqltypes.Int8}
		f = func(v []any) (any, error) { return SizePretty(v[0].(int64)), nil }
	case "pg_get_expr":
		// asofsql's catalogs hold no expression trees (their pg_node_tree
		// columns are NULL), so a non-NULL argument is none of ours.
		want = []sqltypes.Kind{sqltypes.Text, sqltypes.Int8, sqltypes.Bool}[:len(e.Args)]
		f = func(v []any) (any, error) {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "pg_get_expr: %q is not an expression tree of this database", v[0])
		}
	case "scalar_op_any":
		lit, isLit := e.Args[len(e.Args)-1].(*expr.Literal)
		op, _ := lit.Value.(string)
		cmp := anyCompare[op]
		if len(e.Args) != 3 || !isLit || cmp == nil {
			return nil, true, internalf("scalar_op_any needs a comparison literal")
		}
		lk := e.Args[0].Type().Kind
		want = []sqltypes.Kind{lk, sqltypes.Text, sqltypes.Text}
		strict = false
		f = func(v []any) (any, error) {
			if v[1] == nil {
				return nil, nil
			}
			elems, err := ParseArrayText(v[1].(string))
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
		}
	default:
		return c.compileArrayFunc(e) // arrays.go
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
		if !(k == want[i] || isStringKind(k) && isStringKind(want[i])) {
			return nil, true, unsupported("function "+e.Name, types...)
		}
	}
	return &rowFuncNode{args: args, t: e.T, strict: strict, f: f}, true, nil
}

// rowFuncNode applies a scalar Go function row by row (catalog-sized
// inputs). Values are as valueAt reads them: int64 for the integer types
// these functions bind, string, bool or nil.
type rowFuncNode struct {
	args   []node
	t      sqltypes.Type
	strict bool
	f      func(v []any) (any, error)
}

func (n *rowFuncNode) typ() sqltypes.Type { return n.t }

func (n *rowFuncNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	arrs, err := evalAll(c, b, n.args)
	if err != nil {
		return nil, err
	}
	defer releaseAll(arrs)
	rows := int(b.NumRows())
	bld := array.NewBuilder(c.mem, n.t.Arrow())
	defer bld.Release()
	vals := make([]any, len(arrs))
	for i := 0; i < rows; i++ {
		null := false
		for k, a := range arrs {
			vals[k] = valueAt(a, i)
			null = null || vals[k] == nil
		}
		if null && n.strict {
			bld.AppendNull()
			continue
		}
		out, err := n.f(vals)
		if err != nil {
			return nil, err
		}
		switch v := out.(type) {
		case nil:
			bld.AppendNull()
		case bool:
			bld.(*array.BooleanBuilder).Append(v)
		case string:
			bld.(*array.StringBuilder).Append(v)
		case int64:
			switch ib := bld.(type) {
			case *array.Int16Builder:
				ib.Append(int16(v))
			case *array.Int32Builder:
				ib.Append(int32(v))
			case *array.Int64Builder:
				ib.Append(v)
			default:
				return nil, internalf("rowFuncNode: int result for %s", n.t)
			}
		default:
			return nil, internalf("rowFuncNode: result %T", out)
		}
	}
	return bld.NewArray(), nil
}

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
			t := sqltypes.Type{Kind: k, Precision: sqltypes.NoLimit, Scale: sqltypes.NoLimit, Length: sqltypes.NoLimit}
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
	return 0, internalf("compareElem %T", x)
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

// FormatType is Postgres' format_type(oid, typmod) for the types asofsql
// knows: the SQL spelling with the modifier; "???" for an unknown OID.
func FormatType(oid, typmod int64) string {
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

// ParseArrayText parses Postgres' array text form ('{a,"b c",NULL}';
// nested braces flatten) into its elements, nil for NULL. A malformed
// literal is 22P02.
// More than maxArrayDims nested braces are 54000, as in PostgreSQL.
func ParseArrayText(s string) ([]*string, error) {
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

// SizePretty is pg_size_pretty(bigint), Postgres 15's algorithm: the
// value is shifted down unit by unit (truncating toward zero, one bit
// short where the next unit rounds) and half-rounded away from zero in
// the unit it stops at, e.g. 10239 bytes, 10240 -> 10 kB, 10485247 ->
// 10239 kB, 10485248 -> 10 MB.
func SizePretty(size int64) string {
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
