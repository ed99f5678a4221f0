package parser

import (
	"math"
	"strconv"

	"github.com/asofsql/asofsql/sqlerr"
)

// DeclareStmt is DECLARE name [BINARY] [ASENSITIVE | INSENSITIVE]
// [[NO] SCROLL] CURSOR [{WITH | WITHOUT} HOLD] FOR query. Scroll is nil
// when neither SCROLL nor NO SCROLL is written. Query is the SELECT (also
// VALUES, TABLE, WITH, parenthesized); its $n are the DECLARE's.
type DeclareStmt struct {
	Name   string
	Binary bool
	Scroll *bool
	Hold   bool
	Query  *Statement
}

// FetchDirection is how FETCH and MOVE count: Count rows forward or
// backward, or to the Count-th row from the start (Absolute; negative
// from the end) or from the current row (Relative).
type FetchDirection uint8

// Fetch directions, as Postgres' FetchDirection.
const (
	FetchForward FetchDirection = iota
	FetchBackward
	FetchAbsolute
	FetchRelative
)

// FetchAll is the Count of ALL (Postgres' FETCH_ALL).
const FetchAll = math.MaxInt64

// FetchStmt is FETCH (or MOVE, with Move set) [direction] [FROM | IN]
// name. NEXT is Forward 1, PRIOR Backward 1, FIRST Absolute 1, LAST
// Absolute -1, a bare count n Forward n, ALL Forward FetchAll.
type FetchStmt struct {
	Name      string
	Direction FetchDirection
	Count     int64
	Move      bool
}

// CloseStmt is CLOSE {name | ALL}.
type CloseStmt struct {
	Name string
	All  bool
}

// SetTransactionStmt is SET [LOCAL] TRANSACTION modes (the open
// transaction's) or SET SESSION CHARACTERISTICS AS TRANSACTION modes
// (Session: the defaults of later transactions). The modes are
// TransactionStmt's; at least one is given.
type SetTransactionStmt struct {
	Session    bool
	Isolation  string
	ReadOnly   *bool
	Deferrable *bool
}

func (*DeclareStmt) node()        {}
func (*FetchStmt) node()          {}
func (*CloseStmt) node()          {}
func (*SetTransactionStmt) node() {}

// isCursorForm reports the statements of this file by their first word.
func isCursorForm(t token) bool {
	return t.is("declare") || t.is("fetch") || t.is("move") || t.is("close")
}

// parseCursor parses DECLARE, FETCH, MOVE and CLOSE.
func parseCursor(in *input, toks []token, end int) (Node, error) {
	c := &cursor{in: in, src: in.src, toks: toks, end: end}
	first := c.peek()
	c.i++
	switch first.val {
	case "declare":
		return c.declare()
	case "fetch", "move":
		return c.fetch(first.val == "move")
	}
	return c.closeCursor()
}

// codeInvalidCursorDefinition is Postgres' 42P11.
const codeInvalidCursorDefinition = "42P11"

func (c *cursor) declare() (Node, error) {
	st := &DeclareStmt{}
	name, err := c.name()
	if err != nil {
		return nil, err
	}
	st.Name = name
	var scroll, noScroll, sensitive, insensitive bool
	for !c.accept("cursor") {
		switch {
		case c.accept("binary"):
			st.Binary = true
		case c.accept("insensitive"):
			insensitive = true
		case c.accept("asensitive"):
			sensitive = true
		case c.accept("scroll"):
			scroll = true
		case c.accept("no"):
			if err := c.expect("scroll"); err != nil {
				return nil, err
			}
			noScroll = true
		default:
			return nil, c.fail()
		}
	}
	switch {
	case c.accept("with"):
		if err := c.expect("hold"); err != nil {
			return nil, err
		}
		st.Hold = true
	case c.accept("without"):
		if err := c.expect("hold"); err != nil {
			return nil, err
		}
	}
	if err := c.expect("for"); err != nil {
		return nil, err
	}
	if c.done() {
		return nil, c.fail()
	}
	rest := c.toks[c.i:]
	if !(rest[0].isOp("(") || rest[0].is("select") || rest[0].is("values") || rest[0].is("table") || rest[0].is("with")) {
		return nil, c.fail()
	}
	if st.Query, err = parseStatement(c.in, rest, c.end); err != nil {
		return nil, err
	}
	// Postgres checks the options after the grammar, at analysis.
	if scroll && noScroll {
		return nil, sqlerr.New(codeInvalidCursorDefinition, "cannot specify both SCROLL and NO SCROLL")
	}
	if sensitive && insensitive {
		return nil, sqlerr.New(codeInvalidCursorDefinition, "cannot specify both ASENSITIVE and INSENSITIVE")
	}
	if scroll || noScroll {
		st.Scroll = &scroll
	}
	return st, nil
}

func (c *cursor) fetch(move bool) (Node, error) {
	st := &FetchStmt{Direction: FetchForward, Count: 1, Move: move}
	// FETCH name and FETCH FROM name: the direction is NEXT.
	if c.i == len(c.toks)-1 {
		return c.fetchName(st)
	}
	switch t := c.peek(); {
	case c.accept("next"):
	case c.accept("prior"):
		st.Direction = FetchBackward
	case c.accept("first"):
		st.Direction = FetchAbsolute
	case c.accept("last"):
		st.Direction, st.Count = FetchAbsolute, -1
	case c.accept("absolute"), c.accept("relative"):
		st.Direction = FetchAbsolute
		if t.is("relative") {
			st.Direction = FetchRelative
		}
		n, err := c.signedInt()
		if err != nil {
			return nil, err
		}
		st.Count = n
	case c.accept("all"):
		st.Count = FetchAll
	case c.accept("forward"), c.accept("backward"):
		if t.is("backward") {
			st.Direction = FetchBackward
		}
		switch {
		case c.accept("all"):
			st.Count = FetchAll
		case c.peek().kind == tkNumber || c.peek().isOp("-") || c.peek().isOp("+"):
			n, err := c.signedInt()
			if err != nil {
				return nil, err
			}
			st.Count = n
		}
	case t.kind == tkNumber || t.isOp("-") || t.isOp("+"):
		n, err := c.signedInt()
		if err != nil {
			return nil, err
		}
		st.Count = n
	}
	return c.fetchName(st)
}

// fetchName reads [FROM | IN] name and the end of the statement.
func (c *cursor) fetchName(st *FetchStmt) (Node, error) {
	if !c.accept("from") {
		c.accept("in")
	}
	name, err := c.name()
	if err != nil {
		return nil, err
	}
	st.Name = name
	return st, c.expectEnd()
}

// signedInt reads Postgres' SignedIconst: an optionally signed integer
// that fits in 32 bits (larger numbers are not integer constants to its
// grammar).
func (c *cursor) signedInt() (int64, error) {
	neg := false
	if c.peek().isOp("-") || c.peek().isOp("+") {
		neg = c.peek().isOp("-")
		c.i++
	}
	t := c.peek()
	if t.kind != tkNumber {
		return 0, c.fail()
	}
	n, err := strconv.ParseInt(t.val, 10, 32)
	if err != nil {
		return 0, c.fail()
	}
	c.i++
	if neg {
		n = -n
	}
	return n, nil
}

func (c *cursor) closeCursor() (Node, error) {
	if c.accept("all") {
		return &CloseStmt{All: true}, c.expectEnd()
	}
	name, err := c.name()
	if err != nil {
		return nil, err
	}
	return &CloseStmt{Name: name}, c.expectEnd()
}

// setTransaction parses the rest of SET [LOCAL] TRANSACTION and SET
// SESSION CHARACTERISTICS AS TRANSACTION (session) after TRANSACTION.
func (c *cursor) setTransaction(session bool) (Node, error) {
	if c.peek().is("snapshot") {
		return nil, c.unsupported("SET TRANSACTION SNAPSHOT")
	}
	if c.done() {
		return nil, c.fail()
	}
	n, err := c.txnModes(TxnBegin)
	if err != nil {
		return nil, err
	}
	t := n.(*TransactionStmt)
	return &SetTransactionStmt{Session: session, Isolation: t.Isolation, ReadOnly: t.ReadOnly, Deferrable: t.Deferrable}, nil
}
