package parser

import (
	"github.com/asofsql/asofsql/sql/limits"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Nesting is checked twice, because TiDB recurses before we can look at
// its tree: ParseSQL ends with ast.SetFlag, an AST walk as deep as the
// tree, and a tree can be as deep as the statement is long.
//
//  1. depthBound, before TiDB parses: a cheap bound on the tree's depth
//     from the tokens. It must never be below the real depth by more than
//     a small factor (TestDepthBoundCoversTree and the whole-path fuzz
//     target check it) and may be above it, so its limit is generous
//     (coarseDepth): it only keeps TiDB's own walk within a few MB of
//     stack.
//  2. checkDepth, right after the parse and before any walk of ours: the
//     real depth against limits.MaxDepth.

// coarseDepth is the limit of depthBound. A bound above it means a tree
// far deeper than limits.MaxDepth (the bound grows at most ~9 times as
// fast as the tree, for parenthesized set operations, and about as fast
// for everything else), so nothing checkDepth would accept is refused here.
const coarseDepth = 10 * limits.MaxDepth

// depthFrame is one bracket level of depthBound's walk.
type depthFrame struct {
	open byte // '(' '[' 'c' (CASE), 0 for the statement level
	base int  // depth of the bracket's contents
	lift int  // levels the bracket itself adds (base minus the depth it opened at)
	peak int  // the largest depth seen inside
	// sel counts the levels a SELECT block adds (statement, field list,
	// field), chain the join or comma-join chain of the FROM clause, ops
	// the operators of the current expression run, each a tree level in
	// the worst case (a left-deep chain a+b+c, prefix runs - - 1, NOT NOT
	// x, x::a::b), kid the deepest bracket closed in the run: operators
	// after it may still wrap it, as in (((x))) + 1 + 1.
	sel, chain, ops, kid int
	from                 bool // commas chain FROM items (left-deep joins)
}

func (f *depthFrame) depth() int { return f.base + f.sel + f.chain + f.ops + f.kid }

// reset starts a new run after a separator between siblings.
func (f *depthFrame) reset() { f.ops, f.kid = 0, 0 }

// opWords are keywords that build a tree level over their operands.
var opWords = map[string]bool{
	"and": true, "or": true, "xor": true, "not": true, "is": true, "in": true, "like": true, "ilike": true,
	"between": true, "regexp": true, "collate": true, "exists": true, "any": true, "some": true,
	"interval": true, "div": true, "mod": true, "escape": true,
	"distinct": true, // IS DISTINCT FROM: <=> under NOT
}

// clauseWords start a clause: the expression run before them ends, and a
// FROM list with it. A clause adds structure levels (WITH: clause, CTE,
// subquery; ORDER BY in a call: clause, item), counted as a SELECT's.
var clauseWords = map[string]bool{
	"where": true, "group": true, "having": true, "order": true, "limit": true, "offset": true, "window": true,
	"values": true, "set": true, "returning": true, "into": true, "fetch": true, "for": true, "with": true,
	"partition": true, "rows": true, "range": true,
}

// selDepth bounds the levels a query block or clause adds above its
// expressions: set operation, select list, statement, field, column name.
const selDepth = 8

// caseDepth bounds the levels of one CASE: the expression, a WHEN clause
// and its result.
const caseDepth = 3

// depthBound refuses (54001) a statement whose tokens could nest deeper
// than coarseDepth, before TiDB sees it.
func depthBound(src string, toks []token) error {
	if _, at := tokenDepth(toks, coarseDepth); at >= 0 {
		return limits.DepthError().WithPosition(charPos(src, toks[at].start))
	}
	return nil
}

// tokenDepth returns the bound on the depth of toks' tree and the index of
// the first token where it passes limit (-1 if none; the walk stops
// there).
func tokenDepth(toks []token, limit int) (bound, at int) {
	stack := []depthFrame{{base: 2}} // the statement and its first child
	pop := func(open byte) {
		f := stack[len(stack)-1]
		if len(stack) == 1 || f.open != open {
			return
		}
		stack = stack[:len(stack)-1]
		p := &stack[len(stack)-1]
		p.kid = max(p.kid, f.peak-f.base+f.lift)
	}
	for i, t := range toks {
		f := &stack[len(stack)-1]
		push := byte(0)
		switch {
		case t.kind == tkOp:
			switch t.val {
			case "(":
				push = '('
			case "[":
				f.ops++ // x[i] is a call around x
				push = '['
			case ")":
				pop('(')
			case "]":
				pop('[')
			case ",":
				if f.from {
					// FROM items chain into left-deep joins.
					f.chain++
					f.ops = 0
				} else {
					f.reset()
				}
			case ";", ".":
			default:
				f.ops++
			}
		case t.kind != tkIdent:
		case t.val == "case":
			push = 'c'
		case t.val == "end":
			pop('c')
		case t.val == "when" || t.val == "then" || t.val == "else":
			if f.open == 'c' {
				f.reset()
			}
		case t.val == "select" || t.val == "union" || t.val == "intersect" || t.val == "except":
			// A SELECT block's structure; set operations are lists, not
			// chains (TestDepthBoundCoversTree).
			f.reset()
			f.sel, f.chain, f.from = selDepth, 0, false
		case t.val == "from":
			// Not a reset: FROM also occurs inside expressions (IS
			// DISTINCT FROM, EXTRACT(x FROM y)).
			f.from = true
		case t.val == "join":
			// Not a reset either: the joins after a parenthesized join
			// wrap it.
			f.chain++
			f.ops = 0
		case t.val == "on" || t.val == "using":
			f.ops = 0
		case clauseWords[t.val]:
			f.reset()
			f.from, f.sel = false, selDepth
		case opWords[t.val]:
			f.ops++
		}
		f = &stack[len(stack)-1]
		d := f.depth()
		f.peak = max(f.peak, d)
		if push != 0 {
			lift := 1
			if push == 'c' {
				lift = caseDepth
			}
			d += lift
			stack = append(stack, depthFrame{open: push, base: d, lift: lift, peak: d})
		}
		bound = max(bound, d)
		if d > limit {
			return bound, i
		}
	}
	return bound, -1
}

// checkDepth refuses (54001) a parsed statement whose tree is deeper than
// limits.MaxDepth. Its own walk stops descending at the limit, so it is
// safe on any tree TiDB built; it also observes the context.
func checkDepth(tick *limits.Ticker, st *Statement) error {
	v := &depthVisitor{st: st, tick: tick}
	st.AST.Accept(v)
	return v.err
}

// depthVisitor measures a tree's depth without descending past the limit.
type depthVisitor struct {
	st    *Statement
	tick  *limits.Ticker
	depth int
	max   int // deepest level reached (for tests)
	err   error
}

func (v *depthVisitor) Enter(n ast.Node) (ast.Node, bool) {
	if v.err != nil {
		return n, true
	}
	if err := v.tick.Tick(); err != nil {
		v.err = err
		return n, true
	}
	if v.depth >= limits.MaxDepth {
		err := limits.DepthError()
		if x, ok := n.(ast.ExprNode); ok {
			err = err.WithPosition(v.st.Pos(x))
		} else {
			err = err.WithPosition(v.st.charPos(v.st.Start))
		}
		v.err = err
		return n, true
	}
	v.depth++
	v.max = max(v.max, v.depth)
	return n, false
}

func (v *depthVisitor) Leave(n ast.Node) (ast.Node, bool) {
	if v.err == nil {
		v.depth--
	}
	return n, true
}
