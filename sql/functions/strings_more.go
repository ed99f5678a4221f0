package functions

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// ConcatWs is concat_ws(sep, a, ...): the non-NULL arguments' text forms
// joined by sep; a NULL sep gives NULL.
var ConcatWs = register(&Def{
	Name: "concat_ws", MinArgs: 2, MaxArgs: -1,
	Rule: textThenTextForms,
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		for _, a := range args {
			if !vec.IsStringKind(a.Type().Kind) {
				return nil, errTypes
			}
		}
		n := len(args)
		return func(in Input) (arrow.Array, error) {
			arrs, err := argsAll(in, n)
			if err != nil {
				return nil, err
			}
			defer vec.Release(arrs)
			strs := make([]*array.String, n)
			for i, a := range arrs {
				strs[i] = a.(*array.String)
			}
			bld := array.NewStringBuilder(in.Mem())
			defer bld.Release()
			bld.Reserve(in.Rows())
			var buf []byte
			for i := 0; i < in.Rows(); i++ {
				if strs[0].IsNull(i) {
					bld.AppendNull()
					continue
				}
				buf, first := buf[:0], true
				for _, s := range strs[1:] {
					if s.IsNull(i) {
						continue
					}
					if !first {
						buf = append(buf, strs[0].Value(i)...)
					}
					buf, first = append(buf, s.Value(i)...), false
				}
				bld.BinaryBuilder.Append(buf)
			}
			return bld.NewArray(), nil
		}, nil
	},
	Examples: []Example{{"concat_ws(',', 'a', NULL, 1, true)", "a,1,t"}, {"concat_ws('-', NULL)", ""}},
})

// textThenTextForms is the rule of concat_ws and format: a text first
// argument, then any arguments in their text forms.
func textThenTextForms(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
	var err error
	if args[0], err = b.Coerce(args[0], 0, text); err != nil {
		return nil, text, err
	}
	for i := 1; i < len(args); i++ {
		if args[i], err = b.ToText(args[i], i); err != nil {
			return nil, text, err
		}
	}
	return args, text, nil
}

// Initcap is initcap(text): the first letter of each run of letters and
// digits upper case, the rest lower case.
var Initcap = register(&Def{
	Name: "initcap", MinArgs: 1, MaxArgs: 1,
	Rule: fixed(text, text),
	Prepare: prepareIf(textMap(func(s string) string {
		var b strings.Builder
		b.Grow(len(s))
		inWord := false
		for _, r := range s {
			if inWord {
				b.WriteRune(unicode.ToLower(r))
			} else {
				b.WriteRune(unicode.ToTitle(r))
			}
			inWord = unicode.IsLetter(r) || unicode.IsDigit(r)
		}
		return b.String()
	}), stringKind, stringKind),
	Examples: []Example{{"initcap('hi THOMAS o''neil ab1cd')", "Hi Thomas O'Neil Ab1cd"}},
})

// reFlags is a Postgres regular-expression flags string: the Go prefix
// it maps to, and whether it asked for every match (g).
type reFlags struct {
	prefix string
	global bool
	quote  bool
}

// parseReFlags reads Postgres' flag letters. Without n/p/w, Postgres'
// '.' and bracket expressions match a newline, so the default is (?s).
func parseReFlags(f string, fn string, allowGlobal bool) (reFlags, error) {
	var r reFlags
	ci, dotNL, multi := false, true, false
	for _, c := range f {
		switch c {
		case 'g':
			if !allowGlobal {
				return r, sqlerr.New(sqlerr.InvalidParameterValue, "%s() does not support the \"global\" option", fn)
			}
			r.global = true
		case 'i':
			ci = true
		case 'c':
			ci = false
		case 'n', 'm':
			dotNL, multi = false, true
		case 'p':
			dotNL, multi = false, false
		case 'w':
			dotNL, multi = true, true
		case 's':
			dotNL, multi = true, false
		case 'q':
			r.quote = true
		case 't':
		case 'b', 'e', 'x':
			return r, sqlerr.New(sqlerr.FeatureNotSupported, "regular expression option \"%c\" is not supported", c)
		default:
			return r, sqlerr.New(sqlerr.InvalidParameterValue, "invalid regular expression option: \"%c\"", c)
		}
	}
	if ci {
		r.prefix += "i"
	}
	if dotNL {
		r.prefix += "s"
	}
	if multi {
		r.prefix += "m"
	}
	if r.prefix != "" {
		r.prefix = "(?" + r.prefix + ")"
	}
	return r, nil
}

// regexCache compiles Postgres regular expressions with flags, caching by
// pattern and flags (patterns are almost always constants).
type regexCache map[[2]string]*regexp.Regexp

func (c regexCache) get(p string, f reFlags) (*regexp.Regexp, error) {
	if f.quote {
		p = regexp.QuoteMeta(p)
	}
	key := [2]string{p, f.prefix}
	if re, ok := c[key]; ok {
		return re, nil
	}
	re, err := compileRegex(f.prefix+p, map[string]*regexp.Regexp{})
	if err != nil {
		return nil, err
	}
	if len(c) < 64 {
		c[key] = re
	}
	return re, nil
}

// charToByte is the byte offset of the 1-based character position pos in
// s (len(s) past its end).
func charToByte(s string, pos int64) int {
	i := 0
	for n := int64(1); n < pos && i < len(s); n++ {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return i
}

func errStart(name string, v int64) error {
	return sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"%s\": %d", name, v)
}

// regexArgs reads the optional arguments of the regexp_ functions: which
// of args (by index, -1 = absent) hold start, N, flags and subexpr.
type regexArgs struct{ start, n, flags, sub int }

func (ra regexArgs) intAt(v []any, i int, def int64) int64 {
	if i < 0 || i >= len(v) {
		return def
	}
	switch n := v[i].(type) {
	case int32:
		return int64(n)
	case int16:
		return int64(n)
	}
	return v[i].(int64)
}

func (ra regexArgs) flagsAt(v []any) string {
	if ra.flags < 0 || ra.flags >= len(v) {
		return ""
	}
	return v[ra.flags].(string)
}

// regexRule coerces s and pattern (and replacement, when withRepl) to
// text and the optional arguments, in the order names gives ("start",
// "n", "flags", "sub"), to int4 or text. When a text flags argument may
// sit where start would (regexp_replace's 4-argument form), an integer
// there is start.
func regexRule(fixedText int, names ...string) Rule {
	return func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		var err error
		for i := range args {
			want := text
			if i >= fixedText && names[i-fixedText] != "flags" {
				want = i4
			}
			if args[i], err = b.Coerce(args[i], i, want); err != nil {
				if args[i].Type().Kind == sqltypes.Unknown {
					return nil, text, err
				}
				return nil, text, b.NoMatch(args)
			}
		}
		return args, text, nil
	}
}

func layout(fixedText int, names []string, n int) regexArgs {
	ra := regexArgs{-1, -1, -1, -1}
	for i := fixedText; i < n; i++ {
		switch names[i-fixedText] {
		case "start":
			ra.start = i
		case "n":
			ra.n = i
		case "flags":
			ra.flags = i
		case "sub":
			ra.sub = i
		}
	}
	return ra
}

// RegexpReplace is regexp_replace(source, pattern, replacement [, flags])
// and regexp_replace(source, pattern, replacement, start [, N [, flags]]):
// the first match (every match with g or N = 0; the Nth with N) at or
// after the start character replaced; in the replacement \1..\9 are
// groups, \& the whole match, \\ a backslash.
var RegexpReplace = register(&Def{
	Name: "regexp_replace", MinArgs: 3, MaxArgs: 6,
	Rule: func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		return regexRule(3, replaceNames(args)...)(b, args)
	},
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		names := replaceNames(args)
		ra := layout(3, names, len(args))
		cache := regexCache{}
		return func(in Input) (arrow.Array, error) {
			return rowKernel(text, len(args), true, func(v []any) (any, error) {
				return regexpReplace(in, cache, ra, v)
			})(in)
		}, nil
	},
	Examples: []Example{
		{"regexp_replace('foobarbaz', 'b(..)', 'X\\1Y', 'g')", "fooXarYXazY"},
		{"regexp_replace('Thomas', '.[mN]a.', 'M')", "ThM"},
		{"regexp_replace('Thomas', '.', 'X', 3, 2)", "ThoXas"},
	},
})

// regexpReplace is one row of regexp_replace. The result can be far
// larger than the input (every match replaced by a long text), so the
// query's memory account is asked as it grows.
func regexpReplace(in Input, cache regexCache, ra regexArgs, v []any) (any, error) {
	f, err := parseReFlags(ra.flagsAt(v), "regexp_replace", true)
	if err != nil {
		return nil, err
	}
	start, nth := ra.intAt(v, ra.start, 1), ra.intAt(v, ra.n, 1)
	if start <= 0 {
		return nil, errStart("start", start)
	}
	if nth < 0 {
		return nil, errStart("n", nth)
	}
	if f.global || ra.n >= 0 && nth == 0 {
		nth = 0
	}
	re, err := f.compile(cache, v[1].(string))
	if err != nil {
		return nil, err
	}
	s, repl := v[0].(string), v[2].(string)
	from := charToByte(s, start)
	var out strings.Builder
	out.WriteString(s[:from])
	last, count, checked := from, int64(0), 2*len(s)+4096
	for _, m := range re.FindAllStringSubmatchIndex(s[from:], -1) {
		count++
		if nth != 0 && count != nth {
			continue
		}
		out.WriteString(s[last : from+m[0]])
		appendReplacement(&out, s[from:], m, repl)
		last = from + m[1]
		if nth != 0 {
			break
		}
		if out.Len() > checked {
			if err := need(in, "regexp_replace", int64(2*out.Len())); err != nil {
				return nil, err
			}
			checked = 2 * out.Len()
		}
	}
	out.WriteString(s[last:])
	return out.String(), nil
}

func (f reFlags) compile(c regexCache, p string) (*regexp.Regexp, error) { return c.get(p, f) }

// replaceNames is the optional arguments' layout of a regexp_replace
// call: a text fourth argument is flags, an integer one start.
func replaceNames(args []expr.Expr) []string {
	if len(args) == 4 {
		if k := args[3].Type().Kind; k == sqltypes.Unknown || vec.IsStringKind(k) {
			return []string{"flags"}
		}
	}
	return []string{"start", "n", "flags"}
}

// appendReplacement writes repl for the match m of s, Postgres' way.
func appendReplacement(out *strings.Builder, s string, m []int, repl string) {
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		if c != '\\' || i+1 >= len(repl) {
			out.WriteByte(c)
			continue
		}
		switch d := repl[i+1]; {
		case d >= '1' && d <= '9':
			if g := int(d - '0'); 2*g+1 < len(m) && m[2*g] >= 0 {
				out.WriteString(s[m[2*g]:m[2*g+1]])
			}
			i++
		case d == '&':
			out.WriteString(s[m[0]:m[1]])
			i++
		case d == '\\':
			out.WriteByte('\\')
			i++
		default:
			out.WriteByte('\\')
		}
	}
}

var likeNames = []string{"flags"}

// RegexpLike is regexp_like(string, pattern [, flags]).
var RegexpLike = register(&Def{
	Name: "regexp_like", MinArgs: 2, MaxArgs: 3,
	Rule: func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		args, _, err := regexRule(2, likeNames...)(b, args)
		return args, boolean, err
	},
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		ra := layout(2, likeNames, len(args))
		cache := regexCache{}
		return rowKernel(boolean, len(args), true, func(v []any) (any, error) {
			f, err := parseReFlags(ra.flagsAt(v), "regexp_like", false)
			if err != nil {
				return nil, err
			}
			re, err := f.compile(cache, v[1].(string))
			if err != nil {
				return nil, err
			}
			return re.MatchString(v[0].(string)), nil
		}), nil
	},
	Examples: []Example{{"regexp_like('Hello', 'h')", "f"}, {"regexp_like('Hello', 'h', 'i')", "t"}},
})

var countNames = []string{"start", "flags"}

// RegexpCount is regexp_count(string, pattern [, start [, flags]]): the
// number of non-overlapping matches at or after the start character.
var RegexpCount = register(&Def{
	Name: "regexp_count", MinArgs: 2, MaxArgs: 4,
	Rule: func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		args, _, err := regexRule(2, countNames...)(b, args)
		return args, i4, err
	},
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		ra := layout(2, countNames, len(args))
		cache := regexCache{}
		return rowKernel(i4, len(args), true, func(v []any) (any, error) {
			f, err := parseReFlags(ra.flagsAt(v), "regexp_count", false)
			if err != nil {
				return nil, err
			}
			start := ra.intAt(v, ra.start, 1)
			if start <= 0 {
				return nil, errStart("start", start)
			}
			re, err := f.compile(cache, v[1].(string))
			if err != nil {
				return nil, err
			}
			s := v[0].(string)
			return int64(len(re.FindAllStringIndex(s[charToByte(s, start):], -1))), nil
		}), nil
	},
	Examples: []Example{{"regexp_count('ABCABCAXYaxy', 'A.')", "3"}, {"regexp_count('ABCABCAXYaxy', 'A.', 1, 'i')", "4"}},
})

var substrNames = []string{"start", "n", "flags", "sub"}

// RegexpSubstr is regexp_substr(string, pattern [, start [, N [, flags [,
// subexpr]]]]): the Nth match at or after start (or its subexpr-th
// group), NULL when there is none.
var RegexpSubstr = register(&Def{
	Name: "regexp_substr", MinArgs: 2, MaxArgs: 6,
	Rule: regexRule(2, substrNames...),
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		ra := layout(2, substrNames, len(args))
		cache := regexCache{}
		return rowKernel(text, len(args), true, func(v []any) (any, error) {
			f, err := parseReFlags(ra.flagsAt(v), "regexp_substr", false)
			if err != nil {
				return nil, err
			}
			start, nth, sub := ra.intAt(v, ra.start, 1), ra.intAt(v, ra.n, 1), ra.intAt(v, ra.sub, 0)
			switch {
			case start <= 0:
				return nil, errStart("start", start)
			case nth <= 0:
				return nil, errStart("n", nth)
			case sub < 0:
				return nil, errStart("subexpr", sub)
			}
			re, err := f.compile(cache, v[1].(string))
			if err != nil {
				return nil, err
			}
			s := v[0].(string)
			s = s[charToByte(s, start):]
			ms := re.FindAllStringSubmatchIndex(s, int(min(nth, 1<<30)))
			if int64(len(ms)) < nth {
				return nil, nil
			}
			m := ms[nth-1]
			if 2*sub+1 >= int64(len(m)) || m[2*sub] < 0 {
				return nil, nil
			}
			return s[m[2*sub]:m[2*sub+1]], nil
		}), nil
	},
	Examples: []Example{{"regexp_substr('number of your street, town zip, FR', '[^,]+', 1, 2)", " town zip"}, {"regexp_substr('ABCABC', 'A(B)(C)', 1, 2, '', 1)", "B"}},
})

// pgReservedWords are the keywords Postgres 15 does not take as bare
// identifiers (pg_get_keywords() with catcode <> 'U'): quote_ident and
// format's %I quote them.
var pgReservedWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric authorization
		between bigint binary bit boolean both case cast char character check coalesce collate collation
		column concurrently constraint create cross current_catalog current_date current_role
		current_schema current_time current_timestamp current_user dec decimal default deferrable desc
		distinct do else end except exists extract false fetch float for foreign freeze from full grant
		greatest group grouping having ilike in initially inner inout int integer intersect interval into
		is isnull join lateral leading least left like limit localtime localtimestamp national natural
		nchar none normalize not notnull null nullif numeric offset on only or order out outer overlaps
		overlay placing position precision primary real references returning right row select
		session_user setof similar smallint some substring symmetric table tablesample then time
		timestamp to trailing treat trim true union unique user using values varchar variadic verbose
		when where window with xmlattributes xmlconcat xmlelement xmlexists xmlforest xmlnamespaces
		xmlparse xmlpi xmlroot xmlserialize xmltable`) {
		m[w] = true
	}
	return m
}()

// QuoteIdent is Postgres' quote_ident: s double-quoted when it is not a
// plain lower-case identifier or is a reserved word.
func QuoteIdent(s string) string {
	plain := s != "" && !pgReservedWords[s]
	for i, c := range s {
		if !(c >= 'a' && c <= 'z' || c == '_' || i > 0 && (c >= '0' && c <= '9' || c == '$')) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// QuoteLiteral is Postgres' quote_literal: single-quoted, quotes doubled,
// and an E” literal with doubled backslashes when s has a backslash.
func QuoteLiteral(s string) string {
	q := "'" + strings.ReplaceAll(s, "'", "''") + "'"
	if strings.Contains(s, `\`) {
		return "E" + strings.ReplaceAll(q, `\`, `\\`)
	}
	return q
}

var quoteIdentDef = register(&Def{
	Name: "quote_ident", MinArgs: 1, MaxArgs: 1,
	Rule:     fixed(text, text),
	Prepare:  prepareIf(textMap(QuoteIdent), stringKind, stringKind),
	Examples: []Example{{"quote_ident('Foo bar')", `"Foo bar"`}, {"quote_ident('select')", `"select"`}, {"quote_ident('abc')", "abc"}},
})

var quoteLiteralDef = register(&Def{
	Name: "quote_literal", MinArgs: 1, MaxArgs: 1,
	Rule: func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		var err error
		args[0], err = b.ToText(args[0], 0)
		return args, text, err
	},
	Prepare:  prepareIf(textMap(QuoteLiteral), stringKind, stringKind),
	Examples: []Example{{`quote_literal(E'O\'Re\\illy')`, `E'O''Re\\illy'`}, {"quote_literal(42)", "'42'"}},
})

var quoteNullableDef = register(&Def{
	Name: "quote_nullable", MinArgs: 1, MaxArgs: 1,
	Rule: quoteLiteralDef.Rule,
	Prepare: prepareIf(func([]expr.Expr, sqltypes.Type) Kernel {
		return rowKernel(text, 1, false, func(v []any) (any, error) {
			if v[0] == nil {
				return "NULL", nil
			}
			return QuoteLiteral(v[0].(string)), nil
		})
	}, stringKind, stringKind),
	Examples: []Example{{"quote_nullable(NULL)", "NULL"}, {"quote_nullable('x')", "'x'"}},
})

// Format is format(fmt, args...): %s (text form, NULL as empty), %I
// (quote_ident; NULL is 22004), %L (quote_literal, NULL as NULL) and %%,
// each with an optional argument position n$, the - flag and a width
// (a number, * or *n$), as Postgres' format() reads them.
var Format = register(&Def{
	Name: "format", MinArgs: 1, MaxArgs: -1,
	Rule: textThenTextForms,
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		for _, a := range args {
			if !vec.IsStringKind(a.Type().Kind) {
				return nil, errTypes
			}
		}
		return func(in Input) (arrow.Array, error) {
			return rowKernel(text, len(args), false, func(v []any) (any, error) {
				if v[0] == nil {
					return nil, nil
				}
				return formatText(in, v[0].(string), v[1:])
			})(in)
		}, nil
	},
	Examples: []Example{
		{"format('Hello %s, %1$s %I %L', 'World', 'Foo Bar', NULL)", `Hello World, World "Foo Bar" NULL`},
		{"format('|%10s|%-10s|%*s|', 'a', 'b', 5, 'c')", "|         a|b         |    c|"},
	},
})

func formatText(in Input, f string, args []any) (string, error) {
	errf := func(format string, a ...any) *sqlerr.Error {
		return sqlerr.New(sqlerr.InvalidParameterValue, format, a...)
	}
	var tooFew error = errf("too few arguments for format()")
	var out strings.Builder
	next := 0 // the next argument a specifier without n$ takes
	// number reads digits at f[i:]; ok is false when there are none.
	number := func(i int) (int, int, bool, error) {
		j := i
		for j < len(f) && f[j] >= '0' && f[j] <= '9' {
			j++
		}
		if j == i {
			return 0, i, false, nil
		}
		n, err := strconv.Atoi(f[i:j])
		if err != nil || n > 1<<30 {
			return 0, j, true, errf("number is out of range")
		}
		return n, j, true, nil
	}
	argAt := func(n int) (any, error) {
		if n < 0 || n >= len(args) {
			return nil, tooFew
		}
		return args[n], nil
	}
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			out.WriteByte(f[i])
			continue
		}
		i++
		if i >= len(f) {
			return "", errf("unterminated format() type specifier").WithHint(`For a single "%%" use "%%%%".`)
		}
		if f[i] == '%' {
			out.WriteByte('%')
			continue
		}
		// [n$][-][width | * | *n$]type
		pos := -1
		if n, j, ok, err := number(i); err != nil {
			return "", err
		} else if ok && j < len(f) && f[j] == '$' {
			if n == 0 {
				return "", errf("format specifies argument 0, but arguments are numbered from 1")
			}
			pos, i = n-1, j+1
		}
		left := false
		for i < len(f) && f[i] == '-' {
			left, i = true, i+1
		}
		width := 0
		if i < len(f) && f[i] == '*' {
			i++
			wpos := next
			if n, j, ok, err := number(i); err != nil {
				return "", err
			} else if ok {
				if j >= len(f) || f[j] != '$' {
					return "", errf("unterminated format() type specifier").WithHint(`For a single "%%" use "%%%%".`)
				}
				if n == 0 {
					return "", errf("format specifies argument 0, but arguments are numbered from 1")
				}
				wpos, i = n-1, j+1
			}
			w, err := argAt(wpos)
			if err != nil {
				return "", err
			}
			next = wpos + 1
			if w != nil {
				n, err := strconv.Atoi(strings.TrimSpace(w.(string)))
				if err != nil {
					return "", sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type integer: \"%s\"", w)
				}
				if n < 0 {
					left, n = true, -n
				}
				width = n
			}
		} else if n, j, err := numberOnly(number, i); err != nil {
			return "", err
		} else {
			width, i = n, j
		}
		if i >= len(f) {
			return "", errf("unterminated format() type specifier").WithHint(`For a single "%%" use "%%%%".`)
		}
		if pos < 0 {
			pos = next
		}
		typ := f[i]
		if typ != 's' && typ != 'I' && typ != 'L' {
			r, _ := utf8.DecodeRuneInString(f[i:])
			return "", errf("unrecognized format() type specifier \"%c\"", r).WithHint(`For a single "%%" use "%%%%".`)
		}
		v, err := argAt(pos)
		if err != nil {
			return "", err
		}
		next = pos + 1
		var s string
		switch {
		case typ == 's' && v != nil:
			s = v.(string)
		case typ == 'I' && v == nil:
			return "", sqlerr.New("22004", "null values cannot be formatted as an SQL identifier")
		case typ == 'I':
			s = QuoteIdent(v.(string))
		case typ == 'L' && v == nil:
			s = "NULL"
		case typ == 'L':
			s = QuoteLiteral(v.(string))
		}
		pad := width - utf8.RuneCountInString(s)
		if pad > 4096 {
			// A width is the one way a short call builds a huge value.
			if err := need(in, "format", int64(out.Len()+len(s)+pad)); err != nil {
				return "", err
			}
		}
		if !left && pad > 0 {
			out.WriteString(strings.Repeat(" ", pad))
		}
		out.WriteString(s)
		if left && pad > 0 {
			out.WriteString(strings.Repeat(" ", pad))
		}
	}
	return out.String(), nil
}

// numberOnly reads an optional width of digits at f[i:].
func numberOnly(number func(int) (int, int, bool, error), i int) (int, int, error) {
	n, j, _, err := number(i)
	return n, j, err
}

var matchNames = []string{"flags"}

// RegexpMatch is regexp_match(string, pattern [, flags]): the first
// match as a text[] of its capture groups (an unmatched group NULL), or
// of the whole match when the pattern has none; NULL when nothing
// matches.
var RegexpMatch = register(&Def{
	Name: "regexp_match", MinArgs: 2, MaxArgs: 3,
	Rule: func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		args, _, err := regexRule(2, matchNames...)(b, args)
		return args, textArray, err
	},
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if t != textArray {
			return nil, errTypes
		}
		ra := layout(2, matchNames, len(args))
		cache := regexCache{}
		k := len(args)
		return func(in Input) (arrow.Array, error) {
			arrs, err := argsAll(in, k)
			if err != nil {
				return nil, err
			}
			defer vec.Release(arrs)
			bld := array.NewListBuilder(in.Mem(), arrow.BinaryTypes.String)
			defer bld.Release()
			vals := make([]any, k)
			for i := 0; i < in.Rows(); i++ {
				null := false
				for j, a := range arrs {
					vals[j] = vec.Value(a, i)
					null = null || vals[j] == nil
				}
				if null {
					bld.AppendNull()
					continue
				}
				f, err := parseReFlags(ra.flagsAt(vals), "regexp_match", true)
				if err != nil {
					return nil, err
				}
				if f.global {
					return nil, sqlerr.New(sqlerr.InvalidParameterValue, "regexp_match() does not support the \"global\" option").
						WithHint("Use the regexp_matches function instead.")
				}
				ms, err := regexpMatches(cache, f, vals[0].(string), vals[1].(string), 1)
				if err != nil {
					return nil, err
				}
				if len(ms) == 0 {
					bld.AppendNull()
					continue
				}
				if err := growData(in, bld.ValueBuilder().(*array.StringBuilder), len(vals[0].(string))); err != nil {
					return nil, err
				}
				vec.AppendValue(bld, ms[0])
			}
			return bld.NewArray(), nil
		}, nil
	},
	Examples: []Example{
		{"regexp_match('foobarbequebaz', '(bar)(beque)')", "{bar,beque}"},
		{"regexp_match('abc', '(x)?b')", "{NULL}"},
		{"regexp_match('aBc', 'b', 'i')", "{B}"},
		{"regexp_match('abc', 'x')", "NULL"},
	},
})

// RegexpMatches is regexp_matches(string, pattern [, flags]) as a
// function in FROM (the planner's Unnest runs it once, its arguments
// being constant): one text[] per match, as regexp_match gives it,
// every match with the g flag, else at most one.
func RegexpMatches(s, pattern, flags string) ([]any, error) {
	f, err := parseReFlags(flags, "regexp_matches", true)
	if err != nil {
		return nil, err
	}
	limit := 1
	if f.global {
		limit = -1
	}
	return regexpMatches(regexCache{}, f, s, pattern, limit)
}

// regexpMatches is at most limit (-1: every) matches of pattern in s,
// each a []any of the capture groups' texts (nil for a group that did
// not take part), or of the whole match when there are no groups.
func regexpMatches(cache regexCache, f reFlags, s, pattern string, limit int) ([]any, error) {
	re, err := f.compile(cache, pattern)
	if err != nil {
		return nil, err
	}
	var out []any
	for _, m := range re.FindAllStringSubmatchIndex(s, limit) {
		if len(m) == 2 {
			out = append(out, []any{s[m[0]:m[1]]})
			continue
		}
		row := make([]any, 0, len(m)/2-1)
		for g := 1; 2*g < len(m); g++ {
			if m[2*g] < 0 {
				row = append(row, nil)
			} else {
				row = append(row, s[m[2*g]:m[2*g+1]])
			}
		}
		out = append(out, row)
	}
	return out, nil
}
