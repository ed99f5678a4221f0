package flightsql

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	afsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/sqlerr"
)

// Defaults for Config fields left zero.
const (
	DefaultResultTTL      = time.Minute
	DefaultTokenLifetime  = 12 * time.Hour
	DefaultMaxMessageSize = 64 << 20
	DefaultMaxResults     = 1024
	DefaultMaxStreams     = 256
)

// writeBufferSize is how much a connection's writer gathers before a
// write system call.
const writeBufferSize = 256 << 10

// Config configures a Server. The zero value serves trust authentication
// (loopback only) without TLS.
type Config struct {
	// Database is the catalog name clients see (default "asofsql").
	Database string
	// TLS, when set, serves TLS (gRPC cannot mix plain and TLS on one
	// port). A listener that is not on a loopback address requires it.
	TLS *tls.Config
	// Auth is the Postgres wire server's configuration, shared: trust (any
	// user name, no password; loopback only), or any other method, which
	// here means HTTP basic credentials checked against Auth.Users (the
	// same users file; MD5 and SCRAM verifiers both check a clear-text
	// password) and exchanged for a bearer token.
	Auth pgwire.Auth
	// StatementTimeout is the default statement_timeout of sessions.
	StatementTimeout time.Duration
	// ResultTTL is how long a query's result waits for its DoGet (the
	// endpoint's expiration time).
	ResultTTL time.Duration
	// TokenLifetime is how long a bearer token is valid.
	TokenLifetime time.Duration
	// MaxMessageSize bounds one message a client sends (default 64 MiB).
	MaxMessageSize int
	// MaxResults bounds the results waiting for their DoGet, server-wide.
	MaxResults int
	// MaxStreams bounds the concurrent calls of one connection.
	MaxStreams int
	// Allocator is used for the buffers the server builds (metadata,
	// parameters); default Go allocator.
	Allocator memory.Allocator
	// Logger receives failures that reach no client; nil discards them.
	Logger *slog.Logger
}

// Server serves a DB over Arrow Flight SQL.
type Server struct {
	h    *handler
	grpc *grpc.Server

	mu      sync.Mutex
	stopped bool
}

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("flightsql: server closed")

// New returns a Flight SQL server in front of db; the caller closes db
// after Shutdown.
func New(db *asofsql.DB, cfg Config) (*Server, error) {
	if db == nil {
		return nil, errors.New("flightsql: nil database")
	}
	if cfg.Database == "" {
		cfg.Database = pgwire.DefaultDatabase
	}
	if cfg.ResultTTL <= 0 {
		cfg.ResultTTL = DefaultResultTTL
	}
	if cfg.TokenLifetime <= 0 {
		cfg.TokenLifetime = DefaultTokenLifetime
	}
	if cfg.MaxMessageSize <= 0 {
		cfg.MaxMessageSize = DefaultMaxMessageSize
	}
	if cfg.MaxResults <= 0 {
		cfg.MaxResults = DefaultMaxResults
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = DefaultMaxStreams
	}
	if cfg.Allocator == nil {
		cfg.Allocator = memory.DefaultAllocator
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	trust := cfg.Auth.Method == pgwire.AuthTrust
	if !trust && len(cfg.Auth.Users) == 0 {
		return nil, fmt.Errorf("flightsql: %s authentication needs users", cfg.Auth.Method)
	}
	h := &handler{db: db, cfg: cfg, mem: cfg.Allocator, log: cfg.Logger,
		conns: map[*conn]struct{}{}, results: map[string]*result{}, txns: map[string]*txn{}, prepared: map[string]*prepared{}}
	h.Alloc = cfg.Allocator
	if err := h.registerSqlInfo(); err != nil {
		return nil, err
	}
	auth := newAuthenticator(trust, cfg.Auth.Users, cfg.TokenLifetime)
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(cfg.MaxMessageSize),
		// Results leave in 256 KiB writes rather than gRPC's default 32
		// KiB: an eighth of the write system calls, 2-10% of the
		// transport's CPU on loopback (docs/benchmarks.md). Each
		// connection that has sent something keeps its buffer (gRPC's
		// shared pool gave the gain back).
		grpc.WriteBufferSize(writeBufferSize),
		grpc.MaxConcurrentStreams(uint32(cfg.MaxStreams)),
		grpc.StatsHandler(connTracker{h}),
		grpc.ForceServerCodecV2(newCodec()),
		grpc.ChainUnaryInterceptor(h.recoverUnary, errorsUnary, auth.unary),
		grpc.ChainStreamInterceptor(h.recoverStream, errorsStream, auth.stream),
	}
	if cfg.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg.TLS)))
	}

	g := grpc.NewServer(opts...)
	svc := &service{FlightServer: afsql.NewFlightServerWithAllocator(h, cfg.Allocator), h: h}
	flight.RegisterFlightServiceServer(g, svc)
	return &Server{h: h, grpc: g}, nil
}

// Serve accepts connections on l until Shutdown. Without TLS or with
// trust authentication it refuses a listener that is not on a loopback
// address: trust would let anyone in, and basic authentication would send
// passwords in clear text.
func (s *Server) Serve(l net.Listener) error {
	cfg := s.h.cfg
	if !isLoopback(l.Addr()) {
		switch {
		case cfg.Auth.Method == pgwire.AuthTrust:
			l.Close()
			return fmt.Errorf("flightsql: trust authentication is only allowed on a loopback address, not %s", l.Addr())
		case cfg.TLS == nil:
			l.Close()
			return fmt.Errorf("flightsql: basic authentication sends passwords in clear text: %s is not a loopback address, so TLS is required", l.Addr())
		}
	}
	s.mu.Lock()
	stopped := s.stopped
	s.mu.Unlock()
	if stopped {
		l.Close()
		return ErrServerClosed
	}
	err := s.grpc.Serve(l)
	s.mu.Lock()
	stopped = s.stopped
	s.mu.Unlock()
	if stopped || errors.Is(err, grpc.ErrServerStopped) {
		return ErrServerClosed
	}
	return err
}

// ListenAndServe listens on the TCP address addr and serves it.
func (s *Server) ListenAndServe(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(l)
}

// Shutdown stops accepting calls, cancels the results not yet fetched,
// lets running calls finish until ctx ends (then cancels them), and rolls
// back open transactions.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(done)
	}()
	// Results waiting for a DoGet would hold the graceful stop until they
	// expire: drop them now.
	s.h.dropWaiting()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		s.grpc.Stop()
		<-done
	}
	s.h.shutdown()
	return err
}

func isLoopback(a net.Addr) bool {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	return false
}

// service is the Flight service: the framework's Flight SQL routing, with
// Handshake (authentication happened in the interceptor) and the DoGet of
// query results (streamed directly from the engine) done here.
type service struct {
	flight.FlightServer
	h *handler
}

// Handshake completes the basic-auth exchange: the interceptor checked the
// credentials and set the bearer token in the response metadata.
func (s *service) Handshake(stream flight.FlightService_HandshakeServer) error {
	for {
		if _, err := stream.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// DoGet streams a query result; other tickets (metadata commands) go to
// the framework.
func (s *service) DoGet(t *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	id, part, ok, err := decodeTicket(t.GetTicket())
	if err != nil {
		return err
	}
	if !ok {
		return s.FlightServer.DoGet(t, stream)
	}
	r, p, err := s.h.take(id, part, userOf(stream.Context()))
	if err != nil {
		return err
	}
	return s.h.stream(r, p, stream)
}

// DoPut checks that the stream starts with a command, which the
// framework assumes, then hands it on.
func (s *service) DoPut(stream flight.FlightService_DoPutServer) error {
	first, err := stream.Recv()
	if errors.Is(err, io.EOF) {
		return sqlerr.New(sqlerr.ProtocolViolation, "empty DoPut stream")
	}
	if err != nil {
		return err
	}
	if d := first.GetFlightDescriptor(); d == nil || d.GetType() != flight.DescriptorCMD {
		return sqlerr.New(sqlerr.ProtocolViolation, "a DoPut stream must start with a command descriptor")
	}
	return s.FlightServer.DoPut(&replayPut{FlightService_DoPutServer: stream, first: first})
}

// replayPut gives back the first message DoPut read.
type replayPut struct {
	flight.FlightService_DoPutServer
	first *flight.FlightData
}

func (r *replayPut) Recv() (*flight.FlightData, error) {
	if f := r.first; f != nil {
		r.first = nil
		return f, nil
	}
	return r.FlightService_DoPutServer.Recv()
}

// dropWaiting drops every result waiting for its DoGet.
func (h *handler) dropWaiting() {
	h.mu.Lock()
	var waiting []*result
	for _, r := range h.results {
		if r.count(partWaiting) > 0 {
			waiting = append(waiting, r)
		}
	}
	h.mu.Unlock()
	for _, r := range waiting {
		h.drop(r, errShutdown)
	}
}

// Interceptors: a panic in a call becomes an XX000 error (never a crash),
// and every error leaves as a status carrying its SQLSTATE.

func (h *handler) recoverUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = statusOf(h.logPanic(info.FullMethod, v))
		}
	}()
	return handler(ctx, req)
}

func (h *handler) recoverStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = statusOf(h.logPanic(info.FullMethod, v))
		}
	}()
	return handler(srv, ss)
}

func errorsUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	return resp, statusOf(err)
}

func errorsStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return statusOf(handler(srv, ss))
}
