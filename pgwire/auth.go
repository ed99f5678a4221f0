package pgwire

import "errors"

// AuthMethod selects client authentication.
type AuthMethod int

const (
	// AuthTrust accepts any user without a password (loopback only).
	AuthTrust AuthMethod = iota
)

// Auth configures authentication.
type Auth struct {
	Method AuthMethod
}

func (a Auth) validate(haveTLS bool) error {
	switch a.Method {
	case AuthTrust:
		return nil
	}
	return errors.New("pgwire: unknown authentication method")
}

// authenticate runs the authentication exchange for user; on failure it
// has already sent FATAL 28P01.
func (c *conn) authenticate(user string, overTLS bool) error {
	return nil
}
