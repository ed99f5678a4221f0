package asofsql

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/exec/memacct"
	"github.com/asofsql/asofsql/lower"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Session is one connection's state: run-time settings (SET/SHOW) and the
// open transaction block (BEGIN/COMMIT/ROLLBACK). A Session is used by one
// goroutine at a time; open as many as needed on one DB.
//
// Isolation: under READ COMMITTED (the default) every statement plans and
// reads against the catalog as last committed when the statement starts
// (a fresh snapshot per statement); under REPEATABLE READ and
// SERIALIZABLE a block's statements all read the snapshot its first
// reading statement took (isolation.go). Inside a transaction block the writes
// (CREATE TABLE, DROP TABLE, INSERT, COPY FROM) accumulate in one
// catalog.Tx and become visible to everyone, atomically, at COMMIT; the
// block's own later statements read them before (catalog.Tx.View, taken
// by Session.snapshot). Statements in a block are planned against the
// committed tables plus those the block created or altered minus those it
// dropped. A failed statement leaves
// nothing behind and puts the block in the failed state: every statement
// but COMMIT/ROLLBACK is 25P02 until the block ends, and COMMIT then rolls
// back (tag "ROLLBACK"), as in Postgres. Outside a block each statement
// commits on its own.
type Session struct {
	db     *DB
	vopts  *sqltypes.Options
	values map[string]string // lowercase setting name → SHOW value
	// settingsVer counts changes of values (SettingsVersion).
	settingsVer uint64
	timeout     time.Duration
	memLimit    int64       // memory_limit: bytes one query may hold, 0 for none
	workers     int         // max_parallel_workers_per_gather: the degree queries are planned for
	minParallel int64       // min_parallel_table_scan_size in bytes (parallel_settings.go)
	tx          *catalog.Tx // the open transaction block; nil outside one
	// txStart is the current transaction's start, what now() returns in
	// every statement of it, as in Postgres: a statement's own start
	// outside a block, the BEGIN's inside one (setTxStart).
	txStart time.Time
	failed  bool
	// mode are the open block's modes (isolation.go); snapTaken: a
	// statement of the block has read with a snapshot, which fixes them;
	// txSnap is the snapshot a REPEATABLE READ or SERIALIZABLE block
	// reads, from its first such statement to its end.
	mode      txModes
	snapTaken bool
	txSnap    *catalog.Snapshot
	// cursors are the cursors DECLARE made, by name (declare.go).
	cursors map[string]*declared
	saved   *savedSettings // settings at BEGIN, restored by ROLLBACK
	// resetVals are the session defaults Set recorded (startup
	// parameters), by lowercase name, as given; RESET and SET ... TO
	// DEFAULT return to them, or to the built-in default without one.
	resetVals map[string]string
	// block is what the open transaction block changed in the catalogs
	// (block.go); nil when it changed nothing.
	block *block
	// temp is the session's catalog of temporary tables and views,
	// opened by the first CREATE TEMP TABLE or VIEW and closed with the
	// session; ttx is its transaction in an open block (nil until the
	// block writes a temporary relation).
	temp *catalog.Catalog
	ttx  *catalog.Tx
	// user and database are the client's identity (SetIdentity).
	user, database string
	// stmts are the prepared statements by name (prepared.go), shared
	// with the session's forks; forked marks a fork, whose Close leaves
	// them to the session it came from. executing counts the EXECUTEs
	// running one inside another.
	stmts     *namespace
	forked    bool
	executing int
	// app gathers the rows of a prepared INSERT repeated in the open
	// block (rowappend.go); any other statement flushes them first.
	app *rowAppend
}

type savedSettings struct {
	vopts    sqltypes.Options
	values   map[string]string
	timeout  time.Duration
	memLimit int64
	workers  int
	minPar   int64
}

// Session opens a session with Postgres' default settings (TimeZone UTC).
func (db *DB) Session() *Session {
	s := &Session{db: db, vopts: sqltypes.DefaultOptions(), values: map[string]string{}, stmts: newNamespace()}
	for k, st := range settings {
		s.values[k] = st.def
	}
	// The database's degree (WithWorkers, or every core) is the session's
	// default, as WithMemoryLimit below.
	if err := s.Set("max_parallel_workers_per_gather", strconv.Itoa(db.workers())); err != nil {
		panic(err) // a positive count within range always parses
	}
	s.minParallel = defaultMinParallel
	if db.opts.minParallel != nil {
		if err := s.Set("min_parallel_table_scan_size", strconv.FormatInt(*db.opts.minParallel, 10)+"B"); err != nil {
			panic(err) // WithMinParallelTableScanSize's bytes within range always parse
		}
	}
	if db.opts.memoryLimit > 0 {
		// WithMemoryLimit is the database's default; SET memory_limit
		// changes it for the session and RESET returns to it.
		if err := s.Set("memory_limit", strconv.FormatInt(db.opts.memoryLimit, 10)); err != nil {
			panic(err) // a positive byte count always parses
		}
	}
	return s
}

// Sync ends a unit of client work (the wire protocol's Sync): an error
// sent to the client since the previous Sync fails an open block, as an
// error raised by the engine does. Outside a block every statement has
// already committed on its own, so there is no implicit transaction to
// end (a difference from Postgres, which runs a multi-statement simple
// query as one transaction).
func (s *Session) Sync(ctx context.Context, failed bool) error {
	if failed && s.tx != nil {
		s.failed = true
	}
	return nil
}

// Close ends the session, rolling back an open transaction block and
// dropping its prepared statements (a fork's are its origin's: Fork).
func (s *Session) Close() error {
	if s.tx != nil {
		s.endBlock(true)
	}
	s.closeCursors(func(*declared) bool { return true })
	if !s.forked {
		s.stmts.clear()
	}
	return s.dropTemp()
}

// dropTemp drops every temporary table and view: the session's temporary
// catalog goes (at the session's end, DISCARD TEMP and DISCARD ALL).
func (s *Session) dropTemp() error {
	if s.temp == nil {
		return nil
	}
	err := s.temp.Close()
	s.temp = nil
	return err
}

// Setting returns a run-time setting's current value by its Postgres name
// (case-insensitive), as SHOW prints it.
func (s *Session) Setting(name string) (string, bool) {
	if st, ok := settings[strings.ToLower(name)]; ok && st.txn != nil {
		return st.txn(s), true
	}
	v, ok := s.values[strings.ToLower(name)]
	return v, ok
}

// SettingsVersion counts the changes of the session's settings: what
// Setting returns for a setting that is not of the transaction
// (transaction_isolation and the like) stays the same while it does.
func (s *Session) SettingsVersion() uint64 { return s.settingsVer }

// Set changes a setting as a startup parameter does: like SET name =
// value, and the value also becomes the session default that RESET and
// SET name TO DEFAULT return to.
func (s *Session) Set(name, value string) error {
	st, err := lookupSetting(name)
	if err != nil {
		return err
	}
	if err := s.apply(st, value); err != nil {
		return err
	}
	if st.set != nil {
		if s.resetVals == nil {
			s.resetVals = map[string]string{}
		}
		s.resetVals[strings.ToLower(st.name)] = value
	}
	return nil
}

// apply changes one setting for the rest of the session (SQL SET).
func (s *Session) apply(st *setting, value string) error {
	if st.set == nil || st.fixed {
		if st.set == nil && value == st.def {
			return nil // clients echo reported values back at startup
		}
		return sqlerr.New("55P02", "parameter \"%s\" cannot be changed", st.name)
	}
	v, err := st.set(s, value)
	if err != nil {
		return err
	}
	s.values[strings.ToLower(st.name)] = v
	s.settingsVer++
	return nil
}

// resetValue is the value RESET restores: the session default.
func (s *Session) resetValue(st *setting) string {
	if v, ok := s.resetVals[strings.ToLower(st.name)]; ok {
		return v
	}
	return st.def
}

// ValueOptions are the settings that shape value text I/O (TimeZone,
// extra_float_digits); SET changes them in place.
func (s *Session) ValueOptions() *sqltypes.Options { return s.vopts }

// TxStatus is 'I' outside a transaction block, 'T' inside one, 'E' inside
// a failed one (Postgres' ReadyForQuery status).
func (s *Session) TxStatus() byte {
	switch {
	case s.tx == nil:
		return 'I'
	case s.failed:
		return 'E'
	}
	return 'T'
}

// Stmt is a parsed and analysed statement: its parameter types and result
// columns are known before it runs. It is re-planned at each Execute (so
// it sees the catalog as it is then) unless the plan of its last
// execution is still good (plancache.go), and a statement of a Batch
// runs its first Execute on the plan its analysis made; a plan whose
// parameters or columns changed is 0A000 "cached plan must not change
// result type", as Postgres.
type Stmt struct {
	s        *Session
	st       *parser.Statement // nil for the empty statement (PrepareNamed of "")
	declared []sqltypes.Type
	// viaPrepare: st is a PREPARE, and the statement run is the one it
	// prepares (EXECUTE of a statement made by SQL PREPARE).
	viaPrepare bool
	// described: params, shape and tag are the analysed statement's and
	// each plan must keep them (false for statements run once at once).
	described bool
	params    []sqltypes.Type
	shape     planner.Shape
	cols      []Column
	tag       string
	binary    bool      // FETCH from a BINARY cursor
	copy      *CopyInfo // COPY ... FROM STDIN / TO STDOUT
	// insert: the statement is an INSERT (its text is, so every plan of
	// it is one), which returns no rows.
	insert bool
	// first is the plan the analysis made, and its snapshot, until the
	// first Execute runs it or Close releases it.
	first *firstPlan
	// cache is the plan of the last execution while it stays good
	// (plancache.go); forks of the session may execute st at once.
	cache atomic.Pointer[cachedPlan]
	// directPlan is the direct-append analysis of the last INSERT plan
	// executed (directinsert.go).
	directPlan atomic.Pointer[directInsert]
	// argTypes are the parameter types of the last ExecuteBatch's schema.
	argTypes atomic.Pointer[argTypes]
}

type firstPlan struct {
	plan planner.Plan
	snap *snapshot
}

// CopyInfo describes the client data stream of COPY ... FROM STDIN or
// COPY ... TO STDOUT (what the wire protocol's CopyInResponse and
// CopyOutResponse announce).
type CopyInfo struct {
	// From is true for FROM STDIN, false for TO STDOUT.
	From bool
	// Binary is the binary format; text and CSV are text.
	Binary bool
	// Columns is the number of columns in each row of the stream.
	Columns int
}

// Copy reports whether the statement is COPY ... FROM STDIN or TO STDOUT,
// and its stream; run it with ExecuteCopy.
func (st *Stmt) Copy() (CopyInfo, bool) {
	if st.copy == nil {
		return CopyInfo{}, false
	}
	return *st.copy, true
}

// ExecuteCopy runs a COPY ... FROM STDIN reading the data from r, or a
// COPY ... TO STDOUT writing it to w. The Cursor has no rows; its Tag is
// "COPY n".
func (st *Stmt) ExecuteCopy(ctx context.Context, r io.Reader, w io.Writer, args ...any) (*Cursor, error) {
	return st.s.run(ctx, st, args, false, &copyStream{r: r, w: w})
}

// ParamTypes are the types of $1..$n (sqltypes.Unknown where nothing
// constrains one: its argument is then read by its Go type).
func (st *Stmt) ParamTypes() []sqltypes.Type { return st.params }

// Columns describes the result rows; nil for a statement without rows.
func (st *Stmt) Columns() []Column { return st.cols }

// NoRows reports a statement that never returns rows and whose Cursor is
// done when Execute returns, so nothing of it outlives the call: an
// INSERT (whatever it is planned as later, its text stays an INSERT).
func (st *Stmt) NoRows() bool { return st.insert }

// BinaryRows reports a FETCH from a BINARY cursor, whose rows Postgres
// sends in binary format in the simple protocol.
func (st *Stmt) BinaryRows() bool { return st.binary }

// Text is the statement's SQL ("" for the empty statement).
func (st *Stmt) Text() string {
	if st.st == nil {
		return ""
	}
	return st.st.Text
}

// Empty reports the empty statement: a query string without any
// (PrepareNamed keeps it, as Postgres keeps a named statement of "").
func (st *Stmt) Empty() bool { return st.st == nil }

// Execute runs the statement with args bound to $1..$n (natural Go values
// or strings in Postgres text syntax). The Cursor streams its rows.
func (st *Stmt) Execute(ctx context.Context, args ...any) (*Cursor, error) {
	return st.s.run(ctx, st, args, false, nil)
}

// ExecuteBatch runs the statement with its arguments given as one row of
// an Arrow batch, one column per parameter (how the wire server decodes
// Bind messages); nil means no arguments.
func (st *Stmt) ExecuteBatch(ctx context.Context, params arrow.RecordBatch) (*Cursor, error) {
	args, err := st.argsOf(params)
	if err != nil {
		return nil, err
	}
	return st.Execute(ctx, args...)
}

// argsOf turns a one-row batch into arguments, one per column.
func argsOf(params arrow.RecordBatch) ([]any, error) {
	return paramsOf(params, nil)
}

// argsOf is argsOf for st's executions, which keeps the SQL types of the
// last parameter schema: a wire client's Binds of one statement share
// one schema, whose types need not be parsed from the fields' metadata
// each time.
func (st *Stmt) argsOf(params arrow.RecordBatch) ([]any, error) {
	return paramsOf(params, &st.argTypes)
}

// argTypes are the SQL types of a parameter schema's fields.
type argTypes struct {
	schema *arrow.Schema
	types  []sqltypes.Type
}

func paramsOf(params arrow.RecordBatch, memo *atomic.Pointer[argTypes]) ([]any, error) {
	if params == nil {
		return nil, nil
	}
	if params.NumRows() != 1 {
		return nil, sqlerr.New(sqlerr.ProtocolViolation, "parameters must be one row, got %d", params.NumRows())
	}
	schema := params.Schema()
	var types []sqltypes.Type
	if memo != nil {
		if m := memo.Load(); m != nil && m.schema == schema {
			types = m.types
		}
	}
	if types == nil {
		types = make([]sqltypes.Type, params.NumCols())
		for i := range types {
			t, err := sqltypes.FromField(schema.Field(i))
			if err != nil {
				return nil, err
			}
			types[i] = t
		}
		if memo != nil {
			memo.Store(&argTypes{schema: schema, types: types})
		}
	}
	args := make([]any, 0, params.NumCols())
	for i, col := range params.Columns() {
		args = append(args, lower.ValueOf(col, types[i]))
	}
	return args, nil
}

// Close releases what the statement holds between its analysis and its
// first Execute (a Batch statement's plan and snapshot). The statement
// stays usable.
func (st *Stmt) Close() error {
	if st.first != nil {
		st.first.snap.Release()
		st.first = nil
	}
	return nil
}

// Prepare parses and analyses one statement; paramTypes are types the
// caller declares for $1.. (Unknown entries are inferred). An empty sql
// gives (nil, nil).
func (s *Session) Prepare(ctx context.Context, sql string, paramTypes []sqltypes.Type) (*Stmt, error) {
	st, err := s.parseOne(ctx, sql)
	if err != nil || st == nil {
		return nil, s.fail(err)
	}
	return s.analyse(ctx, st, paramTypes, false)
}

// parse splits sql into statements observing ctx and statement_timeout
// (a huge statement takes long to parse).
func (s *Session) parse(ctx context.Context, sql string) ([]*parser.Statement, error) {
	if err := s.textFits(sql); err != nil {
		return nil, err
	}
	pctx, cancel := s.statementContext(ctx)
	defer cancel()
	stmts, err := parser.ParseContext(pctx, sql)
	return stmts, cancelErr(ctx, pctx, err)
}

// parseOne is parse for a string holding at most one statement.
func (s *Session) parseOne(ctx context.Context, sql string) (*parser.Statement, error) {
	if err := s.textFits(sql); err != nil {
		return nil, err
	}
	pctx, cancel := s.statementContext(ctx)
	defer cancel()
	st, err := parser.ParseOneContext(pctx, sql)
	return st, cancelErr(ctx, pctx, err)
}

// analyse plans st to describe it, observing ctx and statement_timeout;
// keep keeps the plan and its snapshot for the first Execute.
func (s *Session) analyse(ctx context.Context, st *parser.Statement, declared []sqltypes.Type, keep bool) (*Stmt, error) {
	var snap *snapshot
	var err error
	if _, ok := st.Node.(*parser.TransactionStmt); ok {
		// BEGIN, COMMIT, ROLLBACK and savepoints read no relation: they
		// need not see the block's own changes, whose view costs a
		// COMMIT after many INSERTs more than the rest of it.
		snap, err = s.committedSnapshot()
	} else {
		snap, err = s.snapshot()
	}
	if err != nil {
		return nil, err
	}
	pctx, cancel := s.statementContext(ctx)
	defer cancel()
	p, err := s.build(pctx, snap, st, declared)
	if err == nil {
		err = s.noteSnapshot(p, snap.committed())
	}
	if err != nil {
		snap.Release()
		return nil, cancelErr(ctx, pctx, err)
	}
	out := &Stmt{s: s, st: st, declared: declared}
	out.describe(p, p.Shape().Params)
	if c, ok := p.(*planner.Copy); ok && c.Path == "" {
		info := &CopyInfo{From: c.From, Binary: c.Format == planner.CopyBinary, Columns: len(c.Columns)}
		if c.Query != nil {
			info.Columns = len(c.Query.Root.Schema())
		}
		out.copy = info
	}
	if keep {
		out.first = &firstPlan{plan: p, snap: snap}
	} else {
		snap.Release()
	}
	return out, nil
}

// describe records what p takes and returns as the statement's shape;
// params are the parameters EXECUTE passes (PREPARE's declared ones
// included).
func (st *Stmt) describe(p planner.Plan, params []sqltypes.Type) {
	st.described = true
	st.shape, st.tag = p.Shape(), p.Tag()
	_, st.insert = p.(*planner.Insert)
	if f, ok := p.(*planner.Fetch); ok {
		st.binary = f.Binary
	}
	st.params = params
	if st.shape.Rows {
		st.cols = make([]Column, 0, len(st.shape.Columns))
		for _, c := range st.shape.Columns {
			st.cols = append(st.cols, Column{Name: c.Name, Type: c.Type})
		}
	}
}

// build plans st against snap. In a failed block only COMMIT and ROLLBACK
// run: anything else is 25P02, whatever its plan or planning error.
func (s *Session) build(ctx context.Context, snap *snapshot, st *parser.Statement, declared []sqltypes.Type) (planner.Plan, error) {
	return s.buildOn(ctx, s.planCatalog(snap), st, declared)
}

// buildOn is build against the relations cat.
func (s *Session) buildOn(ctx context.Context, cat relations, st *parser.Statement, declared []sqltypes.Type) (planner.Plan, error) {
	p, err := planner.BuildContext(ctx, cat, st, s.planOptions(declared))
	if s.failed {
		if t, ok := p.(*planner.Transaction); err != nil || !ok || !t.Ends() {
			return nil, sqlerr.New(sqlerr.InFailedSQLTransaction,
				"current transaction is aborted, commands ignored until end of transaction block")
		}
	}
	return p, s.fail(err)
}

// plan gives the plan to run now and its snapshot: the analysis' plan on
// the first Execute of a Batch statement, a new one otherwise. The plan
// must keep a described statement's shape.
func (st *Stmt) plan(ctx context.Context) (planner.Plan, *snapshot, error) {
	if f := st.first; f != nil {
		st.first = nil
		return f.plan, f.snap, nil
	}
	if st.st == nil {
		return nil, nil, sqlerr.New(sqlerr.SyntaxError, "empty query")
	}
	p, snap, err := st.directInBlock()
	if err != nil {
		return nil, nil, err
	}
	if p == nil {
		snap, err = st.s.snapshot()
		if err != nil {
			return nil, nil, err
		}
		p, err = st.planOn(ctx, st.s, snap)
	}
	if err == nil {
		err = st.s.noteSnapshot(p, snap.committed())
	}
	if err != nil {
		snap.Release()
		return nil, nil, err
	}
	return p, snap, nil
}

// planOn plans the statement in session s against snap (EXECUTE plans
// its target in the EXECUTE's session, on the EXECUTE's snapshot), or
// reuses the plan of its last execution while that is still good.
func (st *Stmt) planOn(ctx context.Context, s *Session, snap *snapshot) (planner.Plan, error) {
	if p, ok := st.cached(s, snap); ok {
		return p, nil
	}
	cat := s.planCatalog(snap)
	cat.deps = &planDeps{}
	p, err := s.buildOn(ctx, cat, st.st, st.declared)
	if err != nil {
		return nil, err
	}
	params := p.Shape().Params
	if st.viaPrepare {
		prep := p.(*planner.Prepare)
		p, params = prep.Stmt, prep.Params
	}
	if st.described && !sameShape(st, params, p.Shape()) {
		st.cache.Store(nil)
		return nil, s.fail(sqlerr.New(sqlerr.FeatureNotSupported, "cached plan must not change result type"))
	}
	st.keepPlan(s, p, cat.deps)
	return p, nil
}

func sameShape(st *Stmt, params []sqltypes.Type, sh planner.Shape) bool {
	if len(params) != len(st.params) || sh.Rows != st.shape.Rows || len(sh.Columns) != len(st.shape.Columns) {
		return false
	}
	for i := range params {
		if params[i] != st.params[i] {
			return false
		}
	}
	for i, c := range sh.Columns {
		if c.Name != st.shape.Columns[i].Name || c.Type != st.shape.Columns[i].Type {
			return false
		}
	}
	return true
}

// Batch yields the statements of a multi-statement string one at a time,
// each analysed only when reached, so it sees the effects of those
// before it (what the wire protocol's simple Query needs). Each is
// planned once: its first Execute runs the plan Next made, on the same
// snapshot.
type Batch struct {
	s     *Session
	stmts []*parser.Statement
	next  int
	last  *Stmt
}

// Batch splits sql into statements; syntax errors are reported here.
// Parsing observes ctx and statement_timeout (57014).
func (s *Session) Batch(ctx context.Context, sql string) (*Batch, error) {
	stmts, err := s.parse(ctx, sql)
	if err != nil {
		return nil, s.fail(err)
	}
	return &Batch{s: s, stmts: stmts}, nil
}

// Next analyses the next statement; io.EOF after the last. The previous
// statement's plan is released if it did not run.
func (b *Batch) Next(ctx context.Context) (*Stmt, error) {
	b.Close()
	if b.next >= len(b.stmts) {
		return nil, io.EOF
	}
	b.next++
	st, err := b.s.analyse(ctx, b.stmts[b.next-1], nil, true)
	b.last = st
	return st, err
}

// Close releases the plan of a statement Next returned that did not run.
func (b *Batch) Close() error {
	if b.last != nil {
		b.last.Close()
		b.last = nil
	}
	return nil
}

// once wraps a statement that runs once, as it comes (Query, Exec).
func (s *Session) once(st *parser.Statement) *Stmt { return &Stmt{s: s, st: st} }

// parseOnce parses sql, which must hold one statement, to run it once.
func (s *Session) parseOnce(ctx context.Context, sql string) (*Stmt, error) {
	if err := s.textFits(sql); err != nil {
		return nil, s.fail(err)
	}
	pctx, cancel := s.statementContext(ctx)
	defer cancel()
	st, err := parseSingle(pctx, sql)
	if err != nil {
		return nil, s.fail(cancelErr(ctx, pctx, err))
	}
	return s.once(st), nil
}

// parseSingle parses sql, which must hold one statement.
func parseSingle(ctx context.Context, sql string) (*parser.Statement, error) {
	st, err := parser.ParseOneContext(ctx, sql)
	if err == nil && st == nil {
		err = sqlerr.New(sqlerr.SyntaxError, "empty query")
	}
	return st, err
}

// Query runs one row-returning statement (SELECT, EXPLAIN, SHOW) and
// streams its result; other statements are refused (0A000) before they
// run.
func (s *Session) Query(ctx context.Context, sql string, args ...any) (*Cursor, error) {
	st, err := s.parseOnce(ctx, sql)
	if err != nil {
		return nil, err
	}
	return s.run(ctx, st, args, true, nil)
}

// Exec runs every statement in sql in order and stops at the first error.
// It reports the last statement's result; rows of SELECTs are read and
// counted, not returned.
func (s *Session) Exec(ctx context.Context, sql string, args ...any) (Result, error) {
	stmts, err := s.parse(ctx, sql)
	if err != nil {
		return Result{}, s.fail(err)
	}
	if len(stmts) > 1 && len(args) > 0 {
		return Result{}, s.fail(sqlerr.New(sqlerr.SyntaxError, "cannot insert multiple commands into a prepared statement"))
	}
	var res Result
	for _, st := range stmts {
		c, err := s.run(ctx, s.once(st), args, false, nil)
		if err != nil {
			return res, err
		}
		if err := c.drain(); err != nil {
			return res, s.fail(err)
		}
		res = Result{Tag: c.Tag(), RowsAffected: affected(c)}
	}
	return res, nil
}

func affected(c *Cursor) int64 {
	if c.counts() {
		return c.rows
	}
	return c.affected
}

func (s *Session) planOptions(declared []sqltypes.Type) *planner.Options {
	return &planner.Options{Types: s.vopts, ParamTypes: declared, User: s.user, Database: s.database,
		SettingName: settingName, Prepared: s.preparedShape, Cursor: s.cursorShape, Workers: s.workers,
		MinParallelBytes: s.minParallel}
}

// fail marks an open block failed by err (when err is not nil).
func (s *Session) fail(err error) error {
	if err != nil && s.tx != nil {
		s.failed = true
	}
	return err
}

// statementContext applies statement_timeout.
func (s *Session) statementContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.timeout > 0 {
		return context.WithTimeout(ctx, s.timeout)
	}
	return context.WithCancel(ctx)
}

// Statement text is charged to the query's memory at a measured rate:
// TiDB's syntax tree, the bound plan and the compiled expressions of a
// long IN list or VALUES list hold 55-90 bytes a byte of text, and
// parsing one peaks at 100-200. Statements shorter than textFree are not
// charged, so that SET memory_limit works under any limit.
const (
	textFree          = 64 << 10
	parseBytesPerByte = 200
	planBytesPerByte  = 64
)

// textFits refuses (53200) a statement text whose parsing would take
// more memory than a query of the session may hold or the server has
// left, before it is parsed.
func (s *Session) textFits(sql string) error {
	if len(sql) < textFree || (s.memLimit == 0 && s.db.budget == nil) {
		return nil
	}
	a := memacct.Open(s.db.budget, s.db.opts.mem, s.memLimit, nil)
	defer a.Close()
	return a.Need("parsing the statement", parseBytesPerByte*int64(len(sql)))
}

// account opens the memory account of one statement's execution, charged
// with its text's syntax tree and plan, and returns ctx carrying it (the
// budget cancels it with a 53200 cause if it picks this query to fail).
// The returned cancel closes the account, then calls cancel.
func (s *Session) account(ctx context.Context, cancel context.CancelFunc, text string) (context.Context, context.CancelFunc, error) {
	actx, cause := context.WithCancelCause(ctx)
	a := memacct.Open(s.db.budget, s.db.opts.mem, s.memLimit, cause)
	done := func() {
		a.Close()
		cause(nil)
		cancel()
	}
	if len(text) >= textFree {
		if err := a.Grow("the statement's syntax tree and plan", planBytesPerByte*int64(len(text))); err != nil {
			return actx, done, err
		}
	}
	return memacct.NewContext(actx, a), done, nil
}

// run plans (or takes the plan made by analysis) and starts one
// statement. wantRows refuses statements without rows before they run;
// input is the data stream of COPY FROM STDIN / TO STDOUT.
func (s *Session) run(parent context.Context, st *Stmt, args []any, wantRows bool, input *copyStream) (*Cursor, error) {
	if err := s.flushAppend(); err != nil {
		return nil, err
	}
	// The account's context cancels the statement; a second cancelable
	// context under it is only needed for statement_timeout.
	ctx, cancel := parent, func() {}
	if s.timeout > 0 {
		ctx, cancel = s.statementContext(parent)
	}
	ctx, cancel, err := s.account(ctx, cancel, st.Text())
	if err != nil {
		cancel()
		return nil, s.fail(err)
	}
	s.setTxStart()
	p, snap, err := st.plan(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	if wantRows && !p.Shape().Rows {
		err = sqlerr.New(sqlerr.FeatureNotSupported, "Query runs statements that return rows; use Exec for %s", p.Tag())
	}
	var c *Cursor
	if err == nil {
		c, err = s.dispatch(ctx, parent, snap, st, p, args, input, cancel)
	}
	if err != nil {
		err = cancelErr(parent, ctx, err) // before cancel() changes ctx.Err
		snap.Release()
		cancel()
		return nil, s.fail(err)
	}
	return c, nil
}

// dispatch executes a plan of st. A returned rows cursor owns snap and
// cancel (released when it finishes); otherwise dispatch has released
// them. This is the one place that knows every kind of plan.
func (s *Session) dispatch(ctx, parent context.Context, snap *snapshot, st *Stmt, p planner.Plan, args []any,
	input *copyStream, cancel context.CancelFunc) (*Cursor, error) {
	// Statements without rows are finished here: their snapshot and
	// timer go at once (deferred calls are harmless for rows cursors,
	// which release through their own cleanup only once).
	owned := false
	defer func() {
		if !owned {
			snap.Release()
			cancel()
		}
	}()
	done := func() (*Cursor, error) { return doneCursor(p.Tag()), nil }
	switch p := p.(type) {
	case *planner.Query:
		env, err := s.lowerEnv(ctx, snap, p.Params, args)
		if err != nil {
			return nil, err
		}
		env.Memo = st.memo(p) // a kept plan reuses its earlier lowering's schemas
		op, err := lower.Query(ctx, snap.main, p.Root, env)
		if err != nil {
			return nil, err
		}
		if err := op.Open(ctx); err != nil {
			op.Close()
			return nil, err
		}
		owned = true
		return rowsCursor(ctx, parent, op, p.Tag(), snap.Release, cancel), nil
	case *planner.Explain:
		text, err := s.explain(ctx, snap, p, args)
		if err != nil {
			return nil, err
		}
		lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
		rows := make([][]string, len(lines))
		for i, l := range lines {
			rows[i] = []string{l}
		}
		return textCursor(s.db.opts.mem, p.Tag(), []string{"QUERY PLAN"}, rows), nil
	case *planner.Show:
		rows, cols, err := s.show(p)
		if err != nil {
			return nil, err
		}
		return textCursor(s.db.opts.mem, p.Tag(), cols, rows), nil
	case *planner.Set:
		if err := s.set(p); err != nil {
			return nil, err
		}
		return done()
	case *planner.Transaction:
		tag, err := s.transaction(ctx, p)
		if err != nil {
			return nil, err
		}
		return doneCursor(tag), nil
	case *planner.CreateTable:
		if err := s.createTable(ctx, snap, p); err != nil { // ddl.go
			return nil, err
		}
		return done()
	case *planner.DropTable:
		if err := s.dropTables(ctx, p); err != nil {
			return nil, err
		}
		return done()
	case *planner.Delete:
		n, err := s.delete(ctx, snap, p, args)
		if err != nil {
			return nil, err
		}
		return doneCursorN("DELETE "+strconv.FormatInt(n, 10), n), nil
	case *planner.Update:
		n, err := s.update(ctx, snap, p, args)
		if err != nil {
			return nil, err
		}
		return doneCursorN("UPDATE "+strconv.FormatInt(n, 10), n), nil
	case *planner.Truncate:
		if err := s.truncate(ctx, p); err != nil {
			return nil, err
		}
		return done()
	case *planner.AlterTable:
		if err := s.alterTable(ctx, snap, p); err != nil {
			return nil, err
		}
		return done()
	case *planner.CreateTableAs:
		tag, n, err := s.createTableAs(ctx, snap, p, args)
		if err != nil {
			return nil, err
		}
		return doneCursorN(tag, n), nil
	case *planner.CreateView:
		if err := s.createView(ctx, p); err != nil {
			return nil, err
		}
		return done()
	case *planner.DropView:
		if err := s.dropViews(ctx, p); err != nil {
			return nil, err
		}
		return done()
	case *planner.Insert:
		n, err := s.insert(ctx, snap, st, p, args)
		if err != nil {
			return nil, err
		}
		if n == 1 {
			return doneCursorN("INSERT 0 1", 1), nil // a driver's single-row INSERT: no string to build
		}
		return doneCursorN("INSERT 0 "+strconv.FormatInt(n, 10), n), nil
	case *planner.Copy:
		n, err := s.copy(ctx, snap, p, args, input)
		if err != nil {
			return nil, err
		}
		return doneCursorN("COPY "+strconv.FormatInt(n, 10), n), nil
	case *planner.Prepare:
		if err := s.keep(p.Name, &Stmt{s: s, st: st.st, viaPrepare: true}, p.Stmt, p.Params); err != nil {
			return nil, err
		}
		return done()
	case *planner.Execute:
		target, inner, vals, err := s.executePlan(ctx, snap, p, args)
		if err != nil {
			return nil, err
		}
		s.executing++
		defer func() { s.executing-- }()
		owned = true
		return s.dispatch(ctx, parent, snap, target, inner, vals, input, cancel)
	case *planner.Deallocate:
		if p.All {
			s.stmts.clear()
		} else if err := s.Deallocate(p.Name); err != nil {
			return nil, err
		}
		return done()
	case *planner.Discard:
		switch p.What {
		case "ALL":
			if s.tx != nil {
				return nil, sqlerr.New(sqlerr.ActiveSQLTransaction, "DISCARD ALL cannot run inside a transaction block")
			}
			if err := s.set(&planner.Set{Reset: true, Default: true, All: true}); err != nil {
				return nil, err
			}
			s.stmts.clear()
			s.closeCursors(func(*declared) bool { return true })
			if err := s.dropTemp(); err != nil {
				return nil, err
			}
		case "TEMP":
			if err := s.discardTemp(ctx, snap); err != nil {
				return nil, err
			}
		case "PLANS":
			s.stmts.dropPlans()
		}
		// DISCARD SEQUENCES has nothing to drop: there are no sequences.
		return done()
	case *planner.SetTransaction:
		if err := s.setTransaction(p); err != nil {
			return nil, err
		}
		return done()
	case *planner.Declare:
		if err := s.declare(ctx, snap, p, args); err != nil {
			return nil, err
		}
		return done()
	case *planner.Fetch:
		c, err := s.cursor(p.Name)
		if err != nil {
			return nil, err
		}
		op, n, err := c.fetch(ctx, p)
		if err != nil {
			return nil, err
		}
		if p.Move {
			return doneCursorN(fmt.Sprintf("MOVE %d", n), n), nil
		}
		owned = true
		return rowsCursor(ctx, parent, op, p.Tag(), snap.Release, cancel), nil
	case *planner.CloseCursor:
		if err := s.closeCursor(p); err != nil {
			return nil, err
		}
		return done()
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s is not supported by the embedded API yet", p.Tag())
}

func (s *Session) lowerQuery(ctx context.Context, snap *snapshot, types []sqltypes.Type, root planner.Node,
	args []any, an *lower.Analysis) (exec.Operator, error) {
	env, err := s.lowerEnv(ctx, snap, types, args)
	if err != nil {
		return nil, err
	}
	env.Analysis = an
	return lower.Query(ctx, snap.main, root, env)
}

// lowerEnv is what lowering a statement's plan needs: its arguments bound
// to the parameter types, the session's settings and temporary tables, and
// the query's memory account (in ctx) as the allocator.
func (s *Session) lowerEnv(ctx context.Context, snap *snapshot, types []sqltypes.Type, args []any) (lower.Env, error) {
	params, err := lower.Bind(types, args, s.vopts)
	if err != nil {
		return lower.Env{}, err
	}
	mem := s.db.opts.mem
	if a := memacct.FromContext(ctx); a != nil {
		mem = a // every batch and expression result counts against the query
	}
	return lower.Env{Mem: mem, Params: params, MemoryLimit: s.memLimit, Temp: snap.temp,
		Eval: eval.Env{Mem: mem, Options: s.vopts, Now: s.txStart}}, nil
}

// setTxStart starts a statement's transaction clock: outside a block every
// statement is a transaction of its own; inside one the clock stays where
// the block's BEGIN (a statement outside the block when it started) set it.
func (s *Session) setTxStart() {
	if s.tx == nil {
		s.txStart = time.Now()
	}
}

// write runs one write statement in the open block, or on its own
// (autocommit) outside one. command names the statement as Postgres does in
// its read-only refusal ("INSERT", "COPY FROM").
func (s *Session) write(ctx context.Context, command string, do func(*catalog.Tx) error) error {
	return s.writeTo(ctx, command, false, do)
}

// writeTo is write to the session's temporary catalog (temp) or the
// database's. PostgreSQL lets a read-only transaction write temporary
// tables, and so does asofsql.
func (s *Session) writeTo(ctx context.Context, command string, temp bool, do func(*catalog.Tx) error) error {
	if err := s.flushAppend(); err != nil {
		return err
	}
	if !temp {
		if err := s.checkWrite(command); err != nil {
			return err
		}
	}
	cat := s.db.cat
	if temp {
		if s.temp == nil {
			t, err := s.db.cat.NewTemp()
			if err != nil {
				return err
			}
			s.temp = t
		}
		cat = s.temp
	}
	if s.tx != nil {
		if !temp {
			return do(s.tx)
		}
		if s.ttx == nil {
			s.ttx = cat.Begin()
		}
		return do(s.ttx)
	}
	tx := cat.Begin()
	if err := do(tx); err != nil {
		tx.Rollback()
		return err
	}
	tx.SetSynchronousCommit(s.syncCommit())
	return tx.Commit(ctx)
}

func (s *Session) insert(ctx context.Context, snap *snapshot, st *Stmt, p *planner.Insert, args []any) (int64, error) {
	if d := st.direct(p); d != nil {
		return s.insertDirect(ctx, d, args)
	}
	op, err := s.lowerQuery(ctx, snap, p.Params, p.Input, args, nil)
	if err != nil {
		return 0, err
	}
	if err := op.Open(ctx); err != nil {
		op.Close()
		return 0, err
	}
	rdr := exec.ToReader(ctx, op)
	defer rdr.Release()
	var n int64
	err = s.writeTo(ctx, "INSERT", p.Table.Temp, func(tx *catalog.Tx) error {
		var err error
		n, err = tx.Insert(ctx, p.Table.Name, rdr)
		return err
	})
	return n, err
}

// explain renders EXPLAIN; ANALYZE runs the query to the end first.
// EXPLAIN EXECUTE explains the prepared statement's plan as made now.
func (s *Session) explain(ctx context.Context, snap *snapshot, p *planner.Explain, args []any) (string, error) {
	stmt := p.Stmt
	if x, ok := stmt.(*planner.Execute); ok {
		var err error
		if _, stmt, args, err = s.executePlan(ctx, snap, x, args); err != nil {
			return "", err
		}
	}
	if !p.Analyze {
		return planner.ExplainText(stmt), nil
	}
	q, ok := stmt.(*planner.Query)
	if !ok {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "EXPLAIN ANALYZE of %s is not supported", stmt.Tag())
	}
	an := lower.NewAnalysis()
	op, err := s.lowerQuery(ctx, snap, q.Params, q.Root, args, an)
	if err != nil {
		return "", err
	}
	start := time.Now()
	if err := exec.Drain(ctx, op, func(arrow.RecordBatch) error { return nil }); err != nil {
		return "", err
	}
	return an.Text(q.Root) + "Execution Time: " + formatMs(time.Since(start)) + "\n", nil
}

func formatMs(d time.Duration) string {
	return fmt.Sprintf("%.3f ms", float64(d.Microseconds())/1000)
}

func (s *Session) show(st *planner.Show) ([][]string, []string, error) {
	if st.All {
		var rows [][]string
		for _, k := range settingNames() {
			d := settings[k]
			v, _ := s.Setting(k)
			rows = append(rows, []string{d.name, v, d.desc})
		}
		return rows, []string{"name", "setting", "description"}, nil
	}
	d, err := lookupSetting(st.Name)
	if err != nil {
		return nil, nil, err
	}
	v, _ := s.Setting(d.name)
	return [][]string{{v}}, []string{d.name}, nil
}

func (s *Session) set(st *planner.Set) error {
	if st.Local {
		return sqlerr.New(sqlerr.FeatureNotSupported, "SET LOCAL is not supported").
			WithHint("Use SET, which lasts for the session (and is undone by ROLLBACK).")
	}
	if st.All {
		// RESET ALL: every parameter the session may change.
		for _, k := range settingNames() {
			d := settings[k]
			if d.set == nil || d.fixed || d.txn != nil {
				continue
			}
			if err := s.apply(d, s.resetValue(d)); err != nil {
				return err
			}
		}
		return nil
	}
	d, err := lookupSetting(st.Name)
	if err != nil {
		return err
	}
	v := s.resetValue(d)
	if !st.Default {
		v = strings.Join(st.Values, ", ")
	}
	return s.apply(d, v)
}

func (s *Session) transaction(ctx context.Context, st *planner.Transaction) (string, error) {
	switch st.Kind {
	case planner.TxnBegin:
		if s.tx != nil {
			// Postgres warns "there is already a transaction in
			// progress", and applies the modes as SET TRANSACTION does.
			return st.Tag(), s.applyModes(st.Isolation, st.ReadOnly, st.Deferrable)
		}
		s.tx = s.db.cat.Begin()
		s.mode = s.defaultModes()
		if err := s.applyModes(st.Isolation, st.ReadOnly, st.Deferrable); err != nil {
			s.endBlock(true)
			return "", err
		}
		s.saved = &savedSettings{vopts: *s.vopts, values: map[string]string{}, timeout: s.timeout, memLimit: s.memLimit, workers: s.workers, minPar: s.minParallel}
		for k, v := range s.values {
			s.saved.values[k] = v
		}
		return st.Tag(), nil
	case planner.TxnCommit:
		if s.tx == nil {
			return "COMMIT", nil // Postgres warns "there is no transaction in progress"
		}
		if err := s.flushAppend(); err != nil {
			s.endBlock(true)
			return "", err
		}
		if s.failed {
			s.endBlock(true)
			return "ROLLBACK", nil
		}
		if err := s.holdCursors(ctx); err != nil {
			s.endBlock(true)
			return "", err
		}
		tx, ttx := s.tx, s.ttx
		s.endBlock(false)
		tx.SetSynchronousCommit(s.syncCommit())
		if err := tx.Commit(ctx); err != nil {
			if ttx != nil {
				ttx.Rollback()
			}
			return "", err
		}
		// The temporary catalog commits second: nothing else sees it, so
		// it cannot conflict (docs/storage.md: not atomic with the first).
		if ttx != nil {
			if err := ttx.Commit(ctx); err != nil {
				return "", err
			}
		}
		return "COMMIT", nil
	case planner.TxnRollback:
		if s.tx != nil {
			s.endBlock(true)
		}
		return "ROLLBACK", nil
	}
	return "", sqlerr.New(sqlerr.FeatureNotSupported, "this transaction statement is not supported")
}

// endBlock leaves the transaction block; rollback discards its writes and
// restores the settings it changed.
func (s *Session) endBlock(rollback bool) {
	if s.app != nil {
		// COMMIT flushed them; ROLLBACK and a failed block drop them.
		s.app.release()
		s.app = nil
	}
	if rollback {
		s.tx.Rollback()
		if s.ttx != nil {
			s.ttx.Rollback()
		}
		if s.saved != nil {
			*s.vopts = s.saved.vopts
			s.values = s.saved.values
			s.settingsVer++
			s.timeout = s.saved.timeout
			s.memLimit = s.saved.memLimit
			s.workers = s.saved.workers
			s.minParallel = s.saved.minPar
		}
	}
	s.endCursors(rollback)
	if s.txSnap != nil {
		s.txSnap.Release()
	}
	s.tx, s.ttx, s.saved, s.failed, s.txSnap, s.snapTaken, s.mode = nil, nil, nil, false, nil, false, txModes{}
	s.block = nil
}
