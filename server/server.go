package server

import (
	"context"
	"errors"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// New returns a wire server in front of db. cfg.Engine must be nil (New
// sets it); the caller closes db after the server's Shutdown.
func New(db *asofsql.DB, cfg pgwire.Config) (*pgwire.Server, error) {
	if db == nil {
		return nil, errors.New("server: nil database")
	}
	if cfg.Engine != nil {
		return nil, errors.New("server: Config.Engine is set by New")
	}
	cfg.Engine = NewEngine(db)
	return pgwire.NewServer(cfg)
}

// Engine adapts a DB to pgwire.Engine.
type Engine struct{ db *asofsql.DB }

// NewEngine wraps db.
func NewEngine(db *asofsql.DB) *Engine { return &Engine{db: db} }

var _ pgwire.Engine = (*Engine)(nil)

// Connect opens an asofsql session and applies the client's startup
// parameters to it.
func (e *Engine) Connect(ctx context.Context, info pgwire.StartupInfo) (pgwire.Session, error) {
	s := e.db.Session()
	s.SetIdentity(info.User, info.Database)
	// "options" first, so that an explicit startup parameter wins over a
	// -c item for the same setting; the rest in name order, so that which
	// bad parameter is reported does not depend on map order.
	names := slices.Sorted(maps.Keys(info.Options))
	if i := slices.IndexFunc(names, func(n string) bool { return strings.EqualFold(n, "options") }); i > 0 {
		opt := names[i]
		names = slices.Insert(slices.Delete(names, i, i+1), 0, opt)
	}
	for _, name := range names {
		value := info.Options[name]
		var err error
		if strings.EqualFold(name, "options") {
			err = applyOptions(s, value)
		} else {
			err = s.Set(name, value)
		}
		if err != nil {
			s.Close()
			return nil, err
		}
	}
	return &session{s: s}, nil
}

// applyOptions applies the "options" startup parameter: space-separated
// "-c name=value" or "--name=value" items (PGOPTIONS).
func applyOptions(s *asofsql.Session, opts string) error {
	fields := strings.Fields(opts)
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		var kv string
		switch {
		case f == "-c" && i+1 < len(fields):
			i++
			kv = fields[i]
		case strings.HasPrefix(f, "-c"):
			kv = f[2:]
		case strings.HasPrefix(f, "--"):
			kv = f[2:]
		default:
			return sqlerr.New(sqlerr.InvalidParameterValue, "invalid command-line argument for server process: %s", f).
				WithHint("Use \"-c name=value\" items in options.")
		}
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			return sqlerr.New(sqlerr.SyntaxError, "-c %s requires a value", kv)
		}
		if err := s.Set(strings.ReplaceAll(name, "-", "_"), value); err != nil {
			return err
		}
	}
	return nil
}

type session struct {
	s *asofsql.Session
	// named are the wrappers of named statements handed out, so that
	// every Bind of one gets the same (and pgwire keeps what it derived
	// from it); bounded, as SQL DEALLOCATE does not pass through here.
	named map[*asofsql.Stmt]*statement
}

// maxNamed bounds session.named; past it the map starts afresh.
const maxNamed = 64

// Parsing and planning observe the context while they run (57014), and
// each phase also checks it when it begins and ends, so a statement
// cancelled (CancelRequest, statement_timeout, a client gone) between
// phases goes no further either.

func (s *session) Query(ctx context.Context, sql string) (pgwire.Batch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := s.s.Batch(ctx, sql)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	return &batch{b: b}, nil
}

func (s *session) Prepare(ctx context.Context, sql string, paramTypes []sqltypes.Type) (pgwire.Statement, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st, err := s.s.Prepare(ctx, sql, paramTypes)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	if st == nil { // an empty query: the server answers it
		return nil, nil
	}
	return newStatement(st), nil
}

var _ pgwire.NamedStatements = (*session)(nil)

// PrepareNamed keeps a Parse's named statement in the asofsql session,
// where SQL EXECUTE and DEALLOCATE find it too.
func (s *session) PrepareNamed(ctx context.Context, name, sql string, paramTypes []sqltypes.Type) (pgwire.Statement, error) {
	st, err := s.s.PrepareNamed(ctx, name, sql, paramTypes)
	if err != nil {
		return nil, err
	}
	return statementOf(st), nil
}

func (s *session) Statement(name string) (pgwire.Statement, error) {
	st, ok := s.s.Prepared(name)
	if !ok {
		return nil, sqlerr.New(sqlerr.InvalidSQLStatementName, "prepared statement \"%s\" does not exist", name)
	}
	if st.Empty() {
		return nil, nil
	}
	if w, ok := s.named[st]; ok {
		return w, nil
	}
	if s.named == nil || len(s.named) >= maxNamed {
		s.named = map[*asofsql.Stmt]*statement{}
	}
	w := newStatement(st)
	s.named[st] = w
	return w, nil
}

func (s *session) CloseStatement(name string) error {
	if _, ok := s.s.Prepared(name); ok {
		return s.s.Deallocate(name)
	}
	return nil
}

// statementOf is nil for the empty statement, which the server answers.
func statementOf(st *asofsql.Stmt) pgwire.Statement {
	if st.Empty() {
		return nil
	}
	return newStatement(st)
}

var _ pgwire.Cursors = (*session)(nil)

// CursorColumns describes a cursor DECLARE made, for Describe of a portal
// of its name.
func (s *session) CursorColumns(name string) ([]pgwire.Column, bool, bool) {
	cols, binary, ok := s.s.CursorColumns(name)
	if !ok {
		return nil, false, false
	}
	return wireColumns(cols), binary, true
}

func (s *session) Sync(ctx context.Context, failed bool) error { return s.s.Sync(ctx, failed) }
func (s *session) TxStatus() byte                              { return s.s.TxStatus() }
func (s *session) Setting(name string) (string, bool)          { return s.s.Setting(name) }
func (s *session) SettingsVersion() uint64                     { return s.s.SettingsVersion() }
func (s *session) ValueOptions() *sqltypes.Options             { return s.s.ValueOptions() }
func (s *session) Close() error                                { return s.s.Close() }

var _ pgwire.InstantSync = (*session)(nil)

// InstantSync: asofsql.Session.Sync only marks a failed block; it neither
// blocks nor reads its context (a statement commits as it runs).
func (s *session) InstantSync() {}

type batch struct{ b *asofsql.Batch }

func (b *batch) Next(ctx context.Context) (pgwire.Statement, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st, err := b.b.Next(ctx)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	return newStatement(st), nil
}

func (b *batch) Close() error { return b.b.Close() }

type statement struct {
	st   *asofsql.Stmt
	cols []pgwire.Column
}

func newStatement(st *asofsql.Stmt) *statement {
	return &statement{st: st, cols: wireColumns(st.Columns())}
}

func wireColumns(c []asofsql.Column) []pgwire.Column {
	if c == nil {
		return nil
	}
	cols := make([]pgwire.Column, len(c))
	for i, col := range c {
		cols[i] = pgwire.Column{Name: col.Name, Type: col.Type}
	}
	return cols
}

var _ pgwire.BinaryResults = (*statement)(nil)

// BinaryResults reports a FETCH from a BINARY cursor.
func (st *statement) BinaryResults() bool { return st.st.BinaryRows() }

func (st *statement) ParamTypes() []sqltypes.Type { return st.st.ParamTypes() }
func (st *statement) Columns() []pgwire.Column    { return st.cols }
func (st *statement) Close() error                { return st.st.Close() }

// Execute starts the statement. The engine's cursor lives on a context
// detached from this call's (which ends when the Execute message is
// answered, while a suspended portal's rows are still to come); each
// later call's context is linked to it for that call (see linked).
func (st *statement) Execute(ctx context.Context, params arrow.RecordBatch) (pgwire.Result, error) {
	if info, ok := st.st.Copy(); ok {
		args, err := argsOf(params)
		if err != nil {
			return nil, err
		}
		return copyResultOf(st.st, info, args), nil
	}
	return st.run(ctx, params, nil)
}

var _ pgwire.ValuesStatement = (*statement)(nil)

// ExecuteValues is Execute with parameters the server decoded as values:
// they are handed to the engine as asofsql.Params (a prepared INSERT in
// a transaction block appends them without being run again), or as
// lower.Values for a statement with rows, which binding takes as they
// are, without the Arrow arrays Execute's batch is made of.
func (st *statement) ExecuteValues(ctx context.Context, params []pgwire.ParamValue) (pgwire.Result, error) {
	if info, ok := st.st.Copy(); ok {
		args := make([]any, len(params))
		for i, p := range params {
			args[i] = p.GoValue()
		}
		return copyResultOf(st.st, info, args), nil
	}
	if st.st.NoRows() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Nothing of an INSERT outlives the call: it runs on the call's
		// context (see run).
		c, err := st.st.ExecuteParams(ctx, params)
		if err != nil {
			return nil, err
		}
		return &result{c: c, cancel: noCancel}, nil
	}
	args := make([]any, len(params))
	for i, p := range params {
		args[i] = asofsql.ParamArg(p)
	}
	return st.run(ctx, nil, args)
}

func copyResultOf(st *asofsql.Stmt, info asofsql.CopyInfo, args []any) pgwire.Result {
	cr := &copyResult{st: st, info: info, args: args}
	if info.From {
		return &copyIn{cr}
	}
	return &copyOut{cr}
}

// run starts the statement with args (a Bind's decoded values) or else
// params, on a context detached from the call's and linked to it while
// the engine starts the statement.
func (st *statement) run(ctx context.Context, params arrow.RecordBatch, args []any) (pgwire.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if st.st.NoRows() {
		// Nothing of an INSERT outlives the call (its cursor is done
		// when Execute returns): it runs on the call's context, without
		// a detached one linked to it.
		c, err := st.execute(ctx, params, args)
		if err != nil {
			return nil, err
		}
		return &result{c: c, cancel: noCancel}, nil
	}
	base, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := link(ctx, cancel)
	// Cancellation while it plans reaches the execution through base; a
	// statement without rows that has run is not undone.
	c, err := st.execute(base, params, args)
	stop()
	if err != nil {
		cancel(nil)
		return nil, err
	}
	return &result{c: c, cancel: cancel}, nil
}

// execute runs the statement with args, or else params, on ctx.
func (st *statement) execute(ctx context.Context, params arrow.RecordBatch, args []any) (*asofsql.Cursor, error) {
	if args != nil {
		return st.st.Execute(ctx, args...)
	}
	return st.st.ExecuteBatch(ctx, params)
}

// noCancel is the cancel of a result that runs on its call's context.
func noCancel(error) {}

// link cancels the query's base context when the call's ctx is
// cancelled, until stop is called (AfterFunc's own stop: a wrapper
// closure would cost an allocation per call).
func link(ctx context.Context, cancel context.CancelCauseFunc) (stop func() bool) {
	return context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
}

// argsOf turns the server's one-row parameter batch into arguments.
func argsOf(params arrow.RecordBatch) ([]any, error) {
	if params == nil {
		return nil, nil
	}
	if params.NumRows() != 1 {
		return nil, sqlerr.New(sqlerr.ProtocolViolation, "parameters must be one row, got %d", params.NumRows())
	}
	args := make([]any, params.NumCols())
	for i, col := range params.Columns() {
		t, err := sqltypes.FromField(params.Schema().Field(i))
		if err != nil {
			return nil, err
		}
		args[i] = sqltypes.GoValue(col, 0, t)
	}
	return args, nil
}

// result streams a Cursor batch by batch.
type result struct {
	c      *asofsql.Cursor
	cancel context.CancelCauseFunc
	closed bool
}

func (r *result) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if !r.c.Done() {
		// Only a cursor with rows to come runs anything that ctx's
		// cancellation must reach.
		stop := link(ctx, r.cancel)
		defer stop()
	}
	if !r.c.Next() {
		if err := r.c.Err(); err != nil {
			return nil, err
		}
		return nil, io.EOF
	}
	b := r.c.RecordBatch()
	b.Retain() // the cursor releases its current batch at the next Next
	return b, nil
}

// ChargeOutput charges the rows the server has encoded and not yet
// written to the query's account.
func (r *result) ChargeOutput(n int64) error { return r.c.ChargeOutput(n) }

func (r *result) Tag(rows int64) string { return r.c.TagFor(rows) }

func (r *result) Close() error {
	if !r.closed {
		r.closed = true
		r.c.Release()
		r.cancel(nil)
	}
	return nil
}

// copyResult runs COPY ... FROM STDIN / TO STDOUT when the server hands
// it the client's stream.
type copyResult struct {
	st   *asofsql.Stmt
	info asofsql.CopyInfo
	args []any
	tag  string
}

var (
	_ pgwire.OutputMemory  = (*result)(nil)
	_ pgwire.CopyInResult  = (*copyIn)(nil)
	_ pgwire.CopyOutResult = (*copyOut)(nil)
)

func (r *copyResult) Next(context.Context) (arrow.RecordBatch, error) { return nil, io.EOF }
func (r *copyResult) Tag(int64) string                                { return r.tag }
func (r *copyResult) Close() error                                    { return nil }

func (r *copyResult) format() pgwire.CopyFormat {
	return pgwire.CopyFormat{Binary: r.info.Binary, Columns: r.info.Columns}
}

func (r *copyResult) run(ctx context.Context, in io.Reader, out io.Writer) error {
	c, err := r.st.ExecuteCopy(ctx, in, out, r.args...)
	if err != nil {
		return err
	}
	r.tag = c.Tag()
	return c.Close()
}

type copyIn struct{ *copyResult }

func (r copyIn) CopyInFormat() pgwire.CopyFormat                { return r.format() }
func (r copyIn) CopyIn(ctx context.Context, in io.Reader) error { return r.run(ctx, in, nil) }

type copyOut struct{ *copyResult }

func (r copyOut) CopyOutFormat() pgwire.CopyFormat               { return r.format() }
func (r copyOut) CopyOut(ctx context.Context, w io.Writer) error { return r.run(ctx, nil, w) }
