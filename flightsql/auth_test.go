package flightsql_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/base64"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/driver"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/asofsql/asofsql/flightsql"
	"github.com/asofsql/asofsql/pgwire"
)

// selfSigned returns a server TLS configuration for 127.0.0.1 and a pool
// trusting it.
func selfSigned(t testing.TB) (*tls.Config, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}, pool
}

// users has alice with a SCRAM verifier only and bob with an MD5 one
// only: a users file as the Postgres wire server reads it.
func users(t testing.TB) map[string]pgwire.Verifier {
	t.Helper()
	a, err := pgwire.NewVerifier("alice", "wonderland")
	require.NoError(t, err)
	b, err := pgwire.NewVerifier("bob", "builder")
	require.NoError(t, err)
	return map[string]pgwire.Verifier{"alice": {SCRAM: a.SCRAM}, "bob": {MD5: b.MD5}}
}

// TestTLSAndTokens: over TLS, basic credentials are exchanged for a
// bearer token at Handshake; calls without credentials, with a wrong
// password or a made-up token fail with 28xxx; the user is the session's.
func TestTLSAndTokens(t *testing.T) {
	tlsCfg, pool := selfSigned(t)
	e := newEnv(t, flightsql.Config{TLS: tlsCfg, Auth: pgwire.Auth{Method: pgwire.AuthSCRAM, Users: users(t)}})
	creds := grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool}))
	c := e.client(t, creds)
	ctx := context.Background()

	_, err := c.Execute(ctx, `SELECT 1`)
	requireState(t, err, "28000")
	require.Equal(t, codes.Unauthenticated, status.Code(err))

	_, err = c.Client.AuthenticateBasicToken(ctx, "alice", "wrong")
	requireState(t, err, "28P01")
	_, err = c.Client.AuthenticateBasicToken(ctx, "mallory", "x")
	requireState(t, err, "28P01")

	for _, u := range []struct{ name, password string }{{"alice", "wonderland"}, {"bob", "builder"}} {
		actx, err := c.Client.AuthenticateBasicToken(ctx, u.name, u.password)
		require.NoError(t, err, u.name)
		md, _ := metadata.FromOutgoingContext(actx)
		require.Len(t, md.Get("authorization"), 1)
		info, err := c.Execute(actx, `SELECT current_user`)
		require.NoError(t, err)
		_, bs, err := fetch(actx, t, c, info)
		require.NoError(t, err)
		require.Equal(t, u.name, flat(bs))
		release(bs)
		// Results belong to their user: another cannot fetch them.
		info, err = c.Execute(actx, `SELECT 1`)
		require.NoError(t, err)
		other := "bob"
		if u.name == "bob" {
			other = "alice"
		}
		_, bs, err = fetch(basic(ctx, other, map[string]string{"alice": "wonderland", "bob": "builder"}[other]), t, c, info)
		release(bs)
		requireState(t, err, "34000")
	}

	bad := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer made-up")
	_, err = c.Execute(bad, `SELECT 1`)
	requireState(t, err, "28000")
	// Basic credentials on every call (the database/sql driver's way).
	_, err = c.Execute(basic(ctx, "bob", "builder"), `SELECT 1`)
	require.NoError(t, err)
	_, err = c.Execute(basic(ctx, "bob", "nope"), `SELECT 1`)
	requireState(t, err, "28P01")

	// Plain text against the TLS port fails at the transport.
	plain := e.client(t, grpc.WithTransportCredentials(insecure.NewCredentials()))
	_, err = plain.Execute(ctx, `SELECT 1`)
	require.Error(t, err)
}

func basic(ctx context.Context, user, password string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization",
		"Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+password)))
}

// TestDriverTLS: the database/sql driver with user and password in the
// DSN over TLS.
func TestDriverTLS(t *testing.T) {
	tlsCfg, pool := selfSigned(t)
	e := newEnv(t, flightsql.Config{TLS: tlsCfg, Auth: pgwire.Auth{Method: pgwire.AuthMD5, Users: users(t)}})
	cfg := &driver.DriverConfig{Address: e.addr, Username: "bob", Password: "builder", TLSEnabled: true,
		TLSConfig: &tls.Config{RootCAs: pool}, Timeout: 10 * time.Second}
	db, err := sql.Open("flightsql", cfg.DSN())
	require.NoError(t, err)
	defer db.Close()
	var user string
	require.NoError(t, db.QueryRow(`SELECT current_user`).Scan(&user))
	require.Equal(t, "bob", user)

	cfg.Password = "wrong"
	db2, err := sql.Open("flightsql", cfg.DSN())
	require.NoError(t, err)
	defer db2.Close()
	err = db2.QueryRow(`SELECT 1`).Scan(&user)
	requireState(t, err, "28P01")
}

// TestListenerRules: trust only on loopback; anything but loopback
// needs TLS (basic authentication sends passwords in clear text).
func TestListenerRules(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	public := func(t *testing.T, cfg flightsql.Config) error {
		srv, err := flightsql.New(e.db, cfg)
		require.NoError(t, err)
		l, err := net.Listen("tcp", "0.0.0.0:0")
		require.NoError(t, err)
		err = srv.Serve(l)
		require.NoError(t, srv.Shutdown(context.Background()))
		return err
	}
	err := public(t, flightsql.Config{})
	require.ErrorContains(t, err, "trust authentication is only allowed on a loopback address")
	err = public(t, flightsql.Config{Auth: pgwire.Auth{Method: pgwire.AuthSCRAM, Users: users(t)}})
	require.ErrorContains(t, err, "TLS is required")
	_, err = flightsql.New(e.db, flightsql.Config{Auth: pgwire.Auth{Method: pgwire.AuthSCRAM}})
	require.ErrorContains(t, err, "needs users")
}

// TestHandshakeUnderTrust: clients that always authenticate (ADBC with a
// user name) work under trust; the name is the session user.
func TestHandshakeUnderTrust(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	c := e.client(t)
	ctx, err := c.Client.AuthenticateBasicToken(context.Background(), "carol", "")
	require.NoError(t, err)
	info, err := c.Execute(ctx, `SELECT current_user`)
	require.NoError(t, err)
	_, bs, err := fetch(ctx, t, c, info)
	require.NoError(t, err)
	require.Equal(t, "carol", flat(bs))
	release(bs)
}
