package eval

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// strFuncs are Postgres' string functions beyond the core set, by name:
// argument kinds ('s' text, 'i' integer; a trailing group in brackets is
// optional), result kind and the per-row function. All are strict (a NULL
// argument gives NULL).
var strFuncs = map[string]struct {
	args   string
	minArg int
	res    sqltypes.Kind
	f      func(s []string, n []int32) (any, error)
}{
	"replace":     {"sss", 3, sqltypes.Text, func(s []string, _ []int32) (any, error) { return pgReplace(s[0], s[1], s[2]), nil }},
	"strpos":      {"ss", 2, sqltypes.Int4, func(s []string, _ []int32) (any, error) { return strpos(s[0], s[1]), nil }},
	"left":        {"si", 2, sqltypes.Text, func(s []string, n []int32) (any, error) { return leftChars(s[0], int(n[0])), nil }},
	"right":       {"si", 2, sqltypes.Text, func(s []string, n []int32) (any, error) { return rightChars(s[0], int(n[0])), nil }},
	"lpad":        {"sis", 2, sqltypes.Text, func(s []string, n []int32) (any, error) { return pad(s, int(n[0]), true), nil }},
	"rpad":        {"sis", 2, sqltypes.Text, func(s []string, n []int32) (any, error) { return pad(s, int(n[0]), false), nil }},
	"split_part":  {"ssi", 3, sqltypes.Text, func(s []string, n []int32) (any, error) { return splitPart(s[0], s[1], int(n[0])) }},
	"starts_with": {"ss", 2, sqltypes.Bool, func(s []string, _ []int32) (any, error) { return strings.HasPrefix(s[0], s[1]), nil }},
	"pg_typeof":   {"", 0, sqltypes.Text, nil}, // see compileStrFunc
}

// resultBytes bounds the bytes of results whose size follows an
// argument's value, by function: checked against the query's memory
// before the function builds them.
var resultBytes = map[string]func(s []string, n []int32) int64{"lpad": padBytes, "rpad": padBytes}

func init() {
	for name := range strFuncs {
		Functions = append(Functions, name)
	}
	sort.Strings(Functions)
}

// compileStrFunc compiles the functions of strFuncs; ok is false for
// other names.
func (c *compiler) compileStrFunc(e *expr.Func, args []node, kinds []sqltypes.Kind) (node, bool, error) {
	spec, found := strFuncs[e.Name]
	if !found {
		return nil, false, nil
	}
	types := make([]sqltypes.Type, len(args))
	for i, a := range args {
		types[i] = a.typ()
	}
	bad := func() (node, bool, error) { return nil, true, unsupported("function "+e.Name, types...) }
	if e.Name == "pg_typeof" {
		// pg_typeof(x, 'type name'): the binder knows the static type; x
		// is still evaluated, so its errors surface as in Postgres.
		if len(args) != 2 || !isStringKind(kinds[1]) || e.T.Kind != sqltypes.Text {
			return bad()
		}
		return &pgTypeofNode{x: args[0], name: args[1]}, true, nil
	}
	if len(args) < spec.minArg || len(args) > len(spec.args) || e.T.Kind != spec.res && !(spec.res == sqltypes.Text && isStringKind(e.T.Kind)) {
		return bad()
	}
	for i, k := range kinds {
		if spec.args[i] == 's' && !isStringKind(k) || spec.args[i] == 'i' && k != sqltypes.Int4 {
			return bad()
		}
	}
	return &strFuncNode{name: e.Name, args: args, kinds: spec.args[:len(args)], t: e.T, f: spec.f, size: resultBytes[e.Name]}, true, nil
}

// strFuncNode applies f row by row to text and int4 arguments.
type strFuncNode struct {
	name  string
	args  []node
	kinds string
	t     sqltypes.Type
	f     func(s []string, n []int32) (any, error)
	size  func(s []string, n []int32) int64
}

func (n *strFuncNode) typ() sqltypes.Type { return n.t }

func (n *strFuncNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	arrs, err := evalAll(c, b, n.args)
	if err != nil {
		return nil, err
	}
	defer releaseAll(arrs)
	rows := int(b.NumRows())
	if len(arrs) > 0 {
		rows = arrs[0].Len()
	}
	valid := validity(rows, arrs...)
	bld := array.NewBuilder(c.mem, n.t.Arrow())
	defer bld.Release()
	bld.Reserve(rows)
	var ss []string
	var ns []int32
	for i := 0; i < rows; i++ {
		if !ok(valid, i) {
			bld.AppendNull()
			continue
		}
		ss, ns = ss[:0], ns[:0]
		for k, a := range arrs {
			if n.kinds[k] == 's' {
				ss = append(ss, a.(*array.String).Value(i))
			} else {
				ns = append(ns, a.(*array.Int32).Value(i))
			}
		}
		if n.size != nil {
			if err := c.needMemory(n.name, n.size(ss, ns)); err != nil {
				return nil, err
			}
		}
		v, err := n.f(ss, ns)
		if err != nil {
			return nil, err
		}
		switch x := v.(type) {
		case string:
			bld.(*array.StringBuilder).Append(x)
		case int32:
			bld.(*array.Int32Builder).Append(x)
		case bool:
			bld.(*array.BooleanBuilder).Append(x)
		}
	}
	return bld.NewArray(), nil
}

// pgTypeofNode evaluates x and returns name for every row.
type pgTypeofNode struct{ x, name node }

func (n *pgTypeofNode) typ() sqltypes.Type { return sqltypes.TextType }

func (n *pgTypeofNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	arrs, err := evalAll(c, b, []node{n.x, n.name})
	if err != nil {
		return nil, err
	}
	defer releaseAll(arrs)
	names := arrs[1].(*array.String)
	bld := array.NewStringBuilder(c.mem)
	defer bld.Release()
	for i := 0; i < int(b.NumRows()); i++ {
		bld.Append(names.Value(min(i, names.Len()-1)))
	}
	return bld.NewArray(), nil
}

// pgReplace is replace(s, from, to): every occurrence of a non-empty from.
func pgReplace(s, from, to string) string {
	if from == "" {
		return s
	}
	return strings.ReplaceAll(s, from, to)
}

// strpos is the 1-based character position of sub in s, 0 when absent.
func strpos(s, sub string) int32 {
	i := strings.Index(s, sub)
	if i < 0 {
		return 0
	}
	return int32(utf8.RuneCountInString(s[:i]) + 1)
}

// charsPrefix returns the byte length of s's first n characters (all of
// s when it has fewer).
func charsPrefix(s string, n int) int {
	if n <= 0 {
		return 0
	}
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// leftChars is left(s, n): the first n characters; with n < 0 all but
// the last |n|.
func leftChars(s string, n int) string {
	if n < 0 {
		n = max(utf8.RuneCountInString(s)+n, 0)
	}
	return s[:charsPrefix(s, n)]
}

// rightChars is right(s, n): the last n characters; with n < 0 all but
// the first |n|.
func rightChars(s string, n int) string {
	l := utf8.RuneCountInString(s)
	if n < 0 {
		return s[charsPrefix(s, min(-n, l)):]
	}
	return s[charsPrefix(s, max(l-n, 0)):]
}

// pad is lpad/rpad(s, n [, fill]): s cut or filled to n characters (fill
// defaults to a space; an empty fill leaves a short s as it is).
func pad(args []string, n int, left bool) string {
	s := args[0]
	fill := " "
	if len(args) > 1 {
		fill = args[1]
	}
	if n <= 0 {
		return ""
	}
	l := utf8.RuneCountInString(s)
	if l >= n {
		return s[:charsPrefix(s, n)]
	}
	if fill == "" {
		return s
	}
	need := n - l
	fr := []rune(fill)
	var sb strings.Builder
	sb.Grow(int(padBytes(args, []int32{int32(n)})))
	for i := 0; i < need; i++ {
		sb.WriteRune(fr[i%len(fr)])
	}
	if left {
		return sb.String() + s
	}
	return s + sb.String()
}

// padBytes bounds the bytes of pad's result: s plus enough whole
// copies of fill to cover the characters missing.
func padBytes(args []string, n []int32) int64 {
	s, fill := args[0], " "
	if len(args) > 1 {
		fill = args[1]
	}
	need := int64(n[0]) - int64(utf8.RuneCountInString(s))
	if need <= 0 || fill == "" {
		return int64(len(s))
	}
	runes := int64(utf8.RuneCountInString(fill))
	return int64(len(s)) + (need+runes-1)/runes*int64(len(fill))
}

// splitPart is split_part(s, delim, n): the n-th field (from the end for
// n < 0), "" beyond the fields; n = 0 is an error.
func splitPart(s, delim string, n int) (string, error) {
	if n == 0 {
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "field position must not be zero")
	}
	var parts []string
	if delim == "" {
		parts = []string{s}
		if s == "" {
			parts = nil
		}
	} else {
		parts = strings.Split(s, delim)
	}
	if n < 0 {
		n = len(parts) + n + 1
		if n <= 0 {
			return "", nil
		}
	}
	if n > len(parts) {
		return "", nil
	}
	return parts[n-1], nil
}
