package pgwire_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"
	"github.com/xdg-go/scram"

	"github.com/asofsql/asofsql/pgwire"
)

func pgxConnectString(t *testing.T, conn string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, conn)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	var s string
	return c.QueryRow(ctx, "select 'ok'").Scan(&s)
}

// TestSCRAMChannelBinding: over TLS the server offers SCRAM-SHA-256-PLUS
// (tls-server-end-point), so pgx and psql set to channel_binding=require
// log in; without TLS there is nothing to bind to and they refuse.
func TestSCRAMChannelBinding(t *testing.T) {
	for _, method := range []pgwire.AuthMethod{pgwire.AuthSCRAM, pgwire.AuthMD5} {
		t.Run(method.String(), func(t *testing.T) {
			h := start(t, func(c *pgwire.Config) {
				c.TLS = selfSigned(t)
				c.Auth = pgwire.Auth{Method: method, Users: users(t)}
			})
			// carol has only a SCRAM verifier, so md5 uses SCRAM for her.
			url := authURL(h, "carol", "pässword", "require") + "&channel_binding=require"
			require.NoError(t, pgxConnectString(t, url))
			requireCode(t, pgxConnectString(t, authURL(h, "carol", "wrong", "require")+"&channel_binding=require"), "28P01")
			require.NoError(t, pgxConnectString(t, authURL(h, "carol", "pässword", "require")+"&channel_binding=disable"))
			err := pgxConnectString(t, authURL(h, "carol", "pässword", "disable")+"&channel_binding=require")
			require.ErrorContains(t, err, "channel binding")

			t.Setenv("PGCHANNELBINDING", "require")
			out, err := psqlRunEnv(t, h, "select 'bound' as x;\n", "carol", "pässword", "require")
			require.NoError(t, err, out)
			require.Contains(t, out, "bound")
			out, err = psqlRunEnv(t, h, "select 1;\n", "carol", "pässword", "disable")
			require.Error(t, err, out)
			require.Contains(t, out, "channel binding")
		})
	}
}

// tlsRaw opens a raw protocol connection over TLS and sends the startup
// message.
func tlsRaw(t *testing.T, addr, user string) (*tls.Conn, *pgproto3.Frontend) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	fe := pgproto3.NewFrontend(nc, nc)
	fe.Send(&pgproto3.SSLRequest{})
	require.NoError(t, fe.Flush())
	var b [1]byte
	_, err = nc.Read(b[:])
	require.NoError(t, err)
	require.Equal(t, byte('S'), b[0])
	tc := tls.Client(nc, &tls.Config{InsecureSkipVerify: true})
	require.NoError(t, tc.Handshake())
	fe = pgproto3.NewFrontend(tc, tc)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": user, "database": "asofsql"}})
	require.NoError(t, fe.Flush())
	m, err := fe.Receive()
	require.NoError(t, err)
	sasl, ok := m.(*pgproto3.AuthenticationSASL)
	require.True(t, ok, "%T", m)
	require.Equal(t, []string{"SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"}, sasl.AuthMechanisms)
	return tc, fe
}

func serverBinding(t *testing.T, tc *tls.Conn) scram.ChannelBinding {
	t.Helper()
	state := tc.ConnectionState()
	cb, err := scram.NewTLSServerEndpointBinding(&state)
	require.NoError(t, err)
	return cb
}

func fatalOf(t *testing.T, fe *pgproto3.Frontend) string {
	t.Helper()
	for {
		m, err := fe.Receive()
		require.NoError(t, err)
		if e, ok := m.(*pgproto3.ErrorResponse); ok {
			return errString("E", e.Severity, e.Code, e.Message, e.Detail, e.Hint, e.Position)
		}
	}
}

// TestSCRAMChannelBindingRefusals: the mechanism and the GS2 flag must
// agree, "y" is a downgrade where PLUS was offered, and binding data of
// another channel fails the check (a relay in the middle), each with
// Postgres' FATAL.
func TestSCRAMChannelBindingRefusals(t *testing.T) {
	h := start(t, func(c *pgwire.Config) {
		c.TLS = selfSigned(t)
		c.Auth = pgwire.Auth{Method: pgwire.AuthSCRAM, Users: users(t)}
	})
	client, err := scram.SHA256.NewClient("", "s3cret", "")
	require.NoError(t, err)
	cases := []struct {
		name string
		mech string
		conv func(tc *tls.Conn) *scram.ClientConversation
		want string
	}{
		{"PLUS without binding", "SCRAM-SHA-256-PLUS", func(*tls.Conn) *scram.ClientConversation { return client.NewConversation() },
			"E FATAL 08P01 malformed SCRAM message D=The client selected SCRAM-SHA-256-PLUS, but the SCRAM message does not include channel binding data."},
		{"plain with binding", "SCRAM-SHA-256", func(tc *tls.Conn) *scram.ClientConversation {
			return client.NewConversationWithChannelBinding(serverBinding(t, tc))
		}, "E FATAL 08P01 malformed SCRAM message D=The client selected SCRAM-SHA-256 without channel binding, but the SCRAM message includes channel binding data."},
		{"downgrade", "SCRAM-SHA-256", func(*tls.Conn) *scram.ClientConversation { return client.NewConversationAdvertisingChannelBinding() },
			"E FATAL 08P01 SCRAM channel binding negotiation error D=The client supports SCRAM channel binding but thinks the server does not.  However, this server does support channel binding."},
		{"other type", "SCRAM-SHA-256-PLUS", func(tc *tls.Conn) *scram.ClientConversation {
			state := tc.ConnectionState()
			cb, err := scram.NewTLSExporterBinding(&state)
			require.NoError(t, err)
			return client.NewConversationWithChannelBinding(cb)
		}, `E FATAL 08P01 unsupported SCRAM channel-binding type "tls-exporter"`},
		{"another channel", "SCRAM-SHA-256-PLUS", func(*tls.Conn) *scram.ClientConversation {
			other := selfSigned(t).Certificates[0]
			leaf, err := x509.ParseCertificate(other.Certificate[0])
			require.NoError(t, err)
			cb, err := scram.NewTLSServerEndpointBinding(&tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}})
			require.NoError(t, err)
			return client.NewConversationWithChannelBinding(cb)
		}, "E FATAL 08P01 SCRAM channel binding check failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn, fe := tlsRaw(t, h.addr, "alice")
			conv := tc.conv(conn)
			first, err := conv.Step("")
			require.NoError(t, err)
			fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: tc.mech, Data: []byte(first)})
			require.NoError(t, fe.Flush())
			m, err := fe.Receive()
			require.NoError(t, err)
			if cont, ok := m.(*pgproto3.AuthenticationSASLContinue); ok {
				final, err := conv.Step(string(cont.Data))
				require.NoError(t, err)
				fe.Send(&pgproto3.SASLResponse{Data: []byte(final)})
				require.NoError(t, fe.Flush())
				require.Equal(t, tc.want, fatalOf(t, fe))
				return
			}
			e, ok := m.(*pgproto3.ErrorResponse)
			require.True(t, ok, "%T", m)
			require.Equal(t, tc.want, errString("E", e.Severity, e.Code, e.Message, e.Detail, e.Hint, e.Position))
		})
	}
	// And the binding that matches logs in.
	conn, fe := tlsRaw(t, h.addr, "alice")
	conv := client.NewConversationWithChannelBinding(serverBinding(t, conn))
	first, err := conv.Step("")
	require.NoError(t, err)
	fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256-PLUS", Data: []byte(first)})
	require.NoError(t, fe.Flush())
	m, err := fe.Receive()
	require.NoError(t, err)
	final, err := conv.Step(string(m.(*pgproto3.AuthenticationSASLContinue).Data))
	require.NoError(t, err)
	fe.Send(&pgproto3.SASLResponse{Data: []byte(final)})
	require.NoError(t, fe.Flush())
	m, err = fe.Receive()
	require.NoError(t, err)
	fin, ok := m.(*pgproto3.AuthenticationSASLFinal)
	require.True(t, ok, "%T", m)
	_, err = conv.Step(string(fin.Data))
	require.NoError(t, err)
	require.True(t, conv.Valid())
	m, err = fe.Receive()
	require.NoError(t, err)
	require.IsType(t, &pgproto3.AuthenticationOk{}, m)
}
