package functions

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// String functions. Strings compare and cut by characters (UTF-8), never
// by bytes; case mapping is Unicode's, as in a UTF8 database.

var (
	text = sqltypes.TextType
	i4   = sqltypes.Int4Type
)

// Lower is lower(text).
var Lower = register(&Def{
	Name: "lower", MinArgs: 1, MaxArgs: 1,
	Rule:     fixed(text, text),
	Prepare:  prepareIf(textMap(strings.ToLower), stringKind, stringKind),
	Examples: []Example{{"lower('ÀBc')", "àbc"}},
})

// Upper is upper(text).
var Upper = register(&Def{
	Name: "upper", MinArgs: 1, MaxArgs: 1,
	Rule:     fixed(text, text),
	Prepare:  prepareIf(textMap(strings.ToUpper), stringKind, stringKind),
	Examples: []Example{{"upper('àbc')", "ÀBC"}},
})

func textMap(f func(string) string) func([]expr.Expr, sqltypes.Type) Kernel {
	return func([]expr.Expr, sqltypes.Type) Kernel { return mapText(f) }
}

// mapText is the kernel of a strict text -> text function that cannot
// fail, as a direct loop (the hot string functions: case mapping,
// trimming blanks).
func mapText(f func(string) string) Kernel {
	return func(in Input) (arrow.Array, error) {
		x, err := in.Arg(0)
		if err != nil {
			return nil, err
		}
		defer x.Release()
		sa := x.(*array.String)
		bld := array.NewStringBuilder(in.Mem())
		defer bld.Release()
		bld.Reserve(sa.Len())
		bld.ReserveData(len(sa.ValueBytes()))
		for i := 0; i < sa.Len(); i++ {
			if sa.IsNull(i) {
				bld.AppendNull()
				continue
			}
			v := f(sa.Value(i))
			if err := growData(in, bld, len(v)); err != nil {
				return nil, err
			}
			bld.Append(v)
		}
		return bld.NewArray(), nil
	}
}

// Length is length(text) in characters (char_length, character_length).
var Length = register(&Def{
	Name: "length", Aliases: []string{"char_length", "character_length"}, MinArgs: 1, MaxArgs: 1,
	Rule: fixed(i4, text),
	Prepare: prepareIf(func([]expr.Expr, sqltypes.Type) Kernel {
		return func(in Input) (arrow.Array, error) {
			x, err := in.Arg(0)
			if err != nil {
				return nil, err
			}
			defer x.Release()
			sa := x.(*array.String)
			valid := vec.Validity(sa.Len(), sa)
			buf, out := vec.NewFixed[int32](in.Mem(), sa.Len())
			for i := range out {
				out[i] = 0
				if vec.Valid(valid, i) {
					out[i] = int32(utf8.RuneCountInString(sa.Value(i)))
				}
			}
			return vec.FinishFixed(in.Mem(), i4.Arrow(), sa.Len(), buf, valid), nil
		}
	}, sqltypes.Int4, stringKind),
	Examples: []Example{{"length('héllo')", "5"}, {"char_length('')", "0"}, {"character_length('ab')", "2"}},
})

// Substr is substr(s, start [, count]) (substring(s FROM start FOR
// count)): characters from the 1-based start; a start before 1 eats into
// the count; a negative count is 22011.
var Substr = register(&Def{
	Name: "substr", Aliases: []string{"substring"}, MinArgs: 2, MaxArgs: 3,
	Rule: fixed(text, text, i4),
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		switch {
		case !vec.IsStringKind(t.Kind):
		case kindsAre(args, stringKind, sqltypes.Int4), kindsAre(args, stringKind, sqltypes.Int4, sqltypes.Int4):
			return substrKernel(len(args)), nil
		}
		return nil, errTypes
	},
	Examples: []Example{{"substr('hello', 2, 3)", "ell"}, {"substring('hello', 0, 2)", "h"}, {"substr('hello', 4)", "lo"}},
})

func substrKernel(n int) Kernel {
	return func(in Input) (arrow.Array, error) {
		arrs, err := argsAll(in, n)
		if err != nil {
			return nil, err
		}
		defer vec.Release(arrs)
		rows := in.Rows()
		valid := vec.Validity(rows, arrs...)
		sa, starts := arrs[0].(*array.String), vec.Values[int32](arrs[1])
		var counts []int32
		if n == 3 {
			counts = vec.Values[int32](arrs[2])
		}
		bld := array.NewStringBuilder(in.Mem())
		defer bld.Release()
		bld.Reserve(rows)
		for i := 0; i < rows; i++ {
			if !vec.Valid(valid, i) {
				bld.AppendNull()
				continue
			}
			end := int64(math.MaxInt64)
			if counts != nil {
				if counts[i] < 0 {
					return nil, sqlerr.New("22011", "negative substring length not allowed")
				}
				end = int64(starts[i]) + int64(counts[i])
			}
			bld.Append(substr(sa.Value(i), int64(starts[i]), end))
		}
		return bld.NewArray(), nil
	}
}

// substr is s's characters from the 1-based start up to (not including)
// end.
func substr(s string, start, end int64) string {
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
		return ""
	}
	return s[from:to]
}

// Btrim is btrim(s [, chars]) (trim(s)): s without leading and trailing
// characters from chars (default a space).
var Btrim = register(&Def{
	Name: "btrim", Aliases: []string{"trim"}, MinArgs: 1, MaxArgs: 2,
	Rule:     fixed(text, text),
	Prepare:  prepareTrim(strings.Trim),
	Examples: []Example{{"btrim('  x  ')", "x"}, {"btrim('xxaxx', 'x')", "a"}, {"trim('  y ')", "y"}},
})

// Ltrim is ltrim(s [, chars]): without the leading ones.
var Ltrim = register(&Def{
	Name: "ltrim", MinArgs: 1, MaxArgs: 2,
	Rule:     fixed(text, text),
	Prepare:  prepareTrim(strings.TrimLeft),
	Examples: []Example{{"ltrim('xxaxx', 'x')", "axx"}},
})

// Rtrim is rtrim(s [, chars]): without the trailing ones.
var Rtrim = register(&Def{
	Name: "rtrim", MinArgs: 1, MaxArgs: 2,
	Rule:     fixed(text, text),
	Prepare:  prepareTrim(strings.TrimRight),
	Examples: []Example{{"rtrim('a  ')", "a"}},
})

func prepareTrim(trim func(s, cut string) string) func([]expr.Expr, sqltypes.Type) (Kernel, error) {
	return func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		switch {
		case !vec.IsStringKind(t.Kind):
		case kindsAre(args, stringKind):
			return mapText(func(s string) string { return trim(s, " ") }), nil
		case kindsAre(args, stringKind, stringKind):
			return strict2(t, func(s, cut string) (string, error) { return trim(s, cut), nil }), nil
		}
		return nil, errTypes
	}
}

// Concat is concat(a, ...): the arguments' text forms one after the other,
// NULLs skipped.
var Concat = register(&Def{
	Name: "concat", MinArgs: 1, MaxArgs: -1,
	Rule: func(b Binder, args []expr.Expr) ([]expr.Expr, sqltypes.Type, error) {
		for i := range args {
			var err error
			if args[i], err = b.ToText(args[i], i); err != nil {
				return nil, text, err
			}
		}
		return args, text, nil
	},
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if !vec.IsStringKind(t.Kind) {
			return nil, errTypes
		}
		ts := make([]sqltypes.Type, len(args))
		for i, a := range args {
			ts[i] = a.Type()
		}
		return ConcatKernel(ts, false), nil
	},
	Examples: []Example{{"concat('a', NULL, 1, true)", "a1t"}},
})

// ConcatKernel concatenates arguments of types ts into text: strict is
// the || operator (NULL in, NULL out), otherwise concat() (NULLs are
// skipped). Non-text arguments are written in their text form.
func ConcatKernel(ts []sqltypes.Type, strict bool) Kernel {
	return func(in Input) (arrow.Array, error) {
		arrs, err := argsAll(in, len(ts))
		if err != nil {
			return nil, err
		}
		defer vec.Release(arrs)
		rows := in.Rows()
		var valid []bool
		if strict {
			valid = vec.Validity(rows, arrs...)
		}
		bld := array.NewStringBuilder(in.Mem())
		defer bld.Release()
		bld.Reserve(rows)
		var buf []byte
		for i := 0; i < rows; i++ {
			if !vec.Valid(valid, i) {
				bld.AppendNull()
				continue
			}
			buf = buf[:0]
			for k, a := range arrs {
				if a.IsNull(i) {
					continue
				}
				if s, isStr := a.(*array.String); isStr {
					buf = append(buf, s.Value(i)...)
				} else {
					buf = sqltypes.EncodeText(buf, a, i, ts[k], in.Options())
				}
			}
			if err := growData(in, bld, len(buf)); err != nil {
				return nil, err
			}
			bld.BinaryBuilder.Append(buf)
		}
		return bld.NewArray(), nil
	}
}

// Replace is replace(s, from, to): every occurrence of a non-empty from.
var Replace = register(&Def{
	Name: "replace", MinArgs: 3, MaxArgs: 3,
	Rule: fixed(text, text),
	Prepare: prepareIf(func(_ []expr.Expr, t sqltypes.Type) Kernel {
		return strict3(t, func(s, from, to string) (string, error) {
			if from == "" {
				return s, nil
			}
			return strings.ReplaceAll(s, from, to), nil
		})
	}, stringKind, stringKind, stringKind, stringKind),
	Examples: []Example{{"replace('abcabc', 'b', 'XY')", "aXYcaXYc"}},
})

// Strpos is strpos(s, sub) (position(sub IN s)): the 1-based character
// position of sub in s, 0 when absent.
var Strpos = register(&Def{
	Name: "strpos", MinArgs: 2, MaxArgs: 2,
	Rule: fixed(i4, text),
	Prepare: prepareIf(func(_ []expr.Expr, t sqltypes.Type) Kernel {
		return strict2(t, func(s, sub string) (int32, error) {
			i := strings.Index(s, sub)
			if i < 0 {
				return 0, nil
			}
			return int32(utf8.RuneCountInString(s[:i]) + 1), nil
		})
	}, sqltypes.Int4, stringKind, stringKind),
	Examples: []Example{{"strpos('héllo', 'l')", "3"}, {"position('z' IN 'abc')", "0"}},
})

// Left is left(s, n): the first n characters; with n < 0 all but the
// last |n|.
var Left = register(&Def{
	Name: "left", MinArgs: 2, MaxArgs: 2,
	Rule: fixed(text, text, i4),
	Prepare: prepareIf(func(_ []expr.Expr, t sqltypes.Type) Kernel {
		return strict2(t, func(s string, n32 int32) (string, error) {
			n := int(n32)
			if n < 0 {
				n = max(utf8.RuneCountInString(s)+n, 0)
			}
			return s[:charsPrefix(s, n)], nil
		})
	}, stringKind, stringKind, sqltypes.Int4),
	Examples: []Example{{"left('héllo', 2)", "hé"}, {"left('hello', -2)", "hel"}},
})

// Right is right(s, n): the last n characters; with n < 0 all but the
// first |n|.
var Right = register(&Def{
	Name: "right", MinArgs: 2, MaxArgs: 2,
	Rule: fixed(text, text, i4),
	Prepare: prepareIf(func(_ []expr.Expr, t sqltypes.Type) Kernel {
		return strict2(t, func(s string, n32 int32) (string, error) {
			n, l := int(n32), utf8.RuneCountInString(s)
			if n < 0 {
				return s[charsPrefix(s, min(-n, l)):], nil
			}
			return s[charsPrefix(s, max(l-n, 0)):], nil
		})
	}, stringKind, stringKind, sqltypes.Int4),
	Examples: []Example{{"right('hello', 2)", "lo"}, {"right('hello', -2)", "llo"}},
})

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

// Lpad is lpad(s, n [, fill]): s cut or filled on the left to n
// characters (fill defaults to a space; an empty fill leaves a short s as
// it is).
var Lpad = register(&Def{
	Name: "lpad", MinArgs: 2, MaxArgs: 3,
	Rule:     fixed(text, text, i4, text),
	Prepare:  preparePad(true),
	Examples: []Example{{"lpad('7', 3, '0')", "007"}, {"lpad('hello', 2)", "he"}},
})

// Rpad is rpad(s, n [, fill]): filled on the right.
var Rpad = register(&Def{
	Name: "rpad", MinArgs: 2, MaxArgs: 3,
	Rule:     fixed(text, text, i4, text),
	Prepare:  preparePad(false),
	Examples: []Example{{"rpad('ab', 5, 'xy')", "abxyx"}},
})

func preparePad(left bool) func([]expr.Expr, sqltypes.Type) (Kernel, error) {
	name := "rpad"
	if left {
		name = "lpad"
	}
	// The result's size follows n, not the input's: ask the query's memory
	// account before building it (lpad('x', 1000000000) is 53200, not a
	// gigabyte).
	padded := func(in Input, s string, n int32, fill string) (string, error) {
		if err := need(in, name, padBytes(s, int(n), fill)); err != nil {
			return "", err
		}
		return pad(s, int(n), fill, left), nil
	}
	return func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		switch {
		case !vec.IsStringKind(t.Kind):
		case kindsAre(args, stringKind, sqltypes.Int4):
			return func(in Input) (arrow.Array, error) {
				return strict2(t, func(s string, n int32) (string, error) { return padded(in, s, n, " ") })(in)
			}, nil
		case kindsAre(args, stringKind, sqltypes.Int4, stringKind):
			return func(in Input) (arrow.Array, error) {
				return strict3(t, func(s string, n int32, fill string) (string, error) { return padded(in, s, n, fill) })(in)
			}, nil
		}
		return nil, errTypes
	}
}

// Repeat is repeat(s, n): s n times (empty for n <= 0). Like lpad, its size
// follows n, so the query's memory account is asked first; past
// PostgreSQL's 1 GB field limit it is 54000, as there.
var Repeat = register(&Def{
	Name: "repeat", MinArgs: 2, MaxArgs: 2,
	Rule: fixed(text, text, i4),
	Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if !vec.IsStringKind(t.Kind) || !kindsAre(args, stringKind, sqltypes.Int4) {
			return nil, errTypes
		}
		return func(in Input) (arrow.Array, error) {
			return strict2(t, func(s string, n int32) (string, error) {
				if n <= 0 || s == "" {
					return "", nil
				}
				size := int64(len(s)) * int64(n)
				if size+4 > maxFieldBytes { // 4: Postgres' varlena header
					return "", sqlerr.New(sqlerr.ProgramLimitExceeded, "requested length too large")
				}
				if err := need(in, "repeat", size); err != nil {
					return "", err
				}
				return strings.Repeat(s, int(n)), nil
			})(in)
		}, nil
	},
	Examples: []Example{{"repeat('ab', 3)", "ababab"}, {"repeat('x', -1)", ""}, {"repeat(NULL, 2)", "NULL"}},
})

// maxFieldBytes is PostgreSQL's MaxAllocSize, the largest value a field
// may hold (1 GB - 1).
const maxFieldBytes = 1<<30 - 1

// padBytes bounds the bytes of pad's result: s plus enough whole copies of
// fill to cover the characters missing.
func padBytes(s string, n int, fill string) int64 {
	need := int64(n) - int64(utf8.RuneCountInString(s))
	if need <= 0 || fill == "" {
		return int64(len(s))
	}
	runes := int64(utf8.RuneCountInString(fill))
	return int64(len(s)) + (need+runes-1)/runes*int64(len(fill))
}

func pad(s string, n int, fill string, left bool) string {
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
	sb.Grow(int(padBytes(s, n, fill)) - len(s))
	for i := 0; i < need; i++ {
		sb.WriteRune(fr[i%len(fr)])
	}
	if left {
		return sb.String() + s
	}
	return s + sb.String()
}

// SplitPart is split_part(s, delim, n): the n-th field (from the end for
// n < 0), "" beyond the fields; n = 0 is 22023.
var SplitPart = register(&Def{
	Name: "split_part", MinArgs: 3, MaxArgs: 3,
	Rule: fixed(text, text, text, i4),
	Prepare: prepareIf(func(_ []expr.Expr, t sqltypes.Type) Kernel {
		return strict3(t, splitPart)
	}, stringKind, stringKind, stringKind, sqltypes.Int4),
	Examples: []Example{{"split_part('a,b,c', ',', 2)", "b"}, {"split_part('a,b,c', ',', -1)", "c"}},
})

func splitPart(s, delim string, n32 int32) (string, error) {
	n := int(n32)
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

// StartsWith is starts_with(s, prefix).
var StartsWith = register(&Def{
	Name: "starts_with", MinArgs: 2, MaxArgs: 2,
	Rule: fixed(sqltypes.BoolType, text),
	Prepare: prepareIf(func(_ []expr.Expr, t sqltypes.Type) Kernel {
		return strict2(t, func(s, prefix string) (bool, error) { return strings.HasPrefix(s, prefix), nil })
	}, sqltypes.Bool, stringKind, stringKind),
	Examples: []Example{{"starts_with('alpha', 'al')", "t"}},
})
