package parser

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// NoLimit is the LIMIT count the rewriter writes for LIMIT ALL and for an
// OFFSET without LIMIT: a Limit whose Count is this value means "no limit".
const NoLimit uint64 = 18446744073709551615

// Cast describes one `#cast` marker: x::type, CAST(x AS type) or a typed
// literal such as INTERVAL '5 seconds' or TIMESTAMP '2024-01-01'.
type Cast struct {
	// Call is the marker node in the AST: `#cast`(Expr, 'type name').
	Call *ast.FuncCallExpr
	// Expr is the operand (Call.Args[0]).
	Expr ast.ExprNode
	// Type is the target type.
	Type sqltypes.Type
	// Literal is true when the operand is a literal constant: typed
	// literals (`TIMESTAMP '...'`, `INTERVAL '5 seconds'`) and casts of a
	// literal ('1'::int, 5::bigint). The whole is then a constant of Type.
	Literal bool
}

// typeLiteralWords are the type names that may start a typed literal
// (`DATE '2024-01-01'`); any type name may in Postgres, these are the ones
// asofsql has.
var typeLiteralWords = map[string]bool{
	"timestamp": true, "timestamptz": true, "date": true, "interval": true,
	"bool": true, "boolean": true, "int2": true, "int4": true, "int8": true,
	"smallint": true, "integer": true, "int": true, "bigint": true, "real": true,
	"float4": true, "float8": true, "double": true, "numeric": true, "decimal": true,
	"text": true, "varchar": true, "bytea": true, "time": true,
}

// intervalFields are the unit words of the SQL-standard `INTERVAL '1' DAY`
// spelling, which asofsql does not accept.
var intervalFields = map[string]bool{
	"year": true, "month": true, "day": true, "hour": true, "minute": true, "second": true,
}

// notFunctionNames are words that can precede "(" without being a
// function name, so x::t never swallows them into its operand.
var notFunctionNames = map[string]bool{
	"and": true, "or": true, "not": true, "in": true, "on": true, "where": true,
	"when": true, "then": true, "else": true, "between": true, "like": true,
	"ilike": true, "is": true, "select": true, "from": true, "as": true, "by": true,
	"having": true, "using": true, "values": true, "exists": true, "any": true,
	"all": true, "some": true, "join": true, "case": true, "distinct": true,
	"return": true, "limit": true, "offset": true, "set": true, "into": true,
	"lateral": true, "with": true, "union": true, "except": true, "intersect": true,
	"order": true, "group": true, "window": true, "over": true,
}

// parseType reads a Postgres type name starting at toks[i] and returns it
// with the index just past it. Errors carry the type's position.
func parseType(src string, toks []token, i int) (sqltypes.Type, int, error) {
	if i >= len(toks) || (toks[i].kind != tkIdent && toks[i].kind != tkQIdent) {
		return sqltypes.UnknownType, i, syntaxErrAt(src, toks, i)
	}
	start := i
	words := []string{toks[i].val}
	i++
	if i+1 < len(toks) && toks[i].isOp(".") && (toks[i+1].kind == tkIdent || toks[i+1].kind == tkQIdent) {
		words[0] += "." + toks[i+1].val
		i += 2
	}
	base := words[0]
	switch {
	case (base == "double") && i < len(toks) && toks[i].is("precision"):
		words = append(words, "precision")
		i++
	case (base == "character" || base == "char") && i < len(toks) && toks[i].is("varying"):
		words = []string{"character", "varying"}
		i++
	}
	mods := ""
	if i < len(toks) && toks[i].isOp("(") {
		m := matchParen(toks, i)
		if m < 0 {
			return sqltypes.UnknownType, i, syntaxErrAt(src, toks, len(toks))
		}
		var parts []string
		for k := i + 1; k < m; k++ {
			if (k-i)%2 == 1 {
				if toks[k].kind != tkNumber {
					return sqltypes.UnknownType, k, syntaxErrAt(src, toks, k)
				}
				parts = append(parts, toks[k].val)
			} else if !toks[k].isOp(",") {
				return sqltypes.UnknownType, k, syntaxErrAt(src, toks, k)
			}
		}
		if len(parts) == 0 || toks[m-1].isOp(",") {
			return sqltypes.UnknownType, m, syntaxErrAt(src, toks, m)
		}
		mods = "(" + strings.Join(parts, ",") + ")"
		i = m + 1
	}
	if (base == "timestamp" || base == "time") && i+2 < len(toks) && (toks[i].is("with") || toks[i].is("without")) && toks[i+1].is("time") && toks[i+2].is("zone") {
		mods += " " + toks[i].val + " time zone"
		i += 3
	}
	if i < len(toks) && toks[i].isOp("[") {
		return sqltypes.UnknownType, i, posError(src, toks[i].start, sqlerr.FeatureNotSupported, "array types are not supported")
	}
	name := strings.Join(words, " ") + mods
	t, err := sqltypes.ParseTypeName(name)
	if err != nil {
		e := sqlerr.From(err)
		return sqltypes.UnknownType, i, e.WithPosition(charPos(src, toks[start].start))
	}
	return t, i, nil
}

// pgPass rewrites the Postgres-only expression syntax into forms TiDB
// parses, recording what the post-parse pass must restore.
type pgPass struct {
	src  string
	toks []token
	e    *edits
	// distinctRHS holds token indexes that start the right operand of an
	// IS DISTINCT FROM (rewritten to <=>, negated after parsing).
	distinctRHS []int
	params      []int
	// offsets memoizes limitBefore by the OFFSET's token index.
	offsets map[int]bool
	// fromMemo memoizes clauseFrom and inFromClause by token index.
	fromMemo map[int]bool
	// groupOpens holds the open parens of rewritten grouping-set
	// constructs (groupingforms.go).
	groupOpens  map[int]bool
	groupCommas map[int]bool
	// dmlFrom is the token index of UPDATE's FROM or DELETE's USING that
	// dmlForms rewrote into a subquery's FROM, -1 if none.
	dmlFrom int
}

func (p *pgPass) run() error {
	toks, e := p.toks, p.e
	// castStart maps the last token of a rewritten cast to the first token
	// of its operand, so chained casts (x::a::b) nest.
	castStart := map[int]int{}
	// named maps a call's "(" to the argument names it has seen.
	named := map[int]map[string]bool{}
	// atStart maps the last token of a rewritten AT TIME ZONE to the
	// first token of its left operand, so chained ones nest.
	atStart := map[int]int{}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if k, ok := p.groupingForm(i); ok {
			i = k
			continue
		}
		switch {
		case t.kind == tkParam:
			p.params = append(p.params, t.num)
		case (t.kind == tkIdent || t.kind == tkQIdent) && i+1 < len(toks) && (toks[i+1].isOp("=>") || toks[i+1].isOp(":=")):
			if err := p.namedArg(i, named); err != nil {
				return err
			}
			i++
		case t.isOp("=>") || t.isOp(":="):
			return syntaxErrAt(p.src, toks, i)
		case t.isOp("->") || t.isOp("->>"):
			// a -> b: a | `#json_get`() | b, on TiDB's | (left-associative,
			// looser than + and -, tighter than comparisons: where
			// Postgres puts ->).
			if i == 0 || i+1 >= len(toks) || toks[i-1].kind == tkOp && !toks[i-1].isOp(")") && !toks[i-1].isOp("]") {
				return syntaxErrAt(p.src, toks, i)
			}
			m := MarkerJSONGet
			if t.isOp("->>") {
				m = MarkerJSONGetText
			}
			e.replace(i, "| `"+m+"`() |")
		case t.is("collate"):
			// Only collations that change nothing reach here
			// (rejectUnsupported): drop the clause.
			end := noopCollation(toks, i)
			for k := i; k < end; k++ {
				e.drop(k)
			}
			i = end - 1
		case t.is("operator") && i+1 < len(toks) && toks[i+1].isOp("("):
			// OPERATOR([schema.]op) is the operator itself.
			k, ok := operatorName(toks, i)
			if !ok {
				return syntaxErrAt(p.src, toks, i)
			}
			for d := i; d < k+2; d++ {
				if d != k {
					e.drop(d)
				}
			}
			if err := p.regexOp(k, i-1); err != nil {
				return err
			}
			i = k + 1
		case (t.kind == tkIdent || t.kind == tkQIdent) && i+1 < len(toks) && toks[i+1].isOp("(") && !t.is("lateral") &&
			(p.fromItemStart(i) || i > 0 && toks[i-1].is("lateral") && p.fromItemStart(i-1)):
			// A function in FROM: generate_series, unnest and regexp_matches; others are 0A000.
			marker := map[string]string{"generate_series": MarkerSeries, "unnest": MarkerUnnest, "regexp_matches": MarkerRegexpMatches}[t.val]
			if marker == "" || t.kind != tkIdent {
				return posError(p.src, t.start, sqlerr.FeatureNotSupported, "function %s in FROM is not supported", t.val)
			}
			if toks[i-1].is("lateral") {
				e.drop(i - 1) // a function in FROM is lateral anyway (planner)
			}
			next, err := p.seriesInFrom(i, marker)
			if err != nil {
				return err
			}
			i = next
		case t.is("array") && i+1 < len(toks) && toks[i+1].isOp("["):
			// ARRAY[a, b]: `#arrayctor`(a, b).
			k := closingBracket(toks, i+1)
			if k < 0 {
				return syntaxErrAt(p.src, toks, i)
			}
			if i+2 < k && (toks[i+2].isOp("[") || i+3 < k && toks[i+2].is("array") && toks[i+3].isOp("[")) {
				return posError(p.src, toks[i+2].start, sqlerr.FeatureNotSupported, "multidimensional arrays are not supported")
			}
			e.replace(i, "`"+MarkerArrayCtor+"`")
			e.replace(i+1, "(")
			e.replace(k, ")")
			castStart[k] = i
			i++
		case t.isOp("["):
			// x[i]: `#subscript`(x, i); slices and other brackets are 0A000.
			k := closingBracket(toks, i)
			if i == 0 || k < 0 || !(toks[i-1].kind == tkIdent || toks[i-1].kind == tkQIdent || toks[i-1].isOp(")")) {
				return posError(p.src, toks[i].start, sqlerr.FeatureNotSupported, "arrays (\"[\" and \"]\") are not supported")
			}
			s := p.operandStart(i-1, castStart)
			e.prepend(s, "`"+MarkerSubscript+"`(")
			e.replace(i, ",")
			e.replace(k, ")")
			castStart[k] = s
		case isArraySubquery(toks, i):
			// ARRAY(subquery): `#array`((subquery)).
			if k := matchParen(toks, i+1); k > 0 {
				e.replace(i, "`"+MarkerArray+"`")
				e.appendAfter(i+1, "(")
				e.appendAfter(k, ")")
			}
		case (t.is("any") || t.is("some")) && i > 0 && isCompareOp(toks[i-1]) && i+1 < len(toks) && toks[i+1].isOp("(") &&
			!(i+2 < len(toks) && (toks[i+2].is("select") || toks[i+2].is("with") || toks[i+2].is("values"))):
			// x op ANY (array): `#any`(array); ANY (subquery) stays TiDB's.
			e.replace(i, "`"+MarkerAny+"`")
		case t.is("all") && i > 0 && isCompareOp(toks[i-1]) && i+1 < len(toks) && toks[i+1].isOp("(") &&
			!(i+2 < len(toks) && (toks[i+2].is("select") || toks[i+2].is("with") || toks[i+2].is("values"))):
			e.replace(i, "`"+MarkerAll+"`")
		case t.isOp("~") || t.isOp("!~") || t.isOp("~*") || t.isOp("!~*") || t.kind == tkOp && likeOps[t.val] != "":
			if err := p.regexOp(i, i-1); err != nil {
				return err
			}
		case t.is("cardinality") && i+1 < len(toks) && toks[i+1].isOp("(") && (i == 0 || !toks[i-1].isOp(".")):
			// A TiDB keyword: quoted, it is the function's name.
			e.replace(i, "`cardinality`")
		case t.is("at") && i+3 < len(toks) && toks[i+1].is("time") && toks[i+2].is("zone"):
			k, err := p.atTimeZone(i, castStart, atStart)
			if err != nil {
				return err
			}
			i = k
		case t.isOp("::"):
			_, afterCtor := castStart[i-1]
			afterCtor = afterCtor && toks[i-1].isOp("]")
			if i == 0 || toks[i-1].isOp("(") || toks[i-1].isOp(",") || toks[i-1].kind == tkOp && !toks[i-1].isOp(")") && !afterCtor ||
				(toks[i-1].kind == tkIdent && notFunctionNames[toks[i-1].val]) {
				// Nothing that can be cast precedes the "::".
				return syntaxErrAt(p.src, toks, i)
			}
			if next, ok := limitCast(p.src, toks, i); ok {
				// LIMIT 3::bigint (postgres_fdw's form): TiDB takes a
				// number or a parameter only, of LIMIT's own type.
				for k := i; k < next; k++ {
					e.drop(k)
				}
				i = next - 1
				continue
			}
			s := p.operandStart(i-1, castStart)
			if name, next, ok := oidAliasType(toks, i+1); ok {
				// x::regclass and friends: `#regcast`(x, 'regclass').
				e.prepend(s, "`"+MarkerRegCast+"`(")
				e.replace(i, ", "+quoteString(name)+")")
				for k := i + 1; k < next; k++ {
					e.drop(k)
				}
				castStart[next-1] = s
				i = next - 1
				continue
			}
			typ, next, err := parseType(p.src, toks, i+1)
			if err != nil && next+1 < len(toks) && toks[next].isOp("[") && toks[next+1].isOp("]") {
				// x::type[]: `#arraycast`(x, 'element type').
				elem := "text"
				if _, _, terr := parseType(p.src, toks[:next], i+1); terr == nil {
					elem = typeWords(toks, i+1, next)
				}
				e.prepend(s, "`"+MarkerArrayCast+"`(")
				e.replace(i, ", "+quoteString(elem)+")")
				for k := i + 1; k < next+2; k++ {
					e.drop(k)
				}
				castStart[next+1] = s
				i = next + 1
				continue
			}
			if err != nil {
				return err
			}
			e.prepend(s, "`"+mkCast+"`(")
			e.replace(i, ", "+quoteString(typ.String())+")")
			for k := i + 1; k < next; k++ {
				e.drop(k)
			}
			castStart[next-1] = s
			i = next - 1
		case t.is("cast") && i+1 < len(toks) && toks[i+1].isOp("("):
			m := matchParen(toks, i+1)
			if m < 0 {
				return syntaxErrAt(p.src, toks, len(toks))
			}
			as := -1
			for k := i + 2; k < m; k++ {
				if toks[k].isOp("(") {
					if k = partner(toks, k); k < 0 {
						break
					}
				} else if toks[k].is("as") {
					as = k
					break
				}
			}
			if as < 0 {
				return syntaxErrAt(p.src, toks, m)
			}
			typ, next, err := parseType(p.src, toks, as+1)
			if err != nil {
				return err
			}
			if next != m {
				return syntaxErrAt(p.src, toks, next)
			}
			e.replace(i, "`"+mkCast+"`")
			e.replace(as, ",")
			e.replace(as+1, quoteString(typ.String()))
			for k := as + 2; k < m; k++ {
				e.drop(k)
			}
			castStart[m] = i
		case t.is("extract") && i+3 < len(toks) && toks[i+1].isOp("(") && (toks[i+2].kind == tkIdent || toks[i+2].kind == tkString) &&
			toks[i+3].is("from") && !(i > 0 && toks[i-1].isOp(".")):
			// EXTRACT(field FROM x): Postgres' fields, not MySQL's units.
			e.replace(i, "`"+mkExtract+"`")
			e.replace(i+2, quoteString(toks[i+2].val))
			e.replace(i+3, ",")
			i += 3
		case t.is("extract") && i+3 < len(toks) && toks[i+1].isOp("(") && toks[i+2].kind == tkString && toks[i+3].isOp(",") &&
			!(i > 0 && toks[i-1].isOp(".")):
			// extract('field', x): the function form Postgres 14+ has.
			e.replace(i, "`"+mkExtract+"`")
			i += 3
		case t.is("interval") && i+1 < len(toks) && (toks[i+1].kind == tkNumber || toks[i+1].kind == tkParam || toks[i+1].isOp("-")):
			// MySQL's INTERVAL 1 SECOND; Postgres wants INTERVAL '1 second'.
			return syntaxErrAt(p.src, toks, i+1)
		case t.kind == tkIdent && typeLiteralWords[t.val] && !(i > 0 && toks[i-1].isOp(".")):
			// A typed literal: type name directly followed by a string.
			typEnd := p.typeEnd(i)
			if typEnd < 0 || typEnd >= len(toks) || toks[typEnd].kind != tkString {
				continue
			}
			typ, next, err := parseType(p.src, toks, i)
			if err != nil {
				return err
			}
			if next != typEnd {
				continue
			}
			if typ.Kind == sqltypes.Interval && next+1 < len(toks) && toks[next+1].kind == tkIdent && intervalFields[toks[next+1].val] {
				return posError(p.src, toks[next+1].start, sqlerr.FeatureNotSupported, "INTERVAL field qualifiers (%s) are not supported", strings.ToUpper(toks[next+1].val)).
					WithHint("Write the unit inside the string, e.g. INTERVAL '5 seconds'.")
			}
			e.replace(i, "`"+mkCast+"`(")
			for k := i + 1; k < next; k++ {
				e.drop(k)
			}
			e.appendAfter(next, ", "+quoteString(typ.String())+")")
			castStart[next] = i
			i = next
		case t.is("is"):
			k := i + 1
			not := k < len(toks) && toks[k].is("not")
			if not {
				k++
			}
			if k+1 < len(toks) && toks[k].is("distinct") && toks[k+1].is("from") {
				e.replace(i, "<=>")
				for d := i + 1; d <= k+1; d++ {
					e.drop(d)
				}
				if k+2 >= len(toks) {
					return syntaxErrAt(p.src, toks, k+2)
				}
				if !not {
					p.distinctRHS = append(p.distinctRHS, k+2)
				}
				i = k + 1
			}
		case t.is("nulls") && i+1 < len(toks) && (toks[i+1].is("first") || toks[i+1].is("last")):
			e.replace(i, fmt.Sprintf(", `%s`(%s)", mkNulls, quoteString(toks[i+1].val)))
			e.drop(i + 1)
			i++
		case (t.is("true") || t.is("false")) && !(i > 0 && (toks[i-1].is("is") || toks[i-1].is("not") && i > 1 && toks[i-2].is("is"))):
			// TiDB reads TRUE and FALSE as the integers 1 and 0; Postgres
			// types them boolean. IS [NOT] TRUE keeps TiDB's own node.
			e.replace(i, "`"+mkCast+"`("+t.val+", 'boolean')")
		case t.is("limit") && i+1 < len(toks) && toks[i+1].is("all"):
			e.replace(i+1, strconv.FormatUint(NoLimit, 10))
			i++
		case t.is("offset") && !p.limitBefore(i):
			i = p.offsetFirst(i)
		case t.kind == tkIdent && strings.HasPrefix(t.val, "_") && i+1 < len(toks) && toks[i+1].kind == tkString:
			// Postgres reads `name 'string'` as a typed literal; TiDB would
			// take _utf8mb4'x' as a charset introducer.
			return posError(p.src, t.start, sqlerr.UndefinedObject, "type %q does not exist", t.val)
		}
	}
	return nil
}

// offsetFirst rewrites an OFFSET that has no LIMIT before it: Postgres
// allows `OFFSET n [ROW|ROWS]` alone or before `LIMIT m`, TiDB only
// `LIMIT m OFFSET n`. It returns the index of the last token it consumed.
func (p *pgPass) offsetFirst(i int) int {
	toks, e := p.toks, p.e
	isVal := func(k int) bool { return k < len(toks) && (toks[k].kind == tkNumber || toks[k].kind == tkParam) }
	if !isVal(i + 1) {
		e.prepend(i, "limit "+strconv.FormatUint(NoLimit, 10)+" ")
		return i
	}
	last := i + 1
	if last+1 < len(toks) && (toks[last+1].is("row") || toks[last+1].is("rows")) {
		last++
		e.drop(last)
	}
	if !(last+1 < len(toks) && toks[last+1].is("limit") && (isVal(last+2) || (last+2 < len(toks) && toks[last+2].is("all")))) {
		e.prepend(i, "limit "+strconv.FormatUint(NoLimit, 10)+" ")
		if toks[i+1].kind == tkParam {
			p.params = append(p.params, toks[i+1].num)
		}
		return last
	}
	// OFFSET x LIMIT y  ->  LIMIT y OFFSET x, moving the values (and
	// their parameter order) with the keywords.
	x, y := toks[i+1], toks[last+2]
	text := func(t token) string {
		switch {
		case t.kind == tkParam:
			p.params = append(p.params, t.num)
			return "?"
		case t.is("all"):
			return strconv.FormatUint(NoLimit, 10)
		}
		return t.val
	}
	e.replace(i, "limit")
	e.replace(i+1, text(y))
	e.replace(last+1, "offset")
	e.replace(last+2, text(x))
	return last + 2
}

// rejectUnsupported names Postgres constructs TiDB cannot express (or
// would silently misread) with 0A000, rather than a confusing syntax
// error or a wrong meaning.
func rejectUnsupported(src string, toks []token) error {
	at := func(k int, what string) error {
		return posError(src, toks[k].start, sqlerr.FeatureNotSupported, "%s is not supported", what)
	}
	next := func(k int, w string) bool { return k < len(toks) && (toks[k].is(w) || toks[k].isOp(w)) }
	for i, t := range toks {
		switch {
		case t.kind != tkIdent:
		case t.val == "array" && next(i+1, "(") && !isArraySubquery(toks, i):
			return at(i, "ARRAY constructor")
		case t.val == "returning":
			return at(i, "RETURNING")
		case t.val == "with" && next(i+1, "ordinality"):
			return at(i, "WITH ORDINALITY")
		case t.val == "on" && next(i+1, "conflict"):
			return at(i, "ON CONFLICT")
		case t.val == "similar" && next(i+1, "to"):
			return at(i, "SIMILAR TO")
		case t.val == "collate":
			if noopCollation(toks, i) < 0 {
				return at(i, "COLLATE")
			}
		case t.val == "group" && next(i+1, "by") && next(i+2, "distinct"):
			return at(i+2, "GROUP BY DISTINCT")
		case t.val == "asof" && i > 0 && (next(i+1, "cross") || next(i+1, "natural")):
			// Not the ASOF keyword by the spec's rule, but as an alias it
			// would silently turn the intended ASOF join into a plain one.
			return posError(src, t.start, sqlerr.FeatureNotSupported, "ASOF %s JOIN is not supported", strings.ToUpper(toks[i+1].val)).
				WithHint("ASOF joins are INNER, LEFT, RIGHT, FULL, SEMI or ANTI. To use asof as an alias here, write \"asof\".")
		}
	}
	return nil
}

// typeEnd returns the index just past a type name starting at i, or -1.
func (p *pgPass) typeEnd(i int) int {
	toks := p.toks
	k := i + 1
	if toks[i].is("double") && k < len(toks) && toks[k].is("precision") {
		k++
	}
	if k < len(toks) && toks[k].isOp("(") {
		m := matchParen(toks, k)
		if m < 0 {
			return -1
		}
		k = m + 1
	}
	if (toks[i].is("timestamp") || toks[i].is("time")) && k+2 < len(toks) && (toks[k].is("with") || toks[k].is("without")) && toks[k+1].is("time") && toks[k+2].is("zone") {
		k += 3
	}
	return k
}

// MarkerAtTimeZone is the function the planner sees for x AT TIME ZONE z:
// `#at_time_zone`(x, z), which it binds as Postgres' timezone(z, x).
const MarkerAtTimeZone = "#at_time_zone"

// atTimeZone rewrites x AT TIME ZONE z (the AT at toks[i]) into
// `#at_time_zone`(x, z) and returns the index of the zone operand's first
// token minus one (the loop rewrites the zone's own forms next). AT binds
// tighter than every binary operator but looser than :: and [], as in
// Postgres' grammar: x is the primary expression before AT (with its
// casts), z one primary after ZONE; a zone with a cast or subscript must
// be parenthesized, so that what the :: applies to is never in doubt.
func (p *pgPass) atTimeZone(i int, castStart, atStart map[int]int) (int, error) {
	toks, e := p.toks, p.e
	if i == 0 || toks[i-1].kind == tkOp && !toks[i-1].isOp(")") && !toks[i-1].isOp("]") ||
		toks[i-1].kind == tkIdent && notFunctionNames[toks[i-1].val] {
		// No operand: Postgres reads AT TIME as a column and its alias.
		return 0, syntaxErrAt(p.src, toks, i+2)
	}
	s, ok := atStart[i-1]
	if !ok {
		s = p.operandStart(i-1, castStart)
	}
	k := i + 3
	end := -1
	switch z := toks[k]; {
	case z.kind == tkString || z.kind == tkParam || z.kind == tkNumber:
		end = k
	case z.isOp("("):
		end = matchParen(toks, k)
	case z.is("case"):
		end = partner(toks, k)
	case z.kind == tkIdent && typeLiteralWords[z.val] && p.typeEnd(k) > 0 && p.typeEnd(k) < len(toks) && toks[p.typeEnd(k)].kind == tkString:
		end = p.typeEnd(k) // INTERVAL '-08:00'
	case z.kind == tkIdent || z.kind == tkQIdent:
		end = k
		for end+2 < len(toks) && toks[end+1].isOp(".") && (toks[end+2].kind == tkIdent || toks[end+2].kind == tkQIdent) {
			end += 2
		}
		if end+1 < len(toks) && toks[end+1].isOp("(") {
			end = matchParen(toks, end+1)
		}
	}
	if end < 0 {
		return 0, syntaxErrAt(p.src, toks, k)
	}
	if end+1 < len(toks) && (toks[end+1].isOp("::") || toks[end+1].isOp("[")) {
		return 0, posError(p.src, toks[end+1].start, sqlerr.FeatureNotSupported, "a cast or subscript of the zone of AT TIME ZONE is not supported").
			WithHint("Put the zone in parentheses: AT TIME ZONE (zone::text).")
	}
	e.prepend(s, "`"+MarkerAtTimeZone+"`(")
	e.replace(i, ",")
	e.drop(i + 1)
	e.drop(i + 2)
	e.appendOuter(end, ")")
	atStart[end] = s
	return i + 2, nil
}

// operandStart finds the first token of the primary expression ending at
// toks[j]: the left operand of a `::` (which binds tighter than any other
// operator): a literal, a parameter, a possibly qualified name, a function
// call, a parenthesized expression or an already rewritten cast.
func (p *pgPass) operandStart(j int, castStart map[int]int) int {
	toks := p.toks
	if s, ok := castStart[j]; ok {
		return s
	}
	t := toks[j]
	s := j
	switch {
	case t.isOp(")"):
		if k := partner(toks, j); k >= 0 {
			s = k
		}
		if s > 0 && (toks[s-1].kind == tkQIdent || (toks[s-1].kind == tkIdent && !notFunctionNames[toks[s-1].val])) {
			s--
		} else {
			return s
		}
	case t.is("end"):
		// CASE ... END is one primary.
		if k := partner(toks, j); k >= 0 {
			return k
		}
		return j
	case t.kind == tkString:
		// The string of a typed literal is rewritten with its type word.
		if cs, ok := castStart[j]; ok {
			return cs
		}
		return j
	case t.kind != tkIdent && t.kind != tkQIdent:
		return j
	}
	// Qualified names: a.b.c
	for s >= 2 && toks[s-1].isOp(".") && (toks[s-2].kind == tkIdent || toks[s-2].kind == tkQIdent) {
		s -= 2
	}
	return s
}

// limitBefore reports whether the OFFSET at toks[i] has a LIMIT before it
// in the same query block.
//
// The walk back skips parenthesized groups whole and stops at an earlier
// OFFSET of the same block, whose answer it reuses (p.offsets), so a long
// statement costs linear time however many OFFSETs it holds.
func (p *pgPass) limitBefore(i int) bool {
	res := false
	k := i - 1
walk:
	for ; k >= 0; k-- {
		t := p.toks[k]
		switch {
		case t.isOp(")"):
			if k = partner(p.toks, k); k < 0 {
				break walk
			}
		case t.isOp("("):
			break walk
		case t.is("limit"):
			res = true
			break walk
		case t.is("select") || t.is("union") || t.is("intersect") || t.is("except"):
			break walk
		case t.is("offset"):
			if r, ok := p.offsets[k]; ok {
				res = r
				break walk
			}
		}
	}
	if p.offsets == nil {
		p.offsets = map[int]bool{}
	}
	p.offsets[i] = res
	return res
}

// pgRecovery restores what pgPass rewrote: it wraps the <=> planted for
// IS DISTINCT FROM in NOT, folds `#nulls` order items into the preceding
// item, numbers parameters and collects the casts.
type pgRecovery struct {
	st       *Statement
	distinct map[int]bool // rewritten offsets of IS DISTINCT FROM right operands
	matched  int
	casts    map[*ast.FuncCallExpr]*Cast
	nulls    map[*ast.ByItem]bool
	params   []ast.ParamMarkerExpr
	err      error
}

func (v *pgRecovery) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.OrderByClause:
		v.foldNulls(x)
	case *ast.FuncCallExpr:
		if x.FnName.O == mkCast {
			if len(x.Args) != 2 {
				v.fail(x)
				return n, true
			}
			name, ok := x.Args[1].(ast.ValueExpr)
			s, isStr := "", false
			if ok {
				s, isStr = name.GetValue().(string)
			}
			if !isStr {
				v.fail(x)
				return n, true
			}
			t, err := sqltypes.ParseTypeName(s)
			if err != nil {
				v.err = err
				return n, true
			}
			_, lit := x.Args[0].(ast.ValueExpr)
			v.casts[x] = &Cast{Call: x, Expr: x.Args[0], Type: t, Literal: lit}
		}
	case ast.ParamMarkerExpr:
		v.params = append(v.params, x)
	}
	return n, false
}

// fail reports a marker found where the rewrite did not intend it (for
// example NULLS FIRST after GROUP BY) as a syntax error at the user's
// token there.
func (v *pgRecovery) fail(n ast.ExprNode) {
	if v.err == nil {
		v.err = v.st.errAt(n, sqlerr.SyntaxError, "syntax error at or near \"%s\"", v.st.nearText(n))
	}
}

func (v *pgRecovery) Leave(n ast.Node) (ast.Node, bool) {
	if b, ok := n.(*ast.BinaryOperationExpr); ok && b.Op == opcode.NullEQ && v.distinct[b.R.OriginTextPosition()] {
		v.matched++
		delete(v.distinct, b.R.OriginTextPosition())
		u := &ast.UnaryOperationExpr{Op: opcode.Not, V: b}
		u.SetOriginTextPosition(b.OriginTextPosition())
		return u, true
	}
	return n, true
}

// foldNulls removes the `#nulls` items and records NULLS FIRST/LAST on the
// item before each.
func (v *pgRecovery) foldNulls(o *ast.OrderByClause) {
	items := o.Items[:0]
	prevMarker := true // a NULLS marker must follow a real item
	for _, it := range o.Items {
		f, ok := markerCall(it.Expr, mkNulls)
		if !ok {
			items = append(items, it)
			prevMarker = false
			continue
		}
		if prevMarker || it.Desc {
			v.fail(f)
			return
		}
		prevMarker = true
		val, _ := f.Args[0].(ast.ValueExpr)
		first := val != nil && val.GetValue() == "first"
		v.nulls[items[len(items)-1]] = first
	}
	o.Items = items
}

// limitCast recognizes an integer cast of LIMIT's or OFFSET's number or
// parameter ("LIMIT 3::bigint", "OFFSET $1::bigint", as postgres_fdw
// deparses them) at the "::" toks[i]: the index just past the type.
func limitCast(src string, toks []token, i int) (int, bool) {
	if i < 2 || !(toks[i-2].is("limit") || toks[i-2].is("offset")) || !(toks[i-1].kind == tkNumber || toks[i-1].kind == tkParam) {
		return 0, false
	}
	typ, next, err := parseType(src, toks, i+1)
	if err != nil {
		return 0, false
	}
	switch typ.Kind {
	case sqltypes.Int2, sqltypes.Int4, sqltypes.Int8:
		return next, true
	}
	return 0, false
}

// MarkerNamed is the function name the planner sees for a named argument:
// f(name => x) (or the old name := x) is f(`#named`('name', x)). Users
// cannot write it.
const MarkerNamed = "#named"

// namedArg rewrites the named argument whose name is toks[i]: it must be a
// whole argument of a function call, no two may share a name, and no
// positional argument may follow one (42601, as Postgres' grammar says).
func (p *pgPass) namedArg(i int, named map[int]map[string]bool) error {
	toks := p.toks
	open := i + int(toks[i].up)
	if toks[i].up == 0 || !toks[i-1].isOp("(") && !toks[i-1].isOp(",") || open < 1 ||
		!(toks[open-1].kind == tkIdent || toks[open-1].kind == tkQIdent) || notFunctionNames[toks[open-1].val] {
		return syntaxErrAt(p.src, toks, i+1)
	}
	if named[open] == nil {
		named[open] = map[string]bool{}
	}
	if named[open][toks[i].val] {
		return posError(p.src, toks[i].start, sqlerr.SyntaxError, "argument name \"%s\" used more than once", toks[i].val)
	}
	named[open][toks[i].val] = true
	closing := partner(toks, open)
	k := i + 2
	for k < closing && !(toks[k].isOp(",") && k+int(toks[k].up) == open) {
		k++
	}
	if k == i+2 {
		return syntaxErrAt(p.src, toks, k)
	}
	if k < closing && !(k+2 < len(toks) && (toks[k+1].kind == tkIdent || toks[k+1].kind == tkQIdent) && (toks[k+2].isOp("=>") || toks[k+2].isOp(":="))) {
		return posError(p.src, toks[k+1].start, sqlerr.SyntaxError, "positional argument cannot follow named argument")
	}
	p.e.replace(i, "`"+MarkerNamed+"`("+quoteString(toks[i].val)+", ")
	p.e.drop(i + 1)
	p.e.prepend(k, ")")
	return nil
}

// MarkerJSONGet and MarkerJSONGetText are the functions the planner sees
// for j -> k and j ->> k: the tree (j | `#json_get`()) | k of TiDB's
// bitwise or, whose precedence is where Postgres puts its other
// operators. Users cannot write them, nor | with a marker.
const (
	MarkerJSONGet     = "#json_get"
	MarkerJSONGetText = "#json_get_text"
)
