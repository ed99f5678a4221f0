package pgwire

import (
	"bufio"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/xdg-go/scram"

	"github.com/asofsql/asofsql/sqlerr"
)

// AuthMethod selects client authentication, as in pg_hba.conf.
type AuthMethod int

const (
	// AuthTrust accepts any user name without a password. Serve allows it
	// only on a loopback address or a Unix socket.
	AuthTrust AuthMethod = iota
	// AuthPassword asks for the password in clear text; it requires TLS
	// (Config.RequireTLS).
	AuthPassword
	// AuthMD5 uses the md5 challenge for users with an MD5 verifier and
	// SCRAM-SHA-256 for the others, as Postgres does.
	AuthMD5
	// AuthSCRAM uses SCRAM-SHA-256 (users need a SCRAM verifier).
	AuthSCRAM
)

func (m AuthMethod) String() string {
	switch m {
	case AuthTrust:
		return "trust"
	case AuthPassword:
		return "password"
	case AuthMD5:
		return "md5"
	case AuthSCRAM:
		return "scram-sha-256"
	}
	return "AuthMethod(" + strconv.Itoa(int(m)) + ")"
}

// ParseAuthMethod reads a method name as pg_hba.conf spells it.
func ParseAuthMethod(s string) (AuthMethod, error) {
	for m := AuthTrust; m <= AuthSCRAM; m++ {
		if m.String() == s {
			return m, nil
		}
	}
	return 0, fmt.Errorf("pgwire: unknown authentication method %q (trust, password, md5, scram-sha-256)", s)
}

// Auth configures authentication: the method and, for all but trust, the
// users with their password verifiers. Passwords themselves are never
// stored.
type Auth struct {
	Method AuthMethod
	Users  map[string]Verifier
}

// Verifier holds a user's password verifiers in pg_authid.rolpassword
// format: MD5 is "md5" + hex(md5(password + user)); SCRAM is
// "SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>" (base64).
// Either may be empty. Verifiers can be copied from a Postgres server.
type Verifier struct {
	MD5   string
	SCRAM string
}

// scramIterations is Postgres' default scram_iterations.
const scramIterations = 4096

// NewVerifier computes both verifiers of a password, with a random SCRAM
// salt.
func NewVerifier(user, password string) (Verifier, error) {
	sum := md5.Sum([]byte(password + user))
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return Verifier{}, err
	}
	client, err := scram.SHA256.NewClient(user, password, "")
	if err != nil {
		return Verifier{}, fmt.Errorf("pgwire: password of %q: %w", user, err)
	}
	sc, err := client.GetStoredCredentialsWithError(scram.KeyFactors{Salt: string(salt), Iters: scramIterations})
	if err != nil {
		return Verifier{}, fmt.Errorf("pgwire: password of %q: %w", user, err)
	}
	b64 := base64.StdEncoding.EncodeToString
	return Verifier{
		MD5:   "md5" + hex.EncodeToString(sum[:]),
		SCRAM: fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", scramIterations, b64(salt), b64(sc.StoredKey), b64(sc.ServerKey)),
	}, nil
}

// parseSCRAM decodes a SCRAM verifier.
func parseSCRAM(s string) (scram.StoredCredentials, error) {
	bad := fmt.Errorf("pgwire: malformed SCRAM verifier")
	rest, ok := strings.CutPrefix(s, "SCRAM-SHA-256$")
	if !ok {
		return scram.StoredCredentials{}, bad
	}
	params, keys, ok := strings.Cut(rest, "$")
	if !ok {
		return scram.StoredCredentials{}, bad
	}
	iterS, saltS, ok1 := strings.Cut(params, ":")
	storedS, serverS, ok2 := strings.Cut(keys, ":")
	iters, err := strconv.Atoi(iterS)
	if !ok1 || !ok2 || err != nil || iters <= 0 {
		return scram.StoredCredentials{}, bad
	}
	dec := base64.StdEncoding.DecodeString
	salt, err1 := dec(saltS)
	stored, err2 := dec(storedS)
	server, err3 := dec(serverS)
	if err1 != nil || err2 != nil || err3 != nil || len(stored) != sha256.Size || len(server) != sha256.Size {
		return scram.StoredCredentials{}, bad
	}
	return scram.StoredCredentials{KeyFactors: scram.KeyFactors{Salt: string(salt), Iters: iters}, StoredKey: stored, ServerKey: server}, nil
}

// LoadUsers reads verifiers from r, one user per line as
// "name:verifier" (an md5... or SCRAM-SHA-256$... string; a user may have
// one line of each). Blank lines and lines starting with # are ignored.
func LoadUsers(r io.Reader) (map[string]Verifier, error) {
	users := map[string]Verifier{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, secret, ok := strings.Cut(line, ":")
		if !ok || name == "" {
			return nil, fmt.Errorf("pgwire: users line %d: want name:verifier", n)
		}
		v := users[name]
		switch {
		case strings.HasPrefix(secret, "md5") && len(secret) == 35:
			if _, err := hex.DecodeString(secret[3:]); err != nil {
				return nil, fmt.Errorf("pgwire: users line %d: malformed md5 verifier", n)
			}
			v.MD5 = secret
		case strings.HasPrefix(secret, "SCRAM-SHA-256$"):
			if _, err := parseSCRAM(secret); err != nil {
				return nil, fmt.Errorf("pgwire: users line %d: %w", n, err)
			}
			v.SCRAM = secret
		default:
			return nil, fmt.Errorf("pgwire: users line %d: not a verifier (plain-text passwords are not accepted)", n)
		}
		users[name] = v
	}
	return users, sc.Err()
}

func (a Auth) validate(haveTLS bool) error {
	switch a.Method {
	case AuthTrust:
		return nil
	case AuthPassword:
		if !haveTLS {
			return errors.New("pgwire: password authentication sends passwords in clear text and needs TLS")
		}
	case AuthMD5, AuthSCRAM:
	default:
		return fmt.Errorf("pgwire: unknown authentication method %d", a.Method)
	}
	for name, v := range a.Users {
		if v.MD5 != "" && (len(v.MD5) != 35 || !strings.HasPrefix(v.MD5, "md5")) {
			return fmt.Errorf("pgwire: malformed md5 verifier for %q", name)
		}
		if v.SCRAM != "" {
			if _, err := parseSCRAM(v.SCRAM); err != nil {
				return fmt.Errorf("%w for %q", err, name)
			}
		}
	}
	return nil
}

var errAuthFailed = errors.New("authentication failed")

// authenticate runs the exchange for the configured method. Failures send
// FATAL 28P01 (also for unknown users, after a full exchange, so that the
// reply does not reveal which users exist).
func (c *conn) authenticate(user string, overTLS bool) error {
	a := c.srv.cfg.Auth
	v, known := a.Users[user]
	var err error
	switch a.Method {
	case AuthTrust:
		return nil
	case AuthPassword:
		if !overTLS {
			return c.fatal(sqlerr.New(codeInvalidAuthSpec, "password authentication requires an SSL connection"))
		}
		err = c.authCleartext(user, v, known)
	case AuthMD5:
		if known && v.MD5 == "" && v.SCRAM != "" {
			err = c.authSCRAM(user, v, known)
		} else {
			err = c.authMD5(v, known)
		}
	case AuthSCRAM:
		err = c.authSCRAM(user, v, known && v.SCRAM != "")
	}
	if errors.Is(err, errAuthFailed) {
		return c.fatal(sqlerr.New(sqlerr.InvalidPassword, "password authentication failed for user %q", user))
	}
	if e, ok := sqlerr.As(err); ok {
		return c.fatal(e)
	}
	return err
}

// readAuth reads the client's next 'p' message.
func (c *conn) readAuth() ([]byte, error) {
	if err := c.w.flush(); err != nil {
		return nil, err
	}
	f, err := readFrame(c.nc, maxStartupPacket, authTypes)
	if err != nil {
		if e, ok := sqlerr.As(err); ok {
			return nil, e
		}
		return nil, err
	}
	return f.body, nil
}

func (c *conn) authCleartext(user string, v Verifier, known bool) error {
	c.w.send(&pgproto3.AuthenticationCleartextPassword{})
	body, err := c.readAuth()
	if err != nil {
		return err
	}
	var m pgproto3.PasswordMessage
	if err := m.Decode(body); err != nil {
		return sqlerr.New(sqlerr.ProtocolViolation, "invalid password packet")
	}
	if !known || !checkPassword(user, m.Password, v) {
		return errAuthFailed
	}
	return nil
}

// checkPassword verifies a clear-text password against the verifiers.
func checkPassword(user, password string, v Verifier) bool {
	if v.SCRAM != "" {
		sc, err := parseSCRAM(v.SCRAM)
		if err != nil {
			return false
		}
		client, err := scram.SHA256.NewClient(user, password, "")
		if err != nil {
			return false
		}
		got, err := client.GetStoredCredentialsWithError(sc.KeyFactors)
		return err == nil && hmac.Equal(got.StoredKey, sc.StoredKey)
	}
	if v.MD5 != "" {
		sum := md5.Sum([]byte(password + user))
		return subtle.ConstantTimeCompare([]byte("md5"+hex.EncodeToString(sum[:])), []byte(v.MD5)) == 1
	}
	return false
}

func (c *conn) authMD5(v Verifier, known bool) error {
	var salt [4]byte
	if _, err := rand.Read(salt[:]); err != nil {
		return err
	}
	c.w.send(&pgproto3.AuthenticationMD5Password{Salt: salt})
	body, err := c.readAuth()
	if err != nil {
		return err
	}
	var m pgproto3.PasswordMessage
	if err := m.Decode(body); err != nil {
		return sqlerr.New(sqlerr.ProtocolViolation, "invalid password packet")
	}
	if !known || v.MD5 == "" {
		return errAuthFailed
	}
	// The client sends "md5" + hex(md5(hex(md5(password+user)) + salt)).
	sum := md5.Sum(append([]byte(v.MD5[3:]), salt[:]...))
	want := "md5" + hex.EncodeToString(sum[:])
	if subtle.ConstantTimeCompare([]byte(want), []byte(m.Password)) != 1 {
		return errAuthFailed
	}
	return nil
}

// mockSecret keys the fake SCRAM salt of unknown users, so that a probe
// sees a stable salt per name, as for a real user.
var mockSecret = func() []byte {
	b := make([]byte, 32)
	rand.Read(b)
	return b
}()

func (c *conn) authSCRAM(user string, v Verifier, known bool) error {
	var creds scram.StoredCredentials
	if known {
		var err error
		if creds, err = parseSCRAM(v.SCRAM); err != nil {
			return err
		}
	} else {
		mac := hmac.New(sha256.New, mockSecret)
		mac.Write([]byte(user))
		salt := mac.Sum(nil)[:16]
		junk := make([]byte, sha256.Size)
		rand.Read(junk)
		creds = scram.StoredCredentials{KeyFactors: scram.KeyFactors{Salt: string(salt), Iters: scramIterations}, StoredKey: junk, ServerKey: junk}
	}
	// libpq sends an empty user name in the SCRAM exchange: the startup
	// user is the one that counts.
	srv, err := scram.SHA256.NewServer(func(string) (scram.StoredCredentials, error) { return creds, nil })
	if err != nil {
		return err
	}
	// Over TLS, SCRAM-SHA-256-PLUS binds the exchange to the channel
	// (tls-server-end-point), so that a client with channel_binding=require
	// knows no one in between relayed it, as Postgres offers it.
	mechs := []string{"SCRAM-SHA-256"}
	var cb scram.ChannelBinding
	if c.tlsCert != nil {
		if b, err := endpointBinding(c.tlsCert); err == nil {
			cb = b
			mechs = []string{scramPlus, "SCRAM-SHA-256"}
		} else {
			c.logf("channel binding unavailable", err)
		}
	}
	conv := srv.NewConversation()
	if cb.IsSupported() {
		conv = srv.NewConversationWithChannelBinding(cb)
	}
	c.w.send(&pgproto3.AuthenticationSASL{AuthMechanisms: mechs})
	body, err := c.readAuth()
	if err != nil {
		return err
	}
	var first pgproto3.SASLInitialResponse
	if err := first.Decode(body); err != nil {
		return sqlerr.New(sqlerr.ProtocolViolation, "malformed SASLInitialResponse")
	}
	if !slices.Contains(mechs, first.AuthMechanism) {
		return sqlerr.New(sqlerr.ProtocolViolation, "client selected an invalid SASL authentication mechanism")
	}
	if err := checkGS2(cb.IsSupported(), first.AuthMechanism == scramPlus, first.Data); err != nil {
		return err
	}
	resp, err := conv.Step(string(first.Data))
	if err != nil {
		return errAuthFailed
	}
	c.w.send(&pgproto3.AuthenticationSASLContinue{Data: []byte(resp)})
	body, err = c.readAuth()
	if err != nil {
		return err
	}
	var final pgproto3.SASLResponse
	if err := final.Decode(body); err != nil {
		return sqlerr.New(sqlerr.ProtocolViolation, "malformed SASLResponse")
	}
	if cb.IsSupported() && !channelBound(first.Data, final.Data, cb) {
		return sqlerr.New(sqlerr.ProtocolViolation, "SCRAM channel binding check failed")
	}
	resp, err = conv.Step(string(final.Data))
	if err != nil || !conv.Valid() || !known {
		return errAuthFailed
	}
	c.w.send(&pgproto3.AuthenticationSASLFinal{Data: []byte(resp)})
	return nil
}

const scramPlus = "SCRAM-SHA-256-PLUS"

// checkGS2 checks the channel-binding flag of a client-first message
// against the mechanism the client chose, with Postgres' errors: PLUS
// needs "p=tls-server-end-point", the plain mechanism must not bind, and
// "y" (the client could bind but thinks the server cannot) is refused
// where PLUS was offered, since someone in between must have removed it.
func checkGS2(offered, plus bool, first []byte) error {
	malformed := func(detail string) error {
		return sqlerr.New(sqlerr.ProtocolViolation, "malformed SCRAM message").WithDetail("%s", detail)
	}
	switch {
	case len(first) == 0:
		return malformed("The message is empty.")
	case first[0] == 'p':
		if !plus {
			return malformed("The client selected SCRAM-SHA-256 without channel binding, but the SCRAM message includes channel binding data.")
		}
		name, _, _ := strings.Cut(string(first[min(2, len(first)):]), ",")
		if !strings.HasPrefix(string(first), "p=") || name != "tls-server-end-point" {
			return sqlerr.New(sqlerr.ProtocolViolation, "unsupported SCRAM channel-binding type \"%s\"", name)
		}
	case plus:
		return malformed("The client selected SCRAM-SHA-256-PLUS, but the SCRAM message does not include channel binding data.")
	case first[0] == 'y' && offered:
		return sqlerr.New(sqlerr.ProtocolViolation, "SCRAM channel binding negotiation error").
			WithDetail("The client supports SCRAM channel binding but thinks the server does not.  However, this server does support channel binding.")
	}
	return nil
}

// channelBound reports whether the client-final message carries the
// channel binding of this connection: c= is base64 of the client-first
// message's GS2 header followed by the binding data.
func channelBound(first, final []byte, cb scram.ChannelBinding) bool {
	if len(first) == 0 || first[0] != 'p' {
		return true // not asked for; checkGS2 allowed that
	}
	parts := strings.SplitN(string(first), ",", 3)
	if len(parts) < 3 {
		return false
	}
	header := parts[0] + "," + parts[1] + ","
	attr, _, _ := strings.Cut(string(final), ",")
	got, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(attr, "c="))
	if !strings.HasPrefix(attr, "c=") || err != nil {
		return false
	}
	return hmac.Equal(got, append([]byte(header), cb.Data...))
}
