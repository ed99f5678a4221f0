package pgwire

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"

	"github.com/xdg-go/scram"
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

// startTLS runs the server side of the TLS handshake on c.nc and records
// the certificate it presented, which SCRAM channel binding
// (tls-server-end-point) hashes: the connection state names only the
// peer's certificates.
func (c *conn) startTLS() error {
	tc := tls.Server(c.nc, c.capturing(c.srv.cfg.TLS))
	if err := tc.HandshakeContext(c.ctx); err != nil {
		return err
	}
	c.nc = tc
	c.w.nc = tc
	return nil
}

// capturing returns a copy of base whose certificate choice is recorded
// in c.tlsCert. The choice itself is base's own (GetConfigForClient,
// GetCertificate, then Certificates, as crypto/tls picks).
func (c *conn) capturing(base *tls.Config) *tls.Config {
	cfg := base.Clone()
	if base.GetConfigForClient != nil {
		cfg.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			other, err := base.GetConfigForClient(hello)
			if other == nil || err != nil {
				return other, err
			}
			inner := c.capturing(other)
			inner.GetConfigForClient = nil
			return inner, nil
		}
	}
	// With no Certificates, crypto/tls always asks GetCertificate.
	cfg.Certificates = nil
	cfg.GetCertificate = func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		cert, err := chooseCertificate(base, hello)
		if cert != nil && err == nil {
			c.tlsCert = cert
		}
		return cert, err
	}
	return cfg
}

// chooseCertificate picks the certificate for a handshake as crypto/tls
// does for cfg.
func chooseCertificate(cfg *tls.Config, hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if cfg.GetCertificate != nil && (len(cfg.Certificates) == 0 || hello.ServerName != "") {
		cert, err := cfg.GetCertificate(hello)
		if cert != nil || err != nil {
			return cert, err
		}
	}
	switch len(cfg.Certificates) {
	case 0:
		return nil, errors.New("tls: no certificates configured")
	case 1:
		return &cfg.Certificates[0], nil
	}
	for i := range cfg.Certificates {
		if hello.SupportsCertificate(&cfg.Certificates[i]) == nil {
			return &cfg.Certificates[i], nil
		}
	}
	return &cfg.Certificates[0], nil
}

// endpointBinding is the tls-server-end-point channel binding of the
// certificate the server presented (RFC 5929: its hash with the hash
// function of its signature, SHA-256 in place of MD5 and SHA-1), what
// libpq and pgx compute from their side for SCRAM-SHA-256-PLUS.
func endpointBinding(cert *tls.Certificate) (scram.ChannelBinding, error) {
	if cert == nil || len(cert.Certificate) == 0 {
		return scram.ChannelBinding{}, errors.New("no server certificate")
	}
	leaf := cert.Leaf
	if leaf == nil {
		var err error
		if leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return scram.ChannelBinding{}, err
		}
	}
	return scram.NewTLSServerEndpointBinding(&tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}})
}
