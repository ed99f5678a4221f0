package planner

import (
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
)

// Declare is DECLARE Name CURSOR FOR Query: the query as planned now,
// which the cursor streams (Scroll: SCROLL was written; NoScroll: NO
// SCROLL was, or neither, since asofsql's plans run forward only; Hold:
// WITH HOLD; Binary: BINARY, the wire format of FETCH's rows).
type Declare struct {
	Name     string
	Query    *Query
	Scroll   bool
	NoScroll bool
	Hold     bool
	Binary   bool
}

// FetchDirection is how FETCH and MOVE count (see parser.FetchDirection).
type FetchDirection uint8

// Fetch directions.
const (
	FetchForward FetchDirection = iota
	FetchBackward
	FetchAbsolute
	FetchRelative
)

// FetchAll is the Count of FETCH ALL.
const FetchAll = parser.FetchAll

// Fetch is FETCH or MOVE (Move) of the cursor Name: Direction and Count
// as written. Columns are the cursor's, as it was when the statement was
// planned (FETCH returns them; MOVE returns no rows), and Binary is set
// for a BINARY cursor.
type Fetch struct {
	Name      string
	Direction FetchDirection
	Count     int64
	Move      bool
	Columns   []Column
	Binary    bool
}

// CloseCursor is CLOSE Name, or CLOSE ALL.
type CloseCursor struct {
	Name string
	All  bool
}

// SetTransaction is SET TRANSACTION modes (the open transaction's) or
// SET SESSION CHARACTERISTICS AS TRANSACTION modes (Session: the
// defaults). Isolation is "" or a level as in Transaction; ReadOnly and
// Deferrable are nil unless written.
type SetTransaction struct {
	Session    bool
	Isolation  string
	ReadOnly   *bool
	Deferrable *bool
}

func (*Declare) Tag() string        { return "DECLARE CURSOR" }
func (*SetTransaction) Tag() string { return "SET" }

// Tag of FETCH and MOVE is completed with the rows fetched or moved
// over ("FETCH 5", "MOVE 3").
func (p *Fetch) Tag() string {
	if p.Move {
		return "MOVE"
	}
	return "FETCH"
}

func (p *CloseCursor) Tag() string {
	if p.All {
		return "CLOSE CURSOR ALL"
	}
	return "CLOSE CURSOR"
}

func (p *Declare) Shape() Shape      { return Shape{Params: p.Query.Params} }
func (*CloseCursor) Shape() Shape    { return Shape{} }
func (*SetTransaction) Shape() Shape { return Shape{} }

func (p *Fetch) Shape() Shape {
	if p.Move {
		return Shape{}
	}
	return Shape{Columns: p.Columns, Rows: true}
}

// Reads of DECLARE are its query's: the cursor reads them as it is
// fetched from, on the DECLARE's snapshot.
func (p *Declare) Reads() []*catalog.TableInfo      { return p.Query.Reads() }
func (*Fetch) Reads() []*catalog.TableInfo          { return nil }
func (*CloseCursor) Reads() []*catalog.TableInfo    { return nil }
func (*SetTransaction) Reads() []*catalog.TableInfo { return nil }

// ErrNoCursor is Postgres' error for a cursor name that is not declared.
func ErrNoCursor(name string) error {
	return sqlerr.New(sqlerr.InvalidCursorName, "cursor \"%s\" does not exist", name)
}

func declare(cat Catalog, n *parser.DeclareStmt, opts *Options) (Plan, error) {
	p, err := Build(cat, n.Query, opts)
	if err != nil {
		return nil, err
	}
	q, ok := p.(*Query)
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "DECLARE CURSOR of %s is not supported", p.Tag())
	}
	d := &Declare{Name: n.Name, Query: q, Hold: n.Hold, Binary: n.Binary}
	if n.Scroll != nil && *n.Scroll {
		d.Scroll = true
	} else {
		d.NoScroll = true
	}
	return d, nil
}

func fetch(n *parser.FetchStmt, opts *Options) (Plan, error) {
	p := &Fetch{Name: n.Name, Direction: FetchDirection(n.Direction), Count: n.Count, Move: n.Move}
	if n.Move {
		return p, nil // MOVE returns no rows: the cursor is looked up when it runs
	}
	ok := false
	if opts.Cursor != nil {
		p.Columns, p.Binary, ok = opts.Cursor(n.Name)
	}
	if !ok {
		return nil, ErrNoCursor(n.Name)
	}
	return p, nil
}
