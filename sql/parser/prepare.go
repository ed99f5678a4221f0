package parser

import (
	"strings"

	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// PrepareStmt is PREPARE name [(type, ...)] AS statement. Stmt is what
// Postgres prepares: a SELECT (also VALUES, TABLE, WITH, parenthesized),
// INSERT, UPDATE or DELETE. Its $n are its own: the PREPARE statement
// itself has no parameters. Types are the declared types of $1.., in
// order; the statement may use more, whose types are inferred.
type PrepareStmt struct {
	Name  string
	Types []sqltypes.Type
	Stmt  *Statement
}

// ExecuteStmt is EXECUTE name [(arg, ...)]. Args is nil without an
// argument list; otherwise it is a SELECT statement (AST an
// *ast.SelectStmt) whose select list is the arguments, with positions into
// the EXECUTE's text, so the planner binds them as it binds any
// expression. The arguments' own $n are the EXECUTE statement's.
type ExecuteStmt struct {
	Name string
	Args *Statement
}

// DeallocateStmt is DEALLOCATE [PREPARE] {name | ALL}.
type DeallocateStmt struct {
	Name string
	All  bool
}

// DiscardStmt is DISCARD {ALL | PLANS | SEQUENCES | TEMP | TEMPORARY}.
// What is "ALL", "PLANS", "SEQUENCES" or "TEMP" (TEMPORARY's tag too).
type DiscardStmt struct {
	What string
}

func (*PrepareStmt) node()    {}
func (*ExecuteStmt) node()    {}
func (*DeallocateStmt) node() {}
func (*DiscardStmt) node()    {}

// isPreparedForm reports the statements of this file by their first word.
func isPreparedForm(t token) bool {
	return t.is("prepare") || t.is("execute") || t.is("deallocate") || t.is("discard")
}

// parsePrepared parses PREPARE, EXECUTE, DEALLOCATE and DISCARD.
func parsePrepared(in *input, toks []token, end int) (Node, error) {
	c := &cursor{in: in, src: in.src, toks: toks, end: end}
	first := c.peek()
	c.i++
	switch first.val {
	case "prepare":
		return c.prepare()
	case "execute":
		return c.execute()
	case "deallocate":
		return c.deallocate()
	}
	return c.discard()
}

// preparable are the first words of the statements PREPARE takes
// (Postgres' PreparableStmt; MERGE is refused as a statement of its own).
var preparable = map[string]bool{"select": true, "with": true, "values": true, "table": true,
	"insert": true, "update": true, "delete": true, "merge": true}

func (c *cursor) prepare() (Node, error) {
	name, err := c.name()
	if err != nil {
		return nil, err
	}
	st := &PrepareStmt{Name: name}
	if c.accept("(") {
		for {
			t, next, err := parseType(c.src, c.toks, c.i)
			if err != nil {
				return nil, err
			}
			st.Types = append(st.Types, t)
			c.i = next
			if c.accept(")") {
				break
			}
			if err := c.expect(","); err != nil {
				return nil, err
			}
		}
	}
	if err := c.expect("as"); err != nil {
		return nil, err
	}
	if c.done() {
		return nil, c.fail()
	}
	rest := c.toks[c.i:]
	if !(rest[0].isOp("(") || rest[0].kind == tkIdent && preparable[rest[0].val]) {
		return nil, c.fail()
	}
	if st.Stmt, err = parseStatement(c.in, rest, c.end); err != nil {
		return nil, err
	}
	return st, nil
}

// argClauses are words that cannot stand at the top level of an EXECUTE
// argument list: the rest of a SELECT that the arguments are parsed as.
var argClauses = map[string]bool{"from": true, "where": true, "group": true, "having": true, "order": true,
	"limit": true, "offset": true, "window": true, "union": true, "except": true, "intersect": true,
	"as": true, "into": true, "fetch": true, "for": true, "distinct": true}

func (c *cursor) execute() (Node, error) {
	name, err := c.name()
	if err != nil {
		return nil, err
	}
	st := &ExecuteStmt{Name: name}
	if c.done() {
		return st, nil
	}
	open := c.i
	if !c.peek().isOp("(") {
		return nil, c.fail()
	}
	m := matchParen(c.toks, open)
	switch {
	case m < 0:
		return nil, syntaxErrAt(c.src, c.toks, len(c.toks))
	case m == open+1:
		return nil, syntaxErrAt(c.src, c.toks, m)
	case m != len(c.toks)-1:
		return nil, syntaxErrAt(c.src, c.toks, m+1)
	}
	args := c.toks[open+1 : m]
	// The arguments are parsed as the select list of a SELECT, which
	// would also take a FROM, an alias or a *: refuse those where
	// Postgres' grammar does.
	depth := 0
	for k, t := range args {
		switch {
		case t.isOp("(") || t.isOp("["):
			depth++
		case t.isOp(")") || t.isOp("]"):
			depth--
		case depth > 0:
		case k == 0 && t.is("all"):
			return nil, syntaxErrAt(c.src, args, k)
		case t.isOp("*") && (k == 0 || args[k-1].isOp(",")) && (k == len(args)-1 || args[k+1].isOp(",")):
			return nil, syntaxErrAt(c.src, args, k)
		case t.kind == tkIdent && argClauses[t.val]:
			// IS [NOT] DISTINCT FROM is an operator.
			distinctFrom := t.is("distinct") && k+1 < len(args) && args[k+1].is("from") ||
				t.is("from") && k > 0 && args[k-1].is("distinct")
			if !distinctFrom {
				return nil, syntaxErrAt(c.src, args, k)
			}
		}
	}
	as := &Statement{src: c.src, Start: args[0].start, End: args[len(args)-1].end}
	as.Text = c.src[as.Start:as.End]
	if _, err := parseTiDB(c.in, as, args, c.toks[m].start, "select "); err != nil {
		return nil, err
	}
	sel, ok := as.AST.(*ast.SelectStmt)
	if !ok || sel.From != nil || sel.Where != nil || sel.GroupBy != nil || sel.Having != nil || sel.OrderBy != nil ||
		sel.Limit != nil || sel.Distinct || sel.With != nil || sel.Fields == nil {
		return nil, syntaxErrAt(c.src, c.toks, open)
	}
	for _, f := range sel.Fields.Fields {
		if f.WildCard != nil || f.AsName.O != "" || f.Expr == nil {
			return nil, syntaxErrAt(c.src, c.toks, open)
		}
	}
	st.Args = as
	return st, nil
}

func (c *cursor) deallocate() (Node, error) {
	// DEALLOCATE prepare names a statement called "prepare", as in
	// Postgres.
	if c.peek().is("prepare") && c.i+1 < len(c.toks) {
		c.i++
	}
	st := &DeallocateStmt{}
	if c.accept("all") {
		st.All = true
	} else {
		name, err := c.name()
		if err != nil {
			return nil, err
		}
		st.Name = name
	}
	return st, c.expectEnd()
}

func (c *cursor) discard() (Node, error) {
	t := c.peek()
	st := &DiscardStmt{}
	switch {
	case t.is("all"), t.is("plans"), t.is("sequences"), t.is("temp"):
		st.What = strings.ToUpper(t.val)
	case t.is("temporary"):
		st.What = "TEMP"
	default:
		return nil, c.fail()
	}
	c.i++
	return st, c.expectEnd()
}
