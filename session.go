package asofsql

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/eval"
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
// Isolation: every statement plans and reads against the catalog as last
// committed when the statement starts (a fresh snapshot per statement,
// like Postgres' READ COMMITTED). Inside a transaction block the writes
// (CREATE TABLE, DROP TABLE, INSERT, COPY FROM) accumulate in one
// catalog.Tx and become visible to everyone, atomically, at COMMIT; until
// then they are NOT visible to the block's own later statements either
// (the catalog offers no read-your-writes view). Statements in a block
// are planned against the committed tables plus those the block created
// minus those it dropped, so a table created in the block can be filled
// (INSERT, COPY FROM) in it; reading it before COMMIT is refused (0A000)
// rather than answered from the committed state. A failed statement leaves
// nothing behind and puts the block in the failed state: every statement
// but COMMIT/ROLLBACK is 25P02 until the block ends, and COMMIT then rolls
// back (tag "ROLLBACK"), as in Postgres. Outside a block each statement
// commits on its own.
type Session struct {
	db       *DB
	vopts    *sqltypes.Options
	values   map[string]string // lowercase setting name → SHOW value
	timeout  time.Duration
	memLimit int64       // memory_limit: bytes per materializing operator, 0 for none
	tx       *catalog.Tx // the open transaction block; nil outside one
	readOnly bool
	failed   bool
	saved    *savedSettings // settings at BEGIN, restored by ROLLBACK
	// resetVals are the session defaults Set recorded (startup
	// parameters), by lowercase name, as given; RESET and SET ... TO
	// DEFAULT return to them, or to the built-in default without one.
	resetVals map[string]string
	// created and dropped are the tables the open block created or
	// dropped (see blockCatalog).
	created map[string]*catalog.TableInfo
	dropped map[string]bool
	// user and database are the client's identity (SetIdentity).
	user, database string
}

type savedSettings struct {
	vopts    sqltypes.Options
	values   map[string]string
	timeout  time.Duration
	memLimit int64
}

// Session opens a session with Postgres' default settings (TimeZone UTC).
func (db *DB) Session() *Session {
	s := &Session{db: db, vopts: sqltypes.DefaultOptions(), values: map[string]string{}}
	for k, st := range settings {
		s.values[k] = st.def
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

// Close ends the session, rolling back an open transaction block.
func (s *Session) Close() error {
	if s.tx != nil {
		s.tx.Rollback()
		s.tx = nil
	}
	return nil
}

// Setting returns a run-time setting's current value by its Postgres name
// (case-insensitive), as SHOW prints it.
func (s *Session) Setting(name string) (string, bool) {
	v, ok := s.values[strings.ToLower(name)]
	return v, ok
}

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
// it sees the catalog as it is then); a plan whose parameters or columns
// changed is 0A000 "cached plan must not change result type", as Postgres.
type Stmt struct {
	s        *Session
	st       *parser.Statement
	declared []sqltypes.Type
	params   []sqltypes.Type
	cols     []Column
	rows     bool
	copy     *CopyInfo // COPY ... FROM STDIN / TO STDOUT
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
	return st.s.run(ctx, st.st, st.declared, args, st, false, &copyStream{r: r, w: w})
}

// ParamTypes are the types of $1..$n (sqltypes.Unknown where nothing
// constrains one: its argument is then read by its Go type).
func (st *Stmt) ParamTypes() []sqltypes.Type { return st.params }

// Columns describes the result rows; nil for a statement without rows.
func (st *Stmt) Columns() []Column { return st.cols }

// Text is the statement's SQL.
func (st *Stmt) Text() string { return st.st.Text }

// Execute runs the statement with args bound to $1..$n (natural Go values
// or strings in Postgres text syntax). The Cursor streams its rows.
func (st *Stmt) Execute(ctx context.Context, args ...any) (*Cursor, error) {
	return st.s.run(ctx, st.st, st.declared, args, st, false, nil)
}

// ExecuteBatch runs the statement with its arguments given as one row of
// an Arrow batch, one column per parameter (how the wire server decodes
// Bind messages); nil means no arguments.
func (st *Stmt) ExecuteBatch(ctx context.Context, params arrow.RecordBatch) (*Cursor, error) {
	var args []any
	if params != nil {
		if params.NumRows() != 1 {
			return nil, sqlerr.New(sqlerr.ProtocolViolation, "parameters must be one row, got %d", params.NumRows())
		}
		for i, col := range params.Columns() {
			t, err := sqltypes.FromField(params.Schema().Field(i))
			if err != nil {
				return nil, err
			}
			args = append(args, sqltypes.GoValue(col, 0, t))
		}
	}
	return st.Execute(ctx, args...)
}

// Prepare parses and analyses one statement; paramTypes are types the
// caller declares for $1.. (Unknown entries are inferred). An empty sql
// gives (nil, nil).
func (s *Session) Prepare(ctx context.Context, sql string, paramTypes []sqltypes.Type) (*Stmt, error) {
	st, err := s.parseOne(ctx, sql)
	if err != nil || st == nil {
		return nil, s.fail(err)
	}
	return s.prepare(ctx, st, paramTypes)
}

// parse splits sql into statements observing ctx and statement_timeout
// (a huge statement takes long to parse).
func (s *Session) parse(ctx context.Context, sql string) ([]*parser.Statement, error) {
	pctx, cancel := s.statementContext(ctx)
	defer cancel()
	stmts, err := parser.ParseContext(pctx, sql)
	return stmts, cancelErr(ctx, pctx, err)
}

// parseOne is parse for a string holding at most one statement.
func (s *Session) parseOne(ctx context.Context, sql string) (*parser.Statement, error) {
	pctx, cancel := s.statementContext(ctx)
	defer cancel()
	st, err := parser.ParseOneContext(pctx, sql)
	return st, cancelErr(ctx, pctx, err)
}

func (s *Session) prepare(ctx context.Context, st *parser.Statement, declared []sqltypes.Type) (*Stmt, error) {
	if err := s.checkFailed(st); err != nil {
		return nil, err
	}
	snap, err := s.db.cat.Snapshot()
	if err != nil {
		return nil, err
	}
	defer snap.Release()
	pctx, cancel := s.statementContext(ctx)
	defer cancel()
	p, err := planner.BuildContext(pctx, s.planCatalog(snap), st, s.planOptions(declared))
	if err != nil {
		return nil, s.fail(cancelErr(ctx, pctx, err))
	}
	out := &Stmt{s: s, st: st, declared: declared}
	out.params, out.cols, out.rows = shapeOf(p)
	if c, ok := p.(*planner.Copy); ok && c.Stmt.Path == "" {
		info := &CopyInfo{From: c.Stmt.From, Binary: c.Stmt.Format == parser.CopyBinary, Columns: len(c.Columns)}
		if c.Query != nil {
			info.Columns = len(c.Query.Root.Schema())
		}
		out.copy = info
	}
	return out, nil
}

// shapeOf gives a plan's parameter types and result columns.
func shapeOf(p planner.Plan) ([]sqltypes.Type, []Column, bool) {
	switch p := p.(type) {
	case *planner.Query:
		cols := make([]Column, 0, len(p.Root.Schema()))
		for _, c := range p.Root.Schema() {
			cols = append(cols, Column{Name: c.Name, Type: c.Type})
		}
		return p.Params, cols, true
	case *planner.Insert:
		return p.Params, nil, false
	case *planner.Explain:
		params, _, _ := shapeOf(p.Stmt)
		return params, []Column{{Name: "QUERY PLAN", Type: sqltypes.TextType}}, true
	case *planner.Show:
		if p.Stmt.All {
			return nil, []Column{{Name: "name", Type: sqltypes.TextType}, {Name: "setting", Type: sqltypes.TextType},
				{Name: "description", Type: sqltypes.TextType}}, true
		}
		name := p.Stmt.Name
		if st, err := lookupSetting(name); err == nil {
			name = st.name
		}
		return nil, []Column{{Name: name, Type: sqltypes.TextType}}, true
	case *planner.Copy:
		if p.Query != nil {
			return p.Query.Params, nil, false
		}
	}
	return nil, nil, false
}

// Batch yields the statements of a multi-statement string one at a time,
// each analysed only when reached, so it sees the effects of those
// before it (what the wire protocol's simple Query needs).
type Batch struct {
	s     *Session
	stmts []*parser.Statement
	next  int
}

// Batch splits sql into statements; syntax errors are reported here.
func (s *Session) Batch(sql string) (*Batch, error) {
	stmts, err := s.parse(context.Background(), sql)
	if err != nil {
		return nil, s.fail(err)
	}
	return &Batch{s: s, stmts: stmts}, nil
}

// Next analyses the next statement; io.EOF after the last.
func (b *Batch) Next(ctx context.Context) (*Stmt, error) {
	if b.next >= len(b.stmts) {
		return nil, io.EOF
	}
	b.next++
	return b.s.prepare(ctx, b.stmts[b.next-1], nil)
}

// Query runs one row-returning statement (SELECT, EXPLAIN, SHOW) and
// streams its result; other statements are refused (0A000) before they
// run.
func (s *Session) Query(ctx context.Context, sql string, args ...any) (*Cursor, error) {
	st, err := s.parseOne(ctx, sql)
	if err != nil {
		return nil, s.fail(err)
	}
	if st == nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "empty query")
	}
	return s.run(ctx, st, nil, args, nil, true, nil)
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
		c, err := s.run(ctx, st, nil, args, nil, false, nil)
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
	if c.verb == "SELECT" {
		return c.rows
	}
	return c.affected
}

func (s *Session) planOptions(declared []sqltypes.Type) *planner.Options {
	return &planner.Options{Types: s.vopts, ParamTypes: declared, User: s.user, Database: s.database}
}

// isTxnEnd reports COMMIT/ROLLBACK, the statements a failed block accepts.
func isTxnEnd(st *parser.Statement) bool {
	t, ok := st.Node.(*parser.TransactionStmt)
	return ok && (t.Kind == parser.TxnCommit || t.Kind == parser.TxnRollback)
}

func (s *Session) checkFailed(st *parser.Statement) error {
	if s.failed && !isTxnEnd(st) {
		return sqlerr.New(sqlerr.InFailedSQLTransaction,
			"current transaction is aborted, commands ignored until end of transaction block")
	}
	return nil
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

// run plans and starts one statement. shape, when set, is the prepared
// statement whose described shape the new plan must keep; wantRows
// refuses statements without rows before they run; input is the data
// stream of COPY FROM STDIN / TO STDOUT.
func (s *Session) run(parent context.Context, st *parser.Statement, declared []sqltypes.Type, args []any,
	shape *Stmt, wantRows bool, input *copyStream) (*Cursor, error) {
	if err := s.checkFailed(st); err != nil {
		return nil, err
	}
	ctx, cancel := s.statementContext(parent)
	snap, err := s.db.cat.Snapshot()
	if err != nil {
		cancel()
		return nil, err
	}
	p, err := planner.BuildContext(ctx, s.planCatalog(snap), st, s.planOptions(declared))
	if err == nil && shape != nil {
		err = checkShape(shape, p)
	}
	if err == nil && wantRows {
		if _, _, rows := shapeOf(p); !rows {
			err = sqlerr.New(sqlerr.FeatureNotSupported, "Query runs statements that return rows; use Exec for %s", tagOf(p))
		}
	}
	if err == nil {
		err = s.readsBlockTables(p)
	}
	var c *Cursor
	if err == nil {
		c, err = s.dispatch(ctx, parent, snap, p, args, input, cancel)
	}
	if err != nil {
		err = cancelErr(parent, ctx, err) // before cancel() changes ctx.Err
		snap.Release()
		cancel()
		return nil, s.fail(err)
	}
	return c, nil
}

// readsBlockTables applies readsBlockTable to every query a plan runs.
func (s *Session) readsBlockTables(p planner.Plan) error {
	switch p := p.(type) {
	case *planner.Query:
		return s.readsBlockTable(p.Root)
	case *planner.Insert:
		return s.readsBlockTable(p.Input)
	case *planner.Explain:
		if p.Analyze {
			return s.readsBlockTables(p.Stmt)
		}
	case *planner.Copy:
		if p.Query != nil {
			return s.readsBlockTable(p.Query.Root)
		}
		if !p.Stmt.From && s.created[p.Table.Name] == p.Table {
			return errBlockTable(p.Table.Name)
		}
	}
	return nil
}

func checkShape(st *Stmt, p planner.Plan) error {
	params, cols, _ := shapeOf(p)
	same := len(params) == len(st.params) && len(cols) == len(st.cols)
	for i := 0; same && i < len(params); i++ {
		same = params[i] == st.params[i]
	}
	for i := 0; same && i < len(cols); i++ {
		same = cols[i] == st.cols[i]
	}
	if !same {
		return sqlerr.New(sqlerr.FeatureNotSupported, "cached plan must not change result type")
	}
	return nil
}

// dispatch executes a plan. A returned rows cursor owns snap and cancel
// (released when it finishes); otherwise dispatch has released them.
func (s *Session) dispatch(ctx, parent context.Context, snap *catalog.Snapshot, p planner.Plan, args []any,
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
	done := func(tag string) (*Cursor, error) { return doneCursor(tag), nil }
	switch p := p.(type) {
	case *planner.Query:
		op, err := s.lowerQuery(ctx, snap, p.Params, p.Root, args, nil)
		if err != nil {
			return nil, err
		}
		if err := op.Open(ctx); err != nil {
			op.Close()
			return nil, err
		}
		owned = true
		return rowsCursor(ctx, parent, op, "SELECT", snap.Release, cancel), nil
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
		return textCursor(s.db.opts.mem, "EXPLAIN", []string{"QUERY PLAN"}, rows), nil
	case *planner.Show:
		rows, cols, err := s.show(p.Stmt)
		if err != nil {
			return nil, err
		}
		return textCursor(s.db.opts.mem, "SHOW", cols, rows), nil
	case *planner.Set:
		if err := s.set(p.Stmt); err != nil {
			return nil, err
		}
		if p.Stmt.Reset {
			return done("RESET")
		}
		return done("SET")
	case *planner.Transaction:
		tag, err := s.transaction(ctx, p.Stmt)
		if err != nil {
			return nil, err
		}
		return done(tag)
	case *planner.CreateTable:
		if err := s.write(ctx, "CREATE TABLE", func(tx *catalog.Tx) error { return tx.CreateTable(ctx, p.Def, p.IfNotExists) }); err != nil {
			return nil, err
		}
		if _, err := s.planCatalog(snap).Table(p.Def.Name); err != nil { // IF NOT EXISTS on an existing table keeps it
			s.noteCreated(p.Def)
		}
		return done("CREATE TABLE")
	case *planner.DropTable:
		err := s.write(ctx, "DROP TABLE", func(tx *catalog.Tx) error {
			for _, name := range p.Names {
				if err := tx.DropTable(ctx, name, p.IfExists); err != nil {
					return err
				}
				s.noteDropped(name)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return done("DROP TABLE")
	case *planner.Insert:
		n, err := s.insert(ctx, snap, p, args)
		if err != nil {
			return nil, err
		}
		return doneCursorN("INSERT 0 "+strconv.FormatInt(n, 10), n), nil
	case *planner.Copy:
		n, err := s.copy(ctx, snap, p, args, input)
		if err != nil {
			return nil, err
		}
		return doneCursorN("COPY "+strconv.FormatInt(n, 10), n), nil
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s is not supported by the embedded API yet", tagOf(p))
}

func (s *Session) lowerQuery(ctx context.Context, snap *catalog.Snapshot, types []sqltypes.Type, root planner.Node,
	args []any, an *lower.Analysis) (exec.Operator, error) {
	params, err := lower.Bind(types, args, s.vopts)
	if err != nil {
		return nil, err
	}
	mem := s.db.opts.mem
	return lower.Query(ctx, snap, root, lower.Env{
		Mem: mem, Params: params, MemoryLimit: s.memLimit, Analysis: an,
		Eval: eval.Env{Mem: mem, Options: s.vopts},
	})
}

// write runs one write statement in the open block, or on its own
// (autocommit) outside one. command names the statement as Postgres does in
// its read-only refusal ("INSERT", "COPY FROM").
func (s *Session) write(ctx context.Context, command string, do func(*catalog.Tx) error) error {
	if s.readOnly {
		return sqlerr.New("25006", "cannot execute %s in a read-only transaction", command)
	}
	if s.tx != nil {
		return do(s.tx)
	}
	tx := s.db.cat.Begin()
	if err := do(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit(ctx)
}

func (s *Session) insert(ctx context.Context, snap *catalog.Snapshot, p *planner.Insert, args []any) (int64, error) {
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
	err = s.write(ctx, "INSERT", func(tx *catalog.Tx) error {
		var err error
		n, err = tx.Insert(ctx, p.Table.Name, rdr)
		return err
	})
	return n, err
}

// explain renders EXPLAIN; ANALYZE runs the query to the end first.
func (s *Session) explain(ctx context.Context, snap *catalog.Snapshot, p *planner.Explain, args []any) (string, error) {
	if !p.Analyze {
		return planner.ExplainText(p.Stmt), nil
	}
	q, ok := p.Stmt.(*planner.Query)
	if !ok {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "EXPLAIN ANALYZE of %s is not supported", tagOf(p.Stmt))
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

func (s *Session) show(st *parser.ShowStmt) ([][]string, []string, error) {
	if st.All {
		var rows [][]string
		for _, k := range settingNames() {
			d := settings[k]
			rows = append(rows, []string{d.name, s.values[k], d.desc})
		}
		return rows, []string{"name", "setting", "description"}, nil
	}
	d, err := lookupSetting(st.Name)
	if err != nil {
		return nil, nil, err
	}
	return [][]string{{s.values[strings.ToLower(d.name)]}}, []string{d.name}, nil
}

func (s *Session) set(st *parser.SetStmt) error {
	if st.Local {
		return sqlerr.New(sqlerr.FeatureNotSupported, "SET LOCAL is not supported").
			WithHint("Use SET, which lasts for the session (and is undone by ROLLBACK).")
	}
	if st.All {
		// RESET ALL: every parameter the session may change.
		for _, k := range settingNames() {
			d := settings[k]
			if d.set == nil || d.fixed {
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

func (s *Session) transaction(ctx context.Context, st *parser.TransactionStmt) (string, error) {
	switch st.Kind {
	case parser.TxnBegin:
		switch st.Isolation {
		case "", "read committed", "read uncommitted":
		default:
			return "", sqlerr.New(sqlerr.FeatureNotSupported, "transaction isolation level %s is not supported", st.Isolation).
				WithHint("Statements read the last committed state as of their start (READ COMMITTED).")
		}
		if s.tx != nil {
			return "BEGIN", nil // Postgres warns "there is already a transaction in progress"
		}
		s.tx = s.db.cat.Begin()
		s.readOnly = st.ReadOnly != nil && *st.ReadOnly
		s.saved = &savedSettings{vopts: *s.vopts, values: map[string]string{}, timeout: s.timeout, memLimit: s.memLimit}
		for k, v := range s.values {
			s.saved.values[k] = v
		}
		return "BEGIN", nil
	case parser.TxnCommit:
		if s.tx == nil {
			return "COMMIT", nil // Postgres warns "there is no transaction in progress"
		}
		if s.failed {
			s.endBlock(true)
			return "ROLLBACK", nil
		}
		tx := s.tx
		s.endBlock(false)
		if err := tx.Commit(ctx); err != nil {
			return "", err
		}
		return "COMMIT", nil
	case parser.TxnRollback:
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
	if rollback {
		s.tx.Rollback()
		if s.saved != nil {
			*s.vopts = s.saved.vopts
			s.values = s.saved.values
			s.timeout = s.saved.timeout
			s.memLimit = s.saved.memLimit
		}
	}
	s.tx, s.saved, s.failed, s.readOnly = nil, nil, false, false
	s.created, s.dropped = nil, nil
}
