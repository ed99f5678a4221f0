package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/asofsql/asofsql/sqlerr"
)

// Version is the asofsql version reported in server_version.
const Version = "0.1"

// Defaults for Config fields left zero.
const (
	DefaultDatabase       = "asofsql"
	DefaultMaxConnections = 100
	DefaultMaxMessageSize = 64 << 20
	DefaultAuthTimeout    = time.Minute
)

// SQLSTATEs the wire server raises that sqlerr does not name.
const (
	codeIdleSessionTimeout  = "57P05"
	codeIdleInTxTimeout     = "25P03"
	codeInvalidAuthSpec     = "28000"
	codeDuplicateCursor     = "42P03"
	codeProgramLimitExceed  = "54000"
	codeConnectionFailure   = "08006"
	codeCannotConnectNow    = "57P03"
	codeInvalidCursorState  = "24000"
	codeUndefinedParameter  = "42P02"
	codeInvalidBinaryFormat = "22P03"
)

// Config configures a Server. Only Engine is required.
type Config struct {
	Engine Engine
	// Database is the one database name clients may ask for (default
	// "asofsql"); any other is FATAL 3D000.
	Database string
	// TLS, when set, makes the server accept SSLRequest ('S'); RequireTLS
	// then refuses plaintext sessions (FATAL 28000).
	TLS        *tls.Config
	RequireTLS bool
	// Auth selects how clients authenticate; the zero value is trust,
	// which Serve refuses on a non-loopback listener.
	Auth Auth
	// MaxConnections bounds concurrent sessions; the next gets FATAL 53300.
	MaxConnections int
	// IdleTimeout closes a session that sends nothing for this long (FATAL
	// 57P05, or 25P03 inside a transaction block); 0 disables it. Sessions
	// may close sooner by their idle_session_timeout and
	// idle_in_transaction_session_timeout settings.
	IdleTimeout time.Duration
	// StatementTimeout is the default statement_timeout: an engine call
	// running longer is cancelled (57014). Sessions receive it as a
	// startup option and may SET it; 0 means none.
	StatementTimeout time.Duration
	// IdleInTransactionTimeout is the default
	// idle_in_transaction_session_timeout, passed like StatementTimeout: a
	// session idle that long inside a transaction block is closed (FATAL
	// 25P03) and its block rolled back, so it holds nothing for long.
	IdleInTransactionTimeout time.Duration
	// MaxMessageSize bounds one client message (default 64 MiB); a larger
	// one is FATAL 08P01.
	MaxMessageSize int
	// AuthTimeout bounds the startup and authentication exchange.
	AuthTimeout time.Duration
	// Allocator builds decoded parameter batches (default Go allocator).
	Allocator memory.Allocator
	// Logger receives connection-level failures; nil discards them.
	Logger *slog.Logger
}

// Server is a PostgreSQL wire-protocol (v3) server in front of an Engine.
type Server struct {
	cfg Config

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	byPID     map[uint32]*conn
	nextPID   uint32
	sessions  int // connections counted against MaxConnections
	closing   chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
	stopped   atomic.Bool

	// cancelWriteGrace is how long a cancelled statement's output may
	// stay unread before the connection is closed (see callCtx);
	// stopWriteGrace the same for the last words of a connection that
	// Stop or a forced Shutdown ends.
	cancelWriteGrace, stopWriteGrace time.Duration

	// watchers counts the watchers started (input.go), for tests;
	// watchAfter, when set (ns), replaces the constant of that name.
	watchers   atomic.Int64
	watchAfter atomic.Int64
}

// Write deadlines for clients that stop reading (see Server).
const (
	defaultCancelWriteGrace = 10 * time.Second
	defaultStopWriteGrace   = 500 * time.Millisecond
)

// NewServer validates cfg and returns a server ready to Serve.
func NewServer(cfg Config) (*Server, error) {
	if cfg.Engine == nil {
		return nil, errors.New("pgwire: Config.Engine is required")
	}
	if cfg.Database == "" {
		cfg.Database = DefaultDatabase
	}
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = DefaultMaxConnections
	}
	if cfg.MaxMessageSize <= 0 {
		cfg.MaxMessageSize = DefaultMaxMessageSize
	}
	if cfg.AuthTimeout <= 0 {
		cfg.AuthTimeout = DefaultAuthTimeout
	}
	if cfg.Allocator == nil {
		cfg.Allocator = memory.DefaultAllocator
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.RequireTLS && cfg.TLS == nil {
		return nil, errors.New("pgwire: RequireTLS needs a TLS config")
	}
	if cfg.Auth.Method == AuthPassword && !cfg.RequireTLS {
		return nil, errors.New("pgwire: password authentication needs RequireTLS")
	}
	if err := cfg.Auth.validate(cfg.TLS != nil); err != nil {
		return nil, err
	}
	return &Server{
		cfg:       cfg,
		listeners: map[net.Listener]struct{}{},
		conns:     map[*conn]struct{}{},
		byPID:     map[uint32]*conn{},
		closing:   make(chan struct{}),

		cancelWriteGrace: defaultCancelWriteGrace,
		stopWriteGrace:   defaultStopWriteGrace,
	}, nil
}

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("pgwire: server closed")

// ListenAndServe listens on the TCP address addr and serves it.
func (s *Server) ListenAndServe(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(l)
}

// Serve accepts connections on l until Shutdown, and closes l. Trust
// authentication is refused unless l listens on a loopback address or a
// Unix socket: anyone who can reach the port would be a superuser.
func (s *Server) Serve(l net.Listener) error {
	if s.cfg.Auth.Method == AuthTrust && !isLocal(l.Addr()) {
		l.Close()
		return fmt.Errorf("pgwire: trust authentication is only allowed on a loopback address, not %s", l.Addr())
	}
	s.mu.Lock()
	if s.stopped.Load() {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
		l.Close()
	}()
	var backoff time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			if s.stopped.Load() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// Out of file descriptors and the like: wait, as
				// net/http does, instead of spinning.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		c := s.newConn(nc)
		if c == nil {
			nc.Close()
			return ErrServerClosed
		}
		go c.serve()
	}
}

func isLocal(a net.Addr) bool {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	return false
}

func (s *Server) newConn(nc net.Conn) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped.Load() {
		return nil
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	nc = rawSocket(nc)
	c := &conn{srv: s, raw: nc, nc: nc, ctx: ctx, abort: cancel}
	c.w.nc = nc
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return c
}

func (s *Server) removeConn(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	if c.pid != 0 {
		delete(s.byPID, c.pid)
	}
	if c.counted {
		s.sessions--
	}
	s.mu.Unlock()
	s.wg.Done()
}

// admit counts c against MaxConnections and gives it a process ID and a
// random cancel secret.
func (s *Server) admit(c *conn) error {
	var secret [4]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return sqlerr.Wrap(err, sqlerr.InternalError, "could not generate a cancel key: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions >= s.cfg.MaxConnections {
		return sqlerr.New(sqlerr.TooManyConnections, "sorry, too many clients already")
	}
	s.sessions++
	c.counted = true
	for {
		s.nextPID++
		if s.nextPID == 0 || s.nextPID > 1<<30 {
			s.nextPID = 1
		}
		if _, used := s.byPID[s.nextPID]; !used {
			break
		}
	}
	c.pid = s.nextPID
	c.secret = secret[:]
	s.byPID[c.pid] = c
	return nil
}

// cancel handles a CancelRequest: the secret is compared in constant time
// so that timing does not reveal it, and nothing is said either way.
func (s *Server) cancel(pid uint32, secret []byte) {
	s.mu.Lock()
	c := s.byPID[pid]
	s.mu.Unlock()
	if c == nil || len(secret) != len(c.secret) || subtle.ConstantTimeCompare(secret, c.secret) != 1 {
		return
	}
	c.cancelQuery(errUserCancel)
}

var (
	errUserCancel    = sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
	errStmtTimeout   = sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to statement timeout")
	errAdminShutdown = sqlerr.New(sqlerr.AdminShutdown, "terminating connection due to administrator command").WithSeverity("FATAL")
	errConnLost      = sqlerr.New(codeConnectionFailure, "connection to client lost")
	// errTerminated ends a connection whose client sent Terminate.
	errTerminated = errors.New("client sent Terminate")
)

// Shutdown stops accepting connections, lets running statements finish and
// closes each session when it is next idle (FATAL 57P01). If ctx ends
// first, it carries on as Stop does when its ctx ends: running statements
// are cancelled, every connection is closed, and ctx's error is returned
// once all connection goroutines have exited.
func (s *Server) Shutdown(ctx context.Context) error {
	done := s.stopAccepting()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	s.endAll(func(c *conn) {
		// Unblocks the reader at once.
		c.raw.SetReadDeadline(time.Now())
	})
	<-done
	return ctx.Err()
}

// Stop is a fast shutdown, as Postgres' on SIGINT (pg_ctl stop's default
// mode): it stops accepting connections, cancels every running statement,
// rolls back open transactions and closes every session with FATAL 57P01.
// It returns once every connection goroutine has exited. A connection that
// has not ended when ctx does (an engine call that ignores cancellation)
// has its socket closed, and Stop returns ctx's error once it is gone.
func (s *Server) Stop(ctx context.Context) error {
	done := s.stopAccepting()
	s.endAll(nil)
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	for c := range s.conns {
		c.raw.Close()
	}
	s.mu.Unlock()
	<-done
	return ctx.Err()
}

// stopAccepting closes the listeners, tells idle sessions to close and
// ends connections still in startup (nothing runs there, so there is
// nothing to finish). done closes when every listener and connection
// goroutine has exited.
func (s *Server) stopAccepting() (done chan struct{}) {
	s.mu.Lock()
	s.stopped.Store(true)
	s.closeOnce.Do(func() { close(s.closing) })
	for l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		if !c.started.Load() {
			c.raw.SetReadDeadline(time.Now())
		} else {
			c.wakeIfWaiting() // an idle session closes now
		}
	}
	s.mu.Unlock()
	done = make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	return done
}

// endAll cancels whatever runs on every connection and ends it with FATAL
// 57P01. Writes get a deadline, so that a connection stuck on a client
// that stopped reading ends too, after a moment to tell the others why.
func (s *Server) endAll(also func(*conn)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.abort(errAdminShutdown)
		c.raw.SetWriteDeadline(time.Now().Add(s.stopWriteGrace))
		if also != nil {
			also(c)
		}
	}
}

// ConnCount is the number of open client connections (for tests and
// monitoring).
func (s *Server) ConnCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}
