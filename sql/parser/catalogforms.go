package parser

import (
	"strings"

	"github.com/asofsql/asofsql/sqlerr"
)

// Postgres forms psql's catalog queries use: regular-expression matches,
// OPERATOR(pg_catalog.op), no-op COLLATE clauses, OID alias casts and
// op ANY (array). pgPass.run calls these.

func init() {
	// Regular-expression match; the pre-pass writes them as [NOT] REGEXP.
	allowedOps["~"] = true
	allowedOps["!~"] = true
	allowedOps["~*"] = true
	allowedOps["!~*"] = true
	// LIKE and ILIKE as operators (postgres_fdw deparses them so).
	for op := range likeOps {
		allowedOps[op] = true
	}
}

// likeOps are the operator spellings of [NOT] LIKE and [NOT] ILIKE.
var likeOps = map[string]string{"~~": " LIKE ", "!~~": " NOT LIKE ", "~~*": " ILIKE ", "!~~*": " NOT ILIKE "}

// MarkerAny is the function name the planner sees for the array in
// `x op ANY (array)` (and SOME): the comparison's right operand is the call
// `#any`(array). Users cannot write it.
const MarkerAny = "#any"

func isCompareOp(t token) bool {
	switch t.val {
	case "=", "<>", "!=", "<", ">", "<=", ">=":
		return t.kind == tkOp
	}
	return false
}

// MarkerAll is MarkerAny for `x op ALL (array)`.
const MarkerAll = "#all"

// MarkerArrayCtor is the function name the planner sees for the
// constructor ARRAY[a, b, ...]: a call with the elements as arguments.
const MarkerArrayCtor = "#arrayctor"

// MarkerArray is the function name the planner sees for ARRAY(subquery):
// a call whose one argument is the subquery. Users cannot write it.
const MarkerArray = "#array"

// isArraySubquery reports whether toks[i] starts ARRAY(SELECT|WITH|VALUES ...).
func isArraySubquery(toks []token, i int) bool {
	return toks[i].is("array") && i+2 < len(toks) && toks[i+1].isOp("(") &&
		(toks[i+2].is("select") || toks[i+2].is("with") || toks[i+2].is("values"))
}

// MarkerArrayCast is the function name the planner sees for x::type[]:
// a call with the operand and the element type's name as a string.
const MarkerArrayCast = "#arraycast"

// MarkerSeries is the function name the planner sees for
// generate_series(...) [AS] alias in FROM, which the pre-pass writes as
// the derived table (SELECT `#generate_series`(...) AS alias) alias.
const MarkerSeries = "#generate_series"

// fromItemStart reports whether toks[i] (a function name, maybe after
// schema.) starts a FROM item: it follows a clause-level FROM, a JOIN, or
// a comma of a FROM list.
func (p *pgPass) fromItemStart(i int) bool {
	toks := p.toks
	k := i - 1
	if k >= 1 && toks[k].isOp(".") && (toks[k-1].kind == tkIdent || toks[k-1].kind == tkQIdent) {
		k -= 2
	}
	if k < 0 {
		return false
	}
	switch {
	case toks[k].is("join"), k == p.dmlFrom:
		return true
	case toks[k].is("from"):
		return p.clauseFrom(k)
	case toks[k].isOp(","):
		return p.inFromClause(k)
	}
	return false
}

// clauseFrom reports whether the FROM at toks[k] is a query's FROM clause
// (not the FROM inside EXTRACT(... FROM ...) or SUBSTRING, TRIM, ...):
// walking back, its SELECT comes before any unclosed parenthesis.
//
// Both walks skip parenthesized groups whole and remember their answers
// by the token they started from (p.fromMemo), reusing them when a later
// walk reaches that token: linear time for any number of FROM items.
func (p *pgPass) clauseFrom(k int) bool {
	if r, ok := p.fromMemo[k]; ok {
		return r
	}
	if k == p.dmlFrom {
		return true
	}
	toks, res := p.toks, false
	if k >= 2 && toks[k-1].is("distinct") && (toks[k-2].is("is") || k >= 3 && toks[k-2].is("not") && toks[k-3].is("is")) {
		return false // a IS [NOT] DISTINCT FROM b
	}
walk:
	for j := k - 1; j >= 0; j-- {
		switch t := toks[j]; {
		case t.isOp(")"):
			if j = partner(toks, j); j < 0 {
				break walk
			}
		case t.isOp("("):
			break walk
		case t.is("select") || t.is("delete") || t.is("copy"):
			res = true
			break walk
		case t.is("from"):
			if r, ok := p.fromMemo[j]; ok {
				res = r
				break walk
			}
		}
	}
	p.memoFrom(res, k)
	return res
}

// inFromClause reports whether the comma at toks[c] separates items of a
// FROM list at its level.
func (p *pgPass) inFromClause(c int) bool {
	toks := p.toks
	if r, ok := p.fromMemo[c]; ok {
		return r
	}
	res, seen := false, []int{c}
walk:
	for k := c - 1; k >= 0; k-- {
		t := toks[k]
		switch {
		case t.isOp(")"):
			if k = partner(toks, k); k < 0 {
				break walk
			}
		case t.isOp("("):
			break walk
		case t.isOp(","):
			if r, ok := p.fromMemo[k]; ok {
				res = r
				break walk
			}
			seen = append(seen, k)
		case t.kind != tkIdent:
		case t.is("join"):
			res = true
			break walk
		case t.is("from"):
			res = p.clauseFrom(k)
			break walk
		case fromClauseEnds[t.val]:
			break walk
		}
	}
	// Every comma passed on the way has the same answer.
	p.memoFrom(res, seen...)
	return res
}

func (p *pgPass) memoFrom(res bool, at ...int) {
	if p.fromMemo == nil {
		p.fromMemo = map[int]bool{}
	}
	for _, k := range at {
		p.fromMemo[k] = res
	}
}

var fromClauseEnds = map[string]bool{"select": true, "where": true, "group": true, "having": true,
	"order": true, "limit": true, "offset": true, "values": true, "set": true, "returning": true, "window": true}

// notAlias are the words after a FROM item that start the next clause.
var notAlias = map[string]bool{"where": true, "join": true, "on": true, "left": true, "right": true, "inner": true,
	"cross": true, "full": true, "natural": true, "group": true, "having": true, "order": true, "limit": true,
	"offset": true, "union": true, "intersect": true, "except": true, "window": true, "asof": true, "using": true,
	"fetch": true, "for": true}

// seriesInFrom rewrites generate_series(args) [[AS] alias] at toks[i] to
// (SELECT `#generate_series`(args) AS alias) alias (marker names the
// function: MarkerSeries, MarkerUnnest or MarkerRegexpMatches); it returns the index
// to go on from (its arguments are rewritten as usual).
func (p *pgPass) seriesInFrom(i int, marker string) (int, error) {
	toks, e := p.toks, p.e
	start := i
	if i >= 2 && toks[i-1].isOp(".") && toks[i-2].is("pg_catalog") {
		start = i - 2
		e.drop(i - 2)
		e.drop(i - 1)
	}
	k := matchParen(toks, i+1)
	if k < 0 {
		return i, syntaxErrAt(p.src, toks, len(toks))
	}
	alias, aliasText, last := toks[i].val, "", k
	switch {
	case k+2 < len(toks) && toks[k+1].is("as") && (toks[k+2].kind == tkIdent || toks[k+2].kind == tkQIdent):
		alias, last = toks[k+2].val, k+2
	case k+1 < len(toks) && (toks[k+1].kind == tkIdent && !notAlias[toks[k+1].val] || toks[k+1].kind == tkQIdent):
		alias, last = toks[k+1].val, k+1
	default:
		aliasText = " " + toks[i].val
	}
	column := alias
	if last+1 < len(toks) && toks[last+1].isOp("(") && aliasText == "" {
		// f(...) AS g(c): the table is g, its one column c.
		m := matchParen(toks, last+1)
		if m < 0 {
			return i, syntaxErrAt(p.src, toks, len(toks))
		}
		if m != last+3 || toks[last+2].kind != tkIdent && toks[last+2].kind != tkQIdent {
			n := 1
			for d := last + 2; d < m; d++ {
				if toks[d].isOp(",") {
					n++
				}
			}
			return i, posError(p.src, toks[last+1].start, "42P10", "table \"%s\" has 1 columns available but %d columns specified", alias, n)
		}
		column = toks[last+2].val
		for d := last + 1; d <= m; d++ {
			e.drop(d)
		}
	}
	e.prepend(start, "(SELECT ")
	e.replace(i, "`"+marker+"`")
	e.appendAfter(k, " AS "+quoteIdent(column)+")"+aliasText)
	return i, nil // the arguments are rewritten as usual
}

// MarkerUnnest is MarkerSeries' counterpart for unnest(array) in FROM.
const MarkerUnnest = "#unnest"

// MarkerRegexpMatches is MarkerSeries' counterpart for regexp_matches in
// FROM.
const MarkerRegexpMatches = "#regexp_matches"

// MarkerSubscript is the function name the planner sees for x[i].
const MarkerSubscript = "#subscript"

// typeWords is the text of a type name's tokens [i, end).
func typeWords(toks []token, i, end int) string {
	var parts []string
	for k := i; k < end; k++ {
		parts = append(parts, toks[k].val)
	}
	return strings.ReplaceAll(strings.Join(parts, " "), " . ", ".")
}

// closingBracket returns the index of the ] matching the [ at toks[i], or
// -1 (also for a slice, whose : asofsql does not support).
//
// The lexer refuses ":" outright, so a bracket pair is never a slice here.
func closingBracket(toks []token, i int) int {
	if !toks[i].isOp("[") {
		return -1
	}
	return partner(toks, i)
}

// MarkerRegCast is the function name the planner sees for x::regclass,
// x::regtype, x::regnamespace, x::regrole and x::oid: a call with the
// operand and the type name as a string literal. Users cannot write it.
const MarkerRegCast = "#regcast"

// oidAliasTypes are the OID alias types (and oid itself) casts accept.
var oidAliasTypes = map[string]bool{"regclass": true, "regtype": true, "regnamespace": true, "regrole": true, "oid": true}

// oidAliasType reads an OID alias type name ([pg_catalog.]regclass, ...)
// at toks[i]: its name and the index just past it.
func oidAliasType(toks []token, i int) (string, int, bool) {
	if i+2 < len(toks) && toks[i].is("pg_catalog") && toks[i+1].isOp(".") {
		i += 2
	}
	if i < len(toks) && toks[i].kind == tkIdent && oidAliasTypes[toks[i].val] && !(i+1 < len(toks) && toks[i+1].isOp("[")) {
		return toks[i].val, i + 1, true
	}
	return "", 0, false
}

// regexOp rewrites the match operator at toks[i] (~ or !~; others are
// left alone) whose left operand ends at toks[prev] into TiDB's [NOT]
// REGEXP, which the planner binds as textregexeq/textregexne; and the
// case-insensitive ~* and !~* into the same with '(?i)' || before the
// pattern; and the LIKE operators ~~, !~~, ~~* and !~~* into [NOT] [I]LIKE, as written. REGEXP binds
// like LIKE, a little looser than Postgres' ~: parenthesize ~ inside
// comparisons. A prefix ~ (bitwise NOT) is not supported.
func (p *pgPass) regexOp(i, prev int) error {
	t := p.toks[i]
	like, isLike := likeOps[t.val]
	if !t.isOp("~") && !t.isOp("!~") && !t.isOp("~*") && !t.isOp("!~*") && !(isLike && t.kind == tkOp) {
		return nil
	}
	if prev < 0 || !endsOperand(p.toks[prev]) {
		return posError(p.src, t.start, sqlerr.FeatureNotSupported, "operator %s is not supported", t.val)
	}
	if isLike {
		p.e.replace(i, like)
		return nil
	}
	switch t.val {
	case "~":
		p.e.replace(i, " REGEXP ")
	case "!~":
		p.e.replace(i, " NOT REGEXP ")
	case "~*":
		// Case-insensitive: the pattern with Postgres' embedded option
		// (?i) in front, which is what ~* means. TiDB's || (concatenation
		// here) binds tighter than REGEXP, as ~* binds the pattern.
		p.e.replace(i, " REGEXP '(?i)' || ")
	case "!~*":
		p.e.replace(i, " NOT REGEXP '(?i)' || ")
	}
	return nil
}

// endsOperand reports whether t can end the left operand of a binary
// operator.
func endsOperand(t token) bool {
	switch t.kind {
	case tkIdent:
		return !notFunctionNames[t.val] || t.val == "null"
	case tkOp:
		return t.isOp(")") || t.isOp("]")
	}
	return true
}

// operatorName reads OPERATOR([schema.]op) at toks[i] and returns the
// index of op; the clause ends at op+1. Only pg_catalog may qualify it.
func operatorName(toks []token, i int) (int, bool) {
	k := i + 2
	if k+1 < len(toks) && toks[k].kind == tkIdent && toks[k+1].isOp(".") {
		if toks[k].val != "pg_catalog" {
			return 0, false
		}
		k += 2
	}
	if k+1 >= len(toks) || toks[k].kind != tkOp || !toks[k+1].isOp(")") || toks[k].isOp("(") || toks[k].isOp(")") {
		return 0, false
	}
	return k, true
}

// noopCollation returns the index just past a COLLATE clause at toks[i]
// naming a collation that changes nothing in asofsql, whose text
// comparisons are bytewise: "default", pg_catalog.default, "C", "POSIX"
// (optionally qualified with pg_catalog). Other clauses give -1.
func noopCollation(toks []token, i int) int {
	k := i + 1
	if k+1 < len(toks) && (toks[k].is("pg_catalog") || toks[k].kind == tkQIdent && toks[k].val == "pg_catalog") && toks[k+1].isOp(".") {
		k += 2
	}
	if k >= len(toks) {
		return -1
	}
	switch t := toks[k]; {
	case t.is("default") || t.kind == tkQIdent && (t.val == "default" || t.val == "C" || t.val == "POSIX"):
		return k + 1
	}
	return -1
}
