// Package pgjson reads and writes JSON text as PostgreSQL 15's json and
// jsonb types do: Parse validates with Postgres' error details, Value.JSONB
// prints the jsonb normal form (keys ordered by length then bytes,
// duplicate keys last-wins, numbers as numeric prints them, `{"a": 1, "b":
// [1, 2]}` spacing), and a parsed value keeps the exact source text of
// every sub-value, which is what json's operators return.
//
//	v, err := pgjson.Parse(`{"b":1, "a" : [1,2]}`)
//	v.JSONB()          // {"a": [1, 2], "b": 1}
//	v.Field("a").Raw   // [1,2]
package pgjson

import (
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Kind is a JSON value's type.
type Kind uint8

// The JSON kinds.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Value is a parsed JSON value.
type Value struct {
	Kind Kind
	// Raw is the value's exact source text (no surrounding space).
	Raw string
	// Str is a String's decoded text, a Number's or Bool's source text.
	Str string
	// Items are an Array's elements or an Object's member values, in
	// source order; Keys an Object's member names (duplicates kept).
	Items []Value
	Keys  []string
}

// Error is a JSON input error: Detail is Postgres' DETAIL line, Unicode
// marks the \u0000 error (22P05 rather than 22P02).
type Error struct {
	Detail  string
	Unicode bool
}

func (e *Error) Error() string { return e.Detail }

type parser struct {
	s     string
	pos   int
	jsonb bool
	depth int
}

// maxDepth bounds nesting, as Postgres' stack depth check does.
const maxDepth = 6400

// Parse parses s as json; ParseJSONB as jsonb, which also refuses \u0000.
func Parse(s string) (Value, error) { return parse(s, false) }

// ParseJSONB parses s as jsonb input.
func ParseJSONB(s string) (Value, error) { return parse(s, true) }

func parse(s string, jsonb bool) (Value, error) {
	p := &parser{s: s, jsonb: jsonb}
	p.space()
	v, err := p.value()
	if err != nil {
		return Value{}, err
	}
	p.space()
	if p.pos < len(s) {
		return Value{}, &Error{Detail: fmt.Sprintf("Expected end of input, but found \"%s\".", p.token())}
	}
	return v, nil
}

func (p *parser) space() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t' || p.s[p.pos] == '\n' || p.s[p.pos] == '\r') {
		p.pos++
	}
}

// token is the token at pos as Postgres names it in errors.
func (p *parser) token() string {
	if p.pos >= len(p.s) {
		return ""
	}
	c := p.s[p.pos]
	if strings.IndexByte("{}[],:", c) >= 0 {
		return string(c)
	}
	if c == '"' {
		end := p.pos + 1
		for end < len(p.s) && p.s[end] != '"' {
			if p.s[end] == '\\' {
				end++
			}
			end++
		}
		return p.s[p.pos:min(end+1, len(p.s))]
	}
	end := p.pos
	for end < len(p.s) && !strings.ContainsRune(" \t\n\r{}[],:\"", rune(p.s[end])) {
		end++
	}
	if end == p.pos {
		_, n := utf8.DecodeRuneInString(p.s[p.pos:])
		end += n
	}
	return p.s[p.pos:end]
}

func (p *parser) eof() error { return &Error{Detail: "The input string ended unexpectedly."} }

func (p *parser) value() (Value, error) {
	if p.pos >= len(p.s) {
		return Value{}, p.eof()
	}
	start := p.pos
	switch c := p.s[p.pos]; {
	case c == '{' || c == '[':
		if p.depth++; p.depth > maxDepth {
			return Value{}, &Error{Detail: "JSON nesting is too deep."}
		}
		defer func() { p.depth-- }()
		if c == '{' {
			return p.object(start)
		}
		return p.array(start)
	case c == '"':
		str, err := p.str()
		if err != nil {
			return Value{}, err
		}
		return Value{Kind: String, Raw: p.s[start:p.pos], Str: str}, nil
	}
	tok := p.token()
	switch {
	case tok == "true" || tok == "false":
		p.pos += len(tok)
		return Value{Kind: Bool, Raw: tok, Str: tok}, nil
	case tok == "null":
		p.pos += len(tok)
		return Value{Kind: Null, Raw: tok}, nil
	case validNumber(tok):
		p.pos += len(tok)
		return Value{Kind: Number, Raw: tok, Str: tok}, nil
	case tok == "":
		return Value{}, p.eof()
	case len(tok) == 1 && strings.Contains("}],:", tok):
		return Value{}, &Error{Detail: fmt.Sprintf("Expected JSON value, but found \"%s\".", tok)}
	}
	return Value{}, &Error{Detail: fmt.Sprintf("Token \"%s\" is invalid.", tok)}
}

// validNumber is JSON's number grammar.
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

func (p *parser) str() (string, error) {
	p.pos++ // opening quote
	var b strings.Builder
	for {
		if p.pos >= len(p.s) {
			return "", p.eof()
		}
		c := p.s[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c < 0x20:
			return "", &Error{Detail: fmt.Sprintf("Character with value 0x%02x must be escaped.", c)}
		case c != '\\':
			b.WriteByte(c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.s) {
			return "", p.eof()
		}
		e := p.s[p.pos+1]
		p.pos += 2
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, err := p.hex4()
			if err != nil {
				return "", err
			}
			if r >= 0xd800 && r <= 0xdbff {
				if !strings.HasPrefix(p.s[p.pos:], `\u`) {
					return "", &Error{Detail: "Unicode low surrogate must follow a high surrogate."}
				}
				p.pos += 2
				lo, err := p.hex4()
				if err != nil {
					return "", err
				}
				if lo < 0xdc00 || lo > 0xdfff {
					return "", &Error{Detail: "Unicode low surrogate must follow a high surrogate."}
				}
				r = 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00)
			} else if r >= 0xdc00 && r <= 0xdfff {
				return "", &Error{Detail: "Unicode low surrogate must follow a high surrogate."}
			}
			if r == 0 {
				if p.jsonb {
					return "", &Error{Detail: `\u0000 cannot be converted to text.`, Unicode: true}
				}
				b.WriteString(`\u0000`)
				continue
			}
			b.WriteRune(r)
		default:
			_, n := utf8.DecodeRuneInString(p.s[p.pos-1:])
			return "", &Error{Detail: fmt.Sprintf(`Escape sequence "\%s" is invalid.`, p.s[p.pos-1:p.pos-1+n])}
		}
	}
}

func (p *parser) hex4() (rune, error) {
	if p.pos+4 > len(p.s) {
		return 0, &Error{Detail: `"\u" must be followed by four hexadecimal digits.`}
	}
	n, err := strconv.ParseUint(p.s[p.pos:p.pos+4], 16, 32)
	if err != nil {
		return 0, &Error{Detail: `"\u" must be followed by four hexadecimal digits.`}
	}
	p.pos += 4
	return rune(n), nil
}

func (p *parser) array(start int) (Value, error) {
	v := Value{Kind: Array}
	p.pos++
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == ']' {
		p.pos++
		v.Raw = p.s[start:p.pos]
		return v, nil
	}
	for {
		p.space()
		it, err := p.value()
		if err != nil {
			return Value{}, err
		}
		v.Items = append(v.Items, it)
		p.space()
		if p.pos >= len(p.s) {
			return Value{}, p.eof()
		}
		switch p.s[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			v.Raw = p.s[start:p.pos]
			return v, nil
		default:
			return Value{}, &Error{Detail: fmt.Sprintf("Expected \",\" or \"]\", but found \"%s\".", p.token())}
		}
	}
}

func (p *parser) object(start int) (Value, error) {
	v := Value{Kind: Object}
	p.pos++
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == '}' {
		p.pos++
		v.Raw = p.s[start:p.pos]
		return v, nil
	}
	for {
		p.space()
		if p.pos >= len(p.s) {
			return Value{}, p.eof()
		}
		if p.s[p.pos] != '"' {
			return Value{}, &Error{Detail: fmt.Sprintf("Expected string, but found \"%s\".", p.token())}
		}
		k, err := p.str()
		if err != nil {
			return Value{}, err
		}
		p.space()
		if p.pos >= len(p.s) {
			return Value{}, p.eof()
		}
		if p.s[p.pos] != ':' {
			return Value{}, &Error{Detail: fmt.Sprintf("Expected \":\", but found \"%s\".", p.token())}
		}
		p.pos++
		p.space()
		it, err := p.value()
		if err != nil {
			return Value{}, err
		}
		v.Keys, v.Items = append(v.Keys, k), append(v.Items, it)
		p.space()
		if p.pos >= len(p.s) {
			return Value{}, p.eof()
		}
		switch p.s[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			v.Raw = p.s[start:p.pos]
			return v, nil
		default:
			return Value{}, &Error{Detail: fmt.Sprintf("Expected \",\" or \"}\", but found \"%s\".", p.token())}
		}
	}
}

// Field is an object's member named k (the last of that name), ok false
// when v is no object or has none.
func (v Value) Field(k string) (Value, bool) {
	if v.Kind != Object {
		return Value{}, false
	}
	for i := len(v.Keys) - 1; i >= 0; i-- {
		if v.Keys[i] == k {
			return v.Items[i], true
		}
	}
	return Value{}, false
}

// Index is an array's element i, counted from the end when negative.
func (v Value) Index(i int) (Value, bool) {
	if v.Kind != Array {
		return Value{}, false
	}
	if i < 0 {
		i += len(v.Items)
	}
	if i < 0 || i >= len(v.Items) {
		return Value{}, false
	}
	return v.Items[i], true
}

// Text is ->>'s result: a string's decoded text, else the value's text;
// ok is false for JSON null (SQL NULL). jsonb selects the jsonb form.
func (v Value) Text(jsonb bool) (string, bool) {
	switch v.Kind {
	case Null:
		return "", false
	case String:
		return v.Str, true
	}
	if jsonb {
		return v.JSONB(), true
	}
	return v.Raw, true
}

// JSONB is v's jsonb normal form.
func (v Value) JSONB() string { return string(v.AppendJSONB(nil)) }

// AppendJSONB appends v's jsonb normal form.
func (v Value) AppendJSONB(b []byte) []byte {
	switch v.Kind {
	case Null:
		return append(b, "null"...)
	case Bool:
		return append(b, v.Str...)
	case Number:
		return append(b, NormalNumber(v.Str)...)
	case String:
		return AppendString(b, v.Str)
	case Array:
		b = append(b, '[')
		for i, it := range v.Items {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = it.AppendJSONB(b)
		}
		return append(b, ']')
	}
	// Object: last duplicate wins, keys by length then bytes.
	idx := make([]int, 0, len(v.Keys))
	last := make(map[string]int, len(v.Keys))
	for i, k := range v.Keys {
		if j, ok := last[k]; ok {
			idx[j] = i
			continue
		}
		last[k] = len(idx)
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, c int) bool {
		ka, kc := v.Keys[idx[a]], v.Keys[idx[c]]
		if len(ka) != len(kc) {
			return len(ka) < len(kc)
		}
		return ka < kc
	})
	b = append(b, '{')
	for n, i := range idx {
		if n > 0 {
			b = append(b, ", "...)
		}
		b = AppendString(b, v.Keys[i])
		b = append(b, ": "...)
		b = v.Items[i].AppendJSONB(b)
	}
	return append(b, '}')
}

// NormalNumber is a JSON number as Postgres' numeric prints it (1e2 is
// 100, 1.50 stays 1.50, -0 is 0).
func NormalNumber(s string) string {
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.Atoi(s[i+1:])
		if err != nil {
			return s
		}
		exp = e
	}
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	frac := 0
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		frac = len(mant) - i - 1
		mant = mant[:i] + mant[i+1:]
	}
	if exp == 0 && !neg {
		return s // already numeric's form
	}
	scale := max(0, frac-exp)
	// value = mant * 10^(exp-frac); printed with scale digits.
	n, ok := new(big.Int).SetString(mant, 10)
	if !ok || exp > 100000 || exp < -100000 {
		return s
	}
	shift := exp - frac + scale // >= 0
	n.Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(shift)), nil))
	digits := n.String()
	if n.Sign() == 0 {
		neg = false
	}
	if scale > 0 {
		if len(digits) <= scale {
			digits = strings.Repeat("0", scale-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if neg {
		digits = "-" + digits
	}
	return digits
}

// AppendString appends s as a JSON string, escaped as Postgres'
// escape_json does.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			b = append(b, `\"`...)
		case '\\':
			b = append(b, `\\`...)
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		default:
			if c < 0x20 {
				b = fmt.Appendf(b, `\u%04x`, c)
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}
