package pgwire

import (
	"context"
	"io"
	"net"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Engine is what the server needs from a SQL engine: a session per
// authenticated connection. Implementations must be safe for concurrent use.
type Engine interface {
	// Connect opens a session for an authenticated client. An error is
	// sent to the client as FATAL (for example 42704 for an unknown
	// startup setting) and the connection is closed.
	Connect(ctx context.Context, info StartupInfo) (Session, error)
}

// StartupInfo describes an authenticated client.
type StartupInfo struct {
	User     string
	Database string
	// Options holds every startup parameter other than user and database
	// (application_name, client_encoding, DateStyle, TimeZone,
	// extra_float_digits, options, ...), as the client sent them, plus
	// statement_timeout and idle_in_transaction_session_timeout
	// (milliseconds) when Config.StatementTimeout or
	// Config.IdleInTransactionTimeout is set and the client sent none. The
	// server enforces the session's statement_timeout,
	// idle_session_timeout and idle_in_transaction_session_timeout
	// settings when the session has them.
	Options    map[string]string
	RemoteAddr net.Addr
	// Notice delivers a WARNING or NOTICE (an *sqlerr.Error whose Severity
	// says which; empty means NOTICE) to the client. Call it only from
	// inside a Session, Batch, Statement or Result method, on the calling
	// goroutine: the server queues it in order with that call's output.
	Notice func(*sqlerr.Error)
}

// Session is one client connection's state in the engine: settings,
// transaction, prepared statements' catalog snapshot. The server calls a
// Session's methods (and those of the values it returns) from one
// goroutine at a time.
type Session interface {
	// Query splits a simple-protocol query string into its statements.
	// Syntax errors are reported here, with Position relative to sql.
	// Statements are analysed one at a time by Batch.Next, so that each
	// sees the effects of those before it.
	Query(ctx context.Context, sql string) (Batch, error)

	// Prepare parses and analyses sql for the extended protocol. sql holds
	// at most one statement: more is 42601 "cannot insert multiple
	// commands into a prepared statement"; none returns (nil, nil) and the
	// server answers NoData/EmptyQueryResponse itself. paramTypes are the
	// types the client declared (sqltypes.UnknownType where it sent OID 0
	// or fewer types than the statement uses).
	Prepare(ctx context.Context, sql string, paramTypes []sqltypes.Type) (Statement, error)

	// Sync ends the implicit transaction: everything since the previous
	// Sync (extended protocol) or the whole Query message (simple
	// protocol). failed reports that an error was sent to the client in
	// between, including errors the server raised itself (bad Bind
	// messages): outside a transaction block the implicit transaction is
	// rolled back, inside one the block becomes failed ('E'). Without
	// failure the implicit transaction commits. An error is sent to the
	// client before ReadyForQuery.
	Sync(ctx context.Context, failed bool) error

	// TxStatus is the ReadyForQuery status: 'I' idle, 'T' in a
	// transaction block, 'E' in a failed transaction block.
	TxStatus() byte

	// Setting returns the current value of a run-time setting by its
	// Postgres name (case-insensitive), e.g. "TimeZone". The server reads
	// the reported settings (application_name, client_encoding, DateStyle,
	// IntervalStyle, TimeZone, standard_conforming_strings, is_superuser,
	// session_authorization, default_transaction_read_only) after login and
	// after every statement, and sends ParameterStatus for each change.
	Setting(name string) (string, bool)

	// ValueOptions are the session settings that shape value text I/O
	// (TimeZone, extra_float_digits). The server encodes results and
	// decodes parameters with them; it must reflect SETs at once.
	ValueOptions() *sqltypes.Options

	// Close ends the session, rolling back an open transaction.
	Close() error
}

// NamedStatements is implemented by a Session that keeps named prepared
// statements itself, in one namespace with SQL PREPARE, EXECUTE and
// DEALLOCATE, as Postgres does: a statement Parse names can be run by
// EXECUTE and dropped by DEALLOCATE (psycopg 3 sends DEALLOCATE ALL
// after a rollback). The server then keeps only the unnamed statement and
// asks the session for the others at each Bind and Describe.
type NamedStatements interface {
	// PrepareNamed is Prepare that also keeps the statement under name
	// (never ""); a name already taken is 42P05. An empty sql keeps the
	// empty statement, returned as nil.
	PrepareNamed(ctx context.Context, name, sql string, paramTypes []sqltypes.Type) (Statement, error)
	// Statement returns the statement kept under name (nil for the empty
	// statement); 26000 when there is none.
	Statement(name string) (Statement, error)
	// CloseStatement drops the statement kept under name, if any.
	CloseStatement(name string) error
}

// SettingsVersion is implemented by a Session that counts the changes of
// its settings: the count moves whenever a value Setting returns may have
// changed (SET, RESET, a rolled-back block restoring them). The server
// then reads the reported settings and the timeouts again only when it
// moved, instead of after every statement.
type SettingsVersion interface {
	SettingsVersion() uint64
}

// InstantSync is implemented by a Session whose Sync neither blocks nor
// looks at its context (its implicit transaction has nothing to commit at
// Sync: each statement commits as it runs). The server then calls Sync
// without a cancellable call context of its own, which every statement
// would otherwise pay for at its Sync.
type InstantSync interface {
	InstantSync()
}

// Cursors is implemented by a Session whose SQL cursors (DECLARE) are
// portals too, as in Postgres: Describe of a portal no Bind made
// describes the cursor of that name (psycopg's named cursors ask so for
// their columns).
type Cursors interface {
	// CursorColumns describes the rows of the cursor name; binary reports
	// a BINARY cursor, whose rows FETCH returns in binary.
	CursorColumns(name string) (cols []Column, binary, ok bool)
}

// BinaryResults is implemented by a Statement whose rows go out in
// binary in the simple protocol too (FETCH from a BINARY cursor).
type BinaryResults interface {
	BinaryResults() bool
}

// Batch yields the statements of a simple-protocol query string.
type Batch interface {
	// Next analyses and returns the next statement, or io.EOF after the
	// last. Errors carry positions relative to the whole query string.
	Next(ctx context.Context) (Statement, error)
	// Close releases the batch; the server calls it even after an error.
	Close() error
}

// Column describes one result column.
type Column struct {
	Name string
	Type sqltypes.Type
	// TableOID and Attr identify the source table column, 0 when the
	// column is computed (clients ignore them).
	TableOID uint32
	Attr     int16
}

// Statement is an analysed statement, executable any number of times.
type Statement interface {
	// ParamTypes are the statement's parameter types, $1 first. A
	// parameter whose type the engine cannot infer is
	// sqltypes.UnknownType: the server reports OID 0 for it and passes its
	// value as TEXT.
	ParamTypes() []sqltypes.Type
	// Columns describes the result rows; nil for a statement without rows
	// (the server answers Describe with NoData).
	Columns() []Column
	// Execute starts the statement. params holds one row with one column
	// per parameter, typed as ParamTypes says (TEXT for unknown ones), or
	// is nil for a statement without parameters; it is valid only during
	// the call (Retain it to keep it). ctx covers this call only: Result
	// methods receive their own.
	Execute(ctx context.Context, params arrow.RecordBatch) (Result, error)
	// Close releases the statement.
	Close() error
}

// Result is a running statement. Every result is read with Next until
// io.EOF; results that are COPY streams also implement CopyInResult or
// CopyOutResult, and the server drives those instead.
type Result interface {
	// Next returns the next batch of rows, which the caller releases, or
	// io.EOF after the last. Its columns are Statement.Columns. A result
	// without rows returns io.EOF at once. A slow reader slows Next's
	// caller, so an engine that produces batches lazily is back-pressured
	// by the client.
	Next(ctx context.Context) (arrow.RecordBatch, error)
	// Tag is the CommandComplete tag once the result is exhausted. rows is
	// the number of rows the server sent in the final Execute (Postgres
	// reports that count, not the total, after PortalSuspended): a SELECT
	// returns "SELECT <rows>", an INSERT "INSERT 0 <n>" of its own count.
	Tag(rows int64) string
	// Close releases the result; it may be called before io.EOF (portal
	// closed, error, transaction end).
	Close() error
}

// OutputMemory is implemented by a Result whose query's memory account
// also covers the rows the server has encoded for the client and not yet
// written to its socket, so that a client that stops reading cannot make
// the server queue a result beyond the query's memory_limit. The server
// charges the bytes before it encodes a row (by an estimate from the
// row's values, corrected after) and returns them once written.
type OutputMemory interface {
	// ChargeOutput charges n more bytes of queued output (n < 0 returns
	// them); an error (53200) charges nothing and fails the statement.
	ChargeOutput(n int64) error
}

// CopyFormat describes a COPY data stream: Binary or text (text and CSV
// are both text on the wire), and its number of columns.
type CopyFormat struct {
	Binary  bool
	Columns int
}

// CopyInResult is a Result of COPY ... FROM STDIN.
type CopyInResult interface {
	Result
	CopyInFormat() CopyFormat
	// CopyIn consumes the client's data stream, which r yields until
	// io.EOF (the client's CopyDone). A client CopyFail makes Read fail
	// with 57014. Tag("COPY n") follows.
	CopyIn(ctx context.Context, r io.Reader) error
}

// CopyOutResult is a Result of COPY ... TO STDOUT.
type CopyOutResult interface {
	Result
	CopyOutFormat() CopyFormat
	// CopyOut writes the whole data stream to w; each Write becomes
	// CopyData messages, back-pressured by the client.
	CopyOut(ctx context.Context, w io.Writer) error
}
