package parser

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/asofsql/asofsql/sql/limits"
	"github.com/asofsql/asofsql/sqlerr"
	tidb "github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"

	// The value-expression driver TiDB's parser needs; this is the only
	// place in asofsql that imports it (its init sets process-global
	// hooks). Its ParamMarkerExpr type is also used to number parameters.
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// Statement is one parsed statement of a (possibly multi-statement) query
// string. Exactly one of AST and Node is set.
type Statement struct {
	// Text is the statement's original text, without the terminating
	// semicolon; Start and End are its byte offsets in the input.
	Text       string
	Start, End int

	// AST is TiDB's syntax tree for SELECT/INSERT/UPDATE/DELETE/... after
	// the markers have been resolved (see the package documentation).
	AST ast.StmtNode
	// Node is one of our own statements: *ShowStmt, *SetStmt,
	// *TransactionStmt, *CopyStmt, *CreateTableStmt, *ExplainStmt,
	// *PrepareStmt, *ExecuteStmt, *DeallocateStmt, *DiscardStmt,
	// *DeclareStmt, *FetchStmt, *CloseStmt, *SetTransactionStmt.
	Node Node

	// Rewritten is the SQL TiDB parsed; OriginTextPosition() and Text()
	// of AST nodes refer to it. Use Pos to report positions.
	Rewritten string

	// Params maps the i-th `?` of Rewritten (0-based, in text order) to
	// its Postgres parameter number $n. After parsing, every
	// ParamMarkerExpr's Order is already n-1.
	Params []int
	// NumParams is the highest $n referenced (the statement's parameter
	// count, as Postgres infers it).
	NumParams int

	// Asof describes every ASOF join of the statement, in the order the
	// joins are met walking the tree (outer query before its subqueries).
	Asof []*AsofJoin
	// Casts describes every `#cast` marker call left in AST.
	Casts map[*ast.FuncCallExpr]*Cast
	// SetPos are the 1-based positions of an UPDATE's assigned columns,
	// in the order of UpdateStmt.List.
	SetPos []int
	// DMLFrom marks UPDATE ... FROM and DELETE ... USING, rewritten as
	// UPDATE/DELETE ... WHERE EXISTS (SELECT 1 FROM items [WHERE c]): the
	// statement's WHERE is that EXISTS.
	DMLFrom bool
	// NullsFirst holds ORDER BY items written with NULLS FIRST (true) or
	// NULLS LAST (false); items without NULLS are absent (Postgres
	// default: NULLS LAST for ASC, NULLS FIRST for DESC).
	NullsFirst map[*ast.ByItem]bool
	// DistinctOn holds the expressions of SELECT DISTINCT ON (...) per
	// SELECT (TiDB's Distinct flag stays false for them).
	DistinctOn map[*ast.SelectStmt][]ast.ExprNode
	// Filters holds the condition of each aggregate call written with
	// FILTER (WHERE cond).
	Filters map[*ast.AggregateFuncExpr]ast.ExprNode
	// WithinGroup marks the ordered-set aggregate calls, written
	// f(direct args) WITHIN GROUP (ORDER BY x): their Args are the direct
	// arguments and their Order the one sort key.
	WithinGroup map[*ast.AggregateFuncExpr]bool
	// FullJoins marks the joins written FULL [OUTER] JOIN (TiDB's AST
	// holds them as LEFT joins).
	FullJoins map[*ast.Join]bool
	// FrameExclude holds the EXCLUDE option of frame clauses that have
	// one other than NO OTHERS (ExcludeCurrentRow, ExcludeGroup,
	// ExcludeTies).
	FrameExclude map[*ast.FrameClause]int

	src string
	ri  *runeIndex // character positions in src
	pm  *posMap
}

// input is one string being parsed: its text, character positions and
// the context check shared by its statements.
type input struct {
	src  string
	ri   *runeIndex
	tick *limits.Ticker
}

// Node is implemented by asofsql's own statement nodes.
type Node interface{ node() }

// Pos returns the 1-based character position in the original input of
// an AST expression (0 for nil or a node from another statement).
func (s *Statement) Pos(n ast.ExprNode) int {
	if n == nil || s.pm == nil {
		return 0
	}
	return s.PosOf(n.OriginTextPosition())
}

// RelationPos is the 1-based character position of the first reference
// to relation name in the statement's FROM items (a name token right
// after FROM, JOIN, a comma, or a schema's "."), or 0 when there is none.
// TiDB records no position for table names, and Postgres points its
// "relation does not exist" there.
func (s *Statement) RelationPos(name string) int {
	if s.src == "" || s.End <= s.Start {
		return 0
	}
	toks, err := lex(s.src[s.Start:s.End])
	if err != nil {
		return 0
	}
	for i, t := range toks {
		if i == 0 || (t.kind != tkIdent && t.kind != tkQIdent) || t.val != name {
			continue
		}
		p := toks[i-1]
		if p.isOp(".") && i >= 2 {
			return s.charPos(s.Start + toks[i-2].start) // schema.name: at the schema
		}
		if p.is("from") || p.is("join") || p.is("update") || p.is("into") || p.is("table") || p.isOp(",") {
			return s.charPos(s.Start + t.start)
		}
	}
	return 0
}

// PosOf maps a byte offset in Rewritten to the 1-based character
// position in the original input.
func (s *Statement) PosOf(rewrittenOffset int) int {
	if s.pm == nil {
		return s.charPos(s.Start)
	}
	return s.charPos(s.pm.toOrig(rewrittenOffset))
}

// charPos is the 1-based character position of byte offset off of src.
func (s *Statement) charPos(off int) int {
	if s.ri == nil {
		return charPos(s.src, off)
	}
	return s.ri.pos(off)
}

// AsofOf returns the ASOF description of a join node, or nil if the join
// is an ordinary one.
func (s *Statement) AsofOf(j *ast.Join) *AsofJoin {
	for _, a := range s.Asof {
		if a.Join == j {
			return a
		}
	}
	return nil
}

// errAt builds an error positioned at an AST expression.
func (s *Statement) errAt(n ast.ExprNode, code, format string, args ...any) *sqlerr.Error {
	return sqlerr.New(code, format, args...).WithPosition(s.Pos(n))
}

// nearText is the original token at an AST node's position.
func (s *Statement) nearText(n ast.ExprNode) string {
	off := s.pm.toOrig(n.OriginTextPosition())
	t, ok := firstToken(s.src[off:s.End])
	if !ok {
		return ""
	}
	return s.src[off+t.start : off+t.end]
}

// sqlMode is the TiDB mode closest to Postgres lexical rules.
const sqlMode = mysql.ModeANSIQuotes | mysql.ModePipesAsConcat | mysql.ModeNoBackslashEscapes | mysql.ModeIgnoreSpace

// pool holds TiDB parsers: a parser is stateful and not safe to share, and
// costs ~50µs to build, so each goroutine borrows one per statement.
var pool = sync.Pool{New: func() any {
	p := tidb.New()
	p.SetSQLMode(sqlMode)
	return p
}}

// Parse parses a query string of zero or more semicolon-separated
// statements. An empty or comment-only string gives no statements and no
// error. Errors are *sqlerr.Error with a SQLSTATE and a 1-based character
// Position into sql. Parse is safe for concurrent use.
func Parse(sql string) ([]*Statement, error) { return ParseContext(context.Background(), sql) }

// ParseContext is Parse observing ctx: a long statement's parse stops
// with 57014 once ctx is cancelled or past its deadline.
//
// Whatever its shape, input cannot exhaust the goroutine stack: nesting
// past limits.MaxDepth is 54001 and statements of more than
// limits.MaxTokens tokens are 54000, both checked before anything
// recurses (see checkDepth).
func ParseContext(ctx context.Context, sql string) ([]*Statement, error) {
	in := &input{src: sql, tick: limits.NewTicker(ctx)}
	toks, err := lexAll(in.tick, sql)
	if err != nil {
		return nil, err
	}
	in.ri = newRuneIndex(sql)
	var out []*Statement
	start := 0
	for i := 0; i <= len(toks); i++ {
		if i < len(toks) && !toks[i].isOp(";") {
			continue
		}
		if i > start {
			end := len(sql)
			if i < len(toks) {
				end = toks[i].start
			}
			st, err := parseStatement(in, toks[start:i], end)
			if err != nil {
				return nil, err
			}
			out = append(out, st)
		}
		start = i + 1
	}
	return out, nil
}

// ParseOne parses a string that must hold at most one statement, as in an
// extended-protocol Parse message. An empty or comment-only string gives
// (nil, nil): Postgres answers it with EmptyQueryResponse.
func ParseOne(sql string) (*Statement, error) { return ParseOneContext(context.Background(), sql) }

// ParseOneContext is ParseOne observing ctx (see ParseContext).
func ParseOneContext(ctx context.Context, sql string) (*Statement, error) {
	stmts, err := ParseContext(ctx, sql)
	if err != nil || len(stmts) == 0 {
		return nil, err
	}
	if len(stmts) > 1 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "cannot insert multiple commands into a prepared statement")
	}
	return stmts[0], nil
}

// unsupported are Postgres statements asofsql recognizes but does not run.
var unsupported = map[string]string{
	"vacuum": "VACUUM", "listen": "LISTEN", "notify": "NOTIFY", "unlisten": "UNLISTEN",
	"grant": "GRANT", "revoke": "REVOKE", "lock": "LOCK", "cluster": "CLUSTER",
	"checkpoint": "CHECKPOINT", "reindex": "REINDEX", "comment": "COMMENT", "savepoint": "SAVEPOINT",
	"release": "RELEASE SAVEPOINT", "do": "DO", "call": "CALL", "refresh": "REFRESH MATERIALIZED VIEW",
	"load": "LOAD", "import": "IMPORT FOREIGN SCHEMA", "security": "SECURITY LABEL",
	"reassign": "REASSIGN OWNED", "merge": "MERGE",
	"analyze": "ANALYZE",
}

// tidbStatements are the first words of statements handed to TiDB.
var tidbStatements = map[string]bool{
	"select": true, "with": true, "insert": true, "update": true, "delete": true,
	"drop": true, "create": true, "values": true, "table": true,
}

// parseStatement parses the tokens of one statement; end is the byte
// offset where the statement's text ends (its semicolon or end of input).
func parseStatement(in *input, toks []token, end int) (*Statement, error) {
	src := in.src
	st := &Statement{src: src, ri: in.ri, Start: toks[0].start, End: toks[len(toks)-1].end}
	st.Text = src[st.Start:st.End]
	first := toks[0]
	switch {
	case first.is("show"), first.is("set"), first.is("reset"), first.is("begin"), first.is("start"), first.is("commit"),
		first.is("end"), first.is("rollback"), first.is("abort"), first.is("copy"), first.is("explain"),
		first.is("create") && (isCreateTable(toks) || isCreateView(toks)), first.is("truncate"),
		first.is("alter") && alterWhat(toks) == "TABLE":
		n, err := parseOwn(in, toks, end)
		if err != nil {
			return nil, err
		}
		st.Node = n
		// EXPLAIN and COPY (query) take their parameters from the wrapped
		// statement; the wire layer describes them for the whole.
		var inner *Statement
		switch x := n.(type) {
		case *ExplainStmt:
			inner = x.Stmt
		case *CopyStmt:
			inner = x.Query
		case *CreateTableStmt:
			inner = x.AsQuery
		}
		if inner != nil {
			st.Params, st.NumParams = inner.Params, inner.NumParams
		}
		return st, nil
	case isPreparedForm(first):
		n, err := parsePrepared(in, toks, end)
		if err != nil {
			return nil, err
		}
		st.Node = n
		// EXECUTE's parameters are those of its arguments; PREPARE's
		// statement has its own.
		if x, ok := n.(*ExecuteStmt); ok && x.Args != nil {
			st.Params, st.NumParams = x.Args.Params, x.Args.NumParams
		}
		return st, nil
	case isCursorForm(first):
		n, err := parseCursor(in, toks, end)
		if err != nil {
			return nil, err
		}
		st.Node = n
		// DECLARE's parameters are its query's.
		if x, ok := n.(*DeclareStmt); ok {
			st.Params, st.NumParams = x.Query.Params, x.Query.NumParams
		}
		return st, nil
	case first.is("alter"):
		if w := alterWhat(toks); w != "" {
			return nil, posError(src, first.start, sqlerr.FeatureNotSupported, "ALTER %s is not supported", w)
		}
		return nil, syntaxErrAt(src, toks, min(1, len(toks)))
	case first.kind == tkIdent && unsupported[first.val] != "":
		return nil, posError(src, first.start, sqlerr.FeatureNotSupported, "%s is not supported", unsupported[first.val])
	case first.isOp("(") || (first.kind == tkIdent && tidbStatements[first.val]):
		return parseTiDB(in, st, toks, end, "")
	}
	return nil, syntaxErrAt(src, toks, 0)
}

// parseTiDB rewrites a statement, parses it with TiDB and resolves the
// markers. lead, when set, is text put before the first token after every
// other rewrite (EXECUTE's arguments are parsed as "select " + args).
func parseTiDB(in *input, st *Statement, toks []token, end int, lead string) (*Statement, error) {
	src := st.src
	if err := rejectUnsupported(src, toks); err != nil {
		return nil, err
	}
	if err := depthBound(src, toks); err != nil {
		return nil, err
	}
	if err := in.tick.Err(); err != nil {
		return nil, err
	}
	e := newEdits(toks)
	assigned, joinAt, err := dmlForms(src, toks, e) // ddl.go
	if err != nil {
		return nil, err
	}
	st.SetPos, st.DMLFrom = assigned, joinAt >= 0
	sites, err := plantAsof(src, toks, e)
	if err != nil {
		return nil, err
	}
	pg := &pgPass{src: src, toks: toks, e: e, dmlFrom: joinAt}
	if err := pg.run(); err != nil {
		return nil, err
	}
	if err := in.tick.Err(); err != nil {
		return nil, err
	}
	if err := queryForms(src, toks, e); err != nil {
		return nil, err
	}
	if err := windowForms(src, toks, e); err != nil { // windowforms.go
		return nil, err
	}
	if !toks[0].is("create") && !toks[0].is("drop") {
		quoteTiDBReserved(toks, e)
	}
	for i, t := range toks {
		if t.kind == tkParam && !e.hasRep[i] {
			e.replace(i, "?")
		}
	}
	if lead != "" {
		e.prepend(0, lead)
	}
	rw, pm, _, preStart := e.materialize(src, end)
	st.Rewritten, st.pm = rw, pm
	st.Params = pg.params
	for _, n := range pg.params {
		if n > st.NumParams {
			st.NumParams = n
		}
	}

	if err := in.tick.Err(); err != nil {
		return nil, err
	}
	node, err := tidbParse(rw)
	if err != nil {
		if e, ok := sqlerr.As(err); ok && e.Code == sqlerr.InternalError {
			return nil, e.WithPosition(charPos(src, st.Start))
		}
		return nil, tidbError(st, toks, end, err)
	}
	st.AST = node
	// Every walk below recurses as deep as the tree: check it first.
	if err := checkDepth(in.tick, st); err != nil {
		return nil, err
	}

	pr := &pgRecovery{st: st, distinct: map[int]bool{}, casts: map[*ast.FuncCallExpr]*Cast{}, nulls: map[*ast.ByItem]bool{}}
	for _, k := range pg.distinctRHS {
		pr.distinct[preStart[k]] = true
	}
	want := len(pr.distinct)
	node.Accept(pr)
	if pr.err != nil {
		return nil, pr.err
	}
	if pr.matched != want {
		return nil, posError(src, st.Start, sqlerr.FeatureNotSupported, "IS DISTINCT FROM is not supported in this position")
	}
	st.Casts, st.NullsFirst = pr.casts, pr.nulls
	qr := &queryRecovery{st: st}
	node.Accept(qr)
	if qr.err != nil {
		return nil, qr.err
	}
	node.Accept(&windowRecovery{st: st})

	// ASOF recovery runs after the Postgres forms are restored, so the
	// expressions it hands out (Extra, bounds) are the final nodes.
	rec := &asofRecovery{st: st, sites: sites}
	node.Accept(rec)
	if rec.err != nil {
		return nil, rec.err
	}
	for _, s := range sites {
		if !s.found {
			return nil, posError(src, s.start, sqlerr.SyntaxError, "ASOF JOIN could not be parsed here").
				WithHint("A join nested on the right of an ASOF JOIN needs parentheses: a ASOF JOIN (b JOIN c ON ...) ON ...")
		}
	}
	st.Asof = rec.out

	if err := leftoverMarkers(st); err != nil {
		return nil, err
	}
	if len(pr.params) != len(st.Params) {
		return nil, posError(src, st.Start, sqlerr.SyntaxError, "parameters are not allowed here")
	}
	// TiDB numbers nothing at parse time; its markers carry their byte
	// offset, so text order is offset order.
	params := make([]*test_driver.ParamMarkerExpr, 0, len(pr.params))
	for _, p := range pr.params {
		pmx, ok := p.(*test_driver.ParamMarkerExpr)
		if !ok {
			return nil, sqlerr.New(sqlerr.InternalError, "unexpected parameter node %T", p)
		}
		params = append(params, pmx)
	}
	sort.SliceStable(params, func(a, b int) bool { return params[a].Offset < params[b].Offset })
	for k, pmx := range params {
		pmx.SetOrder(st.Params[k] - 1)
	}
	return st, nil
}

// leftoverMarkers makes sure no marker other than `#cast` (which the
// planner resolves through Statement.Casts) survived recovery: a marker the
// rewrite planted where TiDB's grammar put it somewhere unexpected is a
// syntax error at the user's token, never an unknown function later.
func leftoverMarkers(st *Statement) error {
	var err error
	grouping := groupingMarkers(st.AST) // groupingforms.go
	st.AST.Accept(visitor(func(n ast.Node) bool {
		if f, ok := n.(*ast.FuncCallExpr); ok && err == nil && strings.HasPrefix(f.FnName.O, markerPrefix) && !grouping[f] && f.FnName.O != mkCast && f.FnName.O != MarkerRegCast && f.FnName.O != MarkerAny && f.FnName.O != MarkerAll && f.FnName.O != MarkerArray && f.FnName.O != MarkerArrayCtor &&
			f.FnName.O != MarkerArrayCast && f.FnName.O != MarkerSubscript && f.FnName.O != MarkerSeries && f.FnName.O != MarkerUnnest && f.FnName.O != MarkerRegexpMatches && f.FnName.O != mkExtract && f.FnName.O != MarkerNamed &&
			f.FnName.O != MarkerJSONGet && f.FnName.O != MarkerJSONGetText && f.FnName.O != MarkerAtTimeZone {
			err = st.errAt(f, sqlerr.SyntaxError, "syntax error at or near \"%s\"", st.nearText(f))
		}
		return err == nil
	}))
	return err
}

// visitor adapts a function to ast.Visitor; returning false stops descent.
type visitor func(ast.Node) bool

func (v visitor) Enter(n ast.Node) (ast.Node, bool) { return n, !v(n) }
func (v visitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// tidbParse runs one TiDB parse with a pooled parser. A panic inside TiDB
// (its test_driver panics on some literals) becomes an XX000 error instead
// of taking the connection down, and the parser is then discarded since its
// state is unknown.
//
// The parser is reset before it goes back to the pool: its symbol cache
// still points into the AST just returned, and TiDB's next parse sets text
// positions through stale cache slots, writing into that AST while its
// statement may be in use on another goroutine (a data race the 64-client
// load test in package server found).
func tidbParse(sql string) (node ast.StmtNode, err error) {
	p := pool.Get().(*tidb.Parser)
	defer func() {
		if r := recover(); r != nil {
			node, err = nil, sqlerr.New(sqlerr.InternalError, "SQL parser failed: %v", r)
			return
		}
		p.Reset() // also resets the SQL mode
		p.SetSQLMode(sqlMode)
		pool.Put(p)
	}()
	return p.ParseOneStmt(sql, "", "")
}

// syntaxErrAt is Postgres' generic syntax error at toks[i] (or at the end
// of input when i is past the last token).
//
// Past the last token, Postgres (which parses the whole string at once)
// reports the next token of the input, such as the ";" that ends the
// statement or the ")" that closes COPY's query, or else the end of input.
func syntaxErrAt(src string, toks []token, i int) *sqlerr.Error {
	if i >= len(toks) {
		from := 0
		if len(toks) > 0 {
			from = toks[len(toks)-1].end
		}
		if t, ok := firstToken(src[from:]); ok {
			return posError(src, from+t.start, sqlerr.SyntaxError, "syntax error at or near \"%s\"", src[from+t.start:from+t.end])
		}
		return posError(src, len(src), sqlerr.SyntaxError, "syntax error at end of input")
	}
	t := toks[i]
	return posError(src, t.start, sqlerr.SyntaxError, "syntax error at or near \"%s\"", src[t.start:t.end])
}

// tidbError converts a TiDB parse error into a Postgres-style 42601. The
// offending offset is recovered from the "near" suffix TiDB quotes: it is
// src[offset:], so its length gives the offset exactly.
func tidbError(st *Statement, toks []token, end int, err error) error {
	msg := err.Error()
	rw := st.Rewritten
	off := -1
	if i := strings.Index(msg, "near \""); i >= 0 {
		rest := msg[i+len("near \""):]
		if j := strings.LastIndex(rest, "(total length "); j >= 0 {
			if n, convErr := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest[j+len("(total length "):]), ")")); convErr == nil && n <= len(rw) {
				off = len(rw) - n
			}
		}
		if off < 0 {
			// Untruncated, the suffix is at most 2048 bytes: try only the
			// offsets that can produce it, longest suffix first.
			for k := max(0, len(rw)-2048); k <= len(rw); k++ {
				n := len(rw) - k
				if len(rest) > n && rest[n] == '"' && rest[:n] == rw[k:] {
					off = k
					break
				}
			}
		}
	}
	if off < 0 {
		// Not a grammar error but a check TiDB makes while parsing (an
		// out-of-range literal, say). Keep its text without TiDB's code.
		if j := strings.Index(msg, "]"); strings.HasPrefix(msg, "[") && j > 0 {
			msg = msg[j+1:]
		}
		return sqlerr.Wrap(err, sqlerr.SyntaxError, "%s", msg).WithPosition(charPos(st.src, st.Start))
	}
	if strings.TrimSpace(rw[off:]) == "" {
		return syntaxErrAt(st.src, toks, len(toks))
	}
	orig := st.pm.toOrig(off)
	// Report the original token that contains or follows orig.
	for i, t := range toks {
		if t.end > orig {
			return syntaxErrAt(st.src, toks, i)
		}
	}
	return syntaxErrAt(st.src, toks, len(toks))
}
