// Package flightsql serves an asofsql database over Arrow Flight SQL, beside
// the Postgres wire server (package pgwire) and over the same engine: the
// embedded API's sessions, statements and cursors. Results leave as the
// engine's own Arrow record batches, so analytical clients (ADBC in Python,
// R, Go; the Flight SQL JDBC driver; arrow-go's client and database/sql
// driver) read them without any row conversion. It is built on arrow-go's
// flight/flightsql server framework.
//
// Contract:
//   - New(db, cfg) and Serve(listener); Shutdown drops results not yet
//     fetched, lets running calls finish until its context ends, and rolls
//     back open transactions. A panic in a call is an XX000 error, never a
//     crash; a malformed request is an error (08P01).
//   - Sessions: a client connection (one HTTP/2 transport) is what a
//     Postgres connection is: per user it has a session whose settings
//     (SET, or SetSessionOptions) last across its statements, and its
//     transactions and prepared statements end with it (transactions roll
//     back). A query outside a transaction block runs in a fork of the
//     session (asofsql.Session.Fork), so one connection may fetch several
//     results at once; other statements run in the session itself, one at
//     a time. Statements made by SQL PREPARE are in the connection's one
//     namespace, shared by its forks and its Flight transactions, as on a
//     Postgres connection: PREPARE in one query or transaction, EXECUTE or
//     DEALLOCATE in any later one (ROLLBACK does not undo PREPARE).
//     Flight SQL prepared statements are protocol objects named by their
//     handles, not by SQL names: they are outside that namespace, and
//     DEALLOCATE ALL and DISCARD ALL leave them.
//   - Commands: CommandStatementQuery (any statement: DDL or DML sent as a
//     query runs and gives an empty result; several statements separated
//     by semicolons run in order and give the last one's result),
//     CommandStatementUpdate (rows affected), prepared statements
//     (parameter and result schemas before execution, planned anew at each
//     execution, which fails with 0A000 "cached plan must not change
//     result type" if either schema changed since; parameters bound by
//     DoPut travel in the handle the server returns, several rows run the
//     statement once each: a query's results follow one another, an
//     update's rows run in one transaction), CommandStatementIngest (Arrow
//     batches into a table, all or nothing, fields matched to columns by
//     name; if_not_exist CREATE makes the table from the stream's schema
//     and the option "asofsql.order_by" gives it an ordering; unspecified
//     if_exists appends, unspecified if_not_exist fails), transactions
//     (ActionBeginTransaction / EndTransaction, READ COMMITTED as on the
//     wire; savepoints are 0A000), CancelFlightInfo (and the deprecated
//     CancelQuery), RenewFlightEndpoint, Set/GetSessionOptions and
//     CloseSession. Metadata: GetSqlInfo, GetCatalogs (Config.Database),
//     GetDbSchemas (public), GetTables (with schemas), GetTableTypes
//     (TABLE), GetXdbcTypeInfo, and the key commands (no rows: there are
//     no keys). Substrait plans are 0A000. COPY ... STDIN/STDOUT is 0A000
//     (use ingest, or a query).
//   - Execution: a query is planned and opened when its FlightInfo is
//     asked for, on one catalog snapshot; its result then waits for the
//     DoGet of its ticket (single use) until the endpoint's expiration time
//     (Config.ResultTTL, renewable). The FlightInfo's schema is the stream's
//     exactly: the engine's Arrow types, each field's SQL type in its
//     metadata (sqltypes.MetadataKey) plus Flight SQL's TYPE_NAME,
//     PRECISION and SCALE. Batches are sent as the engine produces them,
//     never converted, and not even copied on the way out: a gRPC codec
//     sends the IPC header followed by the batch's own buffers (codec.go);
//     batches larger than 2 MiB are cut into slices so that clients'
//     default message limit holds. The engine only produces the next batch
//     when gRPC's flow control lets the previous one go, so a slow reader
//     holds the query back and memory stays bounded (a couple of batches
//     on the server). Cancelling the DoGet's context, CancelFlightInfo,
//     statement_timeout, expiry and Shutdown cancel the query (57014).
//   - Parallel fetch: a ticket is a TicketStatementQuery whose handle is
//     "asof", version 1, a 16-byte result id and the uvarint partition
//     number. A query outside a transaction (and a prepared one bound to
//     at most one row of parameters) whose result is a row-wise function
//     of one stored table's rows in their stored order (scans, filters,
//     projections, ASOF joins, not RIGHT or FULL, whose left input is that
//     table and whose right inputs are stored tables, filtered or
//     projected; no aggregate, sort, LIMIT, DISTINCT, window, set
//     operation, other join, volatile function or subquery) lists up to
//     the session's
//     max_parallel_workers_per_gather endpoints (SET, or SetSessionOptions),
//     as many as a parallel plan over the table would get
//     (min_parallel_table_scan_size: one below it), one per contiguous range of the table's rows (planner.Partition,
//     asofsql.Stmt.ExecutePartitions); any other statement, and any at
//     degree 1, lists one. Every endpoint reads the snapshot of the
//     GetFlightInfo, held until each endpoint is fetched or the result
//     expires; each is fetchable on its own connection (its location is
//     empty: this server), in any order, at the same time. FlightInfo.ordered
//     is true: the result is endpoint 0's rows, then endpoint 1's, and so
//     on. Cancelling one endpoint's DoGet stops that part alone;
//     CancelFlightInfo stops them all. The DoGet of an endpoint that
//     expired answers 34000 "... expired before it was fetched".
//   - Security, as on the wire: trust (no authentication) only on a
//     loopback listener; otherwise HTTP basic credentials checked against
//     the users file's verifiers (pgwire.Verifier.Check) and exchanged at
//     Handshake for a bearer token (Config.TokenLifetime), and TLS
//     (Config.TLS, the same certificate files) required, since basic
//     authentication sends the password in clear text.
//   - Errors: every error is a gRPC status whose code follows the SQLSTATE
//     class (42P01 NotFound, 42xxx/22xxx InvalidArgument, 0A000
//     Unimplemented, 57014 Canceled, 28xxx Unauthenticated, ...), whose
//     message reads "message (SQLSTATE xxxxx)" with DETAIL and HINT lines,
//     and whose details hold a google.rpc.ErrorInfo (Domain "asofsql",
//     Reason the SQLSTATE, Metadata sqlstate/message/detail/hint/position).
//     ErrorOf recovers the *sqlerr.Error on the client side.
//
// Example:
//
//	db, err := asofsql.Open("./data")
//	if err != nil { ... }
//	srv, err := flightsql.New(db, flightsql.Config{})
//	if err != nil { ... }
//	go srv.ListenAndServe("127.0.0.1:31337")
//	...
//	err = srv.Shutdown(ctx) // then db.Close()
//
// and a client:
//
//	opts := append(flightclient.DialOptions(), // package flightsql/flightclient
//	    grpc.WithTransportCredentials(insecure.NewCredentials()))
//	c, err := flightsql.NewClient("127.0.0.1:31337", nil, nil, opts...) // arrow-go's
//	info, err := c.Execute(ctx, `SELECT * FROM trades ASOF JOIN quotes ON ts BETWEEN -10 AND 0 USING (sym)`)
//	for _, ep := range info.Endpoint { // in order; or each on its own connection, at once
//	    rdr, err := c.DoGet(ctx, ep.Ticket)
//	    for rdr.Next() { use(rdr.RecordBatch()) }
//	    rdr.Release()
//	}
package flightsql
