package pgwire

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/asofsql/asofsql/sqlerr"
)

// conn is one client connection. Its goroutine (serve) owns everything but
// the fields under mu, which CancelRequest handling touches.
type conn struct {
	srv *Server
	raw net.Conn // the accepted socket, for deadlines from other goroutines
	nc  net.Conn // raw, or the TLS connection over it
	w   writer

	// ctx lives as long as the connection; abort ends it with a cause
	// (client gone, forced shutdown), cancelling whatever runs.
	ctx   context.Context
	abort context.CancelCauseFunc

	pid     uint32
	secret  []byte
	tlsCert *tls.Certificate // presented in the TLS handshake, if any
	counted bool
	started atomic.Bool // past startup and authentication
	// waiting is set while the connection goroutine waits for the
	// client with no whole message buffered (tests tell a quiet
	// connection by it).
	waiting atomic.Bool

	sess Session
	user string
	// in holds client bytes not yet handled (input.go); rdl is set when
	// the socket may have a read deadline, which the next wait resets.
	in  input
	rdl bool
	// watchT starts a watcher for a call that runs long (startWatch);
	// watchArmed is set while it is pending, to fire at watchAt;
	// callBegan is when the running call began (all under mu).
	watchT     *time.Timer
	watchArmed bool
	watchAt    time.Time
	callBegan  time.Time
	// The running call's statement timeout and its watcher (callCtx),
	// and endCall as a func value made once.
	callStop    context.CancelFunc
	callUnwatch func() bool
	endCallFn   func()
	// pb are the builders of Bind parameters, for the schema pbSchema
	// (decodeParams): a client running one prepared statement over and
	// over reuses them.
	pbSchema *arrow.Schema
	pb       []array.Builder

	stmts map[string]*prepared
	// lastNamed is the session-kept statement found last (stmt).
	lastNamed *prepared
	portals   map[string]*portal
	// failed records that an error was sent since the last Sync (for
	// Session.Sync); skip discards extended-protocol messages until Sync.
	failed bool
	skip   bool
	// reported holds the ParameterStatus values the client has.
	reported map[string]string
	// sver is sess as a SettingsVersion, nil if it is not one; the
	// reported values and the timeouts were read at the versions kept
	// with them.
	sver                     SettingsVersion
	reportedVer              uint64
	reportedRead             bool
	stmtTO, idleTO, idleTxTO durSetting
	// ready is set when ReadyForQuery went out and nothing came in since:
	// the session is idle, and the idle timeouts apply.
	ready bool

	mu     sync.Mutex
	cancel context.CancelCauseFunc // of the running engine call, if any
	// call identifies the running engine call (0 between calls; calls
	// counts them), so that a late cancellation of an ended call does
	// not touch the next.
	call  uint64
	calls uint64
	// bounded is set while a cancelled call's writes have a deadline
	// (see callCtx); the call's end clears it.
	bounded bool
	// rstate says who reads the socket (input.go); watch is the running
	// call's watcher, if it has one.
	rstate int
	watch  *watcher
}

// reportedSettings are sent after login, in Postgres' order; the
// session-level ones are re-sent when they change.
var reportedSettings = []string{
	"application_name", "client_encoding", "DateStyle", "default_transaction_read_only",
	"in_hot_standby", "integer_datetimes", "IntervalStyle", "is_superuser",
	"server_encoding", "server_version", "session_authorization",
	"standard_conforming_strings", "TimeZone",
}

// serverSettings are facts about the server, not the session.
func (c *conn) serverSetting(name string) (string, bool) {
	switch name {
	case "server_version":
		return "15.0 (asofsql " + Version + ")", true
	case "server_encoding":
		return "UTF8", true
	case "integer_datetimes":
		return "on", true
	case "in_hot_standby":
		return "off", true
	}
	return "", false
}

// sessionDefaults fill in reported settings a session does not know.
var sessionDefaults = map[string]string{
	"application_name":              "",
	"client_encoding":               "UTF8",
	"DateStyle":                     "ISO, MDY",
	"default_transaction_read_only": "off",
	"IntervalStyle":                 "postgres",
	"is_superuser":                  "on",
	"standard_conforming_strings":   "on",
	"TimeZone":                      "UTC",
}

func (c *conn) setting(name string) string {
	if v, ok := c.serverSetting(name); ok {
		return v
	}
	if v, ok := c.sess.Setting(name); ok {
		return v
	}
	if name == "session_authorization" {
		return c.user
	}
	return sessionDefaults[name]
}

// reportChanges sends ParameterStatus for every reported setting whose
// value changed (after a SET), as Postgres does before ReadyForQuery.
func (c *conn) reportChanges() {
	if c.sver != nil {
		v := c.sver.SettingsVersion()
		if c.reportedRead && c.reportedVer == v {
			return // no setting changed since the last report
		}
		c.reportedVer, c.reportedRead = v, true
	}
	for _, name := range reportedSettings {
		v := c.setting(name)
		if old, ok := c.reported[name]; !ok || old != v {
			c.reported[name] = v
			c.w.send(&pgproto3.ParameterStatus{Name: name, Value: v})
		}
	}
}

func (c *conn) serve() {
	defer func() {
		c.abort(errConnLost)
		c.nc.Close()
		// A call that panicked may have left its watcher reading: it
		// ends on the closed socket; nothing of the connection outlives
		// it (Shutdown counts on that).
		c.mu.Lock()
		watched := c.stopWatchLocked()
		c.mu.Unlock()
		if watched != nil {
			<-watched
		}
		c.srv.removeConn(c)
	}()
	if err := c.startup(); err != nil {
		if !errors.Is(err, errCancelDone) {
			c.logf("startup", err)
		}
		return
	}
	defer func() {
		c.closeAll()
		if err := c.sess.Close(); err != nil {
			c.logf("session close", err)
		}
	}()
	defer c.watchEnd()()
	defer func() {
		c.mu.Lock()
		if c.watchT != nil {
			c.watchT.Stop()
		}
		c.mu.Unlock()
	}()
	err := c.loopSafe()
	if err != nil {
		c.logf("connection", err)
	}
}

// loopSafe runs loop, turning a panic (a bug in an engine or here) into a
// FATAL XX000 for this connection instead of a crashed server.
func (c *conn) loopSafe() (err error) {
	defer func() {
		if r := recover(); r != nil {
			c.srv.cfg.Logger.Error("pgwire: panic serving a connection", "pid", c.pid, "panic", r, "stack", string(debug.Stack()))
			err = c.fatal(sqlerr.New(sqlerr.InternalError, "internal error: %v", r))
		}
	}()
	return c.loop()
}

func (c *conn) logf(what string, err error) {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return
	}
	c.srv.cfg.Logger.Debug("pgwire: "+what, "remote", c.nc.RemoteAddr().String(), "pid", c.pid, "err", err)
}

// fatal sends a FATAL error and flushes; the caller then closes.
func (c *conn) fatal(e *sqlerr.Error) error {
	c.w.send(errorResponse(e.WithSeverity("FATAL")))
	c.w.flush()
	return e
}

// startup runs the preamble (SSL/GSS negotiation, CancelRequest), the
// startup message, authentication and the session start.
func (c *conn) startup() error {
	cfg := &c.srv.cfg
	c.nc.SetDeadline(time.Now().Add(cfg.AuthTimeout))
	var sm *pgproto3.StartupMessage
	tlsDone, sslAsked := false, false
	for sm == nil {
		msg, err := readStartup(c.nc)
		if err != nil {
			if e, ok := sqlerr.As(err); ok {
				return c.fatal(e)
			}
			// EOF before a startup message is normal: pgx probes with an
			// SSLRequest and reconnects after 'N'.
			return err
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest:
			if sslAsked {
				return c.fatal(sqlerr.New(sqlerr.ProtocolViolation, "SSLRequest sent twice"))
			}
			sslAsked = true
			if cfg.TLS == nil {
				if _, err := c.nc.Write([]byte{'N'}); err != nil {
					return err
				}
				continue
			}
			if _, err := c.nc.Write([]byte{'S'}); err != nil {
				return err
			}
			if err := c.startTLS(); err != nil {
				return err
			}
			tlsDone = true
		case *pgproto3.GSSEncRequest:
			if _, err := c.nc.Write([]byte{'N'}); err != nil {
				return err
			}
		case *pgproto3.CancelRequest:
			// Handled without any reply, as Postgres does.
			c.srv.cancel(m.ProcessID, m.SecretKey)
			return errCancelDone
		case *pgproto3.StartupMessage:
			sm = m
		}
	}
	if cfg.RequireTLS && !tlsDone {
		return c.fatal(sqlerr.New(codeInvalidAuthSpec, "SSL connection is required"))
	}
	params := map[string]string{}
	var unknownPQ []string
	for k, v := range sm.Parameters {
		if strings.HasPrefix(k, "_pq_.") {
			unknownPQ = append(unknownPQ, k)
			continue
		}
		params[k] = v
	}
	if sm.ProtocolVersion != pgproto3.ProtocolVersion30 || len(unknownPQ) > 0 {
		// Postgres 15 speaks 3.0 only; 3.2 clients (pgx with
		// max_protocol_version=latest) accept this and carry on.
		c.w.send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: pgproto3.ProtocolVersion30, UnrecognizedOptions: unknownPQ})
	}
	user := params["user"]
	if user == "" {
		return c.fatal(sqlerr.New(codeInvalidAuthSpec, "no PostgreSQL user name specified in startup packet"))
	}
	c.user = user
	db := params["database"]
	if db == "" {
		db = user
	}
	delete(params, "user")
	delete(params, "database")
	for name, d := range map[string]time.Duration{"statement_timeout": cfg.StatementTimeout,
		"idle_in_transaction_session_timeout": cfg.IdleInTransactionTimeout} {
		if _, ok := params[name]; !ok && d > 0 {
			// The server default, overridable per session like a
			// postgresql.conf setting.
			params[name] = strconv.FormatInt(d.Milliseconds(), 10)
		}
	}
	if err := c.srv.admit(c); err != nil {
		return c.fatal(sqlerr.From(err))
	}
	if err := c.authenticate(user, tlsDone); err != nil {
		return err
	}
	c.w.send(&pgproto3.AuthenticationOk{})
	if db != cfg.Database {
		return c.fatal(sqlerr.New(sqlerr.InvalidCatalogName, "database %q does not exist", db))
	}
	sess, err := cfg.Engine.Connect(c.ctx, StartupInfo{
		User: user, Database: db, Options: params, RemoteAddr: c.nc.RemoteAddr(),
		Notice: c.notice,
	})
	if err != nil {
		return c.fatal(sqlerr.From(err))
	}
	c.sess = sess
	c.sver, _ = sess.(SettingsVersion)
	c.stmts = map[string]*prepared{}
	c.portals = map[string]*portal{}
	c.reported = map[string]string{}
	c.reportChanges()
	c.w.send(&pgproto3.BackendKeyData{ProcessID: c.pid, SecretKey: c.secret})
	c.w.send(&pgproto3.ReadyForQuery{TxStatus: sess.TxStatus()})
	if err := c.w.flush(); err != nil {
		return err
	}
	c.nc.SetDeadline(time.Time{})
	c.started.Store(true)
	return nil
}

func (c *conn) notice(e *sqlerr.Error) {
	if e == nil {
		return
	}
	sev := e.Severity
	if sev == "" {
		sev = "NOTICE"
	}
	r := errorResponse(e.WithSeverity(sev))
	c.w.send((*pgproto3.NoticeResponse)(r))
}

// idleTimeout is how long the session may wait for the client:
// Config.IdleTimeout, or, while it is idle after ReadyForQuery, the
// session's idle_session_timeout or idle_in_transaction_session_timeout
// (by transaction state) when that is shorter.
func (c *conn) idleTimeout() time.Duration {
	d := c.srv.cfg.IdleTimeout
	if !c.ready {
		return d
	}
	name := "idle_session_timeout"
	if c.sess.TxStatus() != 'I' {
		name = "idle_in_transaction_session_timeout"
	}
	cache := &c.idleTO
	if name != "idle_session_timeout" {
		cache = &c.idleTxTO
	}
	if s, ok := c.durationSetting(name, cache); ok && s > 0 && (d == 0 || s < d) {
		d = s
	}
	return d
}

// ctxFailure reports why the connection context ended: a forced shutdown
// is told to the client; a lost client is not.
func (c *conn) ctxFailure() error {
	cause := context.Cause(c.ctx)
	if e, ok := sqlerr.As(cause); ok && e.Code == sqlerr.AdminShutdown {
		return c.fatal(e)
	}
	if errors.Is(cause, errTerminated) {
		return nil
	}
	return cause
}

// loop dispatches messages until Terminate, EOF or a fatal error.
func (c *conn) loop() error {
	for {
		f, err := c.readMsg()
		if err != nil {
			return err
		}
		if c.skip && f.typ != 'S' && f.typ != 'X' {
			continue
		}
		if err := c.dispatch(f); err != nil {
			if errors.Is(err, errTerminate) {
				return nil
			}
			return err
		}
		if c.ctx.Err() != nil {
			return c.ctxFailure()
		}
		if err := c.w.err; err != nil {
			return err
		}
	}
}

var (
	errTerminate  = errors.New("terminate")
	errCancelDone = errors.New("cancel request handled")
)

func decode(m pgproto3.FrontendMessage, body []byte) error {
	if err := m.Decode(body); err != nil {
		return sqlerr.Wrap(err, sqlerr.ProtocolViolation, "invalid message format")
	}
	return nil
}

func (c *conn) dispatch(f frame) error {
	switch f.typ {
	case 'Q':
		var m pgproto3.Query
		if err := decode(&m, f.body); err != nil {
			return c.fatal(sqlerr.From(err))
		}
		// A simple Query replaces the unnamed statement and portal, as in
		// Postgres.
		c.dropStmt("")
		if p, ok := c.portals[""]; ok {
			c.dropPortal(p)
		}
		c.simpleQuery(m.String)
		return c.readyForQuery()
	case 'P':
		var m pgproto3.Parse
		if err := decode(&m, f.body); err != nil {
			return c.fatal(sqlerr.From(err))
		}
		c.extErr(c.parse(&m))
	case 'B':
		var m pgproto3.Bind
		if err := decode(&m, f.body); err != nil {
			return c.fatal(sqlerr.From(err))
		}
		c.extErr(c.bind(&m))
	case 'D':
		var m pgproto3.Describe
		if err := decode(&m, f.body); err != nil {
			return c.fatal(sqlerr.From(err))
		}
		c.extErr(c.describe(&m))
	case 'E':
		var m pgproto3.Execute
		if err := decode(&m, f.body); err != nil {
			return c.fatal(sqlerr.From(err))
		}
		c.extErr(c.execute(&m))
	case 'C':
		var m pgproto3.Close
		if err := decode(&m, f.body); err != nil {
			return c.fatal(sqlerr.From(err))
		}
		c.extErr(c.closeMsg(&m))
	case 'H':
		return c.w.flush()
	case 'S':
		c.skip = false
		return c.readyForQuery()
	case 'X':
		return errTerminate
	case 'd', 'c', 'f':
		// Leftover COPY messages after a failed COPY are dropped, as
		// Postgres does.
	case 'F':
		c.sendError(sqlerr.New(sqlerr.FeatureNotSupported, "the function call protocol is not supported"))
		return c.readyForQuery()
	default:
		// readFrame admits only the types above.
		return c.fatal(sqlerr.New(sqlerr.ProtocolViolation, "invalid frontend message type %d", f.typ))
	}
	return nil
}

// extErr handles an extended-protocol error: ErrorResponse, then discard
// everything until Sync.
func (c *conn) extErr(err error) {
	if err == nil {
		return
	}
	c.sendError(err)
	c.skip = true
	// Postgres flushes errors at once, so a client waiting without Sync
	// or Flush still learns of it.
	c.w.flush()
}

func (c *conn) sendError(err error) {
	if c.ctx.Err() != nil {
		// The connection is going down; loop reports why (ctxFailure).
		return
	}
	e := sqlerr.From(err)
	c.failed = true
	c.w.send(errorResponse(e))
}

func errorResponse(e *sqlerr.Error) *pgproto3.ErrorResponse {
	sev := e.Severity
	if sev == "" {
		sev = "ERROR"
	}
	code := e.Code
	if code == "" {
		code = sqlerr.InternalError
	}
	return &pgproto3.ErrorResponse{
		Severity: sev, SeverityUnlocalized: sev, Code: code, Message: e.Message,
		Detail: e.Detail, Hint: e.Hint, Position: int32(e.Position),
	}
}

// readyForQuery ends the implicit transaction and reports the state.
func (c *conn) readyForQuery() error {
	if c.ctx.Err() != nil {
		return nil // loop reports the end (ctxFailure); Close rolls back
	}
	failed := c.failed
	c.failed = false
	var err error
	ctx := c.ctx
	if _, instant := c.sess.(InstantSync); instant {
		err = c.sess.Sync(ctx, failed)
	} else {
		var done func()
		ctx, done = c.callCtx()
		err = c.sess.Sync(ctx, failed)
		done()
	}
	if err != nil {
		c.w.send(errorResponse(c.sqlErr(ctx, err)))
	}
	status := c.sess.TxStatus()
	if status == 'I' {
		// Portals live until the end of their transaction.
		for name, p := range c.portals {
			p.close()
			delete(c.portals, name)
		}
	}
	c.reportChanges()
	c.w.send(&pgproto3.ReadyForQuery{TxStatus: status})
	c.ready = true
	return c.w.flush()
}

// callCtx gives an engine call its context: cancellable by CancelRequest,
// bounded by StatementTimeout, ended by the connection's end.
//
// The call's output goes out as it runs; a call blocked writing to a
// client that does not read would notice none of these. So once the
// context ends, writes get a deadline of Server.cancelWriteGrace: a client
// that is merely slow takes the rest of what was written in that time, as
// Postgres lets it; one that reads nothing loses the connection, which is
// out of step with it anyway once a message is half sent.
//
// The context ends in three ways, each of which bounds the writes itself
// (rather than a watcher per call, which costs every statement): the
// connection's end (watchEnd), a CancelRequest (cancelQuery), and the
// statement timeout (a watcher, only when there is a timeout).
func (c *conn) callCtx() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(c.ctx)
	c.callStop, c.callUnwatch = nil, nil
	d := c.statementTimeout()
	if d > 0 {
		ctx, c.callStop = context.WithTimeoutCause(ctx, d, errStmtTimeout)
	}
	c.calls++
	call := c.calls
	c.mu.Lock()
	c.cancel, c.call = cancel, call
	if c.ctx.Err() != nil {
		c.boundLocked() // ended before the call began: watchEnd saw no call
	}
	c.armWatchLocked()
	c.mu.Unlock()
	if d > 0 {
		c.callUnwatch = context.AfterFunc(ctx, func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.call == call { // the call has not ended
				c.boundLocked()
			}
		})
	}
	if c.endCallFn == nil {
		c.endCallFn = c.endCall // one closure per connection, not per call
	}
	return ctx, c.endCallFn
}

// endCall ends the call callCtx began.
func (c *conn) endCall() {
	if c.callUnwatch != nil {
		c.callUnwatch()
	}
	c.mu.Lock()
	cancel := c.cancel
	c.cancel, c.call = nil, 0
	watched := c.stopWatchLocked()
	if c.bounded && c.ctx.Err() == nil {
		// A connection that is ending keeps the deadline (Stop sets
		// one too): its last words must not block forever either.
		c.bounded = false
		c.raw.SetWriteDeadline(time.Time{})
	}
	c.mu.Unlock()
	if watched != nil {
		<-watched
	}
	if c.callStop != nil {
		c.callStop()
	}
	cancel(nil)
}

// statementTimeout is the session's statement_timeout when it has one
// (SET statement_timeout), else Config.StatementTimeout.
func (c *conn) statementTimeout() time.Duration {
	if d, ok := c.durationSetting("statement_timeout", &c.stmtTO); ok {
		return d
	}
	return c.srv.cfg.StatementTimeout
}

// durSetting is a duration setting as last read, at a settings version.
type durSetting struct {
	ver  uint64
	read bool // ver, d and ok are of a read
	d    time.Duration
	ok   bool
}

// durationSetting reads a duration setting of the session (ok false when
// it has none or it does not parse); a session that counts its settings'
// changes (SettingsVersion) is asked again only after one.
func (c *conn) durationSetting(name string, cache *durSetting) (time.Duration, bool) {
	var ver uint64
	if c.sver != nil {
		ver = c.sver.SettingsVersion()
		if cache.read && cache.ver == ver {
			return cache.d, cache.ok
		}
	}
	var d time.Duration
	v, ok := c.sess.Setting(name)
	if ok {
		d, ok = ParseDuration(v)
	}
	*cache = durSetting{ver: ver, read: c.sver != nil, d: d, ok: ok}
	return d, ok
}

// ParseDuration reads a Postgres time setting such as statement_timeout:
// a number of milliseconds, or a number with a unit (us, ms, s, min, h,
// d), e.g. "5s", "250ms", "0". ok is false for anything else.
func ParseDuration(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	i := 0
	for i < len(v) && (v[i] >= '0' && v[i] <= '9' || v[i] == '.') {
		i++
	}
	n, err := strconv.ParseFloat(v[:i], 64)
	if err != nil || n < 0 {
		return 0, false
	}
	unit := map[string]time.Duration{"": time.Millisecond, "us": time.Microsecond, "ms": time.Millisecond,
		"s": time.Second, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour}
	u, ok := unit[strings.TrimSpace(v[i:])]
	if !ok || n*float64(u) > float64(1<<62) {
		return 0, false
	}
	return time.Duration(n * float64(u)), true
}

func (c *conn) cancelQuery(cause error) {
	c.mu.Lock()
	if c.cancel != nil {
		c.cancel(cause)
		c.boundLocked()
	}
	c.mu.Unlock()
}

// boundLocked gives the running call's writes a deadline (see callCtx);
// c.mu is held and a call is running.
func (c *conn) boundLocked() {
	if c.call == 0 {
		return
	}
	c.bounded = true
	c.raw.SetWriteDeadline(time.Now().Add(c.srv.cancelWriteGrace))
	if c.rstate == rsCopy {
		// The call waits for COPY data: wake it to see the end.
		c.raw.SetReadDeadline(time.Now())
	}
}

// watchEnd bounds the writes of the call running when the connection
// ends (callCtx), and wakes whoever waits for the client; it returns the
// watcher's stop.
func (c *conn) watchEnd() func() bool {
	return context.AfterFunc(c.ctx, func() {
		c.mu.Lock()
		c.boundLocked()
		c.raw.SetReadDeadline(time.Now())
		c.mu.Unlock()
	})
}

// sqlErr turns an engine error into the error to send: when the call's
// context was cancelled, the cancellation's cause (user cancel, statement
// timeout, shutdown) wins over however the engine phrased it.
func (c *conn) sqlErr(ctx context.Context, err error) *sqlerr.Error {
	if ctx != nil && ctx.Err() != nil {
		if e, ok := sqlerr.As(context.Cause(ctx)); ok {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || sqlerr.Code(err) == sqlerr.QueryCanceled {
				return e
			}
		}
	}
	return sqlerr.From(err)
}

// closeAll releases every statement and portal.
func (c *conn) closeAll() {
	c.dropParamBuilders()
	for name, p := range c.portals {
		p.close()
		delete(c.portals, name)
	}
	for name, s := range c.stmts {
		s.close()
		delete(c.stmts, name)
	}
}
