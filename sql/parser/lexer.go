package parser

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/asofsql/asofsql/sql/limits"
	"github.com/asofsql/asofsql/sqlerr"
)

// tokKind classifies a Postgres token.
type tokKind uint8

const (
	tkIdent  tokKind = iota + 1 // unquoted identifier or keyword; val is ASCII-lowercased
	tkQIdent                    // "quoted identifier"; val is the unescaped name
	tkString                    // '...', E'...', $tag$...$tag$; val is the decoded value
	tkNumber                    // numeric literal; val is its text
	tkParam                     // $n; num is n
	tkOp                        // operator or punctuation; val is its text
)

// token is one lexeme of the original text. start/end are byte offsets into
// the whole input, so positions never need translating inside the lexer.
type token struct {
	kind       tokKind
	start, end int
	val        string
	num        int
	// pair is the offset to the partner of a bracket token: from "(" to
	// its ")" and back, likewise "[" "]" and CASE END; 0 when unmatched
	// or not a bracket. up is the offset to the innermost "(" enclosing
	// the token (negative), 0 at the top level. Both are relative so they
	// stay right in any sub-slice holding both tokens (see nest).
	pair, up int32
}

// is reports whether t is the unquoted keyword kw (lowercase).
func (t token) is(kw string) bool { return t.kind == tkIdent && t.val == kw }

// isOp reports whether t is the operator or punctuation op.
func (t token) isOp(op string) bool { return t.kind == tkOp && t.val == op }

// lexer turns Postgres SQL into tokens following PostgreSQL's scan.l rules
// (standard_conforming_strings on). Comments are dropped: the rewriter
// re-emits the gaps between tokens as blanks, so offsets stay put.
type lexer struct {
	src  string
	pos  int
	toks []token
	tick *limits.Ticker
	// stmtStart is the index of the current statement's first token, for
	// the MaxTokens check.
	stmtStart int
	// The operator run last scanned (see operator): [opStart, opEnd),
	// with the last index of one of ~!@#%^&|`? in it (opSpecial) and of a
	// character other than + and - (opPlain), -1 when none.
	opStart, opEnd, opSpecial, opPlain int
}

// allowedOps is the set of operators asofsql understands. Everything else a
// Postgres lexer would accept as an operator is refused here, because the
// TiDB grammar gives many of them a different meaning (`#`
// starts a comment, `&&` is AND, `<=>` is null-safe equality that we use as
// a marker, `?` is a parameter).
var allowedOps = map[string]bool{
	"+": true, "-": true, "*": true, "/": true, "%": true,
	"<": true, ">": true, "=": true, "<=": true, ">=": true, "<>": true, "!=": true,
	"||": true, "&": true, "|": true, "<<": true, ">>": true,
	"^":  true,              // TiDB parses it as XOR with Postgres' precedence; the planner binds it as power
	"=>": true,              // named arguments only (pgPass.namedArg); anywhere else a syntax error
	"->": true, "->>": true, // json operators (MarkerJSONGet)
}

// opChars are Postgres' operator characters (scan.l "self" and "op_chars").
const opChars = "~!@#^&|`?+-*/%<>="

// posError builds a 42601 error positioned at byte offset off of src.
func posError(src string, off int, code, format string, args ...any) *sqlerr.Error {
	return sqlerr.New(code, format, args...).WithPosition(charPos(src, off))
}

// runeIndex converts byte offsets of one input into 1-based character
// positions without counting from the start each time (the planner asks
// for the position of every column reference it resolves).
type runeIndex struct {
	src   string
	ascii bool
	// marks[k] is a rune start at or just below k*runeBlock and the
	// number of runes before it.
	marks []runeMark
}

type runeMark struct{ off, runes int }

const runeBlock = 4096

func newRuneIndex(src string) *runeIndex {
	r := &runeIndex{src: src, ascii: true}
	for i := 0; i < len(src); i++ {
		if src[i] >= utf8.RuneSelf {
			r.ascii = false
			break
		}
	}
	if r.ascii {
		return r
	}
	prev, runes := 0, 0
	for b := 0; b < len(src); b += runeBlock {
		off := b
		for off > prev && !utf8.RuneStart(src[off]) {
			off--
		}
		runes += utf8.RuneCountInString(src[prev:off])
		r.marks = append(r.marks, runeMark{off, runes})
		prev = off
	}
	return r
}

// pos is charPos(r.src, off).
func (r *runeIndex) pos(off int) int {
	off = min(max(off, 0), len(r.src))
	if r.ascii {
		return off + 1
	}
	m := r.marks[min(off/runeBlock, len(r.marks)-1)]
	return m.runes + utf8.RuneCountInString(r.src[m.off:off]) + 1
}

// charPos converts a byte offset into a 1-based character position.
func charPos(src string, off int) int {
	if off > len(src) {
		off = len(src)
	}
	if off < 0 {
		off = 0
	}
	return utf8.RuneCountInString(src[:off]) + 1
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func isIdentCont(c byte) bool {
	return isIdentStart(c) || (c >= '0' && c <= '9') || c == '$'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// lex tokenizes src. It fails with a positioned sqlerr error on
// unterminated strings and comments, invalid escapes and characters the
// engine refuses.
func lex(src string) ([]token, error) { return lexAll(nil, src) }

// lexAll is lex observing tick's context; it also refuses statements of
// more than limits.MaxTokens tokens (54000) and pairs brackets (nest).
func lexAll(tick *limits.Ticker, src string) ([]token, error) {
	l := &lexer{src: src, tick: tick, opEnd: -1}
	for {
		if err := l.skipSpace(); err != nil {
			return nil, err
		}
		if l.pos >= len(src) {
			nest(l.toks)
			return l.toks, nil
		}
		if err := l.next(); err != nil {
			return nil, err
		}
		if err := l.tick.Tick(); err != nil {
			return nil, err
		}
		if n := len(l.toks); l.toks[n-1].isOp(";") {
			l.stmtStart = n
		} else if n-l.stmtStart > limits.MaxTokens {
			return nil, limits.TooManyTokens(n - l.stmtStart).WithPosition(charPos(src, l.toks[l.stmtStart].start))
		}
	}
}

// firstToken lexes only the first token of src (ok false when there is
// none or it does not lex).
func firstToken(src string) (token, bool) {
	l := &lexer{src: src, opEnd: -1}
	if l.skipSpace() != nil || l.pos >= len(src) || l.next() != nil || len(l.toks) == 0 {
		return token{}, false
	}
	return l.toks[0], true
}

// nest fills pair and up of every token with one stack per bracket kind,
// so the passes find a partner or the enclosing "(" in constant time
// instead of scanning (which made deeply nested input quadratic). Pairs
// never cross a ";": statements are split there.
func nest(toks []token) {
	var parens, brackets, cases []int
	for i := range toks {
		t := &toks[i]
		if len(parens) > 0 {
			t.up = int32(parens[len(parens)-1] - i)
		}
		switch {
		case t.isOp(";"):
			parens, brackets, cases = parens[:0], brackets[:0], cases[:0]
		case t.isOp("("):
			parens = append(parens, i)
		case t.isOp("["):
			brackets = append(brackets, i)
		case t.is("case"):
			cases = append(cases, i)
		case t.isOp(")"):
			pairLast(toks, &parens, i)
		case t.isOp("]"):
			pairLast(toks, &brackets, i)
		case t.is("end"):
			pairLast(toks, &cases, i)
		}
	}
}

func pairLast(toks []token, open *[]int, i int) {
	if n := len(*open); n > 0 {
		o := (*open)[n-1]
		*open = (*open)[:n-1]
		toks[o].pair, toks[i].pair = int32(i-o), int32(o-i)
	}
}

// partner returns the index of toks[i]'s bracket partner within toks, or
// -1 when it has none there.
func partner(toks []token, i int) int {
	if d := toks[i].pair; d != 0 {
		if k := i + int(d); k >= 0 && k < len(toks) {
			return k
		}
	}
	return -1
}

// enclosing returns the index of the innermost "(" around toks[i] within
// toks, or -1.
func enclosing(toks []token, i int) int {
	if d := toks[i].up; d != 0 {
		if k := i + int(d); k >= 0 {
			return k
		}
	}
	return -1
}

func (l *lexer) skipSpace() error {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case isSpace(c):
			l.pos++
		case c == '-' && strings.HasPrefix(l.src[l.pos:], "--"):
			for l.pos < len(l.src) && l.src[l.pos] != '\n' && l.src[l.pos] != '\r' {
				l.pos++
			}
		case c == '/' && strings.HasPrefix(l.src[l.pos:], "/*"):
			start := l.pos
			depth := 0
			for {
				if l.pos >= len(l.src) {
					return posError(l.src, start, sqlerr.SyntaxError, "unterminated /* comment at or near %q", trunc(l.src[start:]))
				}
				if strings.HasPrefix(l.src[l.pos:], "/*") {
					depth++
					l.pos += 2
				} else if strings.HasPrefix(l.src[l.pos:], "*/") {
					depth--
					l.pos += 2
					if depth == 0 {
						break
					}
				} else {
					l.pos++
				}
			}
		default:
			return nil
		}
	}
	return nil
}

// trunc shortens text quoted in error messages.
func trunc(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}

func (l *lexer) emit(k tokKind, start int, val string) {
	l.toks = append(l.toks, token{kind: k, start: start, end: l.pos, val: val})
}

func (l *lexer) next() error {
	src, start := l.src, l.pos
	c := src[start]
	switch {
	case c == '\'':
		return l.quoted(start, start, false)
	case (c == 'e' || c == 'E') && start+1 < len(src) && src[start+1] == '\'':
		return l.quoted(start, start+1, true)
	case (c == 'n' || c == 'N') && start+1 < len(src) && src[start+1] == '\'':
		// National character literal: same as a plain string in Postgres.
		return l.quoted(start, start+1, false)
	case (c == 'b' || c == 'B' || c == 'x' || c == 'X') && start+1 < len(src) && src[start+1] == '\'':
		return posError(src, start, sqlerr.FeatureNotSupported, "bit-string literals are not supported")
	case (c == 'u' || c == 'U') && start+2 < len(src) && src[start+1] == '&' && (src[start+2] == '\'' || src[start+2] == '"'):
		return posError(src, start, sqlerr.FeatureNotSupported, "Unicode escape literals (U&) are not supported")
	case c == '"':
		return l.quotedIdent(start)
	case c == '$':
		return l.dollar(start)
	case isDigit(c) || (c == '.' && start+1 < len(src) && isDigit(src[start+1])):
		return l.number(start)
	case isIdentStart(c):
		for l.pos < len(src) && isIdentCont(src[l.pos]) {
			l.pos++
		}
		word := src[start:l.pos]
		if !utf8.ValidString(word) {
			return posError(src, start, codeCharNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
		}
		l.emit(tkIdent, start, asciiLower(word))
		return nil
	case c == ':':
		if strings.HasPrefix(src[start:], "::") {
			l.pos += 2
			l.emit(tkOp, start, "::")
			return nil
		}
		if strings.HasPrefix(src[start:], ":=") {
			// The old spelling of a named argument's "=>"; anywhere else
			// the rewrite pass makes it a syntax error.
			l.pos += 2
			l.emit(tkOp, start, ":=")
			return nil
		}
		return posError(src, start, sqlerr.FeatureNotSupported, "array slices and psql variables (:) are not supported")
	case c == '(' || c == ')' || c == ',' || c == ';' || c == '.' || c == '[' || c == ']':
		l.pos++
		l.emit(tkOp, start, string(c))
		return nil
	case strings.IndexByte(opChars, c) >= 0:
		return l.operator(start)
	}
	r, size := utf8.DecodeRuneInString(src[start:])
	if r == utf8.RuneError && size <= 1 {
		return posError(src, start, codeCharNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
	}
	return posError(src, start, sqlerr.SyntaxError, "syntax error at or near %q", string(r))
}

// operator lexes a run of operator characters the way scan.l does: the run
// stops before a comment start, and a multi-character operator may not end
// in + or - unless it contains one of ~!@#%^&|`? (so "a=-1" is "=" "-").
//
// A run is scanned once: a long run such as +-+-+- yields one-character
// operators, and rescanning the rest of the run for each would be
// quadratic. Every suffix of a run ends where the run ends (a comment
// start ends it at the same place), so the scan is kept for the next call.
func (l *lexer) operator(start int) error {
	src := l.src
	if start < l.opStart || start >= l.opEnd {
		end, special, plain := start, -1, -1
		for end < len(src) && strings.IndexByte(opChars, src[end]) >= 0 {
			if end > start && (strings.HasPrefix(src[end:], "--") || strings.HasPrefix(src[end:], "/*")) {
				break
			}
			if strings.IndexByte("~!@#%^&|`?", src[end]) >= 0 {
				special = end
			}
			if src[end] != '+' && src[end] != '-' {
				plain = end
			}
			end++
		}
		l.opStart, l.opEnd, l.opSpecial, l.opPlain = start, end, special, plain
	}
	op := src[start:l.opEnd]
	if len(op) > 1 && l.opSpecial < start {
		// No special character: trailing + and - are not part of it.
		op = op[:max(1, l.opPlain+1-start)]
	}
	if op == "`" || strings.Contains(op, "`") {
		return posError(src, start, sqlerr.SyntaxError, "syntax error at or near \"`\"")
	}
	if !allowedOps[op] {
		if op == "?" {
			return posError(src, start, sqlerr.SyntaxError, "syntax error at or near \"?\"").
				WithHint("Parameters are written $1, $2, ...")
		}
		return posError(src, start, sqlerr.FeatureNotSupported, "operator %s is not supported", op)
	}
	l.pos = start + len(op)
	l.emit(tkOp, start, op)
	return nil
}

// quoted lexes '...' starting at the quote q (start includes a prefix
// letter). escapes selects E” backslash processing.
func (l *lexer) quoted(start, q int, escapes bool) error {
	src := l.src
	var b strings.Builder
	i := q + 1
	for {
		if i >= len(src) {
			return posError(src, start, sqlerr.SyntaxError, "unterminated quoted string at or near %q", trunc(src[start:]))
		}
		c := src[i]
		switch {
		case c == '\'':
			if i+1 < len(src) && src[i+1] == '\'' {
				b.WriteByte('\'')
				i += 2
				continue
			}
			l.pos = i + 1
			val := b.String()
			if !utf8.ValidString(val) {
				return posError(src, start, codeCharNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
			}
			l.emit(tkString, start, val)
			return nil
		case c == '\\' && escapes:
			n, err := unescape(src, i, &b)
			if err != nil {
				return err
			}
			i += n
		default:
			b.WriteByte(c)
			i++
		}
	}
}

// unescape decodes one backslash escape of an E” string at src[i] into b
// and returns how many bytes it used.
func unescape(src string, i int, b *strings.Builder) (int, error) {
	if i+1 >= len(src) {
		return 1, nil // the caller reports the unterminated string
	}
	c := src[i+1]
	simple := map[byte]byte{'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}
	if r, ok := simple[c]; ok {
		b.WriteByte(r)
		return 2, nil
	}
	hexval := func(c byte) int {
		switch {
		case c >= '0' && c <= '9':
			return int(c - '0')
		case c >= 'a' && c <= 'f':
			return int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			return int(c-'A') + 10
		}
		return -1
	}
	switch {
	case c >= '0' && c <= '7':
		v, n := 0, 1
		for n <= 3 && i+n < len(src) && src[i+n] >= '0' && src[i+n] <= '7' {
			v = v*8 + int(src[i+n]-'0')
			n++
		}
		if v == 0 || v > 255 {
			return 0, posError(src, i, sqlerr.InvalidParameterValue, "invalid octal escape in string literal")
		}
		b.WriteByte(byte(v))
		return n, nil
	case c == 'x':
		v, n := 0, 2
		for n <= 3 && i+n < len(src) && hexval(src[i+n]) >= 0 {
			v = v*16 + hexval(src[i+n])
			n++
		}
		if n == 2 {
			b.WriteByte('x') // Postgres: "\x" without digits is just x
			return 2, nil
		}
		if v == 0 {
			return 0, posError(src, i, codeCharNotInRepertoire, "invalid byte sequence for encoding \"UTF8\": 0x00")
		}
		b.WriteByte(byte(v))
		return n, nil
	case c == 'u' || c == 'U':
		digits := 4
		if c == 'U' {
			digits = 8
		}
		if i+2+digits > len(src) {
			return 0, posError(src, i, sqlerr.InvalidParameterValue, "invalid Unicode escape")
		}
		v := 0
		for k := 0; k < digits; k++ {
			h := hexval(src[i+2+k])
			if h < 0 {
				return 0, posError(src, i, sqlerr.InvalidParameterValue, "invalid Unicode escape")
			}
			v = v*16 + h
		}
		if v == 0 || v > utf8.MaxRune || (v >= 0xD800 && v <= 0xDFFF) {
			return 0, posError(src, i, sqlerr.InvalidParameterValue, "invalid Unicode escape value")
		}
		b.WriteRune(rune(v))
		return 2 + digits, nil
	}
	// Any other escaped character stands for itself ('\\', '\'', ...).
	r, size := utf8.DecodeRuneInString(src[i+1:])
	if r == utf8.RuneError && size <= 1 {
		b.WriteByte(src[i+1])
		return 2, nil
	}
	b.WriteString(src[i+1 : i+1+size])
	return 1 + size, nil
}

func (l *lexer) quotedIdent(start int) error {
	src := l.src
	var b strings.Builder
	i := start + 1
	for {
		if i >= len(src) {
			return posError(src, start, sqlerr.SyntaxError, "unterminated quoted identifier at or near %q", trunc(src[start:]))
		}
		if src[i] == '"' {
			if i+1 < len(src) && src[i+1] == '"' {
				b.WriteByte('"')
				i += 2
				continue
			}
			break
		}
		b.WriteByte(src[i])
		i++
	}
	l.pos = i + 1
	name := b.String()
	switch {
	case name == "":
		return posError(src, start, sqlerr.SyntaxError, "zero-length delimited identifier at or near \"\"\"\"")
	case !utf8.ValidString(name):
		return posError(src, start, codeCharNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
	case strings.HasPrefix(name, markerPrefix) || strings.ContainsAny(name, "`\x00"):
		// Names starting with "#" are how the rewriter marks its own
		// functions; refusing them keeps the markers unforgeable.
		return posError(src, start, codeInvalidName, "identifier %q is reserved: names starting with %q are used internally", name, markerPrefix)
	}
	l.emit(tkQIdent, start, name)
	return nil
}

// dollar lexes $n parameters and $tag$...$tag$ strings.
func (l *lexer) dollar(start int) error {
	src := l.src
	i := start + 1
	if i < len(src) && isDigit(src[i]) {
		n := 0
		for i < len(src) && isDigit(src[i]) {
			if n < 1<<20 {
				n = n*10 + int(src[i]-'0')
			}
			i++
		}
		if i < len(src) && isIdentCont(src[i]) {
			return posError(src, start, sqlerr.SyntaxError, "trailing junk after parameter at or near %q", trunc(src[start:i+1]))
		}
		if n < 1 || n > maxParams {
			return posError(src, start, codeUndefinedParameter, "there is no parameter $%d", n)
		}
		l.pos = i
		l.toks = append(l.toks, token{kind: tkParam, start: start, end: i, val: src[start:i], num: n})
		return nil
	}
	for i < len(src) && src[i] != '$' && isIdentCont(src[i]) {
		i++
	}
	if i >= len(src) || src[i] != '$' || (i > start+1 && isDigit(src[start+1])) {
		return posError(src, start, sqlerr.SyntaxError, "syntax error at or near \"$\"")
	}
	tag := src[start : i+1]
	body := i + 1
	end := strings.Index(src[body:], tag)
	if end < 0 {
		return posError(src, start, sqlerr.SyntaxError, "unterminated dollar-quoted string at or near %q", trunc(src[start:]))
	}
	val := src[body : body+end]
	if !utf8.ValidString(val) {
		return posError(src, start, codeCharNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
	}
	l.pos = body + end + len(tag)
	l.emit(tkString, start, val)
	return nil
}

// number lexes an integer or decimal literal with optional exponent.
// Trailing identifier characters are an error, as in PostgreSQL 15+
// ("123abc", "0x1F", "1_000").
func (l *lexer) number(start int) error {
	src := l.src
	i := start
	for i < len(src) && isDigit(src[i]) {
		i++
	}
	if i < len(src) && src[i] == '.' && !(i+1 < len(src) && src[i+1] == '.') {
		i++
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		j := i + 1
		if j < len(src) && (src[j] == '+' || src[j] == '-') {
			j++
		}
		if j < len(src) && isDigit(src[j]) {
			for j < len(src) && isDigit(src[j]) {
				j++
			}
			i = j
		} else {
			return posError(src, start, sqlerr.SyntaxError, "trailing junk after numeric literal at or near %q", trunc(src[start:j]))
		}
	}
	if i < len(src) && isIdentCont(src[i]) {
		return posError(src, start, sqlerr.SyntaxError, "trailing junk after numeric literal at or near %q", trunc(src[start:i+1]))
	}
	// TiDB's literal driver holds at most 81 decimal digits (and panics
	// beyond); asofsql's widest numeric is 38 digits, so refuse early.
	digits := 0
	for k := start; k < i && src[k] != 'e' && src[k] != 'E'; k++ {
		if isDigit(src[k]) {
			digits++
		}
	}
	if _, err := strconv.ParseFloat(src[start:i], 64); err != nil && strings.ContainsAny(src[start:i], "eE") {
		return posError(src, start, sqlerr.NumericValueOutOfRange, "\"%s\" is out of range for type double precision", trunc(src[start:i]))
	}
	if digits > maxLiteralDigits {
		return posError(src, start, sqlerr.NumericValueOutOfRange, "numeric literal %s has more than %d digits", trunc(src[start:i]), maxLiteralDigits)
	}
	l.pos = i
	l.emit(tkNumber, start, src[start:i])
	return nil
}

// asciiLower folds A-Z only, as Postgres does for identifiers in UTF8.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// SQLSTATEs this package needs that sqlerr does not name (PostgreSQL
// errcodes.txt spelling).
const (
	codeCharNotInRepertoire = "22021"
	codeInvalidName         = "42602"
	codeUndefinedParameter  = "42P02"
)

// maxLiteralDigits bounds the digits of a numeric literal.
const maxLiteralDigits = 72

// maxParams is the largest $n accepted (the wire protocol's int16 count).
const maxParams = 65535

// markerPrefix starts the name of every marker function the rewriter plants.
const markerPrefix = "#"
