package parser

import (
	"strings"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// ShowStmt is SHOW name, SHOW ALL, SHOW TIME ZONE, SHOW TRANSACTION
// ISOLATION LEVEL. Name is the setting's canonical lowercase name
// ("timezone", "transaction_isolation", ...); empty when All.
type ShowStmt struct {
	Name string
	All  bool
}

// SetStmt is SET [SESSION | LOCAL] name {TO | =} value [, ...],
// SET TIME ZONE value (Name "timezone") and SET NAMES value (Name
// "client_encoding"). Values are the items as text (strings decoded,
// identifiers lowercased, numbers as written with their sign); Default is
// set for DEFAULT (and SET TIME ZONE LOCAL), with no Values.
//
// RESET name, RESET TIME ZONE and RESET ALL are SetStmts too, with Reset
// and Default set (a RESET is SET name TO DEFAULT with its own command
// tag); RESET ALL has All set and no Name.
type SetStmt struct {
	Name    string
	Values  []string
	Default bool
	Local   bool
	Reset   bool
	All     bool
}

// TxnKind is the kind of a transaction-control statement.
type TxnKind uint8

const (
	// TxnBegin is BEGIN [WORK | TRANSACTION] or START TRANSACTION.
	TxnBegin TxnKind = iota + 1
	// TxnCommit is COMMIT or END.
	TxnCommit
	// TxnRollback is ROLLBACK or ABORT.
	TxnRollback
)

// TransactionStmt is BEGIN/START TRANSACTION/COMMIT/END/ROLLBACK/ABORT with
// the transaction modes of BEGIN. Isolation is "" or one of "serializable",
// "repeatable read", "read committed", "read uncommitted"; ReadOnly and
// Deferrable are nil unless written.
type TransactionStmt struct {
	Kind TxnKind
	// Start is START TRANSACTION, whose command tag differs from BEGIN's.
	Start      bool
	Isolation  string
	ReadOnly   *bool
	Deferrable *bool
}

// CopyFormat is the data format of COPY.
type CopyFormat string

// COPY formats.
const (
	CopyText    CopyFormat = "text"
	CopyCSV     CopyFormat = "csv"
	CopyBinary  CopyFormat = "binary"
	CopyParquet CopyFormat = "parquet"
)

// CopyStmt is COPY table [(cols)] FROM {STDIN | 'path'} [WITH (...)] or
// COPY {table [(cols)] | (query)} TO {STDOUT | 'path'} [WITH (...)].
// Exactly one of Table and Query is set. Path is "" for STDIN/STDOUT.
// Delimiter and Null are nil unless given (the format's defaults apply:
// tab and \N for text, comma and empty string for csv).
type CopyStmt struct {
	Table     *TableName
	Query     *Statement
	Columns   []string
	From      bool
	Path      string
	Format    CopyFormat
	Header    bool
	Delimiter *string
	Null      *string
}

// TableName is a possibly schema-qualified table name; unquoted parts are
// lowercased as in Postgres.
type TableName struct {
	Schema, Name string
}

// String renders the name as written in messages.
func (t TableName) String() string {
	if t.Schema != "" {
		return t.Schema + "." + t.Name
	}
	return t.Name
}

// ColumnDef is one column of CREATE TABLE (or ALTER TABLE ADD COLUMN)
// with its exact SQL type.
type ColumnDef struct {
	Name    string
	Type    sqltypes.Type
	NotNull bool
	// Default is the DEFAULT expression, parsed as the select list of a
	// one-column SELECT (DefaultExpr gives the expression); nil without
	// one.
	Default *Statement
	// Pos is the 1-based character position of the column name.
	Pos int
}

// CreateTableStmt is CREATE [TEMP] TABLE [IF NOT EXISTS] name (columns...)
// [ORDER BY (col, ...)], or CREATE [TEMP] TABLE [IF NOT EXISTS] name
// [(column names)] [ORDER BY (col, ...)] AS query [WITH [NO] DATA] (AsQuery
// set, ColumnNames the optional names, WithData false for WITH NO DATA).
// PRIMARY KEY columns are NOT NULL and listed in PrimaryKey; OrderBy is the
// declared ascending ordering the catalog keeps, checked against Columns
// (the planner checks it against the query's columns for AS).
type CreateTableStmt struct {
	Table       TableName
	IfNotExists bool
	Temporary   bool
	Columns     []ColumnDef
	PrimaryKey  []string
	OrderBy     []string
	// OrderByPos are the 1-based positions of the OrderBy names.
	OrderByPos  []int
	AsQuery     *Statement
	ColumnNames []string
	WithData    bool
}

// ExplainStmt is EXPLAIN [ANALYZE] [VERBOSE] statement, or the
// parenthesized option list form with ANALYZE/VERBOSE and FORMAT TEXT.
type ExplainStmt struct {
	Analyze bool
	Verbose bool
	Stmt    *Statement
}

func (*ShowStmt) node()        {}
func (*SetStmt) node()         {}
func (*TransactionStmt) node() {}
func (*CopyStmt) node()        {}
func (*CreateTableStmt) node() {}
func (*ExplainStmt) node()     {}

// cursor walks the tokens of one of our own statements.
type cursor struct {
	in   *input
	src  string
	toks []token
	i    int
	end  int // byte offset of the statement's end
}

func (c *cursor) peek() token {
	if c.i < len(c.toks) {
		return c.toks[c.i]
	}
	return token{}
}

func (c *cursor) done() bool { return c.i >= len(c.toks) }

// accept consumes the keyword or punctuation w if it is next.
func (c *cursor) accept(w string) bool {
	t := c.peek()
	if t.is(w) || t.isOp(w) {
		c.i++
		return true
	}
	return false
}

func (c *cursor) fail() error { return syntaxErrAt(c.src, c.toks, c.i) }

func (c *cursor) expect(w string) error {
	if !c.accept(w) {
		return c.fail()
	}
	return nil
}

func (c *cursor) expectEnd() error {
	if !c.done() {
		return c.fail()
	}
	return nil
}

// name consumes an identifier (quoted or not).
func (c *cursor) name() (string, error) {
	t := c.peek()
	if t.kind != tkIdent && t.kind != tkQIdent {
		return "", c.fail()
	}
	c.i++
	return t.val, nil
}

func (c *cursor) tableName() (TableName, error) {
	n, err := c.name()
	if err != nil {
		return TableName{}, err
	}
	if c.accept(".") {
		m, err := c.name()
		if err != nil {
			return TableName{}, err
		}
		return TableName{Schema: n, Name: m}, nil
	}
	return TableName{Name: n}, nil
}

// nameList consumes "(a, b, ...)".
func (c *cursor) nameList() ([]string, error) {
	if err := c.expect("("); err != nil {
		return nil, err
	}
	var out []string
	for {
		n, err := c.name()
		if err != nil {
			return nil, err
		}
		out = append(out, n)
		if c.accept(")") {
			return out, nil
		}
		if err := c.expect(","); err != nil {
			return nil, err
		}
	}
}

func (c *cursor) unsupported(what string) error {
	t := c.toks[min(c.i, len(c.toks)-1)]
	return posError(c.src, t.start, sqlerr.FeatureNotSupported, "%s is not supported", what)
}

func isCreateTable(toks []token) bool {
	for i := 1; i < len(toks) && i < 4; i++ {
		if toks[i].is("table") {
			return true
		}
		if !(toks[i].is("temp") || toks[i].is("temporary") || toks[i].is("unlogged")) {
			return false
		}
	}
	return false
}

// parseOwn parses the statements asofsql handles itself.
func parseOwn(in *input, toks []token, end int) (Node, error) {
	c := &cursor{in: in, src: in.src, toks: toks, end: end}
	first := c.peek()
	c.i++
	switch first.val {
	case "show":
		return c.show()
	case "set":
		return c.set()
	case "reset":
		return c.reset()
	case "begin":
		c.accept("work")
		c.accept("transaction")
		return c.txnModes(TxnBegin)
	case "start":
		if err := c.expect("transaction"); err != nil {
			return nil, err
		}
		n, err := c.txnModes(TxnBegin)
		if err != nil {
			return nil, err
		}
		n.(*TransactionStmt).Start = true
		return n, nil
	case "commit", "end", "rollback", "abort":
		kind := TxnCommit
		if first.val == "rollback" || first.val == "abort" {
			kind = TxnRollback
		}
		if !c.accept("work") {
			c.accept("transaction")
		}
		if c.peek().is("to") {
			return nil, c.unsupported("ROLLBACK TO SAVEPOINT")
		}
		if c.peek().is("and") {
			return nil, c.unsupported("AND CHAIN")
		}
		if err := c.expectEnd(); err != nil {
			return nil, err
		}
		return &TransactionStmt{Kind: kind}, nil
	case "copy":
		return c.copy()
	case "explain":
		return c.explain()
	case "create":
		if isCreateView(toks) {
			return c.createView()
		}
		return c.createTable()
	case "truncate":
		return c.truncate()
	case "alter":
		return c.alterTable()
	}
	return nil, syntaxErrAt(in.src, toks, 0)
}

func (c *cursor) show() (Node, error) {
	switch {
	case c.accept("all"):
		if err := c.expectEnd(); err != nil {
			return nil, err
		}
		return &ShowStmt{All: true}, nil
	case c.peek().is("time") && c.i+1 < len(c.toks) && c.toks[c.i+1].is("zone"):
		c.i += 2
		if err := c.expectEnd(); err != nil {
			return nil, err
		}
		return &ShowStmt{Name: "timezone"}, nil
	case c.peek().is("transaction") && c.i+1 < len(c.toks) && c.toks[c.i+1].is("isolation"):
		c.i += 2
		if err := c.expect("level"); err != nil {
			return nil, err
		}
		if err := c.expectEnd(); err != nil {
			return nil, err
		}
		return &ShowStmt{Name: "transaction_isolation"}, nil
	case c.peek().is("session") && c.i+1 < len(c.toks) && c.toks[c.i+1].is("authorization"):
		c.i += 2
		if err := c.expectEnd(); err != nil {
			return nil, err
		}
		return &ShowStmt{Name: "session_authorization"}, nil
	}
	name, err := c.dottedName()
	if err != nil {
		return nil, err
	}
	if err := c.expectEnd(); err != nil {
		return nil, err
	}
	return &ShowStmt{Name: name}, nil
}

// dottedName reads a configuration parameter name such as
// "application_name" or "asofsql.batch_size".
func (c *cursor) dottedName() (string, error) {
	n, err := c.name()
	if err != nil {
		return "", err
	}
	for c.accept(".") {
		m, err := c.name()
		if err != nil {
			return "", err
		}
		n += "." + m
	}
	return n, nil
}

func (c *cursor) set() (Node, error) {
	st := &SetStmt{}
	session := false
	if c.accept("local") {
		st.Local = true
	} else {
		session = c.accept("session")
	}
	switch {
	case c.accept("transaction"):
		return c.setTransaction(false)
	case session && c.peek().is("characteristics"):
		c.i++
		if err := c.expect("as"); err != nil {
			return nil, err
		}
		if err := c.expect("transaction"); err != nil {
			return nil, err
		}
		return c.setTransaction(true)
	case c.peek().is("role") || c.peek().is("authorization"):
		return nil, c.unsupported("SET " + strings.ToUpper(c.peek().val))
	case c.accept("names"):
		// SET NAMES is Postgres' alias for SET client_encoding.
		st.Name = "client_encoding"
		if c.accept("default") {
			st.Default = true
			return st, c.expectEnd()
		}
		v, err := c.setValue()
		if err != nil {
			return nil, err
		}
		st.Values = []string{v}
		return st, c.expectEnd()
	case c.peek().is("time") && c.i+1 < len(c.toks) && c.toks[c.i+1].is("zone"):
		c.i += 2
		st.Name = "timezone"
		if c.accept("local") || c.accept("default") {
			st.Default = true
			return st, c.expectEnd()
		}
		if c.peek().is("interval") {
			return nil, c.unsupported("SET TIME ZONE INTERVAL")
		}
		v, err := c.setValue()
		if err != nil {
			return nil, err
		}
		st.Values = []string{v}
		return st, c.expectEnd()
	}
	name, err := c.dottedName()
	if err != nil {
		return nil, err
	}
	st.Name = name
	if !c.accept("to") && !c.accept("=") {
		return nil, c.fail()
	}
	if c.accept("default") {
		st.Default = true
		return st, c.expectEnd()
	}
	for {
		v, err := c.setValue()
		if err != nil {
			return nil, err
		}
		st.Values = append(st.Values, v)
		if c.done() {
			return st, nil
		}
		if err := c.expect(","); err != nil {
			return nil, err
		}
	}
}

// reset parses RESET name | TIME ZONE | ALL.
func (c *cursor) reset() (Node, error) {
	st := &SetStmt{Reset: true, Default: true}
	switch {
	case c.accept("all"):
		st.All = true
	case c.peek().is("time") && c.i+1 < len(c.toks) && c.toks[c.i+1].is("zone"):
		c.i += 2
		st.Name = "timezone"
	case c.peek().is("session") && c.i+1 < len(c.toks) && c.toks[c.i+1].is("authorization"):
		return nil, c.unsupported("RESET SESSION AUTHORIZATION")
	case c.peek().is("role"):
		return nil, c.unsupported("RESET ROLE")
	default:
		name, err := c.dottedName()
		if err != nil {
			return nil, err
		}
		st.Name = name
	}
	return st, c.expectEnd()
}

// setValue reads one SET value: a string, a signed number or a word.
func (c *cursor) setValue() (string, error) {
	sign := ""
	if c.peek().isOp("-") || c.peek().isOp("+") {
		sign = c.peek().val
		c.i++
		if c.peek().kind != tkNumber {
			return "", c.fail()
		}
	}
	t := c.peek()
	switch t.kind {
	case tkString, tkIdent, tkQIdent:
		if sign != "" {
			return "", c.fail()
		}
		c.i++
		return t.val, nil
	case tkNumber:
		c.i++
		if sign == "+" {
			sign = ""
		}
		return sign + t.val, nil
	}
	return "", c.fail()
}

func (c *cursor) txnModes(kind TxnKind) (Node, error) {
	st := &TransactionStmt{Kind: kind}
	yes, no := true, false
	for !c.done() {
		switch {
		case c.accept("isolation"):
			if err := c.expect("level"); err != nil {
				return nil, err
			}
			switch {
			case c.accept("serializable"):
				st.Isolation = "serializable"
			case c.accept("repeatable"):
				if err := c.expect("read"); err != nil {
					return nil, err
				}
				st.Isolation = "repeatable read"
			case c.accept("read"):
				if c.accept("committed") {
					st.Isolation = "read committed"
				} else if c.accept("uncommitted") {
					st.Isolation = "read uncommitted"
				} else {
					return nil, c.fail()
				}
			default:
				return nil, c.fail()
			}
		case c.accept("read"):
			if c.accept("only") {
				st.ReadOnly = &yes
			} else if c.accept("write") {
				st.ReadOnly = &no
			} else {
				return nil, c.fail()
			}
		case c.accept("deferrable"):
			st.Deferrable = &yes
		case c.accept("not"):
			if err := c.expect("deferrable"); err != nil {
				return nil, err
			}
			st.Deferrable = &no
		default:
			return nil, c.fail()
		}
		if !c.done() {
			c.accept(",")
			if c.done() {
				return nil, c.fail()
			}
		}
	}
	return st, nil
}

func (c *cursor) explain() (Node, error) {
	st := &ExplainStmt{}
	if c.peek().isOp("(") {
		c.i++
		for {
			opt, err := c.name()
			if err != nil {
				return nil, err
			}
			optTok := c.toks[c.i-1]
			switch opt {
			case "analyze", "verbose", "costs", "timing", "summary", "buffers", "settings", "wal":
				on := true
				if v := c.peek(); v.kind == tkIdent || v.kind == tkNumber || v.kind == tkString {
					b, ok := parseBool(v.val)
					if !ok {
						return nil, posError(c.src, v.start, sqlerr.InvalidParameterValue, "%s requires a Boolean value", strings.ToUpper(opt))
					}
					on = b
					c.i++
				}
				if opt == "analyze" {
					st.Analyze = on
				} else if opt == "verbose" {
					st.Verbose = on
				}
			case "format":
				v, err := c.name()
				if err != nil {
					return nil, err
				}
				if v != "text" {
					return nil, posError(c.src, c.toks[c.i-1].start, sqlerr.FeatureNotSupported, "EXPLAIN format %q is not supported", v)
				}
			default:
				return nil, posError(c.src, optTok.start, sqlerr.SyntaxError, "unrecognized EXPLAIN option \"%s\"", opt)
			}
			if c.accept(")") {
				break
			}
			if err := c.expect(","); err != nil {
				return nil, err
			}
		}
	} else {
		st.Analyze = c.accept("analyze")
		st.Verbose = c.accept("verbose")
	}
	if c.done() {
		return nil, c.fail()
	}
	rest := c.toks[c.i:]
	if !(rest[0].is("select") || rest[0].is("with") || rest[0].is("values") || rest[0].is("table") ||
		rest[0].is("insert") || rest[0].is("update") || rest[0].is("delete") || rest[0].is("execute") || rest[0].isOp("(") ||
		rest[0].is("create") && isCreateTableAs(rest)) {
		return nil, syntaxErrAt(c.src, c.toks, c.i)
	}
	inner, err := parseStatement(c.in, rest, c.end)
	if err != nil {
		return nil, err
	}
	st.Stmt = inner
	return st, nil
}

// parseBool accepts Postgres' spellings of a Boolean option value.
func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true", "on", "1", "yes", "t", "y":
		return true, true
	case "false", "off", "0", "no", "f", "n":
		return false, true
	}
	return false, false
}

func (c *cursor) copy() (Node, error) {
	st := &CopyStmt{Format: CopyText}
	if c.peek().isOp("(") {
		open := c.i
		m := matchParen(c.toks, open)
		if m < 0 || m == open+1 {
			return nil, syntaxErrAt(c.src, c.toks, max(m, open+1))
		}
		inner := c.toks[open+1 : m]
		if !(inner[0].is("select") || inner[0].is("with") || inner[0].is("values") || inner[0].is("table")) {
			return nil, syntaxErrAt(c.src, c.toks, open+1)
		}
		q, err := parseStatement(c.in, inner, c.toks[m].start)
		if err != nil {
			return nil, err
		}
		st.Query = q
		c.i = m + 1
	} else {
		tn, err := c.tableName()
		if err != nil {
			return nil, err
		}
		st.Table = &tn
		if c.peek().isOp("(") {
			if st.Columns, err = c.nameList(); err != nil {
				return nil, err
			}
		}
	}
	stdio := "stdout"
	switch {
	case c.accept("from"):
		st.From, stdio = true, "stdin"
		if st.Query != nil {
			return nil, posError(c.src, c.toks[c.i-1].start, sqlerr.SyntaxError, "COPY (query) FROM is not supported: a query can only be copied TO")
		}
	case c.accept("to"):
	default:
		return nil, c.fail()
	}
	if !c.accept(stdio) {
		t := c.peek()
		switch {
		case t.is("program"):
			return nil, c.unsupported("COPY " + strings.ToUpper(c.toks[c.i-1].val) + " PROGRAM")
		case t.kind != tkString:
			return nil, c.fail()
		case t.val == "":
			// Path "" means STDIN/STDOUT in CopyStmt; a file needs a name.
			return nil, posError(c.src, t.start, sqlerr.InvalidParameterValue, "COPY file name must not be empty")
		}
		st.Path = t.val
		c.i++
	}
	if err := c.copyOptions(st); err != nil {
		return nil, err
	}
	return st, c.expectEnd()
}

// copyOptions parses [WITH] (option [value], ...) and the pre-9.0 bare
// spelling (CSV, HEADER, DELIMITER [AS] 'c', NULL [AS] 's', BINARY), then
// validates the combination.
func (c *cursor) copyOptions(st *CopyStmt) error {
	seen := map[string]bool{}
	set := func(t token, opt string) error {
		if seen[opt] {
			return posError(c.src, t.start, sqlerr.SyntaxError, "conflicting or redundant options").WithDetail("option %q given twice", opt)
		}
		seen[opt] = true
		return nil
	}
	str := func(opt string) (string, error) {
		v := c.peek()
		if v.kind != tkString {
			return "", posError(c.src, v.start, sqlerr.SyntaxError, "COPY option %q requires a string value", opt)
		}
		c.i++
		return v.val, nil
	}
	format := func(t token, v string) error {
		switch CopyFormat(v) {
		case CopyText, CopyCSV, CopyBinary, CopyParquet:
			st.Format = CopyFormat(v)
			return nil
		}
		return posError(c.src, t.start, sqlerr.InvalidParameterValue, "COPY format \"%s\" not recognized", v)
	}
	paren := false
	if c.accept("with") {
		if !c.peek().isOp("(") && c.done() {
			return c.fail()
		}
	}
	if c.accept("(") {
		paren = true
	}
	for !c.done() {
		if paren && c.accept(")") {
			paren = false
			break
		}
		t := c.peek()
		opt, err := c.name()
		if err != nil {
			return err
		}
		if err := set(t, opt); err != nil {
			return err
		}
		switch opt {
		case "format":
			v := c.peek()
			if v.kind != tkIdent && v.kind != tkString && v.kind != tkQIdent {
				return c.fail()
			}
			c.i++
			if err := format(v, strings.ToLower(v.val)); err != nil {
				return err
			}
		case "csv", "binary":
			if paren {
				return posError(c.src, t.start, sqlerr.SyntaxError, "option \"%s\" not recognized", opt)
			}
			if err := format(t, opt); err != nil {
				return err
			}
		case "header":
			st.Header = true
			if v := c.peek(); paren && (v.kind == tkIdent || v.kind == tkNumber || v.kind == tkString) {
				if v.is("match") {
					return posError(c.src, v.start, sqlerr.FeatureNotSupported, "HEADER MATCH is not supported")
				}
				b, ok := parseBool(v.val)
				if !ok {
					return posError(c.src, v.start, sqlerr.InvalidParameterValue, "header requires a Boolean value")
				}
				st.Header = b
				c.i++
			}
		case "delimiter", "null":
			if !paren {
				c.accept("as")
			}
			v, err := str(opt)
			if err != nil {
				return err
			}
			if opt == "delimiter" {
				if len(v) != 1 {
					return posError(c.src, t.start, sqlerr.InvalidParameterValue, "COPY delimiter must be a single one-byte character")
				}
				if v == "\n" || v == "\r" || v == "\\" {
					return posError(c.src, t.start, sqlerr.InvalidParameterValue, "COPY delimiter cannot be %q", v)
				}
				st.Delimiter = &v
			} else {
				if strings.ContainsAny(v, "\r\n") {
					return posError(c.src, t.start, sqlerr.InvalidParameterValue, "COPY null representation cannot use newline or carriage return")
				}
				st.Null = &v
			}
		case "quote", "escape", "force_quote", "force_not_null", "force_null", "encoding", "freeze", "oids":
			return posError(c.src, t.start, sqlerr.FeatureNotSupported, "COPY option %s is not supported", strings.ToUpper(opt))
		default:
			return posError(c.src, t.start, sqlerr.SyntaxError, "option \"%s\" not recognized", opt)
		}
		if paren && !c.peek().isOp(")") {
			if err := c.expect(","); err != nil {
				return err
			}
		}
	}
	if paren {
		return c.fail()
	}
	if st.Format == CopyBinary || st.Format == CopyParquet {
		for _, o := range []string{"delimiter", "null", "header"} {
			if seen[o] {
				return sqlerr.New(sqlerr.SyntaxError, "cannot specify %s in %s mode", strings.ToUpper(o), strings.ToUpper(string(st.Format))).
					WithPosition(charPos(c.src, c.toks[0].start))
			}
		}
	}
	if st.Delimiter != nil && st.Null != nil && strings.Contains(*st.Null, *st.Delimiter) {
		return sqlerr.New(sqlerr.InvalidParameterValue, "COPY delimiter must not appear in the NULL specification").
			WithPosition(charPos(c.src, c.toks[0].start))
	}
	return nil
}

func (c *cursor) createTable() (Node, error) {
	st := &CreateTableStmt{}
	if c.accept("temp") || c.accept("temporary") {
		st.Temporary = true
	} else if c.peek().is("unlogged") {
		return nil, c.unsupported("UNLOGGED")
	}
	if err := c.expect("table"); err != nil {
		return nil, err
	}
	if c.peek().is("if") {
		c.i++
		if err := c.expect("not"); err != nil {
			return nil, err
		}
		if err := c.expect("exists"); err != nil {
			return nil, err
		}
		st.IfNotExists = true
	}
	tn, err := c.tableName()
	if err != nil {
		return nil, err
	}
	st.Table = tn
	cols := map[string]int{}
	defined := false // column definitions given (not the AS form)
	switch {
	case c.peek().isOp("(") && c.nameListAhead():
		if st.ColumnNames, err = c.nameList(); err != nil {
			return nil, err
		}
		if !c.peek().is("as") && !c.peek().is("order") {
			// Postgres reads column definitions here and stops at the ")"
			// where a type should be.
			return nil, syntaxErrAt(c.src, c.toks, c.i-1)
		}
	case c.peek().is("as") || c.peek().is("order"):
	default:
		defined = true
		if err := c.expect("("); err != nil {
			return nil, err
		}
		if !c.accept(")") {
			for {
				if err := c.tableElement(st, cols); err != nil {
					return nil, err
				}
				if c.accept(")") {
					break
				}
				if err := c.expect(","); err != nil {
					return nil, err
				}
			}
		}
		for _, k := range st.PrimaryKey {
			i, ok := cols[k]
			if !ok {
				return nil, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" named in key does not exist", k).WithPosition(charPos(c.src, c.toks[0].start))
			}
			st.Columns[i].NotNull = true
		}
	}
	if c.accept("order") {
		if err := c.expect("by"); err != nil {
			return nil, err
		}
		paren := c.accept("(")
		for {
			t := c.peek()
			n, err := c.name()
			if err != nil {
				return nil, err
			}
			if _, ok := cols[n]; !ok && defined {
				return nil, posError(c.src, t.start, sqlerr.UndefinedColumn, "column \"%s\" named in ORDER BY does not exist", n)
			}
			if c.peek().is("desc") {
				return nil, c.unsupported("a descending table ordering")
			}
			c.accept("asc")
			st.OrderBy = append(st.OrderBy, n)
			st.OrderByPos = append(st.OrderByPos, charPos(c.src, t.start))
			if !c.accept(",") {
				break
			}
		}
		if paren {
			if err := c.expect(")"); err != nil {
				return nil, err
			}
		}
	}
	if !defined && !c.peek().is("as") {
		// CREATE TABLE t ORDER BY (...) without columns or a query.
		return nil, c.fail()
	}
	if c.accept("as") {
		if defined {
			// Postgres' grammar has no column definitions before AS.
			return nil, syntaxErrAt(c.src, c.toks, c.i-1)
		}
		return c.createTableAs(st)
	}
	if c.peek().is("with") || c.peek().is("partition") || c.peek().is("inherits") || c.peek().is("tablespace") {
		return nil, c.unsupported("CREATE TABLE " + strings.ToUpper(c.peek().val))
	}
	return st, c.expectEnd()
}

// nameListAhead reports whether the parenthesized list at the cursor
// holds bare names only: CREATE TABLE AS's column names rather than
// column definitions.
func (c *cursor) nameListAhead() bool {
	m := matchParen(c.toks, c.i)
	if m < 0 || m == c.i+1 {
		return false
	}
	for k := c.i + 1; k < m; k++ {
		t := c.toks[k]
		if (k-c.i)%2 == 1 {
			if t.kind != tkIdent && t.kind != tkQIdent {
				return false
			}
		} else if !t.isOp(",") {
			return false
		}
	}
	return true
}

func (c *cursor) tableElement(st *CreateTableStmt, cols map[string]int) error {
	t := c.peek()
	if t.is("constraint") {
		c.i++
		if _, err := c.name(); err != nil {
			return err
		}
		t = c.peek()
	}
	switch {
	case t.is("primary"):
		c.i++
		if err := c.expect("key"); err != nil {
			return err
		}
		if st.PrimaryKey != nil {
			return posError(c.src, t.start, codeInvalidTableDefinition, "multiple primary keys for table \"%s\" are not allowed", st.Table.Name)
		}
		keys, err := c.nameList()
		if err != nil {
			return err
		}
		st.PrimaryKey = keys
		return nil
	case t.is("unique") || t.is("check") || t.is("foreign") || t.is("exclude") || t.is("like"):
		return c.unsupported("table constraint " + strings.ToUpper(t.val))
	}
	if tok := c.peek(); (tok.kind == tkIdent || tok.kind == tkQIdent) && cols != nil {
		if _, dup := cols[tok.val]; dup {
			return posError(c.src, t.start, codeDuplicateColumn, "column \"%s\" specified more than once", tok.val)
		}
	}
	if len(st.Columns) == MaxTableColumns {
		return posError(c.src, t.start, codeTooManyColumns, "tables can have at most %d columns", MaxTableColumns)
	}
	col, err := c.columnDef(func(k token, name string) error {
		if st.PrimaryKey != nil {
			return posError(c.src, k.start, codeInvalidTableDefinition, "multiple primary keys for table \"%s\" are not allowed", st.Table.Name)
		}
		st.PrimaryKey = []string{name}
		return nil
	})
	if err != nil {
		return err
	}
	cols[col.Name] = len(st.Columns)
	st.Columns = append(st.Columns, col)
	return nil
}

// More SQLSTATEs sqlerr does not name.
const codeDuplicateColumn = "42701"
const codeTooManyColumns = "54011"

// MaxTableColumns is PostgreSQL's limit on a table's columns.
const MaxTableColumns = 1600
const codeInvalidTableDefinition = "42P16"
