package pgwire_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/md5"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/pgwire"
)

func selfSigned(t *testing.T) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

func users(t *testing.T) map[string]pgwire.Verifier {
	t.Helper()
	both, err := pgwire.NewVerifier("alice", "s3cret")
	require.NoError(t, err)
	onlyMD5, err := pgwire.NewVerifier("bob", "hunter2")
	require.NoError(t, err)
	onlyMD5.SCRAM = ""
	onlySCRAM, err := pgwire.NewVerifier("carol", "pässword")
	require.NoError(t, err)
	onlySCRAM.MD5 = ""
	return map[string]pgwire.Verifier{"alice": both, "bob": onlyMD5, "carol": onlySCRAM}
}

func TestVerifierFormats(t *testing.T) {
	v, err := pgwire.NewVerifier("alice", "s3cret")
	require.NoError(t, err)
	sum := md5.Sum([]byte("s3cretalice"))
	require.Equal(t, "md5"+hex.EncodeToString(sum[:]), v.MD5)
	require.Regexp(t, `^SCRAM-SHA-256\$4096:[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}:[A-Za-z0-9+/=]{44}$`, v.SCRAM)

	loaded, err := pgwire.LoadUsers(strings.NewReader("# users\nalice:" + v.MD5 + "\n\nalice:" + v.SCRAM + "\n"))
	require.NoError(t, err)
	require.Equal(t, map[string]pgwire.Verifier{"alice": v}, loaded)
	for _, bad := range []string{"alice:plaintext", "alice", "alice:SCRAM-SHA-256$x", ":md5" + strings.Repeat("0", 32)} {
		_, err := pgwire.LoadUsers(strings.NewReader(bad))
		require.Error(t, err, bad)
	}
	_, err = pgwire.NewServer(pgwire.Config{Engine: nopEngine{}, Auth: pgwire.Auth{Method: pgwire.AuthPassword}})
	require.ErrorContains(t, err, "RequireTLS")
	_, err = pgwire.NewServer(pgwire.Config{Engine: nopEngine{}, Auth: pgwire.Auth{Method: pgwire.AuthMD5, Users: map[string]pgwire.Verifier{"x": {MD5: "md5zz"}}}})
	require.ErrorContains(t, err, "malformed md5 verifier")
}

type nopEngine struct{}

func (nopEngine) Connect(context.Context, pgwire.StartupInfo) (pgwire.Session, error) {
	return nil, errors.New("unused")
}

func authURL(h *harness, user, password, sslmode string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(user, password), Host: h.addr, Path: "/asofsql", RawQuery: "sslmode=" + sslmode}
	return u.String()
}

func pgxTry(h *harness, user, password, sslmode string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, authURL(h, user, password, sslmode))
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	var s string
	return c.QueryRow(ctx, "select 'ok'").Scan(&s)
}

func pqTry(h *harness, user, password, sslmode string) error {
	db, err := sql.Open("postgres", authURL(h, user, password, sslmode))
	if err != nil {
		return err
	}
	defer db.Close()
	var s string
	return db.QueryRow("select 'ok'").Scan(&s)
}

func requireCode(t *testing.T, err error, code string) {
	t.Helper()
	require.Error(t, err)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		require.Equal(t, code, pgErr.Code, "%v", err)
		return
	}
	require.Contains(t, err.Error(), code)
}

func TestAuthMethods(t *testing.T) {
	for _, method := range []pgwire.AuthMethod{pgwire.AuthMD5, pgwire.AuthSCRAM} {
		t.Run(method.String(), func(t *testing.T) {
			h := start(t, func(c *pgwire.Config) { c.Auth = pgwire.Auth{Method: method, Users: users(t)} })
			require.NoError(t, pgxTry(h, "alice", "s3cret", "disable"))
			require.NoError(t, pqTry(h, "alice", "s3cret", "disable"))
			requireCode(t, pgxTry(h, "alice", "wrong", "disable"), "28P01")
			requireCode(t, pqTry(h, "alice", "wrong", "disable"), "28P01")
			requireCode(t, pgxTry(h, "mallory", "s3cret", "disable"), "28P01")
			// carol has only a SCRAM verifier: md5 falls back to SCRAM.
			require.NoError(t, pgxTry(h, "carol", "pässword", "disable"))
			if method == pgwire.AuthSCRAM {
				// bob has only an MD5 verifier, which SCRAM cannot use.
				requireCode(t, pgxTry(h, "bob", "hunter2", "disable"), "28P01")
			} else {
				require.NoError(t, pgxTry(h, "bob", "hunter2", "disable"))
			}
			out, err := psqlRunEnv(t, h, "select 'via psql' as x;\n", "alice", "s3cret", "disable")
			require.NoError(t, err, out)
			require.Contains(t, out, "via psql")
			out, err = psqlRunEnv(t, h, "select 1;\n", "alice", "nope", "disable")
			require.Error(t, err)
			require.Contains(t, out, `password authentication failed for user "alice"`)
		})
	}
}

func TestTLSAndCleartextPassword(t *testing.T) {
	h := start(t, func(c *pgwire.Config) {
		c.TLS = selfSigned(t)
		c.RequireTLS = true
		c.Auth = pgwire.Auth{Method: pgwire.AuthPassword, Users: users(t)}
	})
	require.NoError(t, pgxTry(h, "alice", "s3cret", "require"))
	require.NoError(t, pgxTry(h, "bob", "hunter2", "require"))
	require.NoError(t, pqTry(h, "carol", "pässword", "require"))
	requireCode(t, pgxTry(h, "alice", "wrong", "require"), "28P01")
	// Plain text is refused before any password is asked for.
	r := dialRaw(t, h.addr)
	r.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "alice", "database": "asofsql"}})
	require.Equal(t, []string{"E FATAL 28000 SSL connection is required"}, r.readToClose())
	out, err := psqlRunEnv(t, h, "select 'tls' as x;\n", "alice", "s3cret", "require")
	require.NoError(t, err, out)
	require.Contains(t, out, "tls")
}

func psqlRunEnv(t *testing.T, h *harness, script, user, password, sslmode string) (string, error) {
	t.Helper()
	t.Setenv("PGPASSWORD", password)
	t.Setenv("PGSSLMODE", sslmode)
	t.Setenv("PGUSER", user)
	return psqlRun(t, h, script)
}

func TestLoadTLS(t *testing.T) {
	cfg := selfSigned(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	keyDER, err := x509.MarshalPKCS8PrivateKey(cfg.Certificates[0].PrivateKey)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cfg.Certificates[0].Certificate[0]}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	loaded, err := pgwire.LoadTLS(certFile, keyFile)
	require.NoError(t, err)
	h := start(t, func(c *pgwire.Config) { c.TLS = loaded; c.RequireTLS = true })
	require.NoError(t, pgxTry(h, "u", "", "require"))
	out, err := psqlRunEnv(t, h, "select 'psql over tls' as x;\n", "u", "", "require")
	require.NoError(t, err, out)
	require.Contains(t, out, "psql over tls")
	_, err = pgwire.LoadTLS(filepath.Join(dir, "missing.crt"), keyFile)
	require.ErrorContains(t, err, "missing.crt")
}
