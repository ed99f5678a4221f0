package flightsql

import (
	"context"
	"crypto/rand"
	"strconv"
	"sync"

	"google.golang.org/grpc/stats"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/sqlerr"
)

// A client connection (one HTTP/2 transport) is what a Postgres
// connection is on the wire: it has a session per user whose settings
// last across its statements, and the transactions and prepared
// statements it created end with it (transactions roll back).

type connKey struct{}

// conn is one client connection.
type conn struct {
	h        *handler
	mu       sync.Mutex
	sessions map[string]*session // by user
	txns     map[string]*txn
	prepared map[string]*prepared
	closed   bool
}

// session is an engine session used by one statement at a time: a
// connection's (per user), or a Flight transaction's.
type session struct {
	sem chan struct{} // holds one token while a statement uses s
	s   *asofsql.Session
	txn *txn // the transaction owning this session; nil for a connection's

	mu      sync.Mutex
	closed  bool
	preempt func() // set by a holder that can be stopped (an unfetched result)
}

func newSession(s *asofsql.Session, t *txn) *session {
	return &session{sem: make(chan struct{}, 1), s: s, txn: t}
}

var errSessionClosed = sqlerr.New(sqlerr.AdminShutdown, "the session ended (its connection closed or its transaction finished)")

// acquire waits until the session is free (or ctx ends).
func (s *session) acquire(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return sqlerr.From(context.Cause(ctx))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		<-s.sem
		return errSessionClosed
	}
	return nil
}

// hold records how to stop the holder (an unfetched result) when the
// session must end.
func (s *session) hold(preempt func()) {
	s.mu.Lock()
	s.preempt = preempt
	s.mu.Unlock()
}

func (s *session) release() {
	s.mu.Lock()
	s.preempt = nil
	s.mu.Unlock()
	<-s.sem
}

// stopHolder stops an unfetched result holding the session.
func (s *session) stopHolder() {
	s.mu.Lock()
	p := s.preempt
	s.mu.Unlock()
	if p != nil {
		p()
	}
}

// close ends the session: an unfetched result holding it is dropped, a
// running statement finishes first, then an open block rolls back.
func (s *session) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	p := s.preempt
	s.mu.Unlock()
	if p != nil {
		p()
	}
	go func() {
		s.sem <- struct{}{} // never given back: the session is gone
		s.s.Close()
	}()
}

// connTracker gives each transport a conn (grpc's stats handler sees
// connections begin and end; the context it tags reaches every call).
type connTracker struct{ h *handler }

var _ stats.Handler = connTracker{}

func (t connTracker) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	c := &conn{h: t.h, sessions: map[string]*session{}, txns: map[string]*txn{}, prepared: map[string]*prepared{}}
	t.h.mu.Lock()
	if t.h.closed {
		c.closed = true
	} else {
		t.h.conns[c] = struct{}{}
	}
	t.h.mu.Unlock()
	return context.WithValue(ctx, connKey{}, c)
}

func (t connTracker) HandleConn(ctx context.Context, s stats.ConnStats) {
	if _, ok := s.(*stats.ConnEnd); !ok {
		return
	}
	if c, ok := ctx.Value(connKey{}).(*conn); ok {
		c.close()
	}
}

func (connTracker) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (connTracker) HandleRPC(context.Context, stats.RPCStats)                       {}

func connOf(ctx context.Context) (*conn, error) {
	c, ok := ctx.Value(connKey{}).(*conn)
	if !ok {
		return nil, sqlerr.New(sqlerr.InternalError, "call without a connection")
	}
	return c, nil
}

// session returns the connection's session of user, opening it with the
// server's defaults on first use.
func (c *conn) session(user string) (*session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errSessionClosed
	}
	if s, ok := c.sessions[user]; ok {
		return s, nil
	}
	s, err := c.h.newEngineSession(user)
	if err != nil {
		return nil, err
	}
	cs := newSession(s, nil)
	c.sessions[user] = cs
	return cs, nil
}

// resetSession ends user's session (CloseSession); the next call opens a
// fresh one.
func (c *conn) resetSession(user string) {
	c.mu.Lock()
	s := c.sessions[user]
	delete(c.sessions, user)
	c.mu.Unlock()
	if s != nil {
		s.close()
	}
}

// close ends everything the connection owns.
func (c *conn) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	sessions, txns, prepared := c.sessions, c.txns, c.prepared
	c.sessions, c.txns, c.prepared = nil, nil, nil
	c.mu.Unlock()
	h := c.h
	h.mu.Lock()
	delete(h.conns, c)
	for id := range txns {
		delete(h.txns, id)
	}
	for id := range prepared {
		delete(h.prepared, id)
	}
	h.mu.Unlock()
	for _, t := range txns {
		t.sess.close()
	}
	for _, s := range sessions {
		s.close()
	}
}

func (h *handler) newEngineSession(user string) (*asofsql.Session, error) {
	s := h.db.Session()
	s.SetIdentity(user, h.cfg.Database)
	if d := h.cfg.StatementTimeout; d > 0 {
		if err := s.Set("statement_timeout", strconv.FormatInt(d.Milliseconds(), 10)); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// txn is a Flight SQL transaction (ActionBeginTransaction): its own
// session in a transaction block, used by the statements that name it.
type txn struct {
	id    string
	owner string
	conn  *conn
	sess  *session
}

func newID() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return string(b)
}

// scope finds the session a statement runs in: the transaction's when
// it names one, else its connection's.
func (h *handler) scope(ctx context.Context, txnID []byte) (*session, error) {
	user := userOf(ctx)
	if len(txnID) > 0 {
		h.mu.Lock()
		t := h.txns[string(txnID)]
		h.mu.Unlock()
		if t == nil || t.owner != user {
			return nil, errNoTxn()
		}
		return t.sess, nil
	}
	c, err := connOf(ctx)
	if err != nil {
		return nil, err
	}
	return c.session(user)
}

func errNoTxn() error {
	return sqlerr.New(sqlerr.NoActiveSQLTransaction, "transaction does not exist").
		WithDetail("It was committed or rolled back, or the connection that began it closed.")
}

// begin starts a Flight transaction: a fork of the connection's session
// (its settings) in a transaction block.
func (h *handler) begin(ctx context.Context) (*txn, error) {
	c, err := connOf(ctx)
	if err != nil {
		return nil, err
	}
	user := userOf(ctx)
	base, err := c.session(user)
	if err != nil {
		return nil, err
	}
	if err := base.acquire(ctx); err != nil {
		return nil, err
	}
	s := base.s.Fork()
	base.release()
	if _, err := s.Exec(ctx, "BEGIN"); err != nil {
		s.Close()
		return nil, err
	}
	t := &txn{id: newID(), owner: user, conn: c}
	t.sess = newSession(s, t)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		s.Close()
		return nil, errSessionClosed
	}
	c.txns[t.id] = t
	c.mu.Unlock()
	h.mu.Lock()
	h.txns[t.id] = t
	h.mu.Unlock()
	return t, nil
}

// end commits or rolls back a Flight transaction. An unfetched result of
// the transaction is dropped first; one being fetched finishes first.
func (h *handler) end(ctx context.Context, id []byte, commit bool) error {
	user := userOf(ctx)
	h.mu.Lock()
	t := h.txns[string(id)]
	if t == nil || t.owner != user {
		h.mu.Unlock()
		return errNoTxn()
	}
	delete(h.txns, t.id)
	h.mu.Unlock()
	t.conn.mu.Lock()
	delete(t.conn.txns, t.id)
	t.conn.mu.Unlock()
	defer t.sess.close()
	t.sess.stopHolder()
	if err := t.sess.acquire(ctx); err != nil {
		return err
	}
	defer t.sess.release()
	verb := "ROLLBACK"
	if commit {
		verb = "COMMIT"
	}
	res, err := t.sess.s.Exec(ctx, verb)
	if err != nil {
		return err
	}
	if commit && res.Tag == "ROLLBACK" {
		return sqlerr.New("40000", "the transaction was rolled back: one of its statements failed").
			WithHint("Nothing of the transaction was committed.")
	}
	return nil
}
