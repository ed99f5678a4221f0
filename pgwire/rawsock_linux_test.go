package pgwire

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// socketPair is an accepted connection (wrapped by rawSocket) and the
// client's end.
func socketPair(t *testing.T, network, addr string) (net.Conn, net.Conn) {
	t.Helper()
	l, err := net.Listen(network, addr)
	require.NoError(t, err)
	defer l.Close()
	client, err := net.Dial(network, l.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { client.Close() })
	nc, err := l.Accept()
	require.NoError(t, err)
	s := rawSocket(nc)
	t.Cleanup(func() { s.Close() })
	require.IsType(t, &rawSock{}, s)
	return s, client
}

// TestRawSocket: the raw reads and writes behave as net.Conn's: whole
// large writes through a slow reader (waiting for room), reads waiting
// for input, deadlines, end of input, a closed socket, a peer gone.
func TestRawSocket(t *testing.T) {
	for _, c := range []struct{ network, addr string }{
		{"tcp", "127.0.0.1:0"}, {"unix", filepath.Join(t.TempDir(), "s")},
	} {
		t.Run(c.network, func(t *testing.T) {
			s, client := socketPair(t, c.network, c.addr)
			// A write far larger than the socket buffers, read slowly.
			big := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
			got := make(chan []byte)
			go func() {
				var buf bytes.Buffer
				p := make([]byte, 1000)
				for buf.Len() < len(big) {
					n, err := client.Read(p)
					buf.Write(p[:n])
					if err != nil {
						break
					}
				}
				got <- buf.Bytes()
			}()
			n, err := s.Write(big)
			require.NoError(t, err)
			require.Equal(t, len(big), n)
			require.True(t, bytes.Equal(big, <-got))

			// A read waits for what the peer sends.
			go func() {
				time.Sleep(20 * time.Millisecond)
				client.Write([]byte("hello"))
			}()
			p := make([]byte, 64)
			n, err = s.Read(p)
			require.NoError(t, err)
			require.Equal(t, "hello", string(p[:n]))
			n, err = s.Read(p[:0])
			require.NoError(t, err)
			require.Zero(t, n)

			// Deadlines end a wait.
			require.NoError(t, s.SetReadDeadline(time.Now().Add(10*time.Millisecond)))
			_, err = s.Read(p)
			require.ErrorIs(t, err, os.ErrDeadlineExceeded)
			var ne net.Error
			require.True(t, errors.As(err, &ne) && ne.Timeout())
			require.NoError(t, s.SetReadDeadline(time.Time{}))

			// The peer's end of input.
			client.Write([]byte("bye"))
			client.Close()
			n, err = s.Read(p)
			require.NoError(t, err)
			require.Equal(t, "bye", string(p[:n]))
			_, err = s.Read(p)
			require.ErrorIs(t, err, io.EOF)

			// Writing to a peer gone fails (EPIPE or a reset), without a
			// signal.
			for i := 0; err == nil && i < 100; i++ {
				_, err = s.Write(big[:64<<10])
				time.Sleep(time.Millisecond)
			}
			require.Error(t, err)

			require.NoError(t, s.Close())
			_, err = s.Read(p)
			require.ErrorIs(t, err, net.ErrClosed)
			_, err = s.Write(p)
			require.ErrorIs(t, err, net.ErrClosed)
		})
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	require.Equal(t, a, rawSocket(a), "not a socket: left as it is")
}
