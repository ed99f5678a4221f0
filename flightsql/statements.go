package flightsql

import (
	"context"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	afsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Where statements run. A connection's session keeps its settings (SET)
// and a SQL transaction block (BEGIN ... COMMIT sent as statements); a
// query outside a block runs in a fork of it (asofsql.Session.Fork), so a
// client may fetch several results of one connection at once and a later
// SET cannot change a result being read. Every other statement (DDL, DML,
// SET, a multi-statement string, anything inside a block or a Flight
// transaction) runs in the session itself, one at a time, as on a
// Postgres connection: a statement waits while an earlier one of the
// same session still holds it (a result of a block not yet fetched).

// start runs sql with the first row of args (for GetFlightInfo) and
// returns its result, not yet registered. Statements that return no rows
// (DDL, DML, SET, which some clients send as queries) run to completion
// here; their result is empty. want, when not nil, is the description a
// prepared statement announced, which the statement must still have.
func (h *handler) start(ctx context.Context, sess *session, sql string, args [][]any, want *description) (*result, error) {
	// The statement outlives this call (its rows are fetched by DoGet), so
	// its context is detached from the call's; DoGet, CancelFlightInfo,
	// expiry and shutdown cancel it.
	base, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	fail := func(err error) (*result, error) {
		cancel(err)
		return nil, err
	}
	if err := sess.acquire(ctx); err != nil {
		return fail(err)
	}
	var first []any
	if len(args) > 0 {
		first = args[0]
	}
	r := &result{h: h, id: newID(), owner: userOf(ctx), cancel: cancel}
	rest := args
	if len(rest) > 0 {
		rest = rest[1:]
	}
	if sess.txn == nil && sess.s.TxStatus() == 'I' {
		f := sess.s.Fork()
		st, err := f.Prepare(base, sql, nil)
		if err == nil && st != nil && st.Columns() != nil && !isCopy(st) {
			sess.release()
			if err := want.check(st); err != nil {
				st.Close()
				return fail(err)
			}
			if len(rest) == 0 {
				return h.startParts(base, r, st, first)
			}
			cur, err := st.Execute(base, first...)
			if err != nil {
				return fail(err)
			}
			r.parts = []*part{{cur: cur, cancel: cancel}}
			r.more = moreRows(base, st, rest)
			r.schema = announce(cur.Schema())
			return r, nil
		}
		if st != nil {
			st.Close() // runs in the session instead, planned anew there
		}
	}
	// In the session itself, which the result keeps until it is closed.
	st, cur, err := runScript(base, sess.s, sql, first, want)
	if err != nil {
		failBlock(sess.s)
		sess.release()
		return fail(err)
	}
	r.parts = []*part{{cur: cur, cancel: cancel}}
	r.more = moreRows(base, st, rest)
	r.schema = announce(cur.Schema())
	if st.Columns() == nil && r.more == nil {
		sess.release() // finished: nothing of the session is used any more
		return r, nil
	}
	r.release = func(failed bool) {
		if failed {
			failBlock(sess.s)
		}
		sess.release()
	}
	sess.hold(func() { h.drop(r, errSessionClosed) })
	return r, nil
}

// startParts executes a query outside any transaction as one part per
// endpoint when it is row-wise (asofsql.Stmt.ExecutePartitions: at most
// the session's max_parallel_workers_per_gather parts), each cancellable
// on its own (a client stopping one stream leaves the others) and all
// with the result's.
func (h *handler) startParts(base context.Context, r *result, st *asofsql.Stmt, args []any) (*result, error) {
	var cancels []context.CancelCauseFunc
	cur, err := st.ExecutePartitions(base, func(int) context.Context {
		ctx, cancel := context.WithCancelCause(base)
		cancels = append(cancels, cancel)
		return ctx
	}, args...)
	if err != nil {
		r.cancel(err)
		return nil, err
	}
	r.parts = make([]*part, len(cur))
	for i, c := range cur {
		r.parts[i] = &part{cur: c, cancel: r.cancel}
		if len(cur) > 1 {
			r.parts[i].cancel = cancels[i]
		}
	}
	r.schema = announce(cur[0].Schema())
	return r, nil
}

// moreRows executes st once per remaining parameter row, lazily; nil
// when there is none.
func moreRows(ctx context.Context, st *asofsql.Stmt, rows [][]any) func() (*asofsql.Cursor, error) {
	if len(rows) == 0 {
		return nil
	}
	return func() (*asofsql.Cursor, error) {
		if len(rows) == 0 {
			return nil, io.EOF
		}
		args := rows[0]
		rows = rows[1:]
		return st.Execute(ctx, args...)
	}
}

// failBlock fails the session's transaction block, if it has one, after
// an error reached the client (as the wire protocol's Sync after an
// error does): the engine fails a block itself for errors of planning
// and of statements it runs to completion, not for those of rows read
// later.
func failBlock(s *asofsql.Session) {
	s.Sync(context.Background(), true)
}

func isCopy(st *asofsql.Stmt) bool {
	_, ok := st.Copy()
	return ok
}

// runScript runs the statements of sql in s in order (each sees the
// effects of those before it), reading and discarding the rows of all
// but the last, and returns the last one with its cursor. args bind the
// parameters of a single statement, which must match want (see start).
func runScript(ctx context.Context, s *asofsql.Session, sql string, args []any, want *description) (*asofsql.Stmt, *asofsql.Cursor, error) {
	b, err := s.Batch(ctx, sql)
	if err != nil {
		return nil, nil, err
	}
	switch n := b.Remaining(); {
	case n == 0:
		return nil, nil, sqlerr.New(sqlerr.SyntaxError, "empty query")
	case n > 1 && len(args) > 0:
		return nil, nil, sqlerr.New(sqlerr.SyntaxError, "cannot insert multiple commands into a prepared statement")
	}
	for {
		st, err := b.Next(ctx)
		if err != nil {
			return nil, nil, err
		}
		if isCopy(st) {
			return nil, nil, errCopy()
		}
		if err := want.check(st); err != nil {
			st.Close()
			return nil, nil, err
		}
		cur, err := st.Execute(ctx, args...)
		if err != nil {
			return nil, nil, err
		}
		if b.Remaining() == 0 {
			return st, cur, nil
		}
		if err := drain(cur); err != nil {
			return nil, nil, err
		}
	}
}

func errCopy() error {
	return sqlerr.New(sqlerr.FeatureNotSupported, "COPY FROM STDIN and COPY TO STDOUT are not supported over Flight SQL").
		WithHint("Load Arrow data with bulk ingestion (CommandStatementIngest); read with a query.")
}

// drain reads a cursor to its end and releases it.
func drain(c *asofsql.Cursor) error {
	for c.Next() {
	}
	return c.Close()
}

// affected is the row count of a finished statement's tag ("INSERT 0 3",
// "COPY 5", "SELECT 2"); 0 for statements that count none (DDL, SET).
func affected(tag string) int64 {
	i := strings.LastIndexByte(tag, ' ')
	if i < 0 {
		return 0
	}
	n, err := strconv.ParseInt(tag[i+1:], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// update runs sql to completion in sess once per row of args (once with
// none when args is empty) and returns the rows affected. Several rows
// run in one transaction (all or nothing) unless the session is already
// in a block. want is as for start.
func (h *handler) update(ctx context.Context, sess *session, sql string, args [][]any, want *description) (int64, error) {
	if err := sess.acquire(ctx); err != nil {
		return 0, err
	}
	defer sess.release()
	n, err := updateIn(ctx, sess.s, sql, args, want)
	if err != nil {
		failBlock(sess.s)
	}
	return n, err
}

func updateIn(ctx context.Context, s *asofsql.Session, sql string, args [][]any, want *description) (int64, error) {
	if len(args) <= 1 {
		var first []any
		if len(args) == 1 {
			first = args[0]
		}
		return execOnce(ctx, s, sql, first, want)
	}
	own := s.TxStatus() == 'I'
	if own {
		if _, err := s.Exec(ctx, "BEGIN"); err != nil {
			return 0, err
		}
	}
	var total int64
	for _, row := range args {
		n, err := execOnce(ctx, s, sql, row, want)
		if err != nil {
			if own {
				s.Exec(context.WithoutCancel(ctx), "ROLLBACK")
			}
			return 0, err
		}
		total += n
	}
	if own {
		res, err := s.Exec(ctx, "COMMIT")
		if err != nil {
			return 0, err
		}
		if res.Tag == "ROLLBACK" {
			return 0, sqlerr.New("40000", "the batch was rolled back")
		}
	}
	return total, nil
}

func execOnce(ctx context.Context, s *asofsql.Session, sql string, args []any, want *description) (int64, error) {
	_, cur, err := runScript(ctx, s, sql, args, want)
	if err != nil {
		return 0, err
	}
	for cur.Next() {
	}
	tag := cur.Tag()
	if err := cur.Close(); err != nil {
		return 0, err
	}
	return affected(tag), nil
}

// GetFlightInfoStatement runs a query (CommandStatementQuery).
func (h *handler) GetFlightInfoStatement(ctx context.Context, cmd afsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	sess, err := h.scope(ctx, cmd.GetTransactionId())
	if err != nil {
		return nil, err
	}
	r, err := h.start(ctx, sess, cmd.GetQuery(), nil, nil)
	if err != nil {
		return nil, err
	}
	return h.register(r, desc)
}

// GetSchemaStatement describes a query's result without running it.
func (h *handler) GetSchemaStatement(ctx context.Context, cmd afsql.StatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	sess, err := h.scope(ctx, cmd.GetTransactionId())
	if err != nil {
		return nil, err
	}
	d, err := h.describe(ctx, sess, cmd.GetQuery())
	if err != nil {
		return nil, err
	}
	return h.schemaResult(d.dataset), nil
}

// schemaResult answers GetSchema: a statement without rows has an empty
// schema.
func (h *handler) schemaResult(schema *arrow.Schema) *flight.SchemaResult {
	if schema == nil {
		schema = arrow.NewSchema(nil, nil)
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(schema, h.mem)}
}

// DoPutCommandStatementUpdate runs DDL, DML or SET (CommandStatementUpdate),
// also several statements separated by semicolons, and returns the rows
// the last one affected.
func (h *handler) DoPutCommandStatementUpdate(ctx context.Context, cmd afsql.StatementUpdate) (int64, error) {
	sess, err := h.scope(ctx, cmd.GetTransactionId())
	if err != nil {
		return 0, err
	}
	return h.update(ctx, sess, cmd.GetQuery(), nil, nil)
}

// description is what preparing a statement tells before it runs.
type description struct {
	script  bool // several statements: no parameters, shape unknown
	params  *arrow.Schema
	dataset *arrow.Schema // nil for a statement without rows
	// paramTypes and cols are the analysed statement's (not a script's).
	paramTypes []sqltypes.Type
	cols       []asofsql.Column
}

// check refuses to run st if its parameters or result columns are no
// longer those d announced (a table it reads was altered since), as
// EXECUTE of a SQL prepared statement does (0A000): the client has
// already sized its reading of the result by the announced schemas. A nil
// d, or a script's, checks nothing.
func (d *description) check(st *asofsql.Stmt) error {
	if d == nil || d.script {
		return nil
	}
	if slices.Equal(st.ParamTypes(), d.paramTypes) && slices.Equal(st.Columns(), d.cols) && (st.Columns() == nil) == (d.cols == nil) {
		return nil
	}
	return sqlerr.New(sqlerr.FeatureNotSupported, "cached plan must not change result type").
		WithHint("Close the prepared statement and prepare it again.")
}

// describe analyses sql in sess (in a fork outside a block: analysis has
// no effect on the session).
func (h *handler) describe(ctx context.Context, sess *session, sql string) (description, error) {
	if err := sess.acquire(ctx); err != nil {
		return description{}, err
	}
	s := sess.s
	if sess.txn == nil && s.TxStatus() == 'I' {
		s = s.Fork()
		sess.release()
	} else {
		defer sess.release()
	}
	b, err := s.Batch(ctx, sql)
	if err != nil {
		return description{}, err
	}
	switch b.Remaining() {
	case 0:
		return description{}, sqlerr.New(sqlerr.SyntaxError, "empty query")
	case 1:
	default:
		return description{script: true, params: arrow.NewSchema(nil, nil)}, nil
	}
	st, err := b.Next(ctx)
	if err != nil {
		return description{}, err
	}
	defer st.Close() // analysed only: its plan's snapshot goes at once
	if isCopy(st) {
		return description{}, errCopy()
	}
	d := description{params: paramSchema(st.ParamTypes()), paramTypes: st.ParamTypes(), cols: st.Columns()}
	if cols := st.Columns(); cols != nil {
		d.dataset = columnsSchema(cols)
	}
	return d, nil
}
