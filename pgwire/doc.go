// Package pgwire serves asofsql over the PostgreSQL wire protocol (v3.0),
// so psql, pgx, lib/pq, psycopg and JDBC connect to it as to a
// PostgreSQL 15 server. Messages are framed with
// github.com/jackc/pgx/v5/pgproto3; SCRAM uses github.com/xdg-go/scram.
//
// The server knows nothing of SQL. It drives an Engine (see engine.go):
// Connect gives a Session per authenticated client; a Session parses
// (Query for the simple protocol, Prepare for the extended one), ends
// implicit transactions (Sync) and reports its settings and transaction
// state; Statements describe their parameters and columns with
// sqltypes.Type and execute into Results that stream Arrow record
// batches, or COPY data (CopyInResult, CopyOutResult). Errors are
// *sqlerr.Error values, flattened into ErrorResponse only here.
//
// # Contract
//
//   - Startup: SSLRequest is answered 'S' (TLS) when Config.TLS is set
//     (LoadTLS reads a certificate and key), else 'N'; GSSENCRequest 'N'. EOF before the startup message is normal
//     (pgx probes and reconnects). Protocol 3.2 and _pq_ options get
//     NegotiateProtocolVersion (3.0). One database (Config.Database,
//     default "asofsql"): others are FATAL 3D000. After authentication the
//     13 ParameterStatus values Postgres 15 reports (server_version
//     "15.0 (asofsql <Version>)"), BackendKeyData with a random 4-byte
//     secret, ReadyForQuery. Reported settings are sent again after any
//     statement that changes them.
//   - Authentication (Config.Auth): trust (only on loopback or Unix
//     sockets: Serve refuses otherwise), password (clear text, only with
//     RequireTLS), md5, SCRAM-SHA-256; users carry verifiers in
//     pg_authid format (NewVerifier, LoadUsers), never passwords. Failure
//     is FATAL 28P01. Over TLS, SCRAM-SHA-256-PLUS is offered too, with
//     tls-server-end-point channel binding (the hash of the certificate
//     the handshake presented), so clients with channel_binding=require
//     connect; a binding for another channel is FATAL 08P01.
//   - Simple protocol: the statements of a Query run in order in one
//     implicit transaction, stopping at the first error; "" / ";" / a
//     comment give EmptyQueryResponse.
//   - Extended protocol: named and unnamed statements and portals,
//     Describe S/P, Bind format codes (none, one, or one each), Execute
//     with MaxRows and PortalSuspended, Close, Flush, Sync; after an error
//     everything up to Sync is discarded. Portals die at the end of their
//     transaction (at Sync when idle); a simple Query replaces the unnamed
//     statement and portal. A Session that implements NamedStatements
//     keeps the named statements itself, in one namespace with SQL
//     PREPARE/EXECUTE/DEALLOCATE; the server keeps them otherwise. A
//     Session that implements Cursors has its SQL cursors (DECLARE)
//     answer Describe of a portal of their name, as Postgres' portals do;
//     a Statement that implements BinaryResults (FETCH from a BINARY
//     cursor) sends binary rows in the simple protocol too; a Session
//     that implements SettingsVersion has its reported settings and
//     timeouts read again only after they changed, not after every
//     statement; a Session that implements InstantSync has Sync called
//     without a call context of its own (one that commits nothing there).
//     Errors use Postgres' SQLSTATEs and wording: 26000, 34000, 42P03,
//     42P05, 08P01, 22023, 22P03.
//   - Parameters are decoded in the server, at Bind, with
//     sqltypes.DecodeText/DecodeBinary and the session's ValueOptions, into
//     a one-row Arrow batch typed as Statement.ParamTypes says; a
//     parameter of unknown type (reported as OID 0) arrives as TEXT. So a
//     bad value fails at Bind with the type's own error (22P02, 22003,
//     08P01 for short binary data), as in Postgres, and every engine gets
//     typed values. A Statement that implements ValuesStatement gets the
//     common scalars (BIGINT, INTEGER, SMALLINT, DOUBLE PRECISION,
//     BOOLEAN, TEXT, TIMESTAMP[TZ], well-formed) as ParamValues instead,
//     decoded to the same values without Arrow arrays; any other Bind
//     still arrives as a batch.
//   - Results are encoded row by row straight into the output buffer with
//     sqltypes.EncodeText/EncodeBinary (Postgres 15 formats, byte for
//     byte). The buffer is flushed whenever it passes 32 KiB, and the next
//     batch is only requested once the previous one is written, so a
//     client that reads slowly stalls the query instead of growing server
//     memory. A Result that implements OutputMemory is charged for the
//     bytes waiting in the buffer, before each row is encoded (so one
//     huge value that would take its query past memory_limit is 53200,
//     not a second copy), and credited once they are written.
//   - Cancellation: CancelRequest (secret compared in constant time, no
//     reply) cancels the running engine call's context and the client
//     gets 57014; so does statement_timeout (Config.StatementTimeout is
//     the default of the session setting). A statement that runs longer
//     than a few milliseconds gets a watcher that reads ahead for it, so
//     a client whose socket closes, or that sends Terminate, has that
//     statement cancelled at once (and the messages it queued before
//     Terminate dropped); pgx cancels that way. A watcher held back by
//     the read-ahead limit reads nothing, so it polls the socket for the
//     client's hang-up meanwhile (POLLRDHUP, on Linux). A COPY FROM
//     STDIN reads its data itself and ends the same way.
//     A statement blocked writing to a client that does not read notices
//     no cancellation: once cancelled, its writes get a deadline (10 s),
//     after which the connection is closed.
//   - Limits: MaxConnections (FATAL 53300), IdleTimeout (FATAL 57P05 /
//     25P03), MaxMessageSize (FATAL 08P01; a message's buffer grows with
//     the bytes that arrive, not its declared length), AuthTimeout. The
//     session settings idle_session_timeout and
//     idle_in_transaction_session_timeout, when the Session reports them,
//     close a session waiting after ReadyForQuery that long (FATAL 57P05,
//     or 25P03 in a transaction block, which Session.Close rolls back), as
//     in Postgres.
//   - Shutdown stops accepting, closes idle sessions with FATAL 57P01,
//     lets running statements finish, and cancels them if its context
//     ends first. Stop (a fast shutdown, what asofsql serve does on
//     SIGTERM) cancels running statements at once and ends every session
//     with FATAL 57P01.
//   - Robustness: malformed, truncated, oversized or unknown messages get
//     an error or a clean close; every goroutine ends with its connection
//     (the tests check runtime.NumGoroutine). At most 1 MiB of client
//     input is read ahead of its processing (by a watcher; otherwise no
//     more than the input buffer or the one message being read). Result batches are checked
//     against the described columns (XX000 otherwise), and a panic in an
//     engine call ends only its connection, with FATAL XX000.
//
// One goroutine per connection reads, executes and writes, as a Postgres
// backend does: it reads client messages from a buffer it fills itself
// (16 KiB; a larger message gets a buffer of its own), executes each,
// appends the replies to the output buffer, and writes that at
// ReadyForQuery, Flush, an error, when it passes 32 KiB, or before it
// waits for the client; so a pipelined Bind/Describe/Execute/Sync costs
// one read and one write and no hand-off between goroutines. On Linux
// those are raw system calls on the non-blocking TCP or Unix socket
// (waits still go through the runtime's poller), so that the runtime's
// sysmon thread is not woken for each statement (rawsock_linux.go). Idle
// timeouts and shutdown end that wait through read deadlines. A message
// taken from the buffer aliases it until the next is read; a watcher
// only appends past the unread bytes, or moves them to a new array.
//
// Not here: the catalog queries of psql's \d, \dt, \l (the engine answers
// them from its virtual pg_catalog tables, sql/pgcatalog; this package
// treats them as any query), the function-call protocol (0A000), and
// LISTEN/NOTIFY.
//
// # Example
//
//	srv, err := pgwire.NewServer(pgwire.Config{Engine: eng})
//	if err != nil { ... }
//	go srv.ListenAndServe("127.0.0.1:5432")
//	...
//	err = srv.Shutdown(ctx)
//
// then: psql -h 127.0.0.1 -p 5432 -U me asofsql
package pgwire
