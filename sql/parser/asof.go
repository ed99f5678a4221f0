package parser

import (
	"fmt"
	"strings"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// AsofKind is the join kind of an ASOF join.
type AsofKind uint8

const (
	// AsofInner drops left rows without a match (plain ASOF JOIN).
	AsofInner AsofKind = iota + 1
	// AsofLeft keeps left rows without a match, right columns NULL.
	AsofLeft
	// AsofSemi keeps the left rows with a match, left columns only.
	AsofSemi
	// AsofAnti keeps the left rows without a match, left columns only.
	AsofAnti
	// AsofRight is INNER plus every right row that won no left row, with
	// NULL left columns.
	AsofRight
	// AsofFull is LEFT plus those right rows.
	AsofFull
)

func (k AsofKind) String() string {
	switch k {
	case AsofLeft:
		return "LEFT"
	case AsofSemi:
		return "SEMI"
	case AsofAnti:
		return "ANTI"
	case AsofRight:
		return "RIGHT"
	case AsofFull:
		return "FULL"
	}
	return "INNER"
}

// AsofForm is which of the spec §1 spellings an ASOF join used.
type AsofForm uint8

const (
	// FormRange: ON t BETWEEN lo AND hi [AND extra...] [USING (keys)].
	// On is t; Lo and Hi are the (constant) bounds.
	FormRange AsofForm = iota + 1
	// FormInequality: ON a.k = b.k [AND ...] AND x.t <op> y.t. Left/Right
	// are the inequality's operands as written, Op its operator.
	FormInequality
	// FormRangeOnExpr: ON a.k = b.k AND r.ts BETWEEN l.t + lo AND l.t + hi.
	// Right is the BETWEEN subject, Left the column the bounds offset.
	FormRangeOnExpr
	// FormUsing: USING (k..., t): On is the last column, Using the keys.
	FormUsing
)

func (f AsofForm) String() string {
	switch f {
	case FormRange:
		return "range"
	case FormInequality:
		return "inequality"
	case FormRangeOnExpr:
		return "range-on-expression"
	case FormUsing:
		return "using"
	}
	return "invalid"
}

// Prefer is the tie rule between equally distant rows on both sides.
type Prefer uint8

const (
	// PreferEarlier (the default) takes the row with Δ < 0.
	PreferEarlier Prefer = iota
	// PreferLater takes the row with Δ > 0.
	PreferLater
)

func (p Prefer) String() string {
	if p == PreferLater {
		return "LATER"
	}
	return "EARLIER"
}

// KeyPair is one `a = b` (or `a IS NOT DISTINCT FROM b`) equality of an
// ON-form ASOF join, as written: the planner decides which operand belongs
// to which input, and an equality of two columns of one input is an extra
// condition (Expr) rather than a key.
type KeyPair struct {
	A, B *ast.ColumnNameExpr
	// NullSafe: written IS NOT DISTINCT FROM, so NULL matches NULL.
	NullSafe bool
	Expr     ast.ExprNode
}

// TimeCond is one conjunct that may be the time condition of an ON form:
// `x op y`, `x op y + c` (or `x + c op y`, normalized to an offset of y),
// or `s BETWEEN x + lo AND x + hi`. Whether it is the time condition
// depends on which input each column belongs to, which only the planner
// knows: a conjunct comparing two columns of one input is an extra
// condition (spec §2.5).
type TimeCond struct {
	Expr ast.ExprNode
	Form AsofForm // FormInequality or FormRangeOnExpr
	// Left, Right, Op, Lo, Hi, LoPos, HiPos: as the AsofJoin fields.
	Left, Right  *ast.ColumnNameExpr
	Op           opcode.Op
	Lo, Hi       ast.ExprNode
	LoPos, HiPos int
	// Off is the constant offset of an inequality, Left Op Right + Off
	// (nil: none); OffPos its position.
	Off    ast.ExprNode
	OffPos int
}

// AsofJoin describes one ASOF join for the planner. Everything here comes
// from the syntax alone; nothing is resolved against a catalog.
//
// Field use by form:
//
//	form             On  Left/Right  Op  Lo/Hi            Using  Keys
//	range            t   -           -   constants        keys   -
//	inequality       -   operands    yes nil (unbounded)  -      pairs
//	range-on-expr    -   l.t / r.ts  -   offsets, nil = 0 -      pairs
//	using            t   -           -   nil              keys   -
type AsofJoin struct {
	// Join is the TiDB join node. Its On holds the user's ON expression
	// with the markers removed (nil for the USING form); its Using holds
	// every USING column as written (the keys, plus t for FormUsing).
	Join *ast.Join
	Kind AsofKind
	Form AsofForm

	// On is the unqualified on-column name (range and USING forms).
	On *ast.ColumnName
	// Left, Right: see the form table above.
	Left, Right *ast.ColumnNameExpr
	// Op is the inequality operator as written, Left Op Right
	// (opcode.GE, GT, LE or LT); only for FormInequality.
	Op opcode.Op
	// Lo, Hi are the bounds as unevaluated expressions (the planner
	// type-checks and folds them). For FormRangeOnExpr a bound written
	// `l.t - c` is given as the expression -(c), and a bare `l.t` as nil
	// meaning zero.
	Lo, Hi ast.ExprNode
	// Using are the USING keys (not including t for FormUsing).
	Using []*ast.ColumnName
	// Keys are the column = column equalities of the ON forms.
	Keys []KeyPair
	// Extra are the remaining ON conjuncts, in order (spec §2.5 classifies
	// them by the inputs they reference).
	Extra []ast.ExprNode
	// Off is the time inequality's offset (see TimeCond); only for
	// FormInequality.
	Off    ast.ExprNode
	OffPos int
	// Cands are the ON conjuncts that may be the time condition, in order
	// (the first is in Form/Left/Right/...): the planner picks the one
	// comparing a column of each input; the others are extra conditions.
	Cands []TimeCond
	// Time is the time condition's conjunct (ON forms).
	Time ast.ExprNode
	// Match says the time condition was written MATCH_CONDITION (...):
	// every inequality in ON is then an extra condition.
	Match bool
	// Prefer is the tie rule; PreferExplicit says PREFER was written.
	Prefer         Prefer
	PreferExplicit bool

	// Pos, LoPos, HiPos are 1-based character positions in the original
	// text of ASOF and of the bounds (0 when there is no bound).
	Pos, LoPos, HiPos int

	id int
}

// asofSite is what the token pass learned about one ASOF join.
type asofSite struct {
	id             int
	start          int // byte offset of ASOF
	kind           AsofKind
	prefer         Prefer
	preferExplicit bool
	found          bool
}

// Marker function names. Backtick-quoted names with this prefix cannot come
// from user input: the lexer refuses backticks and quoted names starting
// with markerPrefix.
const (
	mkAsof      = "#asof"
	mkAsofUsing = "#asof_using"
	mkAsofMatch = "#asof_match"
	mkCast      = "#cast"
	mkNulls     = "#nulls"
	mkExtract   = ExtractFunc
)

// ExtractFunc is the function name EXTRACT(field FROM x) is parsed as:
// a call ExtractFunc('field', x) the planner binds as Postgres' numeric
// extract (TiDB's grammar only knows MySQL's units).
const ExtractFunc = "#extract"

// clauseEnd lists words that end a join clause at its own nesting level.
var clauseEnd = map[string]bool{
	"join": true, "inner": true, "cross": true, "natural": true, "full": true,
	"where": true, "group": true, "having": true, "window": true, "order": true,
	"limit": true, "offset": true, "union": true, "intersect": true, "except": true,
	"fetch": true, "for": true, "returning": true, "straight_join": true,
}

// isAsofKeyword reports whether toks[i] is ASOF used as the keyword:
// unquoted, directly before [INNER | LEFT [OUTER] | RIGHT [OUTER] | FULL
// [OUTER] | SEMI | ANTI] JOIN, and not in a position where it must be a
// table name or alias.
func isAsofKeyword(toks []token, i int) (kind AsofKind, joinIdx int, ok bool) {
	if !toks[i].is("asof") {
		return 0, 0, false
	}
	if i == 0 {
		return 0, 0, false
	}
	if p := toks[i-1]; p.is("from") || p.is("join") || p.is("as") || p.isOp(",") || p.isOp("(") {
		return 0, 0, false
	}
	j := i + 1
	kind = AsofInner
	if j < len(toks) && toks[j].is("inner") {
		j++
	} else if j < len(toks) && toks[j].is("left") {
		kind = AsofLeft
		j++
		if j < len(toks) && toks[j].is("outer") {
			j++
		}
	} else if j < len(toks) && (toks[j].is("right") || toks[j].is("full")) {
		kind = AsofRight
		if toks[j].is("full") {
			kind = AsofFull
		}
		j++
		if j < len(toks) && toks[j].is("outer") {
			j++
		}
	} else if j < len(toks) && (toks[j].is("semi") || toks[j].is("anti")) {
		kind = AsofSemi
		if toks[j].is("anti") {
			kind = AsofAnti
		}
		j++
	}
	if j < len(toks) && toks[j].is("join") {
		return kind, j, true
	}
	return 0, 0, false
}

// isClauseEnd reports whether toks[i] ends the current join clause.
func isClauseEnd(toks []token, i int) bool {
	t := toks[i]
	if t.isOp(",") || t.isOp(";") {
		return true
	}
	if t.kind != tkIdent {
		return false
	}
	if t.val == "left" || t.val == "right" {
		// left(...) and right(...) are string functions.
		return !(i+1 < len(toks) && toks[i+1].isOp("("))
	}
	if _, _, ok := isAsofKeyword(toks, i); ok {
		return true
	}
	return clauseEnd[t.val]
}

// matchParen returns the index of the ) matching the ( at toks[i], or -1.
func matchParen(toks []token, i int) int {
	if !toks[i].isOp("(") {
		return -1
	}
	return partner(toks, i)
}

// plantAsof finds every ASOF join and plants the markers described in the
// package documentation. It needs no grammar: TiDB decides where the ON
// expression ends; this pass only finds ON, USING and PREFER at the join's
// own parenthesis level.
func plantAsof(src string, toks []token, e *edits) ([]*asofSite, error) {
	var sites []*asofSite
	for i := range toks {
		kind, j, ok := isAsofKeyword(toks, i)
		if !ok {
			continue
		}
		site := &asofSite{id: len(sites) + 1, start: toks[i].start, kind: kind}
		sites = append(sites, site)
		e.drop(i)
		if kind != AsofInner && kind != AsofLeft {
			// TiDB parses a plain JOIN; the kind lives in the site.
			for k := i + 1; k < j; k++ {
				e.drop(k)
			}
		}
		// Skip the right-hand item up to ON or USING.
		k := j + 1
		for ; k < len(toks); k++ {
			t := toks[k]
			if t.isOp("(") {
				m := matchParen(toks, k)
				if m < 0 {
					break
				}
				k = m
				continue
			}
			if t.isOp(")") || t.is("on") || t.is("using") || isClauseEnd(toks, k) {
				break
			}
			if t.is("match_condition") && k+1 < len(toks) && toks[k+1].isOp("(") {
				break
			}
		}
		if k < len(toks) && toks[k].is("match_condition") && k+1 < len(toks) && toks[k+1].isOp("(") {
			// MATCH_CONDITION (cond) [ON ... | USING (...)]: the condition
			// becomes the marker call's argument.
			m := matchParen(toks, k+1)
			if m < 0 {
				return nil, syntaxErrAt(src, toks, len(toks))
			}
			e.replace(k, fmt.Sprintf("on `%s`(%d) or `%s`", mkAsof, site.id, mkAsofMatch))
			e.replace(k+1, fmt.Sprintf("(%d, ", site.id))
			k = m + 1
			switch {
			case k < len(toks) && toks[k].is("on"):
				e.replace(k, "or")
				if err := plantOnTail(src, toks, k, site, e); err != nil {
					return nil, err
				}
			case k < len(toks) && toks[k].is("using"):
				if err := plantUsing(src, toks, k, site, e, "or"); err != nil {
					return nil, err
				}
			default:
				if err := plantPrefer(src, toks, k, site, e); err != nil {
					return nil, err
				}
			}
			continue
		}
		if k >= len(toks) || !(toks[k].is("on") || toks[k].is("using")) {
			return nil, posError(src, site.start, sqlerr.SyntaxError, "ASOF JOIN requires an ON or USING clause").
				WithHint("Write ON t BETWEEN lo AND hi [USING (keys)], ON l.k = r.k AND l.t >= r.t, MATCH_CONDITION (l.t >= r.t) [ON l.k = r.k], or USING (keys..., t).")
		}
		if toks[k].is("using") {
			if err := plantUsing(src, toks, k, site, e, fmt.Sprintf("on `%s`(%d) or", mkAsof, site.id)); err != nil {
				return nil, err
			}
			continue
		}
		e.replace(k, fmt.Sprintf("on `%s`(%d) or", mkAsof, site.id))
		if err := plantOnTail(src, toks, k, site, e); err != nil {
			return nil, err
		}
	}
	return sites, nil
}

// plantUsing rewrites USING (...) at toks[k] into `#asof_using`(n, ...)
// after the text lead, then consumes an optional PREFER.
func plantUsing(src string, toks []token, k int, site *asofSite, e *edits, lead string) error {
	if k+1 >= len(toks) || !toks[k+1].isOp("(") {
		return syntaxErrAt(src, toks, k+1)
	}
	e.replace(k, fmt.Sprintf("%s `%s`", lead, mkAsofUsing))
	e.replace(k+1, fmt.Sprintf("(%d, ", site.id))
	m := matchParen(toks, k+1)
	if m < 0 {
		return syntaxErrAt(src, toks, len(toks))
	}
	return plantPrefer(src, toks, m+1, site, e)
}

// plantOnTail scans the ON expression starting after toks[k] for a
// trailing USING (...) or PREFER at the join's own level.
func plantOnTail(src string, toks []token, k int, site *asofSite, e *edits) error {
	for k++; k < len(toks); k++ {
		t := toks[k]
		if t.isOp("(") {
			m := matchParen(toks, k)
			if m < 0 {
				break
			}
			k = m
			continue
		}
		if t.isOp(")") || t.is("on") || isClauseEnd(toks, k) {
			break
		}
		if t.is("prefer") && k+1 < len(toks) && (toks[k+1].is("earlier") || toks[k+1].is("later")) {
			return plantPrefer(src, toks, k, site, e)
		}
		if t.is("using") && k+1 < len(toks) && toks[k+1].isOp("(") {
			return plantUsing(src, toks, k, site, e, "or")
		}
	}
	return nil
}

// plantPrefer consumes an optional PREFER EARLIER|LATER at toks[k].
func plantPrefer(src string, toks []token, k int, site *asofSite, e *edits) error {
	if k >= len(toks) || !toks[k].is("prefer") {
		return nil
	}
	if k+1 >= len(toks) || !(toks[k+1].is("earlier") || toks[k+1].is("later")) {
		return syntaxErrAt(src, toks, k+1)
	}
	site.preferExplicit = true
	if toks[k+1].is("later") {
		site.prefer = PreferLater
	}
	e.drop(k)
	e.drop(k + 1)
	return nil
}

// markerCall returns the call if e is the marker function name.
func markerCall(e ast.ExprNode, name string) (*ast.FuncCallExpr, bool) {
	f, ok := e.(*ast.FuncCallExpr)
	if !ok || f.FnName.O != name || len(f.Args) == 0 {
		return nil, false
	}
	return f, true
}

// markerID reads the site number planted as a marker's first argument.
func markerID(f *ast.FuncCallExpr) int {
	v, ok := f.Args[0].(ast.ValueExpr)
	if !ok {
		return 0
	}
	switch n := v.GetValue().(type) {
	case int64:
		return int(n)
	case uint64:
		return int(n)
	}
	return 0
}

// stripAsof removes the leftmost leaf of an OR spine if it is the #asof
// marker. It returns the remaining expression (nil if only the marker was
// there) and the marker's site id (0 if there was no marker).
func stripAsof(e ast.ExprNode) (ast.ExprNode, int) {
	rest, f := stripLeaf(e, mkAsof)
	if f == nil {
		return e, 0
	}
	return rest, markerID(f)
}

// stripLeaf removes the leftmost leaf of an OR spine if it is a call of
// the marker name, returning the rest (nil if nothing is left) and the
// call (nil if the leaf is not that marker).
func stripLeaf(e ast.ExprNode, name string) (ast.ExprNode, *ast.FuncCallExpr) {
	if e == nil {
		return nil, nil
	}
	if f, ok := markerCall(e, name); ok {
		return nil, f
	}
	b, ok := e.(*ast.BinaryOperationExpr)
	if !ok || b.Op != opcode.LogicOr {
		return e, nil
	}
	rest, f := stripLeaf(b.L, name)
	if f == nil {
		return e, nil
	}
	if rest == nil {
		return b.R, f
	}
	b.L = rest
	return b, f
}

// asofRecovery is the visitor that turns planted markers back into plain
// joins plus AsofJoin descriptions.
type asofRecovery struct {
	st    *Statement
	sites []*asofSite
	out   []*AsofJoin
	err   error
}

func (v *asofRecovery) Enter(n ast.Node) (ast.Node, bool) {
	if v.err != nil {
		return n, true
	}
	j, ok := n.(*ast.Join)
	if !ok || j.On == nil {
		return n, false
	}
	e := j.On.Expr
	var usingCall *ast.FuncCallExpr
	if b, ok := e.(*ast.BinaryOperationExpr); ok && b.Op == opcode.LogicOr {
		if f, ok := markerCall(b.R, mkAsofUsing); ok {
			usingCall, e = f, b.L
		}
	}
	rest, id := stripAsof(e)
	if id == 0 {
		if usingCall != nil {
			v.err = sqlerr.New(sqlerr.InternalError, "ASOF marker without its USING partner")
		}
		return n, false
	}
	if id < 1 || id > len(v.sites) || v.sites[id-1].found || (usingCall != nil && markerID(usingCall) != id) {
		v.err = sqlerr.New(sqlerr.InternalError, "inconsistent ASOF markers")
		return n, true
	}
	site := v.sites[id-1]
	site.found = true
	rest, matchCall := stripLeaf(rest, mkAsofMatch)
	if matchCall != nil && (markerID(matchCall) != id || len(matchCall.Args) != 2) {
		v.err = sqlerr.New(sqlerr.InternalError, "inconsistent ASOF MATCH_CONDITION marker")
		return n, true
	}
	a, err := v.describe(j, site, rest, usingCall, matchCall)
	if err != nil {
		v.err = err
		return n, true
	}
	v.out = append(v.out, a)
	return n, false
}

func (v *asofRecovery) Leave(n ast.Node) (ast.Node, bool) { return n, v.err == nil }

// describe fills the AsofJoin for one join and puts the user's own ON and
// USING back on the join node.
func (v *asofRecovery) describe(j *ast.Join, site *asofSite, on ast.ExprNode, usingCall, matchCall *ast.FuncCallExpr) (*AsofJoin, error) {
	st := v.st
	a := &AsofJoin{Join: j, Kind: site.kind, Prefer: site.prefer, PreferExplicit: site.preferExplicit,
		Pos: st.charPos(site.start), id: site.id}
	if on == nil {
		j.On = nil
	} else {
		j.On.Expr = on
	}
	var using []*ast.ColumnName
	if usingCall != nil {
		for _, arg := range usingCall.Args[1:] {
			c, ok := arg.(*ast.ColumnNameExpr)
			if !ok || c.Name.Table.L != "" || c.Name.Schema.L != "" {
				return nil, st.errAt(arg, sqlerr.SyntaxError, "USING of an ASOF join takes plain column names")
			}
			using = append(using, c.Name)
		}
		j.Using = using
	}
	if matchCall != nil {
		return describeMatch(st, a, on, using, matchCall.Args[1])
	}
	if on == nil {
		if len(using) == 0 {
			return nil, posError(st.src, site.start, sqlerr.SyntaxError, "ASOF JOIN requires an ON or USING clause")
		}
		// USING (k..., t): the last column is the on-column.
		a.Form = FormUsing
		a.On = using[len(using)-1]
		a.Using = using[:len(using)-1]
		return a, nil
	}
	conj := splitAnd(on, nil)
	// Range form: the first conjunct is `t BETWEEN lo AND hi` with an
	// unqualified t and bounds that are not column offsets.
	if b, ok := conj[0].(*ast.BetweenExpr); ok && !b.Not {
		if c, ok := b.Expr.(*ast.ColumnNameExpr); ok && c.Name.Table.L == "" && c.Name.Schema.L == "" && !(isColOffset(b.Left) && isColOffset(b.Right)) {
			for _, bound := range []ast.ExprNode{b.Left, b.Right} {
				if !isConstant(bound) {
					return nil, st.errAt(bound, sqlerr.SyntaxError, "ASOF range bound must be a constant").
						WithHint("Bounds are offsets from the left row's %s, e.g. BETWEEN -10 AND 0 or BETWEEN INTERVAL '-5 seconds' AND INTERVAL '0 seconds'.", c.Name.Name.O)
				}
			}
			a.Form = FormRange
			a.On = c.Name
			a.Lo, a.Hi = b.Left, b.Right
			a.LoPos, a.HiPos = st.Pos(b.Left), st.Pos(b.Right)
			a.Using = using
			a.Extra = conj[1:]
			return a, nil
		}
	}
	if b, ok := conj[0].(*ast.BetweenExpr); ok && !b.Not && isConstant(b.Left) && isConstant(b.Right) {
		if c, ok := b.Expr.(*ast.ColumnNameExpr); ok && c.Name.Table.L != "" {
			return nil, st.errAt(c, sqlerr.SyntaxError, "the ASOF range column must be unqualified: it names the column of both inputs").
				WithHint("Write ON %s BETWEEN ..., or ON r.t BETWEEN l.t + lo AND l.t + hi.", c.Name.Name.O)
		}
	}
	if usingCall != nil {
		return nil, st.errAt(usingCall, sqlerr.SyntaxError, "USING cannot be combined with an ASOF ON condition that is not a range form").
			WithHint("Either write ON t BETWEEN lo AND hi USING (keys), MATCH_CONDITION (l.t >= r.t) USING (keys), or put the key equalities in ON.")
	}
	for _, c := range conj {
		if k, ok := keyPair(c); ok {
			a.Keys = append(a.Keys, k)
			continue
		}
		tc, ok, err := timeCond(st, c)
		if err != nil {
			return nil, err
		}
		if ok {
			a.Cands = append(a.Cands, tc)
			continue
		}
		a.Extra = append(a.Extra, c)
	}
	if b, ok := on.(*ast.BinaryOperationExpr); len(a.Cands) == 0 && ok && b.Op == opcode.LogicOr {
		return nil, posError(st.src, site.start, sqlerr.SyntaxError, "ASOF JOIN ON must be a conjunction: with OR at the top there is no single time condition").
			WithHint("Put alternatives in parentheses as an extra condition: ON l.t >= r.t AND (r.a OR r.b).")
	}
	if len(a.Cands) == 0 {
		return nil, posError(st.src, site.start, sqlerr.SyntaxError, "ASOF JOIN ON needs one inequality (l.t >= r.t) or a BETWEEN range on the time column").
			WithHint("Write ON t BETWEEN lo AND hi, ON l.k = r.k AND l.t >= r.t, or ON l.k = r.k AND r.ts BETWEEN l.t + lo AND l.t + hi.")
	}
	a.SetTime(a.Cands[0])
	return a, nil
}

// describeMatch fills the MATCH_CONDITION form: the condition is the time
// inequality; ON (keys and extra conditions) or USING (keys) may follow.
func describeMatch(st *Statement, a *AsofJoin, on ast.ExprNode, using []*ast.ColumnName, cond ast.ExprNode) (*AsofJoin, error) {
	a.Match = true
	inner := cond
	for {
		p, ok := inner.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		inner = p.Expr
	}
	tc, ok, err := timeCond(st, inner)
	if err != nil {
		return nil, err
	}
	if !ok || tc.Form != FormInequality {
		return nil, st.errAt(cond, sqlerr.SyntaxError, "MATCH_CONDITION takes one inequality between a column of each input").
			WithHint("Write MATCH_CONDITION (l.t >= r.t) (or >, <=, <), then ON l.k = r.k or USING (k) for the keys.")
	}
	a.SetTime(tc)
	a.Using = using
	if on == nil {
		return a, nil
	}
	for _, c := range splitAnd(on, nil) {
		if k, ok := keyPair(c); ok {
			a.Keys = append(a.Keys, k)
			continue
		}
		a.Extra = append(a.Extra, c)
	}
	return a, nil
}

// SetTime makes tc the join's time condition.
func (a *AsofJoin) SetTime(tc TimeCond) {
	a.Form, a.Left, a.Right, a.Op = tc.Form, tc.Left, tc.Right, tc.Op
	a.Lo, a.Hi, a.LoPos, a.HiPos = tc.Lo, tc.Hi, tc.LoPos, tc.HiPos
	a.Off, a.OffPos = tc.Off, tc.OffPos
	a.Time = tc.Expr
}

// keyPair matches `a = b` and `a IS NOT DISTINCT FROM b` of two columns.
func keyPair(c ast.ExprNode) (KeyPair, bool) {
	x, ok := c.(*ast.BinaryOperationExpr)
	if !ok || x.Op != opcode.EQ && x.Op != opcode.NullEQ {
		return KeyPair{}, false
	}
	l, lok := x.L.(*ast.ColumnNameExpr)
	r, rok := x.R.(*ast.ColumnNameExpr)
	if !lok || !rok {
		return KeyPair{}, false
	}
	return KeyPair{A: l, B: r, NullSafe: x.Op == opcode.NullEQ, Expr: c}, true
}

// timeCond matches a conjunct that may be the time condition: an
// inequality between two columns, one of them optionally offset by a
// constant, or a BETWEEN of a column with bounds offsetting one column.
func timeCond(st *Statement, c ast.ExprNode) (TimeCond, bool, error) {
	switch x := c.(type) {
	case *ast.BinaryOperationExpr:
		if x.Op != opcode.GE && x.Op != opcode.GT && x.Op != opcode.LE && x.Op != opcode.LT {
			return TimeCond{}, false, nil
		}
		lc, loff, lneg, lok := colOffset(x.L)
		rc, roff, rneg, rok := colOffset(x.R)
		if !lok || !rok || loff != nil && roff != nil {
			return TimeCond{}, false, nil
		}
		tc := TimeCond{Expr: c, Form: FormInequality, Left: lc, Right: rc, Op: x.Op}
		switch {
		case loff != nil:
			// l + c op r  <=>  l op r - c
			if !isConstant(loff) {
				return TimeCond{}, false, nil
			}
			tc.Off, tc.OffPos = negated(loff, !lneg), st.Pos(loff)
		case roff != nil:
			if !isConstant(roff) {
				return TimeCond{}, false, nil
			}
			tc.Off, tc.OffPos = negated(roff, rneg), st.Pos(roff)
		}
		return tc, true, nil
	case *ast.BetweenExpr:
		subj, sok := x.Expr.(*ast.ColumnNameExpr)
		lc, lo, lneg, lok := colOffset(x.Left)
		hc, hi, hneg, hok := colOffset(x.Right)
		if !sok || x.Not || !lok || !hok {
			return TimeCond{}, false, nil
		}
		if !sameColumn(lc.Name, hc.Name) {
			return TimeCond{}, false, st.errAt(x.Right, sqlerr.SyntaxError, "ASOF range bounds must be offsets of the same column (%s and %s)", colText(lc.Name), colText(hc.Name))
		}
		for _, bound := range []ast.ExprNode{lo, hi} {
			if bound != nil && !isConstant(bound) {
				return TimeCond{}, false, st.errAt(bound, sqlerr.SyntaxError, "ASOF range bound must be a constant")
			}
		}
		return TimeCond{Expr: c, Form: FormRangeOnExpr, Left: lc, Right: subj,
			Lo: negated(lo, lneg), LoPos: st.Pos(x.Left), Hi: negated(hi, hneg), HiPos: st.Pos(x.Right)}, true, nil
	}
	return TimeCond{}, false, nil
}

// splitAnd flattens an AND tree into its conjuncts, left to right, looking
// through parentheses.
func splitAnd(e ast.ExprNode, out []ast.ExprNode) []ast.ExprNode {
	if p, ok := e.(*ast.ParenthesesExpr); ok {
		return splitAnd(p.Expr, out)
	}
	if b, ok := e.(*ast.BinaryOperationExpr); ok && b.Op == opcode.LogicAnd {
		out = splitAnd(b.L, out)
		return splitAnd(b.R, out)
	}
	return append(out, e)
}

// colOffset matches `col`, `col + c`, `c + col` and `col - c`.
func colOffset(e ast.ExprNode) (col *ast.ColumnNameExpr, off ast.ExprNode, neg, ok bool) {
	if c, ok := e.(*ast.ColumnNameExpr); ok {
		return c, nil, false, true
	}
	b, isBin := e.(*ast.BinaryOperationExpr)
	if !isBin {
		return nil, nil, false, false
	}
	if c, ok := b.L.(*ast.ColumnNameExpr); ok && (b.Op == opcode.Plus || b.Op == opcode.Minus) {
		return c, b.R, b.Op == opcode.Minus, true
	}
	if c, ok := b.R.(*ast.ColumnNameExpr); ok && b.Op == opcode.Plus {
		return c, b.L, false, true
	}
	return nil, nil, false, false
}

func isColOffset(e ast.ExprNode) bool {
	c, off, _, ok := colOffset(e)
	return ok && c != nil && (off == nil || isConstant(off))
}

// negated wraps a bound written as `col - c` into -(c), keeping c's
// position so errors still point at the user's text.
func negated(e ast.ExprNode, neg bool) ast.ExprNode {
	if e == nil || !neg {
		return e
	}
	u := &ast.UnaryOperationExpr{Op: opcode.Minus, V: e}
	u.SetOriginTextPosition(e.OriginTextPosition())
	return u
}

func sameColumn(a, b *ast.ColumnName) bool {
	return a.Schema.O == b.Schema.O && a.Table.O == b.Table.O && a.Name.O == b.Name.O
}

func colText(c *ast.ColumnName) string {
	parts := []string{}
	for _, p := range []string{c.Schema.O, c.Table.O, c.Name.O} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ".")
}

// isConstant reports whether e references no column, subquery, aggregate,
// window function or variable: a value the planner can fold before any row
// is read. Parameters count as constants.
func isConstant(e ast.ExprNode) bool {
	c := &constCheck{ok: true}
	e.Accept(c)
	return c.ok
}

type constCheck struct{ ok bool }

func (c *constCheck) Enter(n ast.Node) (ast.Node, bool) {
	switch n.(type) {
	case *ast.ColumnNameExpr, *ast.SubqueryExpr, *ast.ExistsSubqueryExpr, *ast.AggregateFuncExpr,
		*ast.WindowFuncExpr, *ast.VariableExpr, *ast.DefaultExpr, *ast.ColumnName:
		c.ok = false
		return n, true
	}
	return n, false
}

func (c *constCheck) Leave(n ast.Node) (ast.Node, bool) { return n, true }
