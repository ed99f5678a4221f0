package pgwire

// Check reports whether password is user's password according to v: its
// SCRAM verifier if it has one, else its MD5 one. Front doors that receive
// passwords in clear text (Flight SQL's basic authentication, over TLS)
// check them against the same users file as the wire server.
func (v Verifier) Check(user, password string) bool { return checkPassword(user, password, v) }
