package pgwire

import (
	"crypto/tls"
	"fmt"
)

// LoadTLS reads a PEM certificate (chain) and private key, the files a
// command line names with --tls-cert and --tls-key, into a server TLS
// configuration for Config.TLS (TLS 1.2 or later, as libpq requires).
func LoadTLS(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("pgwire: loading TLS certificate %s and key %s: %w", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
