// Package server serves an embedded asofsql database over the PostgreSQL
// wire protocol: it adapts asofsql sessions (Session, Stmt, Cursor,
// COPY streams) onto the pgwire Engine/Session/Statement/Result
// interfaces, so psql, pgx, lib/pq and other Postgres clients reach the
// real engine.
//
// Contract:
//   - New(db, cfg) returns a *pgwire.Server whose Engine is db; every
//     other Config field (auth, TLS, limits, logger) is pgwire's. Each
//     client connection gets its own asofsql.Session.
//   - Startup parameters other than user and database (TimeZone,
//     application_name, extra_float_digits, statement_timeout, and
//     "-c name=value" items of "options") are applied with Session.Set;
//     one the engine does not know, or a bad value, refuses the
//     connection with that error (FATAL), as Postgres does.
//   - A result's rows are pulled from the engine only as the server asks
//     for them, so a slow client back-pressures the query. A portal that
//     is suspended (Execute with a row limit) keeps its query running
//     between Execute messages; each Execute's cancellation (CancelRequest,
//     statement_timeout, lost client) cancels it.
//   - Every phase observes cancellation: parsing, planning, execution and
//     sending look at the context as they go (57014), and each phase also
//     checks it when it ends, so a statement cancelled meanwhile goes no
//     further.
//   - COPY ... FROM STDIN and COPY ... TO STDOUT run through the session's
//     COPY streams (text, CSV, binary).
//
// Example:
//
//	db, err := asofsql.Open("./data")
//	if err != nil { ... }
//	srv, err := server.New(db, pgwire.Config{Logger: slog.Default()})
//	if err != nil { ... }
//	go srv.ListenAndServe("127.0.0.1:5433")
//	...
//	err = srv.Shutdown(ctx) // then db.Close()
package server
