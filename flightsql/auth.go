package flightsql

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
)

// Authentication follows the Flight convention: a client sends HTTP basic
// credentials ("authorization: Basic ...") with Handshake and receives a
// bearer token ("authorization: Bearer ...", in the response headers and
// trailers) that it sends with every later call. Basic credentials are
// also accepted on any call (the arrow-go database/sql driver sends them
// each time); a successful check is remembered for a short while so that
// such clients do not pay a SCRAM key derivation per call.

const (
	authHeader      = "authorization"
	handshakeMethod = "/arrow.flight.protocol.FlightService/Handshake"
	// basicCacheTTL is how long a verified user:password pair is
	// remembered (as a keyed hash, never in clear).
	basicCacheTTL = 5 * time.Minute
	// maxTokens bounds the live tokens and remembered credentials; a
	// client that exceeds it gets 53300 until older ones expire.
	maxTokens = 100_000
)

type userKey struct{}

// userOf is the authenticated user of a call.
func userOf(ctx context.Context) string {
	if u, ok := ctx.Value(userKey{}).(string); ok {
		return u
	}
	return planner.DefaultUser
}

type grant struct {
	user    string
	expires time.Time
}

// authenticator checks credentials against the users file's verifiers
// (the same as the Postgres wire server's) and keeps the bearer tokens it
// issued.
type authenticator struct {
	trust    bool
	users    map[string]pgwire.Verifier
	lifetime time.Duration
	secret   []byte
	decoy    pgwire.Verifier // checked for unknown users

	mu     sync.Mutex
	tokens map[string]grant
	basic  map[[sha256.Size]byte]grant
}

func newAuthenticator(trust bool, users map[string]pgwire.Verifier, lifetime time.Duration) *authenticator {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	a := &authenticator{trust: trust, users: users, lifetime: lifetime, secret: secret,
		tokens: map[string]grant{}, basic: map[[sha256.Size]byte]grant{}}
	if !trust {
		v, err := pgwire.NewVerifier("", base64.StdEncoding.EncodeToString(secret))
		if err != nil {
			panic(err) // crypto/rand does not fail on supported platforms
		}
		a.decoy = pgwire.Verifier{SCRAM: v.SCRAM}
	}
	return a
}

// identify authenticates one call: it returns the context carrying the
// user and, for Handshake, the token to hand back.
func (a *authenticator) identify(ctx context.Context, method string) (context.Context, string, error) {
	var scheme, cred string
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get(authHeader); len(v) > 0 {
			scheme, cred, _ = strings.Cut(strings.TrimSpace(v[0]), " ")
			cred = strings.TrimSpace(cred)
		}
	}
	handshake := method == handshakeMethod
	switch {
	case strings.EqualFold(scheme, "basic"):
		user, err := a.checkBasic(cred)
		if err != nil {
			return nil, "", err
		}
		token := ""
		if handshake {
			if token, err = a.issue(user); err != nil {
				return nil, "", err
			}
		}
		return context.WithValue(ctx, userKey{}, user), token, nil
	case strings.EqualFold(scheme, "bearer") && !handshake:
		user, err := a.checkToken(cred)
		if err != nil {
			return nil, "", err
		}
		return context.WithValue(ctx, userKey{}, user), "", nil
	case scheme == "" && a.trust:
		return ctx, "", nil
	case scheme == "":
		return nil, "", sqlerr.New("28000", "authentication required").
			WithHint("Send HTTP basic credentials with Handshake and the bearer token it returns with every call.")
	}
	return nil, "", sqlerr.New("28000", "unsupported authorization scheme %q", scheme).
		WithHint("Use Basic credentials (with Handshake) or the Bearer token Handshake returned.")
}

// checkBasic verifies "user:password" (base64). Under trust any user is
// accepted without a password, as the Postgres wire server's trust does.
func (a *authenticator) checkBasic(cred string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(cred)
	if err != nil {
		if raw, err = base64.RawStdEncoding.DecodeString(cred); err != nil {
			return "", sqlerr.New("28000", "malformed basic credentials")
		}
	}
	user, password, ok := strings.Cut(string(raw), ":")
	if !ok || user == "" {
		return "", sqlerr.New("28000", "malformed basic credentials: want user:password")
	}
	if a.trust {
		return user, nil
	}
	mac := hmac.New(sha256.New, a.secret)
	mac.Write(raw)
	var key [sha256.Size]byte
	copy(key[:], mac.Sum(nil))
	now := time.Now()
	a.mu.Lock()
	g, ok := a.basic[key]
	a.mu.Unlock()
	if ok && now.Before(g.expires) {
		return g.user, nil
	}
	v, known := a.users[user]
	if !known {
		// Spend the same work on an unknown user, so that the reply's
		// timing does not tell which users exist.
		v = a.decoy
	}
	if !v.Check(user, password) || !known {
		return "", sqlerr.New(sqlerr.InvalidPassword, "password authentication failed for user %q", user)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := room(a.basic, now); err != nil {
		return "", err
	}
	a.basic[key] = grant{user: user, expires: now.Add(basicCacheTTL)}
	return user, nil
}

func (a *authenticator) issue(user string) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	token := base64.RawURLEncoding.EncodeToString(b)
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := room(a.tokens, now); err != nil {
		return "", err
	}
	a.tokens[token] = grant{user: user, expires: now.Add(a.lifetime)}
	return token, nil
}

// room drops expired entries of m when it is full; 53300 if none expired.
func room[K comparable](m map[K]grant, now time.Time) error {
	if len(m) < maxTokens {
		return nil
	}
	for k, g := range m {
		if !now.Before(g.expires) {
			delete(m, k)
		}
	}
	if len(m) >= maxTokens {
		return sqlerr.New(sqlerr.TooManyConnections, "too many active authentication tokens")
	}
	return nil
}

func (a *authenticator) checkToken(token string) (string, error) {
	a.mu.Lock()
	g, ok := a.tokens[token]
	a.mu.Unlock()
	if !ok {
		return "", sqlerr.New("28000", "invalid bearer token").WithHint("Authenticate again with Handshake.")
	}
	if !time.Now().Before(g.expires) {
		a.mu.Lock()
		delete(a.tokens, token)
		a.mu.Unlock()
		return "", sqlerr.New("28000", "bearer token expired").WithHint("Authenticate again with Handshake.")
	}
	return g.user, nil
}

func (a *authenticator) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	ctx, _, err := a.identify(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

func (a *authenticator) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx, token, err := a.identify(ss.Context(), info.FullMethod)
	if err != nil {
		return err
	}
	if token != "" {
		// Java and C++ clients read the token from the headers, arrow-go
		// from the trailers.
		md := metadata.Pairs(authHeader, "Bearer "+token)
		if err := ss.SetHeader(md); err != nil {
			return err
		}
		ss.SetTrailer(md)
	}
	return handler(srv, &ctxStream{ServerStream: ss, ctx: ctx})
}

// ctxStream is a server stream with a context carrying the call's user.
type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *ctxStream) Context() context.Context { return s.ctx }
