package parser

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// mkFrameExclude is the first PARTITION BY item standing for a frame's
// EXCLUDE option: `#frame_exclude`(n). Recovery takes it off again into
// Statement.FrameExclude.
const mkFrameExclude = "#frame_exclude"

// FrameOffsetUnit is the TimeUnit of every frame bound with an offset
// expression other than a bare number: TiDB's grammar takes only
// `INTERVAL expr unit PRECEDING` there, so `expr PRECEDING` rides on it
// with this unit, and the bound's Expr is the user's offset (an
// INTERVAL '5 minutes' literal is the usual `#cast` call).
const FrameOffsetUnit = ast.TimeUnitMicrosecond

// Frame exclusions, as Statement.FrameExclude records them.
const (
	ExcludeCurrentRow = 1
	ExcludeGroup      = 2
	ExcludeTies       = 3
)

// frameFollows reports whether t can start a frame extent (and not
// continue an ORDER BY key named rows, range or groups).
func frameFollows(t token) bool {
	switch t.kind {
	case tkNumber, tkString, tkParam:
		return true
	case tkIdent:
		return !t.is("asc") && !t.is("desc") && !t.is("nulls") && !t.is("using")
	case tkOp:
		return t.isOp("(") || t.isOp("-") || t.isOp("+")
	}
	return false
}

// windowForms rewrites Postgres frame clauses into TiDB's spelling: an
// offset that is not a bare number becomes INTERVAL offset MICROSECOND
// (see FrameOffsetUnit), and EXCLUDE CURRENT ROW | GROUP | TIES | NO
// OTHERS, which TiDB lacks, is dropped and marked in the window's
// PARTITION BY.
func windowForms(src string, toks []token, e *edits) error {
	var stack []int
	for i, t := range toks {
		switch {
		case t.isOp("("):
			stack = append(stack, i)
		case t.isOp(")"):
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case (t.is("rows") || t.is("range") || t.is("groups")) && len(stack) > 0 && i+1 < len(toks) &&
			frameFollows(toks[i+1]):
			p := stack[len(stack)-1]
			if p == 0 || !(toks[p-1].is("over") || toks[p-1].is("as")) {
				continue
			}
			end := matchParen(toks, p)
			if end < 0 {
				continue
			}
			if err := frameClause(src, toks, e, p, i, end); err != nil {
				return err
			}
		}
	}
	return nil
}

// frameClause rewrites the frame clause toks[unit:end) of the window
// body opened at toks[open].
func frameClause(src string, toks []token, e *edits, open, unit, end int) error {
	// The EXCLUDE option ends the clause.
	stop := end
	exclude := 0
	for k := unit + 1; k < end; k++ {
		if toks[k].isOp("(") {
			if m := matchParen(toks, k); m > 0 {
				k = m
			}
			continue
		}
		if !toks[k].is("exclude") {
			continue
		}
		stop = k
		rest := end - k - 1
		switch {
		case rest == 2 && toks[k+1].is("current") && toks[k+2].is("row"):
			exclude = ExcludeCurrentRow
		case rest == 1 && toks[k+1].is("group"):
			exclude = ExcludeGroup
		case rest == 1 && toks[k+1].is("ties"):
			exclude = ExcludeTies
		case rest == 2 && toks[k+1].is("no") && toks[k+2].is("others"):
		default:
			return syntaxErrAt(src, toks, min(k+1, end))
		}
		for j := k; j < end; j++ {
			e.drop(j)
		}
		break
	}
	// The bounds: BETWEEN b AND b, or a single b.
	var bounds [][2]int
	if toks[unit+1].is("between") {
		and := -1
		for k := unit + 2; k < stop; k++ {
			if toks[k].isOp("(") {
				if m := matchParen(toks, k); m > 0 {
					k = m
				}
				continue
			}
			if toks[k].is("and") {
				and = k
				break
			}
		}
		if and < 0 {
			return syntaxErrAt(src, toks, stop)
		}
		bounds = [][2]int{{unit + 2, and}, {and + 1, stop}}
	} else {
		bounds = [][2]int{{unit + 1, stop}}
	}
	for _, b := range bounds {
		lo, hi := b[0], b[1]
		if hi-lo < 2 || !(toks[hi-1].is("preceding") || toks[hi-1].is("following")) {
			continue // UNBOUNDED/CURRENT ROW, or an error TiDB reports
		}
		if toks[lo].is("unbounded") && hi-lo == 2 {
			continue
		}
		if hi-lo == 2 && toks[lo].kind == tkNumber {
			continue // TiDB's own NumLiteral PRECEDING
		}
		e.prepend(lo, "INTERVAL ")
		e.prepend(hi-1, "MICROSECOND ")
	}
	if exclude == 0 {
		return nil
	}
	// Plant the marker as the first PARTITION BY item.
	mark := "`" + mkFrameExclude + "`(" + string(rune('0'+exclude)) + ")"
	for k := open + 1; k < unit; k++ {
		if toks[k].isOp("(") {
			if m := matchParen(toks, k); m > 0 {
				k = m
			}
			continue
		}
		if toks[k].is("partition") && k+1 < unit && toks[k+1].is("by") {
			e.appendAfter(k+1, " "+mark+",")
			return nil
		}
	}
	at := open
	if open+1 < unit && (toks[open+1].kind == tkIdent || toks[open+1].kind == tkQIdent) && !toks[open+1].is("order") && !toks[open+1].is("partition") {
		at = open + 1 // an existing window's name comes first
	}
	e.appendAfter(at, " PARTITION BY "+mark+" ")
	return nil
}

// windowRecovery takes the EXCLUDE markers off the windows.
type windowRecovery struct{ st *Statement }

func (v *windowRecovery) spec(s *ast.WindowSpec) {
	if s.PartitionBy == nil || len(s.PartitionBy.Items) == 0 {
		return
	}
	f, ok := markerCall(s.PartitionBy.Items[0].Expr, mkFrameExclude)
	if !ok || len(f.Args) != 1 || s.Frame == nil {
		return
	}
	n, _ := f.Args[0].(ast.ValueExpr)
	if n == nil {
		return
	}
	x, ok := n.GetValue().(int64)
	if !ok {
		return
	}
	if v.st.FrameExclude == nil {
		v.st.FrameExclude = map[*ast.FrameClause]int{}
	}
	v.st.FrameExclude[s.Frame] = int(x)
	s.PartitionBy.Items = s.PartitionBy.Items[1:]
	if len(s.PartitionBy.Items) == 0 {
		s.PartitionBy = nil
	}
}

func (v *windowRecovery) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.WindowFuncExpr:
		v.spec(&x.Spec)
	case *ast.SelectStmt:
		for i := range x.WindowSpecs {
			v.spec(&x.WindowSpecs[i])
		}
	}
	return n, false
}

func (v *windowRecovery) Leave(n ast.Node) (ast.Node, bool) { return n, true }
